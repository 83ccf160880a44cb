// Package console holds the browser tests of Tributary's web console
// (restapi/console): headless Chromium (Debian's chromium package) driven
// by chromedp against real `tributary dev` processes and a real
// PostgreSQL. It is a module of its own so that chromedp, a test-only
// dependency, stays out of the product's go.mod.
package console
