// Package connectors holds Tributary's first-party connectors, one package
// each, built on the sdk package alone. The tributary binary serves them in
// plugin mode (`tributary plugin`); All lists them.
package connectors
