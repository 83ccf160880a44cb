// Package harness starts the real components that Tributary's integration
// tests and benchmarks run against, on free 127.0.0.1 ports, and removes
// them again when the test ends.
//
// This file set covers the Apache reference implementations: a single-node
// KRaft Apache Kafka 4.4 broker (ApacheKafka, StartApacheKafka), a Kafka
// Connect 4.4 distributed worker (KafkaConnect, StartKafkaConnect), and
// Kafka's Java command-line tools (JavaTool, (*Kafka).RunTool), which work
// against any bootstrap address, including Tributary's own broker. They are
// test references only, never part of the product.
//
// The components run as separate java processes, each in its own process
// group, from the jars that integration/fetch-jars.sh copies out of Maven
// Central into ${TRIBUTARY_JARS:-$HOME/.cache/tributary/jars/kafka-4.4.0}.
// They need Java 17 or newer (JAVA_HOME, java on PATH, or a JDK under
// /usr/lib/jvm). When the jars are missing, the testing entry points run
// fetch-jars.sh once (unless TRIBUTARY_NO_FETCH is set) and skip the test
// with instructions if that does not help; when no suitable java exists they
// skip too. The non-testing entry points return an error wrapping
// ErrUnavailable instead.
//
// PostgreSQL 15 (StartPostgresT, StartPostgres) runs from
// /usr/lib/postgresql/15/bin (or $TRIBUTARY_PG_BIN): a fresh cluster in a
// temporary directory with wal_level=logical and password authentication,
// on a free 127.0.0.1 port, as the postgres user when the tests run as root;
// tests skip when the binaries are missing (apt-get install postgresql-15).
// RequireDebezium makes sure Debezium's PostgreSQL connector is among the
// jars, so that KafkaConnect offers it.
//
// FerretDB v1.24.2 (StartFerretDBT, StartFerretDB), a MongoDB wire-protocol
// server on SQLite without change streams, is the MongoDB source's test
// server. It is built from integration/ferretdb, a Go module of its own that
// keeps FerretDB out of the product's go.mod, once per change of that
// module's sources (FerretDBBinary; about a minute with an empty Go build
// cache), cached under ${TRIBUTARY_CACHE:-$HOME/.cache/tributary}/ferretdb,
// and started as a process on a free 127.0.0.1 port.
//
// The live change-stream tests need a real MongoDB replica set (LiveMongo,
// one per test binary): the one TRIBUTARY_TEST_MONGODB_URI names, else,
// when a Docker engine answers (FindDockerEngine: DOCKER_HOST, or
// /var/run/docker.sock) and has the image (DockerImagePresent; the tests
// never pull one unless TRIBUTARY_TEST_MONGODB_PULL is set), a single-node
// replica set of mongo:8.0 that
// integration/mongocontainer (a module of its own, like integration/ferretdb,
// that keeps testcontainers-go out of the product's go.mod; built the same
// way, and only then) starts through testcontainers-go and removes when the
// tests end (StartMongoContainer); else the tests skip, naming both ways.
//
// Prometheus (StartPrometheusT) runs from Debian's prometheus package
// (apt-get install prometheus, or $TRIBUTARY_PROMETHEUS): a server on a
// free 127.0.0.1 port, its storage in a temporary directory, scraping the
// test's targets every second and evaluating the rule files it is given
// (their alerts' for: durations shortened, so that a test sees them fire);
// tests skip when the binary is missing.
//
// The end-to-end tests run in parallel (t.Parallel, `make test` allows 4 at
// a time), so everything the harness starts is private to the test that
// asked for it (free ports, t.TempDir, its own processes), and what is
// shared is shared safely: BuildTributary builds the binary once per test
// process; the JVMs of tests start with only the C1 compiler and from
// class-data sharing archives cached in ~/.cache/tributary/cds (written by
// the first run on a machine, which stops its JVMs gently for that);
// benchmarks keep the full JIT.
//
// Every process writes its log to a file in its directory; start-up errors
// carry the tail of that log, and the testing entry points print it when the
// test fails.
package harness
