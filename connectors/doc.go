// Package connectors holds Tributary's first-party connectors, one package
// each, built on the sdk package alone; All lists them. The
// tributary-connector-* executables (cmd/tributary-connector-basic,
// -postgres, -mongodb, -s3) serve them as plugins, each importing only its
// own connectors' packages: every package a binary links initialises in
// each of its processes, so neither tributary nor a plugin of one family
// may link another's libraries. Only tests import this package.
package connectors
