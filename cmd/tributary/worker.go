package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/worker"
)

func workerCommand() command {
	return command{name: "worker", summary: "run a Kafka Connect-compatible connect worker", run: runWorker}
}

const workerHelp = `Usage: tributary worker [--config] FILE [--override key=value]...

Runs a connect worker. FILE is a Kafka Connect connect-distributed.properties:
Tributary reads the same keys, so an existing file works. Workers with the same
group.id form one cluster through the broker in bootstrap.servers (Tributary's
bundled broker, Apache Kafka or Redpanda).

Settings are applied in this order: the file, then CONNECT_* environment
variables (Confluent image style: CONNECT_BOOTSTRAP_SERVERS sets
bootstrap.servers; _ is a dot, __ a dash, ___ an underscore), then --override.
In the container image (TRIBUTARY_CONTAINER=true) key.converter and
value.converter default to JsonConverter, and the short variables of
Debezium's image are read too: BOOTSTRAP_SERVERS, GROUP_ID,
CONFIG_STORAGE_TOPIC, OFFSET_STORAGE_TOPIC, STATUS_STORAGE_TOPIC,
KEY_CONVERTER, VALUE_CONVERTER, OFFSET_FLUSH_INTERVAL_MS,
OFFSET_FLUSH_TIMEOUT_MS, SHUTDOWN_TIMEOUT (task.shutdown.graceful.timeout.ms),
ADVERTISED_HOST_NAME and ADVERTISED_PORT (rest.advertised.*); a short
variable and its CONNECT_* variable set to two values is an error.

Flags:
  --config FILE           the worker properties file (or give it as the argument)
  --override key=value    set one setting (repeatable)
  --log-level LEVEL       the root logger's level: debug, info, warn or error
                          (default info); PUT /admin/loggers/{name} changes
                          any logger's at run time
  --print-config          print the settings the worker would run with, from
                          all of the above (passwords and secrets hidden), and
                          exit; an invalid configuration exits 2 saying why
  -h, --help              show this help

Required settings: group.id, config.storage.topic, offset.storage.topic,
status.storage.topic, key.converter, value.converter.
Main optional settings (defaults in brackets):
  bootstrap.servers                   [localhost:9092]
  listeners                           REST listener [http://:8083, all interfaces]
  plugin.path                         directories of third-party plugin executables
                                      (the first-party connectors come from the
                                      tributary-connector-* executables beside
                                      tributary, else from PATH)
  plugin.isolation                    plugin: one process per plugin executable
                                      runs all its connectors on this worker
                                      [default]; connector: a process per
                                      connector (a crash fails that one only)
  offset.flush.interval.ms            [60000]
  task.shutdown.graceful.timeout.ms   [5000]
  config/offset/status.storage.replication.factor [3], offset.storage.partitions [25],
  status.storage.partitions [5]
  producer.*, consumer.*, admin.*     client settings for task clients

A cluster: workers with the same group.id share the connectors and tasks.
  session.timeout.ms                  [10000]
  heartbeat.interval.ms               [1000; Kafka Connect's is 3000]
  scheduled.rebalance.max.delay.ms    how long a departed worker's work waits
                                      for it to come back [1000; Kafka
                                      Connect's is 300000]
  rest.rebalance.hold.ms              how long a REST write waits for a
                                      rebalance or a leader before it is
                                      answered 409 [30000; Tributary only]
  connect.protocol                    sessioned, compatible or eager [sessioned]
  inter.worker.key.ttl.ms             session key lifetime [3600000]
  rest.advertised.host.name, rest.advertised.port
                                      how the other workers reach this one
Any worker takes REST writes and forwards them to the leader.

Security (Kafka Connect's settings; see the README's Security section):
  security.protocol, sasl.mechanism, sasl.jaas.config, ssl.*
                                      the worker's clients: PLAIN, SCRAM-SHA-256/512,
                                      OAUTHBEARER, AWS_MSK_IAM; PEM, PKCS12, JKS.
                                      Connectors' clients take producer.* and
                                      consumer.* only: repeat them there
  connector.client.config.override.policy
                                      All, None, Principal or Allowlist [All]
  config.providers, config.providers.NAME.class, .param.*
                                      FileConfigProvider, DirectoryConfigProvider,
                                      EnvVarConfigProvider: ${file:PATH:KEY} in
                                      worker and connector settings
  listeners=https://…, listeners.https.ssl.*, admin.listeners
                                      HTTPS REST listeners (ssl.client.auth)
  rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
  java.security.auth.login.config     the JAAS file of its KafkaConnect section
                                      (or -Djava.security.auth.login.config in
                                      KAFKA_OPTS)
  rest.hide.secrets                   show literal secrets as [hidden] in stored
                                      configs [false, as Kafka Connect]

The REST API (Kafka Connect's) is served on listeners; GET /health answers 200
once the worker is ready. SIGINT or SIGTERM stops the worker cleanly.

Metrics and probes, on the REST listener:
  GET /metrics                        Prometheus text: Kafka Connect's metric
                                      groups, the clients', sink lag, the
                                      plugins' own (Debezium's, the S3 sink's)
  GET /healthz, GET /readyz           alive; ready (joined the group, caught up
                                      on the config topic, REST ready)
  tributary.metrics.naming            strimzi (Strimzi's JMX exporter rules'
                                      names) or confluent (Confluent's and
                                      Aiven's) [strimzi]
  metrics.sample.window.ms, metrics.num.samples
                                      the window of the rates, averages and
                                      maxima [30000, 2]

Example:
  tributary worker config/connect-distributed.properties \
    --override bootstrap.servers=127.0.0.1:9092
`

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f serverFlags
	rest, code, ok := f.parse("worker", workerHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(rest) == 1 && f.configFile == "":
		f.configFile = rest[0]
	case len(rest) > 0:
		fmt.Fprintf(stderr, "tributary worker: unexpected argument %q (see --help)\n", rest[len(rest)-1])
		return 2
	}
	secrets := &redact.Set{}
	logger, loggers, err := newLevelLogger(stderr, f.level, secrets)
	if err != nil {
		fmt.Fprintf(stderr, "tributary worker: %v\n", err)
		return 2
	}
	src := worker.Sources{File: f.configFile, Environ: os.Environ(), Overrides: f.overrides}
	if currentRunEnv().container {
		src.Defaults, src.ShortForms = worker.ContainerDefaults(), true
	}
	props, err := src.Merge()
	if err != nil {
		fmt.Fprintf(stderr, "tributary worker: %v\n", err)
		return 2
	}
	if f.printConfig {
		// The settings as given: references stay references, secrets
		// are hidden.
		if _, _, err := loadWorkerConfig(props, src.Environ); err != nil {
			fmt.Fprintf(stderr, "tributary worker: invalid configuration: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
			return 2
		}
		for _, line := range worker.Printable(props) {
			fmt.Fprintln(stdout, line)
		}
		return 0
	}
	cfg, warnings, err := loadWorkerConfig(props, src.Environ)
	if err != nil {
		fmt.Fprintf(stderr, "tributary worker: invalid configuration: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 2
	}
	for _, w := range warnings {
		logger.Warn(w)
	}
	rw, err := startWorker(ctx, cfg, logger, loggers, secrets, newRegistry(), "change listeners")
	if err != nil {
		fmt.Fprintf(stderr, "tributary worker: %v\n", err)
		return 1
	}
	if err := <-rw.done; err != nil {
		logger.Error("worker failed", "err", err)
		return 1
	}
	return 0
}

// loadWorkerConfig resolves the config providers' references in the
// worker's properties and parses them.
func loadWorkerConfig(props properties.Properties, environ []string) (worker.Config, []string, error) {
	resolved, warnings, err := worker.ResolveReferences(props, environ)
	if err != nil {
		return worker.Config{}, nil, err
	}
	cfg, more, err := worker.FromProperties(resolved)
	if cfg.JAASConfigFile == "" {
		// Where Kafka Connect's users name the JAAS file: KAFKA_OPTS.
		cfg.JAASConfigFile = jaasFileFromKafkaOpts(environ)
	}
	return cfg, append(warnings, more...), err
}
