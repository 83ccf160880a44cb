package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"strings"
	"syscall"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/worker"
)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// serverFlags are the flags the broker and worker commands share.
type serverFlags struct {
	configFile, level string
	overrides         multiFlag
	printConfig       bool
}

// parse parses the command's args into f and returns the positional ones;
// flags may follow them (tributary worker FILE --override k=v, the order of
// Kafka's own scripts). On --help (exit 0) or a bad flag (exit 2, said on
// stderr) it returns ok false and the exit code.
func (f *serverFlags) parse(name, help string, args []string, stdout, stderr io.Writer) (positional []string, code int, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.configFile, "config", "", "")
	fs.Var(&f.overrides, "override", "")
	fs.StringVar(&f.level, "log-level", "info", "")
	fs.BoolVar(&f.printConfig, "print-config", false, "")
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fmt.Fprint(stdout, help)
				return nil, 0, false
			}
			fmt.Fprintf(stderr, "tributary %s: %v (see --help)\n", name, err)
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func brokerCommand() command {
	return command{
		name:    "broker",
		summary: "run the bundled single-node Kafka-protocol broker",
		run:     runBroker,
	}
}

const brokerHelp = `Usage: tributary broker [--config FILE] [--override key=value]...

Runs Tributary's bundled broker: a single-node, durable broker that speaks the
Kafka wire protocol, so any Kafka client can produce to and consume from it.

Settings use Kafka's broker property names; the file is a Kafka
server.properties. Overrides are applied after the file, in order.

Flags:
  --config FILE           read settings from a server.properties file
  --override key=value    set one setting (repeatable)
  --log-level LEVEL       debug, info, warn or error (default info)
  --print-config          print the settings the broker would run with (the
                          file, then the overrides; passwords hidden) and exit
  -h, --help              show this help

Main settings (defaults in brackets):
  listeners                        NAME://host:port,... to bind [PLAINTEXT://127.0.0.1:9092;
                                   in the container image PLAINTEXT://0.0.0.0:9092]
  listener.security.protocol.map   NAME:PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL,...
                                   [PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL]
  advertised.listeners             NAME://host:port clients are told to dial [listeners, a
                                   wildcard host replaced by 127.0.0.1, in the
                                   container image by the container's host name]
  ssl.keystore.*, ssl.truststore.*, ssl.client.auth, ssl.principal.mapping.rules
                                   TLS (PEM, PKCS12, JKS), per listener as
                                   listener.name.<name>.ssl.*
  sasl.enabled.mechanisms          PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (PLAIN users:
                                   listener.name.<name>.plain.sasl.jaas.config)
  tributary.scram.credentials   SCRAM users created at start if missing, e.g.
                                   SCRAM-SHA-512=[name=admin,password=secret]
  authorizer.class.name            any value turns ACLs on [unset: no authorizer]
  super.users                      User:admin;User:ops: allowed everything
  log.dirs                         data directory, locked while the broker runs [./data/broker]
  num.partitions                   partitions of auto-created topics [1]
  auto.create.topics.enable        create unknown topics on metadata requests [true]
  delete.topic.enable              allow deleting topics [true]
  log.retention.ms / .hours        default retention.ms of topics [168 hours]
  log.retention.bytes              default retention.bytes [-1, no limit]
  log.segment.bytes                default segment.bytes [1073741824]
  log.roll.ms / .hours             default segment.ms [168 hours]
  log.retention.check.interval.ms  how often retention runs [300000]
  message.max.bytes                default max.message.bytes [1048588]
  socket.request.max.bytes         largest request accepted [104857600]
  tributary.acks1.fsync            make acks=1 wait for fsync too [false]
  rest.proxy.listeners             http(s)://host:port where Confluent's REST Proxy API
                                   (v2 and v3) is served [empty: not served]
  rest.proxy.listeners.https.ssl.* its HTTPS key store [else the broker's ssl.*]
  rest.proxy.authentication.jaas.file
                                   basic authentication: a JAAS file whose
                                   KafkaConnect section names the credentials
                                   file, as the REST API's [empty: none]
  rest.proxy.consumer.instance.timeout.ms
                                   idle time after which a v2 consumer instance
                                   is closed [300000]
  rest.proxy.schema.registry.url   registry of the proxy's Avro and JSON Schema
                                   formats [the bundled one when served]
  tributary.metrics.listener       where GET /metrics (Prometheus text) is served
                                   [http://127.0.0.1:9404; in the container image
                                   http://0.0.0.0:9404; empty: not served]
  schema.registry.listeners        http://host:port of the bundled schema registry
                                   (Confluent Schema Registry's REST API, stored in
                                   the compacted topic _schemas) [empty: not served]
  schema.registry.kafkastore.topic its topic [_schemas]
  schema.registry.group.id         instances with the same id share the topic, one
                                   writing at a time [schema-registry]

Durability: a produce with acks=all (-1) is answered only after its data is
fsynced; fsyncs are group-committed across connections and partitions.
acks=1 is answered after the write reaches the page cache (set
tributary.acks1.fsync=true to wait for the fsync). Consumers only ever see
fsynced records. SIGINT or SIGTERM stops the broker cleanly.

Example:
  tributary broker --override log.dirs=/var/lib/tributary --override num.partitions=3
`

func runBroker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f serverFlags
	rest, code, ok := f.parse("broker", brokerHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "tributary broker: unexpected argument %q (see --help)\n", rest[0])
		return 2
	}
	logger, err := newLogger(stderr, f.level)
	if err != nil {
		fmt.Fprintf(stderr, "tributary broker: %v\n", err)
		return 2
	}
	props := properties.Properties{}
	if f.configFile != "" {
		if props, err = properties.Load(f.configFile); err != nil {
			fmt.Fprintf(stderr, "tributary broker: %v\n", err)
			return 2
		}
	}
	for _, o := range f.overrides {
		k, v, err := properties.ParseOverride(o)
		if err != nil {
			fmt.Fprintf(stderr, "tributary broker: --override: %v\n", err)
			return 2
		}
		props[k] = v
	}
	env := currentRunEnv()
	if env.container && props["listeners"] == "" {
		props["listeners"] = "PLAINTEXT://" + net.JoinHostPort(env.bindHost(), "9092")
	}
	if _, set := props["tributary.metrics.listener"]; env.container && !set {
		props["tributary.metrics.listener"] = "http://" + net.JoinHostPort(env.bindHost(), "9404")
	}
	regProps := takeRegistryProps(props)
	regAddr, err := parseRegistryListener(regProps[propRegistryListeners])
	if err != nil {
		fmt.Fprintf(stderr, "tributary broker: invalid configuration: %v\n", err)
		return 2
	}
	bprops := maps.Clone(props) // without the REST proxy's settings; --print-config shows them all
	proxy, err := takeRESTProxySettings(bprops)
	if err != nil {
		fmt.Fprintf(stderr, "tributary broker: invalid configuration: %v\n", err)
		return 2
	}
	cfg, warnings, err := broker.FromProperties(bprops)
	if err != nil {
		fmt.Fprintf(stderr, "tributary broker: invalid configuration: %v\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 2
	}
	if f.printConfig {
		maps.Copy(props, regProps)
		for _, line := range worker.Printable(props) {
			fmt.Fprintln(stdout, line)
		}
		return 0
	}
	for _, w := range warnings {
		logger.Warn(w)
	}
	cfg.WildcardHost = env.hostname
	cfg.Logger = loglevel.Named(logger, "dev.tributary.broker")
	reg := newRegistry()
	cfg.Metrics = reg
	b, err := broker.Open(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tributary broker: %v%s\n", err, portHint(err, "change listeners"))
		return 1
	}
	if cfg.MetricsListener != "" {
		defer serveMetrics(cfg.MetricsListener, reg, cfg.Logger)()
	}
	if regAddr != "" {
		regURL, stop, err := startRegistry(ctx, regAddr, b.Addr(), regProps, loglevel.Named(logger, "dev.tributary.schemaregistry"))
		if err != nil {
			fmt.Fprintf(stderr, "tributary broker: %v%s\n", err, portHint(err, "change "+propRegistryListeners))
			b.Close()
			return 1
		}
		defer stop()
		if proxy.registryURL == "" {
			proxy.registryURL = regURL
		}
	}
	if proxy.listener != "" {
		stop, _, err := startRESTProxy(proxy, []string{b.Addr()}, loglevel.Named(logger, "dev.tributary.restproxy"))
		if err != nil {
			fmt.Fprintf(stderr, "tributary broker: %v%s\n", err, portHint(err, "change rest.proxy.listeners"))
			b.Close()
			return 1
		}
		defer stop()
	}
	if err := b.Serve(ctx); err != nil {
		logger.Error("broker failed", "err", err)
		b.Close()
		return 1
	}
	if err := b.Close(); err != nil {
		logger.Error("closing the broker", "err", err)
		return 1
	}
	return 0
}

// portHint returns what to do about a port already in use, said as fix;
// "" for any other error.
func portHint(err error, fix string) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return " (another process uses the port: stop it, or " + fix + ")"
	}
	return ""
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	l, _, err := newLevelLogger(w, level, nil)
	return l, err
}

// newLevelLogger returns a text logger on w, named dev.tributary, whose
// level and whose named children's levels can be changed at run time (the
// worker's /admin/loggers endpoints do); level is the root logger's.
func newLevelLogger(w io.Writer, level string, secrets *redact.Set) (*slog.Logger, *loglevel.Registry, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	var h slog.Handler = slog.NewTextHandler(w, &slog.HandlerOptions{Level: loglevel.All})
	if secrets != nil {
		h = redact.NewHandler(h, secrets)
	}
	reg := loglevel.New(h, l)
	return reg.Logger("dev.tributary"), reg, nil
}
