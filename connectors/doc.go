// Package connectors holds Tributary's first-party connectors, one package
// each, built on the sdk package alone. The tributary-connectors executable
// (cmd/tributary-connectors) serves them as a plugin; All lists them. The
// tributary binary itself must not import this package or its connectors:
// every package a binary links initialises in each of its processes.
package connectors
