package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tributary-dev/tributary/internal/configprovider"
	"github.com/tributary-dev/tributary/internal/kafkatls"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/convert"
	"github.com/tributary-dev/tributary/worker/herder"
	"github.com/tributary-dev/tributary/worker/metrics"
	"github.com/tributary-dev/tributary/worker/store"
	"github.com/tributary-dev/tributary/worker/task"
	"github.com/tributary-dev/tributary/worker/transform"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Options are the parts of a worker that are not in its properties.
type Options struct {
	// Logger receives the worker's logs; default slog.Default().
	Logger *slog.Logger
	// Loggers holds the loggers' levels, which the /admin/loggers endpoints
	// show and change; Logger should be one of its loggers. Default: a
	// registry over Logger's handler, whose own level then bounds what
	// a level set through the endpoints can show.
	Loggers *loglevel.Registry
	// RESTAddr is the address the REST listener is bound to; it names the
	// worker (worker_id) unless rest.advertised.* say otherwise.
	RESTAddr net.Addr
	// Loader runs connectors; default: a plugins.Host serving the built-in
	// connectors (plugins.BuiltinCommands) plus plugin.path.
	Loader plugins.Loader
	// Environ is the environment the config providers (${env:…}) and the
	// AWS credential chain read: os.Environ() in a real worker; nil for
	// none.
	Environ []string
	// Secrets collects the values the worker hides (connectors'
	// passwords, what their references resolve to): give the same set to
	// the log handler (redact.NewHandler) so that no log line shows them.
	// Default: a set of the worker's own, which hides them from status
	// traces and REST answers only.
	Secrets *redact.Set
	// Metrics is where the worker registers its metrics (Kafka Connect's
	// groups, named by tributary.metrics.naming); nil: nowhere. The
	// command creates it and serves it on /metrics.
	Metrics prometheus.Registerer
}

// Worker is one connect worker: stores, plugin host, herder and membership.
// Serve its Herder over HTTP with package restapi.
type Worker struct {
	cfg    Config
	opts   Options
	logger *slog.Logger
	h      *driver
	id     string
	// worker and admin are the settings of the worker's own clients: the
	// top-level client settings, and those with admin.* on top.
	worker, admin *clientSettings
}

// New checks the configuration and prepares a worker; Run starts it.
func New(cfg Config, opts Options) (*Worker, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RESTAddr == nil {
		return nil, errors.New("worker: the REST listener's address is required")
	}
	if _, err := convert.New(cfg.KeyConverter, true, cfg.KeyConverterConfig); err != nil {
		return nil, fmt.Errorf("worker: key.converter: %w", err)
	}
	if _, err := convert.New(cfg.ValueConverter, false, cfg.ValueConverterConfig); err != nil {
		return nil, fmt.Errorf("worker: value.converter: %w", err)
	}
	if opts.Loggers == nil {
		opts.Loggers = loglevel.New(opts.Logger.Handler(), slog.LevelInfo)
		opts.Logger = opts.Loggers.Logger("dev.tributary")
	}
	w := &Worker{cfg: cfg, opts: opts, id: cfg.WorkerID(opts.RESTAddr)}
	w.logger = loglevel.Named(opts.Logger, "dev.tributary.worker").With("worker", w.id)
	loglevel.Named(w.logger, "dev.tributary.worker.task") // listed before a task runs
	var err error
	if w.worker, err = newClientSettings(cfg.ClientConfig, opts.Environ, cfg.JAASConfigFile); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	adminProps := maps.Clone(cfg.ClientConfig)
	maps.Copy(adminProps, cfg.AdminConfig)
	if w.admin, err = newClientSettings(adminProps, opts.Environ, cfg.JAASConfigFile); err != nil {
		return nil, fmt.Errorf("worker: admin.%w", err)
	}
	for prefix, props := range map[string]map[string]string{"": cfg.ClientConfig, "producer.": cfg.ProducerConfig, "consumer.": cfg.ConsumerConfig, "admin.": cfg.AdminConfig} {
		cs, err := newClientSettings(props, opts.Environ, cfg.JAASConfigFile)
		if err != nil {
			return nil, fmt.Errorf("worker: %s%w", prefix, err)
		}
		for _, k := range cs.ignored {
			w.logger.Warn("client property has no equivalent here and is ignored", "property", prefix+k)
		}
		for _, n := range cs.sec.Notes {
			w.logger.Warn(prefix + n)
		}
	}
	// Kafka Connect's rule, and the mistake users make most: connector
	// producers and consumers do not inherit the worker's security
	// settings.
	if w.worker.sec.Secured() {
		for _, prefix := range []string{"producer.", "consumer."} {
			props := cfg.ProducerConfig
			if prefix == "consumer." {
				props = cfg.ConsumerConfig
			}
			if _, set := props["security.protocol"]; !set {
				w.logger.Warn("the worker connects to Kafka with security.protocol="+w.worker.sec.Protocol+
					" but connectors' clients would connect with PLAINTEXT: as in Kafka Connect, they do not inherit the worker's security settings; repeat them under "+prefix+" (e.g. "+prefix+"security.protocol, "+prefix+"sasl.mechanism, "+prefix+"sasl.jaas.config, "+prefix+"ssl.truststore.location)",
					"property", prefix+"security.protocol")
			}
		}
	}
	providers, err := configprovider.New(cfg.ProviderSettings, opts.Environ)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	if opts.Secrets == nil {
		opts.Secrets = &redact.Set{}
	}
	for _, props := range []map[string]string{cfg.ClientConfig, cfg.ProducerConfig, cfg.ConsumerConfig, cfg.AdminConfig} {
		opts.Secrets.Add(secretValues(sdk.Spec{}, props)...)
	}
	w.opts = opts
	m := metrics.New(metrics.Config{Style: cfg.MetricsNaming, Window: cfg.MetricsWindow, WorkerID: w.id, Version: Version, Commit: Commit})
	if opts.Metrics != nil {
		if err := opts.Metrics.Register(m); err != nil {
			return nil, fmt.Errorf("worker: metrics: %w", err)
		}
	}
	w.h = newDriver(cfg, w.logger, opts.Loggers, w.id, m)
	w.h.providers, w.h.secrets = providers, opts.Secrets
	if w.usesHTTPS() {
		// The client that forwards requests to other workers: the
		// listeners' TLS settings (listeners.https.*, else ssl.*), its
		// key store sent as a client certificate, as Kafka Connect's.
		tlsCfg, _, err := kafkatls.Client(cfg.HTTPS)
		if err != nil {
			return nil, fmt.Errorf("worker: the REST client's TLS settings (listeners.https.*, else ssl.*): %w", err)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tlsCfg
		w.h.client = forwardClient{&http.Client{Timeout: 60 * time.Second, Transport: tr}}
	}
	return w, nil
}

// usesHTTPS reports whether a REST listener, or the advertised one, is
// HTTPS.
func (w *Worker) usesHTTPS() bool {
	if w.cfg.AdvertisedScheme() == "https" {
		return true
	}
	for _, l := range append(slices.Clone(w.cfg.Listeners), w.cfg.AdminListeners...) {
		if l.Scheme == "https" {
			return true
		}
	}
	return false
}

// RESTClient is the HTTP client for requests to other workers (the REST
// API forwards through it): with the listeners' TLS settings when they
// use HTTPS.
func (w *Worker) RESTClient() *http.Client { return w.h.client.Client }

// Herder is what the REST API serves.
func (w *Worker) Herder() Herder { return w.h }

// ID is the worker id (advertised host:port).
func (w *Worker) ID() string { return w.id }

// clientOpts are the options of one of the worker's own clients (cs: its
// top-level settings or its admin settings).
func (w *Worker) clientOpts(cs *clientSettings) []kgo.Opt {
	// A short metadata min age lets clients see topics created a moment
	// ago (internal topics at start, auto-created topics) without waiting
	// for franz-go's default 5 s.
	opts := []kgo.Opt{kgo.SeedBrokers(w.cfg.BootstrapServers...), kgo.MetadataMinAge(100 * time.Millisecond)}
	return append(opts, cs.opts...)
}

// taskClientOpts gives a task's producer or consumer the worker's
// properties for it (base: producer.* or consumer.*, not the top-level
// settings, as in Kafka Connect) with the connector's overrides (its keys
// under prefix, which the override policy allows) on top, and returns the
// merged properties. An override the client or the policy refuses fails
// the task; one it has no equivalent for is logged.
func (w *Worker) taskClientOpts(base, conn map[string]string, prefix string, id TaskID) ([]kgo.Opt, map[string]string, error) {
	overrides := withOverrides(nil, conn, prefix)
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if msg := w.cfg.OverridePolicy.refuses(k); msg != "" {
			return nil, nil, fmt.Errorf("client override %s%s: %s", prefix, k, msg)
		}
	}
	props := withOverrides(base, conn, prefix)
	cs, err := newClientSettings(props, w.opts.Environ, w.cfg.JAASConfigFile)
	if err != nil {
		return nil, nil, fmt.Errorf("client settings (%s*, %s*): %w", strings.TrimSuffix(prefix, "override."), prefix, err)
	}
	for _, k := range cs.ignored {
		if _, over := overrides[k]; over {
			w.logger.Warn("client override has no equivalent here and is ignored", "connector", id.Connector, "task", id.Task, "property", prefix+k)
		}
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(w.cfg.BootstrapServers...), kgo.MetadataMinAge(100 * time.Millisecond)}, cs.opts...)
	return opts, props, nil
}

// connectorAdminOpts are the options of a connector's admin client: the
// worker's top-level and admin.* settings with the connector's
// admin.override.* on top, as Kafka Connect's Worker.adminConfigs.
func (w *Worker) connectorAdminOpts(name string, conn map[string]string) ([]kgo.Opt, error) {
	base := maps.Clone(w.cfg.ClientConfig)
	if base == nil {
		base = map[string]string{}
	}
	maps.Copy(base, w.cfg.AdminConfig)
	opts, _, err := w.taskClientOpts(base, conn, adminOverride, TaskID{Connector: name, Task: -1})
	return opts, err
}

// Run starts the worker and blocks until ctx is cancelled, then stops every
// task (flushing offsets) and leaves the group.
func (w *Worker) Run(ctx context.Context) error {
	start := time.Now()
	log := w.logger
	w.h.stage.Store("connecting to the Kafka cluster")
	// Client ids as Kafka Connect's (ConnectUtils.clientIdBase: group.id
	// and a dash), each client with its metrics.
	cm := w.h.metrics
	idBase := w.cfg.GroupID + "-"
	clientMetrics := func(kind, id string) []kgo.Opt {
		return append([]kgo.Opt{kgo.ClientID(id)}, cm.Client(kind, id).Opt()...)
	}
	adminCl, err := kgo.NewClient(append(w.clientOpts(w.admin), clientMetrics(metrics.ClientAdmin, idBase+"shared-admin")...)...)
	if err != nil {
		return fmt.Errorf("worker: admin client: %w", err)
	}
	defer adminCl.Close()
	adm := kadm.NewClient(adminCl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		if why := explainConnError(err, w.admin.sec); why != "" {
			return fmt.Errorf("worker: cannot connect to the Kafka cluster at %s: %s: %w", strings.Join(w.cfg.BootstrapServers, ","), why, err)
		}
		return fmt.Errorf("worker: cannot reach the Kafka cluster at %s: %w (check bootstrap.servers)", strings.Join(w.cfg.BootstrapServers, ","), err)
	}
	w.h.clusterID = md.Cluster
	w.h.groups = kadmGroups{adm: adm}
	w.h.adminOpts = w.connectorAdminOpts

	w.h.stage.Store("reading the internal topics")
	storeOpts := func(topic string, parts int32, rf int16, settings map[string]string, id string) store.Options {
		return store.Options{Brokers: w.cfg.BootstrapServers, Topic: topic, Partitions: parts, ReplicationFactor: rf,
			TopicConfigs: settings, ClientOpts: append(w.clientOpts(w.worker)[1:], clientMetrics(metrics.ClientConsumer, idBase+id)...),
			Logger: loglevel.Named(log, "dev.tributary.worker.store")}
	}
	var opened atomic.Bool // restart requests older than the worker are history
	cfgOpts := storeOpts(w.cfg.ConfigTopic, 1, w.cfg.ConfigReplication, w.cfg.ConfigTopicSettings, "configs")
	// With exactly-once source support the config and offsets topics are
	// read read_committed; preparing it already makes the leader write the
	// config topic in transactions (KafkaConfigBackingStore).
	cfgOpts.ReadCommitted = w.cfg.ExactlyOnceSource.Enabled()
	if w.cfg.ExactlyOnceSource.TransactionalLeader() {
		cfgOpts.TransactionalID = LeaderTransactionalID(w.cfg.GroupID)
	}
	cfgStore, err := store.OpenConfigStore(ctx, cfgOpts,
		func(ev store.ConfigEvent) {
			if ev.Kind == store.LoggerLevelSet {
				// A cluster-scope PUT /admin/loggers, by any worker.
				changed, err := w.h.loggers.SetLevel(ev.Logger, ev.Level)
				if err != nil {
					log.Warn("ignoring a cluster log level", "namespace", ev.Logger, "err", err)
				} else {
					log.Info("cluster log level set", "namespace", ev.Logger, "level", ev.Level, "loggers", changed)
				}
				return
			}
			if ev.Kind == store.RestartRequested {
				if opened.Load() {
					r := ev.Restart
					w.h.configQ.push(configEvent{restart: &r})
				}
				return
			}
			w.h.configQ.push(configEvent{})
		})
	if err != nil {
		return fmt.Errorf("worker: config topic %s: %w", w.cfg.ConfigTopic, err)
	}
	opened.Store(true)
	defer cfgStore.Close()
	offOpts := storeOpts(w.cfg.OffsetTopic, w.cfg.OffsetPartitions, w.cfg.OffsetReplication, w.cfg.OffsetTopicSettings, "offsets")
	offOpts.ReadCommitted = w.cfg.ExactlyOnceSource.Enabled()
	offStore, err := store.OpenOffsetStore(ctx, offOpts)
	if err != nil {
		return fmt.Errorf("worker: offset topic %s: %w", w.cfg.OffsetTopic, err)
	}
	defer offStore.Close()
	statStore, err := store.OpenStatusStore(ctx, storeOpts(w.cfg.StatusTopic, w.cfg.StatusPartitions, w.cfg.StatusReplication, w.cfg.StatusTopicSettings, "statuses"))
	if err != nil {
		return fmt.Errorf("worker: status topic %s: %w", w.cfg.StatusTopic, err)
	}
	defer statStore.Close()
	statuses := &statusAdapter{s: statStore}
	w.h.configs = cfgStore
	w.h.statuses = statuses
	// Connectors' own offsets topics (offsets.storage.topic), opened as
	// their tasks or requests need them, with the worker's offsets topic
	// settings.
	topics := &offsetTopics{open: func(ctx context.Context, topic string) (*store.OffsetStore, error) {
		o := storeOpts(topic, w.cfg.OffsetPartitions, w.cfg.OffsetReplication, w.cfg.OffsetTopicSettings, "offsets-"+topic)
		o.ReadCommitted = w.cfg.ExactlyOnceSource.Enabled()
		return store.OpenOffsetStore(ctx, o)
	}}
	defer topics.close()
	routed := routedOffsets{global: offStore, topics: topics, topicOf: func(name string) string {
		cfg, _ := cfgStore.Connector(name)
		if t := strings.TrimSpace(cfg["offsets.storage.topic"]); t != w.cfg.OffsetTopic {
			return t
		}
		return ""
	}}
	w.h.offsets = routed
	w.h.apiReady.Store(true) // after the backends: REST readers see them set

	w.h.stage.Store("starting the plugin host")
	loader := w.opts.Loader
	if loader == nil {
		// Without the first-party connectors' executable the worker still
		// serves the plugins of plugin.path, as Kafka Connect runs with
		// whatever plugins it finds; connectors of the missing classes fail
		// their creation with "not found".
		builtin, err := plugins.BuiltinCommands()
		if err != nil {
			log.Error("first-party connectors unavailable", "err", err)
		}
		// Specifications are cached by binary hash, so a restart runs only
		// new or changed plugin executables.
		cacheDir := ""
		if d, err := os.UserCacheDir(); err == nil {
			cacheDir = filepath.Join(d, "tributary", "plugin-specs")
		}
		host, err := plugins.NewHost(ctx, plugins.Config{PluginPath: w.cfg.PluginPath, Builtin: builtin, Logger: log,
			StopTimeout: w.cfg.TaskShutdownTimeout, CacheDir: cacheDir, Isolation: w.cfg.PluginIsolation})
		if err != nil {
			return fmt.Errorf("worker: plugins: %w", err)
		}
		loader = host
	}
	w.h.pl.Store(&pluginLoader{loader})
	statuses.version = func(name string) string {
		cfg, _ := cfgStore.Connector(name)
		spec, err := loader.Spec(cfg["connector.class"])
		if err != nil {
			return ""
		}
		return spec.Version
	}
	w.h.start = w.taskStarter(routed, statuses)

	w.h.stage.Store("joining the worker group")
	cl, err := kgo.NewClient(append(w.clientOpts(w.worker), clientMetrics(metrics.ClientConnect, cm.ClientID())...)...)
	if err != nil {
		return fmt.Errorf("worker: group client: %w", err)
	}
	defer cl.Close()
	m, err := w.h.joinGroup(ctx, cl)
	if err != nil {
		return err
	}
	loopCtx, stopLoop := context.WithCancel(context.WithoutCancel(ctx))
	w.h.ctx = loopCtx
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); w.h.run(loopCtx) }()
	defer func() { stopLoop(); <-loopDone }()
	memberCtx, stopMember := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMember()
	memberErr := make(chan error, 1)
	go func() { memberErr <- m.Run(memberCtx) }()
	log.Info("worker started", "group", w.cfg.GroupID, "startup", time.Since(start).Round(time.Millisecond))
	var runErr error
	select {
	case <-ctx.Done():
	case err := <-memberErr:
		// Only problems retrying cannot fix end the membership.
		runErr = fmt.Errorf("worker: membership in group %s: %w", w.cfg.GroupID, err)
		memberErr <- nil
	}
	log.Info("worker stopping")
	// Stop every connector and task first (statuses UNASSIGNED), then
	// leave the group so that the others take the work over at once.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.TaskShutdownTimeout+15*time.Second)
	if _, err := w.h.call(sctx, func(t herder.Token) herder.Event { return herder.Shutdown{Reply: t} }); err != nil {
		log.Warn("not every connector and task stopped in time", "err", err)
	}
	cancel()
	stopMember()
	<-memberErr
	return runErr
}

// converters builds a task's converters: the connector's own settings when
// it names a converter, else the worker's.
// converterConfig is the class and settings of a connector's converter
// name (key.converter, …): the connector's own when it names a class,
// else the worker's.
func converterConfig(conn map[string]string, name, workerClass string, workerConf map[string]string) (string, map[string]string) {
	if c := strings.TrimSpace(conn[name]); c != "" {
		return c, convert.Prefixed(conn, name+".")
	}
	return workerClass, workerConf
}

// errorPolicy reads a connector's errors.* settings (validated when the
// connector was created) for its tasks' runners.
func (w *Worker) errorPolicy(conn map[string]string) task.ErrorPolicy {
	class := func(name, workerClass string) string { c, _ := converterConfig(conn, name, workerClass, nil); return c }
	on := func(k string) bool { return strings.EqualFold(strings.TrimSpace(conn[k]), "true") }
	p := task.ErrorPolicy{
		TolerateAll: strings.TrimSpace(conn["errors.tolerance"]) == "all",
		Log:         on("errors.log.enable"), LogMessages: on("errors.log.include.messages"),
		DLQTopic: strings.TrimSpace(conn["errors.deadletterqueue.topic.name"]), DLQContextHeaders: on("errors.deadletterqueue.context.headers.enable"),
		KeyConverter: class("key.converter", w.cfg.KeyConverter), ValueConverter: class("value.converter", w.cfg.ValueConverter),
		HeaderConverter: class("header.converter", w.cfg.HeaderConverter),
	}
	if rf, err := strconv.ParseInt(strings.TrimSpace(conn["errors.deadletterqueue.topic.replication.factor"]), 10, 16); err == nil {
		p.DLQReplication = int16(rf)
	}
	return p
}

// mirrorPrefix is the package of Kafka's MirrorMaker 2 connectors.
const mirrorPrefix = "org.apache.kafka.connect.mirror."

// forceByteArray sets ByteArrayConverter for the keys, values and headers
// of the MirrorMaker 2 connectors, as Kafka's dedicated driver does: they
// return records as Kafka's bytes, which any other converter would
// re-encode.
func forceByteArray(spec sdk.Spec, conn map[string]string) map[string]string {
	if !strings.HasPrefix(spec.Class, mirrorPrefix) {
		return conn
	}
	out := make(map[string]string, len(conn)+3)
	for k, v := range conn {
		out[k] = v
	}
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		out[k] = ByteArrayConverter
	}
	return out
}

func (w *Worker) converters(conn map[string]string) (key, value convert.Converter, header convert.HeaderConverter, err error) {
	kc, kconf := converterConfig(conn, "key.converter", w.cfg.KeyConverter, w.cfg.KeyConverterConfig)
	vc, vconf := converterConfig(conn, "value.converter", w.cfg.ValueConverter, w.cfg.ValueConverterConfig)
	hc, hconf := converterConfig(conn, "header.converter", w.cfg.HeaderConverter, w.cfg.HeaderConverterConfig)
	if key, err = convert.New(kc, true, kconf); err != nil {
		return nil, nil, nil, fmt.Errorf("key.converter: %w", err)
	}
	if value, err = convert.New(vc, false, vconf); err != nil {
		return nil, nil, nil, fmt.Errorf("value.converter: %w", err)
	}
	if header, err = convert.NewHeader(hc, hconf); err != nil {
		return nil, nil, nil, fmt.Errorf("header.converter: %w", err)
	}
	return key, value, header, nil
}

func (w *Worker) taskStarter(offs routedOffsets, statuses *statusAdapter) taskStarter {
	return func(ctx context.Context, id TaskID, spec sdk.Spec, conn, tc map[string]string, paused bool, eos *taskEOS, tm *metrics.Task, report func(state, trace string)) (taskRunner, error) {
		key, value, header, err := w.converters(forceByteArray(spec, conn))
		if err != nil {
			return nil, err
		}
		// Each task has its own chain: transformations cache schemas
		// without locks.
		chain, err := transform.New(conn)
		if err != nil {
			return nil, err
		}
		info := sdk.TaskInfo{Connector: id.Connector, Task: id.Task}
		reporter := task.StatusReporterFunc(func(_ sdk.TaskInfo, st task.State, terr *sdk.TaskError) {
			trace := ""
			if terr != nil {
				trace = terr.Trace
				if trace == "" {
					trace = terr.Message
				}
			}
			report(string(st), trace)
		})
		noter := &topicNoter{connector: id.Connector, task: id.Task, note: statuses.noteTopic, logger: w.logger}
		switch spec.Type {
		case "source":
			clientOpts, _, err := w.taskClientOpts(w.cfg.ProducerConfig, conn, producerOverride, id)
			if err != nil {
				return nil, err
			}
			var eo *task.ExactlyOnce
			if eos != nil {
				if eo, err = w.exactlyOnce(ctx, id, conn, offs, eos); err != nil {
					return nil, err
				}
				tm.SetTransactional()
			}
			startPlugin := func() (plugins.SourceTask, error) {
				st, err := w.startSourceTask(ctx, spec.Class, info, tc, offs.Reader(id.Connector), eo != nil && eo.Boundary == task.BoundaryConnector)
				if err != nil {
					return nil, err
				}
				if mr, ok := st.(plugins.MetricsReporter); ok {
					tm.SetPluginMetrics(mr)
				}
				return trackedSource{st, noter}, nil
			}
			var tf task.SourceTransform
			if chain.Len() > 0 {
				tf = chain.Source
			}
			sc := task.SourceConfig{Info: info, Key: key, Value: value, Header: header, Transform: tf,
				// The Java producer lets the broker auto-create topics
				// (allow.auto.create.topics), and so does this one.
				ClientOpts: append(clientOpts, kgo.AllowAutoTopicCreation()), Offsets: offs, Status: reporter, Errors: w.errorPolicy(conn), Metrics: tm,
				FlushInterval: w.cfg.OffsetFlushInterval, Logger: loglevel.Named(w.logger, "dev.tributary.worker.task"), ExactlyOnce: eo}
			if eo != nil {
				// The plugin starts once the task's producer is initialized
				// (it fences the task's previous instance, whose open
				// transaction would hold up the plugin's offsets read).
				sc.StartTask = func(context.Context) (plugins.SourceTask, error) { return startPlugin() }
			} else if sc.Task, err = startPlugin(); err != nil {
				return nil, err
			}
			r, err := task.NewSource(sc)
			if err != nil {
				if sc.Task != nil {
					sc.Task.Stop(ctx)
				}
				return nil, err
			}
			if paused {
				r.Pause()
			}
			r.Start()
			return r, nil
		case "sink":
			topics := splitTopics(conn["topics"])
			clientOpts, props, err := w.taskClientOpts(w.sinkConsumerConfig(), conn, consumerOverride, id)
			if err != nil {
				return nil, err
			}
			maxPoll, _ := maxPollRecords(props) // checked by taskClientOpts
			st, err := w.h.pl.Load().StartSinkTask(ctx, spec.Class, info, withTopics(tc, conn))
			if err != nil {
				return nil, err
			}
			if mr, ok := st.(plugins.MetricsReporter); ok {
				tm.SetPluginMetrics(mr)
			}
			var tf task.SinkTransform
			if chain.Len() > 0 {
				tf = chain.Sink
			}
			r, err := task.NewSink(task.SinkConfig{Info: info, Task: trackedSink{st, noter}, Topics: topics, TopicsRegex: strings.TrimSpace(conn["topics.regex"]), Transform: tf,
				Key: key, Value: value, Header: header, Status: reporter, Errors: w.errorPolicy(conn), Metrics: tm,
				// The Java consumer asks the broker to auto-create the topics
				// it subscribes to (allow.auto.create.topics=true), and so
				// does this one.
				ClientOpts:     append(clientOpts, kgo.AllowAutoTopicCreation()),
				MaxPollRecords: maxPoll, FlushInterval: w.cfg.OffsetFlushInterval, Logger: loglevel.Named(w.logger, "dev.tributary.worker.task")})
			if err != nil {
				st.Stop(ctx)
				return nil, err
			}
			if paused {
				r.Pause()
			}
			r.Start()
			return r, nil
		}
		return nil, fmt.Errorf("connector class %s has unknown type %q", spec.Class, spec.Type)
	}
}

// exactlyOnce is how a source task runs with exactly-once support: its
// transactional id, its connector's transaction boundaries, its offsets
// store, and the herder's checks around its producer's initialization.
func (w *Worker) exactlyOnce(ctx context.Context, id TaskID, conn map[string]string, offs routedOffsets, eos *taskEOS) (*task.ExactlyOnce, error) {
	boundary, err := task.ParseTransactionBoundary(conn["transaction.boundary"])
	if err != nil {
		return nil, err
	}
	interval := w.cfg.OffsetFlushInterval
	if v := strings.TrimSpace(conn["transaction.boundary.interval.ms"]); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("transaction.boundary.interval.ms %q is not a number of milliseconds", v)
		}
		interval = time.Duration(ms) * time.Millisecond
	}
	e := &task.ExactlyOnce{TransactionalID: TransactionalID(w.cfg.GroupID, id.Connector, id.Task), Boundary: boundary, Interval: interval,
		Offsets: offs.global, Preflight: eos.Preflight, Verify: eos.Verify}
	// The connector's own offsets topic is the primary store, in the
	// transactions; the worker's gets a copy.
	own, err := offs.own(ctx, id.Connector)
	if err != nil {
		return nil, err
	}
	if own != nil {
		e.Offsets, e.Secondary = own, offs.global
	}
	return e, nil
}

// startSourceTask starts a source task's plugin, with a transaction
// context when its connector defines the transaction boundaries.
func (w *Worker) startSourceTask(ctx context.Context, class string, info sdk.TaskInfo, tc map[string]string, offsets plugins.OffsetReader, txnContext bool) (plugins.SourceTask, error) {
	l := w.h.pl.Load()
	if !txnContext {
		return l.StartSourceTask(ctx, class, info, tc, offsets)
	}
	ts, ok := l.Loader.(plugins.SourceTaskStarter)
	if !ok {
		return nil, errors.New("the plugin host cannot give tasks a transaction context (transaction.boundary=connector)")
	}
	return ts.StartSourceTaskWith(ctx, class, info, tc, offsets, plugins.SourceTaskOptions{TransactionContext: true})
}

// sinkConsumerConfig is the worker's consumer.* settings for sink tasks,
// with the worker's session.timeout.ms as the consumer's unless set: a
// sink task moved off a dead worker then reads within the same 15 s as
// everything else, instead of waiting out the Java consumer's 45 s default
// session for the dead consumer to leave its group.
func (w *Worker) sinkConsumerConfig() map[string]string {
	c := maps.Clone(w.cfg.ConsumerConfig)
	if c == nil {
		c = map[string]string{}
	}
	if _, ok := c["session.timeout.ms"]; !ok {
		c["session.timeout.ms"] = strconv.FormatInt(w.cfg.SessionTimeout.Milliseconds(), 10)
		if _, ok := c["heartbeat.interval.ms"]; !ok {
			c["heartbeat.interval.ms"] = strconv.FormatInt(w.cfg.HeartbeatInterval.Milliseconds(), 10)
		}
	}
	return c
}

// withTopics gives sink tasks the connector's topics settings, as Kafka
// Connect's Worker does.
func withTopics(tc, conn map[string]string) map[string]string {
	out := make(map[string]string, len(tc)+2)
	for k, v := range tc {
		out[k] = v
	}
	for _, k := range []string{"topics", "topics.regex"} {
		if v, ok := conn[k]; ok {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	return out
}
