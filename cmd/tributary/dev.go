package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/internal/dirlock"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/worker"
)

func devCommand() command {
	return command{name: "dev", summary: "run broker + worker + built-in connectors in one process", run: runDev}
}

const devHelp = `Usage: tributary dev [--data-dir DIR] [--broker-port N] [--rest-port N] [--registry-port N]
                     [--rest-proxy-port N] [--plugin-path DIRS] [--demo]
                     [--secure] [--config FILE] [--override key=value]...

Runs Tributary's bundled broker, one connect worker and its REST API (Kafka
Connect's) in one process, on 127.0.0.1, with the built-in connectors
(FileStreamSource/FileStreamSink, datagen, the Postgres and MongoDB
sources, the S3 and Iceberg sinks; served by the tributary-connector-*
executables, from beside tributary or from PATH) and transformations
available. State lives in the data directory, so
a second start resumes where the first stopped. The data directory belongs
to one process at a time (DIR/.lock): a second dev on it exits at once,
naming the process that holds it. GET /metrics on the REST port serves the
worker's and the broker's Prometheus series together; /healthz and /readyz
are the probes (see tributary worker --help).

Flags:
  --data-dir DIR      where the broker and the demo keep their data (default ./data)
  --broker-port N     Kafka listener port on 127.0.0.1 (default 9092)
  --rest-port N       REST API port on 127.0.0.1 (default 8083)
  --registry-port N   schema registry port on 127.0.0.1 (default 8081; 0: none):
                      Confluent Schema Registry's REST API, stored in the
                      broker's compacted topic _schemas
  --rest-proxy-port N the Kafka REST proxy's port (Confluent REST Proxy's v2
                      and v3 APIs) on 127.0.0.1 (default 8082; 0: not served)
                      The registry and the REST proxy are left out, with a
                      warning, when their default port is taken; a port
                      given and taken is an error.
                      In the container image (TRIBUTARY_CONTAINER=true) all
                      of them listen on all of the container's interfaces; the broker
                      is still advertised as 127.0.0.1:PORT, so publish the
                      port under the same number (-p 127.0.0.1:9092:9092)
  --plugin-path DIRS  comma-separated directories (or executables) of
                      third-party connector plugins, as the worker's plugin.path
  --demo              also create a demo pipeline: datagen -> topic "demo" ->
                      FileStreamSink writing DIR/demo-output.txt, the S3
                      sink writing Parquet files to the local lake DIR/lake
                      (query it: duckdb -c "select * from 'DIR/lake/**/*.parquet'"),
                      and the Iceberg sink keeping table demo.records (the
                      latest record of each key) in the SQLite catalog
                      DIR/iceberg/catalog.db, warehouse DIR/iceberg/warehouse;
                      and show progress
  --secure            serve the REST API over HTTPS with a self-signed
                      certificate and HTTP basic authentication (user admin
                      and a generated password, printed once, at the first
                      --secure start); both are kept in DIR/secure. Without
                      it the REST API is open to anyone who can reach the
                      port, which is only this machine (127.0.0.1). With it
                      the bundled broker is SASL_SSL with SCRAM-SHA-512 too
                      (user admin, password in DIR/secure/broker-password; a
                      Kafka client's settings in DIR/secure/client.properties)
  --config FILE       a worker properties file (connect-distributed.properties
                      keys) whose settings replace dev's defaults below
  --override k=v      set one worker setting (repeatable; applied last)
  --log-level LEVEL   the root logger's level: debug, info, warn or error (default
                      warn; info also logs each plugin loaded from --plugin-path);
                      PUT /admin/loggers/{name} changes any logger's at run time
  -h, --help          show this help

Converters: dev's worker writes keys with StringConverter and values with
schemaless JsonConverter:
  key.converter=org.apache.kafka.connect.storage.StringConverter
  value.converter=org.apache.kafka.connect.json.JsonConverter
  value.converter.schemas.enable=false
so a connector's value schema does not reach the topic (plain JSON
payloads). To keep it, as Kafka Connect's default does:
  tributary dev --override value.converter.schemas.enable=true
A connector's own key.converter / value.converter settings take precedence,
as in Kafka Connect. Other defaults: group.id=tributary-dev, the three
internal topics connect-configs, connect-offsets and connect-status with
replication factor 1, offset.flush.interval.ms=1000. bootstrap.servers,
listeners and plugin.path come from the flags above.

Then, for example:
  curl -s localhost:8083/connectors
  curl -s -X POST -H 'Content-Type: application/json' localhost:8083/connectors -d @pipeline.json
  kcat -b 127.0.0.1:9092 -t demo -C -e

Ctrl-C stops everything cleanly.
`

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "./data", "")
	brokerPort := fs.Int("broker-port", 9092, "")
	restPort := fs.Int("rest-port", 8083, "")
	registryPort := fs.Int("registry-port", 8081, "")
	restProxyPort := fs.Int("rest-proxy-port", 8082, "")
	demo := fs.Bool("demo", false, "")
	pluginPath := fs.String("plugin-path", "", "")
	level := fs.String("log-level", "warn", "")
	configFile := fs.String("config", "", "")
	secure := fs.Bool("secure", false, "")
	var overrides multiFlag
	fs.Var(&overrides, "override", "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, devHelp)
			return 0
		}
		fmt.Fprintf(stderr, "tributary dev: %v (see --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tributary dev: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	for _, p := range []int{*brokerPort, *restPort, *registryPort, *restProxyPort} {
		if p < 0 || p > 65535 {
			fmt.Fprintf(stderr, "tributary dev: port %d is out of range\n", p)
			return 2
		}
	}
	secrets := &redact.Set{}
	logger, loggers, err := newLevelLogger(stderr, *level, secrets)
	if err != nil {
		fmt.Fprintf(stderr, "tributary dev: %v\n", err)
		return 2
	}
	start := time.Now()
	// The data directory is this process's alone, before anything in it is
	// read: a second dev on it would run the same connectors twice and
	// repair the running broker's logs under its feet.
	lock, err := dirlock.Acquire(*dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "tributary dev: %v\n", err)
		return 1
	}
	defer lock.Release()
	env := currentRunEnv()
	// One registry for the broker and the worker, served on the REST
	// listener's /metrics.
	reg := newRegistry()
	var sec *devSecurity
	if *secure {
		hosts := []string{"127.0.0.1", "localhost"}
		if env.container {
			if h, err := os.Hostname(); err == nil {
				hosts = append(hosts, h)
			}
		}
		if sec, err = setUpDevSecurity(*dataDir, hosts); err != nil {
			fmt.Fprintf(stderr, "tributary dev: --secure: %v\n", err)
			return 1
		}
	}
	bcfg := broker.DefaultConfig()
	bcfg.Listener = net.JoinHostPort(env.bindHost(), strconv.Itoa(*brokerPort))
	bcfg.LogDir = filepath.Join(*dataDir, "broker")
	bcfg.Logger = loglevel.Named(logger, "dev.tributary.broker")
	bcfg.GroupInitialRebalanceDelay = 0
	bcfg.Metrics = reg // served with the worker's on the REST listener's /metrics
	if sec != nil {
		// The broker too: SASL_SSL with SCRAM, the worker logging in as
		// the generated user.
		if err := sec.secureBroker(&bcfg); err != nil {
			fmt.Fprintf(stderr, "tributary dev: --secure: %v\n", err)
			return 1
		}
	}
	b, err := broker.Open(bcfg)
	if err != nil {
		fmt.Fprintf(stderr, "tributary dev: %v%s\n", err, portHint(err, "pass another --broker-port"))
		return 1
	}
	bctx, stopBroker := context.WithCancel(context.Background())
	brokerDone := make(chan error, 1)
	go func() { brokerDone <- b.Serve(bctx) }()
	defer func() {
		stopBroker()
		<-brokerDone
		b.Close()
	}()

	registryURL := ""
	if *registryPort > 0 {
		url, stop, err := startRegistry(ctx, net.JoinHostPort(env.bindHost(), strconv.Itoa(*registryPort)), b.Addr(), nil,
			loglevel.Named(logger, "dev.tributary.schemaregistry"))
		switch {
		case err != nil && flagSet(fs, "registry-port"):
			fmt.Fprintf(stderr, "tributary dev: %v%s\n", err, portHint(err, "pass another --registry-port (0: no registry)"))
			return 1
		case err != nil:
			// The default port may be another registry's (Confluent's
			// runs on 8081 too): dev runs without its own.
			logger.Warn("no schema registry: its default port is taken (pass --registry-port)", "err", err)
		default:
			defer stop()
			registryURL = url
		}
	}
	restProxyURL := ""
	if *restProxyPort > 0 {
		rs := restProxySettings{listener: net.JoinHostPort(env.bindHost(), strconv.Itoa(*restProxyPort)), registryURL: registryURL}
		stop, u, err := startRESTProxy(rs, []string{b.Addr()}, loglevel.Named(logger, "dev.tributary.restproxy"))
		switch {
		case err != nil && flagSet(fs, "rest-proxy-port"):
			fmt.Fprintf(stderr, "tributary dev: %v%s\n", err, portHint(err, "pass another --rest-proxy-port (0: no REST proxy)"))
			return 1
		case err != nil:
			logger.Warn("the Kafka REST proxy is not served: its default port is taken (pass --rest-proxy-port, or 0)", "err", err)
		default:
			restProxyURL = u
			defer stop()
		}
	}

	props := properties.Properties{
		"group.id":                          "tributary-dev",
		"config.storage.topic":              "connect-configs",
		"offset.storage.topic":              "connect-offsets",
		"status.storage.topic":              "connect-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"key.converter":                     worker.StringConverter,
		"value.converter":                   worker.JSONConverter,
		"value.converter.schemas.enable":    "false",
		"listeners":                         "http://" + net.JoinHostPort(env.bindHost(), strconv.Itoa(*restPort)),
		"offset.flush.interval.ms":          "1000",
		"session.timeout.ms":                "10000",
		"heartbeat.interval.ms":             "1000",
	}
	if sec != nil {
		maps.Copy(props, sec.workerProps(net.JoinHostPort(env.bindHost(), strconv.Itoa(*restPort))))
	}
	if err := devSettings(props, *configFile, overrides); err != nil {
		fmt.Fprintf(stderr, "tributary dev: %v (see --help)\n", err)
		return 2
	}
	props["bootstrap.servers"] = b.Addr()
	if sec != nil {
		maps.Copy(props, sec.kafkaClientProps())
	}
	if *pluginPath != "" || props["plugin.path"] == "" {
		props["plugin.path"] = *pluginPath
	}
	wcfg, warnings, err := loadWorkerConfig(props, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "tributary dev: %v\n", err)
		return 1
	}
	for _, w := range warnings {
		logger.Warn(w)
	}
	rw, err := startWorker(ctx, wcfg, logger, loggers, secrets, reg, "pass another --rest-port")
	if err != nil {
		fmt.Fprintf(stderr, "tributary dev: %v\n", err)
		return 1
	}
	var healthClient *http.Client
	user, password := "", ""
	if sec != nil {
		if healthClient, err = sec.client(); err != nil {
			fmt.Fprintf(stderr, "tributary dev: %v\n", err)
			return 1
		}
		user, password = devUser, sec.password
		if password == "" {
			user = "" // an earlier start's password: /health is checked in the worker
		}
	}
	if user == "" && sec != nil {
		err = waitHerderHealthy(ctx, rw)
	} else {
		err = waitHealthy(ctx, rw.url, healthClient, user, password)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tributary dev: worker did not become ready: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Tributary dev is ready in %s\n  Kafka bootstrap: %s\n  REST API:        %s\n  data:            %s\n",
		time.Since(start).Round(time.Millisecond), b.Addr(), rw.url, *dataDir)
	if registryURL != "" {
		fmt.Fprintf(stdout, "  Schema registry: %s\n", registryURL)
	}
	if restProxyURL != "" {
		fmt.Fprintf(stdout, "  REST proxy:      %s (Confluent REST Proxy v2 and v3 APIs)\n", restProxyURL)
	}
	switch {
	case sec == nil && env.container:
		fmt.Fprintln(stdout, "  security:        none: the REST API and the broker are open to anyone who reaches the container's ports (--secure for HTTPS and a password)")
	case sec == nil:
		fmt.Fprintln(stdout, "  security:        none: the REST API and the broker are open to anyone on this machine, and only this machine (127.0.0.1; --secure for HTTPS and a password)")
	default:
		fmt.Fprintf(stdout, "  security:        HTTPS (self-signed: trust %s) and basic authentication, user %s\n", sec.certPEM, devUser)
		if sec.password != "" {
			fmt.Fprintf(stdout, "  password:        %s   (shown this once; delete %s for a new one)\n", sec.password, filepath.Join(sec.dir, "credentials.properties"))
		} else {
			fmt.Fprintf(stdout, "  password:        the one shown at the first --secure start (delete %s for a new one)\n", filepath.Join(sec.dir, "credentials.properties"))
		}
		fmt.Fprintf(stdout, "  try:             TRIBUTARY_PASSWORD=... tributary connectors list --url %s --cacert %s --user %s\n", rw.url, sec.certPEM, devUser)
		fmt.Fprintf(stdout, "  the broker:      SASL_SSL, SCRAM-SHA-512 user %s; a Kafka client's settings: %s\n", devUser, sec.clientPropsFile)
	}
	if *demo {
		if err := runDemo(ctx, rw, *dataDir, stdout, logger); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "tributary dev: demo: %v\n", err)
		}
	} else {
		fmt.Fprintln(stdout, "Press Ctrl-C to stop.")
	}
	if err := <-rw.done; err != nil {
		logger.Error("worker failed", "err", err)
		return 1
	}
	fmt.Fprintln(stdout, "stopped")
	return 0
}

// devSettings applies the worker properties file (if any) and then the
// --override settings over dev's defaults in props.
func devSettings(props properties.Properties, file string, overrides []string) error {
	if file != "" {
		loaded, err := properties.Load(file)
		if err != nil {
			return err
		}
		maps.Copy(props, loaded)
	}
	for _, o := range overrides {
		k, v, err := properties.ParseOverride(o)
		if err != nil {
			return fmt.Errorf("--override: %w", err)
		}
		props[k] = v
	}
	return nil
}

// runDemo creates (or updates) the demo pipeline and prints its progress
// until ctx ends.
func runDemo(ctx context.Context, rw *runningWorker, dataDir string, stdout io.Writer, logger *slog.Logger) error {
	if _, err := plugins.BuiltinCommands(); err != nil {
		return fmt.Errorf("the demo runs first-party connectors: %w", err)
	}
	out, err := filepath.Abs(filepath.Join(dataDir, "demo-output.txt"))
	if err != nil {
		return err
	}
	lake, err := filepath.Abs(filepath.Join(dataDir, "lake"))
	if err != nil {
		return err
	}
	ice, err := filepath.Abs(filepath.Join(dataDir, "iceberg"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(ice, 0o755); err != nil {
		return err
	}
	// The demo records keep their schema in the topic (JsonConverter with
	// schemas.enable=true) so that the lake gets typed Parquet columns.
	withSchemas := func(m map[string]string) map[string]string {
		m["value.converter"] = worker.JSONConverter
		m["value.converter.schemas.enable"] = "true"
		return m
	}
	pipeline := []struct {
		name   string
		config map[string]string
	}{
		{"demo-datagen", withSchemas(map[string]string{
			"connector.class": "dev.tributary.connect.datagen.DatagenConnector",
			"kafka.topic":     "demo", "records.per.sec": "200", "payload.bytes": "32", "key.cardinality": "100",
		})},
		{"demo-file-sink", withSchemas(map[string]string{
			"connector.class": "FileStreamSink", "topics": "demo", "file": out,
		})},
		{"demo-lake", withSchemas(map[string]string{
			"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "demo",
			"store.url": "file://" + lake, "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
			"flush.size": "1000", "rotate.schedule.interval.ms": "10000", "timezone": "UTC",
		})},
		// The same stream as an Iceberg table on the embedded catalog (SQLite
		// beside a local warehouse): one row per key, the latest record.
		{"demo-iceberg", withSchemas(map[string]string{
			"connector.class":                    "org.apache.iceberg.connect.IcebergSinkConnector",
			"topics":                             "demo",
			"iceberg.tables":                     "demo.records",
			"iceberg.tables.auto-create-enabled": "true",
			"iceberg.tables.upsert-mode-enabled": "true",
			"iceberg.tables.default-id-columns":  "key",
			"iceberg.control.commit.interval-ms": "10000",
			"iceberg.catalog.type":               "sql",
			"iceberg.catalog.uri":                "sqlite:///" + filepath.Join(ice, "catalog.db"),
			"iceberg.catalog.warehouse":          "file://" + filepath.Join(ice, "warehouse"),
		})},
	}
	h := rw.w.Herder()
	for _, c := range pipeline {
		if _, _, err := h.PutConnectorConfig(ctx, c.name, c.config, true, ""); err != nil {
			return fmt.Errorf("create connector %s: %w", c.name, err)
		}
	}
	fmt.Fprintf(stdout, "Demo pipeline: datagen -> topic demo -> %s\n  and -> Parquet files under %s (duckdb -c \"select count(*) from '%s/**/*.parquet'\")\n"+
		"  and -> Iceberg table demo.records, the latest record per key, catalog %s (see the README's \"Postgres to an Iceberg table\")\n"+
		"  curl -s %s/connectors?expand=status\n", out, lake, lake, filepath.Join(ice, "catalog.db"), rw.url)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	last := -1
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			n := countLines(out)
			st, err := h.ConnectorStatus(ctx, "demo-file-sink")
			state := "?"
			if err == nil {
				state = st.Connector.State
			}
			if n != last {
				fmt.Fprintf(stdout, "  %d records in %s (sink %s), %d Parquet files in the lake\n", n, filepath.Base(out), state, countParquet(lake))
				last = n
			}
		}
	}
}

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		n++
	}
	return n
}

// countParquet counts the Parquet files under dir.
func countParquet(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			n++
		}
		return nil
	})
	return n
}

// flagSet says whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
