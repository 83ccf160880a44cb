// Package container tests Tributary's container image (docker/Dockerfile)
// and compose files (docker/compose.yaml, docker/compose.lake.yaml) against
// a real Docker engine: the image built from the checkout by `make image`,
// containers run through testcontainers-go, compose files through the
// compose command (docker compose, or Debian's docker-compose 1.29).
//
// It is a module of its own so that testcontainers-go and the Docker client
// stay out of the product's go.mod, like integration/mongocontainer.
//
// Nothing is pulled: every image comes from this machine. Tributary's from
// `make image`; the stand-ins for the official postgres and versitygw
// images the lake compose file names are built from Debian trixie's
// packages (debootstrap, then docker import; cached in the engine by a key
// of what goes into them) and versitygw's binary, and substituted through
// testdata/compose.local-images.yaml, which changes only image:.
//
// Without an engine (DOCKER_HOST, or /var/run/docker.sock) the tests skip,
// saying how to get one; with TRIBUTARY_REQUIRE_DOCKER set (CI sets it)
// they fail instead, so that CI never passes them by skipping.
package container
