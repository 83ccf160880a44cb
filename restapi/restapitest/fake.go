// Package restapitest provides an in-memory worker.Herder for tests of the
// REST layer and of its clients. The fake behaves like a single Kafka
// Connect worker with the FileStream connectors installed: it enforces
// the same rules (duplicate names, offsets only when STOPPED, …) and
// answers with Kafka Connect's messages, so that the contract table in
// restapi/contract passes against it and against a real worker alike.
package restapitest

import (
	"context"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker"
	"github.com/tributary-dev/tributary/worker/transform"
)

// Plugin class names the fake knows.
const (
	FileSourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	FileSinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	fileSourceTask  = "org.apache.kafka.connect.file.FileStreamSourceTask"
	fileSinkTask    = "org.apache.kafka.connect.file.FileStreamSinkTask"
	workerID        = "127.0.0.1:8083"
)

// version is the fake's, and its plugins': a worker's.
var version = worker.Version

// Herder is an in-memory worker.Herder. The zero value is not usable; call
// NewHerder.
type Herder struct {
	mu         sync.Mutex
	health     error
	connectors map[string]*connector
	order      []string
	loggers    *loglevel.Registry
}

type connector struct {
	config  map[string]string
	class   string
	typ     string // source or sink
	state   string // target: RUNNING, PAUSED, STOPPED
	tasks   int
	offsets []worker.PartitionOffset
}

var _ worker.Herder = (*Herder)(nil)

// NewHerder returns an empty fake herder.
func NewHerder() *Herder {
	return &Herder{
		connectors: map[string]*connector{},
		loggers:    newLoggers(),
	}
}

// newLoggers are the fake worker's loggers: Kafka's and the FileStream
// connectors' classes, as a Kafka Connect worker lists them.
func newLoggers() *loglevel.Registry {
	r := loglevel.New(slog.DiscardHandler, slog.LevelInfo)
	for _, n := range []string{"org.apache.kafka", FileSourceClass, fileSourceTask, FileSinkClass, fileSinkTask} {
		r.Logger(n)
	}
	return r
}

// SetHealth makes Health return err (nil: healthy).
func (h *Herder) SetHealth(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.health = err
}

// ServerInfo implements worker.Herder.
func (h *Herder) ServerInfo(context.Context) worker.ServerInfo {
	return worker.ServerInfo{Version: version, Commit: "0000000000000000", KafkaClusterID: "fake-cluster"}
}

// Health implements worker.Herder.
func (h *Herder) Health(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.health
}

// Connectors implements worker.Herder.
func (h *Herder) Connectors(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.order), nil
}

func (h *Herder) get(name string) (*connector, error) {
	c, ok := h.connectors[name]
	if !ok {
		return nil, worker.ErrUnknownConnector(name)
	}
	return c, nil
}

func (h *Herder) info(name string, c *connector) worker.ConnectorInfo {
	tasks := []worker.TaskID{}
	for i := range c.tasks {
		tasks = append(tasks, worker.TaskID{Connector: name, Task: i})
	}
	return worker.ConnectorInfo{Name: name, Config: maps.Clone(c.config), Tasks: tasks, Type: c.typ}
}

// ConnectorInfo implements worker.Herder.
func (h *Herder) ConnectorInfo(_ context.Context, name string) (worker.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return worker.ConnectorInfo{}, err
	}
	return h.info(name, c), nil
}

// ConnectorConfig implements worker.Herder.
func (h *Herder) ConnectorConfig(_ context.Context, name string) (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	return maps.Clone(c.config), nil
}

// validate checks config as a worker does, with the FileStream
// connectors' own validation; it returns the connector's class and type.
func validate(config map[string]string) (class, typ string, err error) {
	cc, ok := config["connector.class"]
	if !ok {
		return "", "", worker.Errorf(worker.KindBadRequest, "Connector config contains no connector type")
	}
	spec, ok := fileSpec(cc)
	if !ok {
		return "", "", worker.Errorf(worker.KindBadRequest,
			"Failed to find any class that implements Connector and which name matches %s, available connectors are: %s, %s", cc,
			pluginDesc(FileSinkClass, "sink"), pluginDesc(FileSourceClass, "source"))
	}
	conn := file.Sink()
	if spec.Type == sdk.Source {
		conn = file.Source()
	}
	own, err := conn.Validate(context.Background(), config)
	if err != nil {
		return "", "", err
	}
	if err := worker.ValidationError(worker.Validation(spec, fakeConverters, config, own, worker.ClientOverrides{})); err != nil {
		return "", "", err
	}
	return spec.Class, string(spec.Type), nil
}

// taskCount is how many tasks the FileStream connectors make.
func taskCount(typ string, config map[string]string) int {
	if typ == "source" {
		return 1
	}
	n, err := strconv.Atoi(config["tasks.max"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// PutConnectorConfig implements worker.Herder.
func (h *Herder) PutConnectorConfig(_ context.Context, name string, config map[string]string, allowReplace bool, initialState string) (bool, worker.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, exists := h.connectors[name]
	if exists && !allowReplace {
		return false, worker.ConnectorInfo{}, worker.ErrConnectorExists(name)
	}
	class, typ, err := validate(config)
	if err != nil {
		return false, worker.ConnectorInfo{}, err
	}
	if exists {
		// Kafka Connect answers an update with the task list of the old
		// generation; new tasks come with the next rebalance.
		info := h.info(name, old)
		old.config, old.class, old.typ = maps.Clone(config), class, typ
		info.Config, info.Type = maps.Clone(config), typ
		if old.state != worker.StateStopped {
			old.tasks = taskCount(typ, config)
		}
		return false, info, nil
	}
	c := &connector{config: maps.Clone(config), class: class, typ: typ, state: worker.StateRunning}
	if initialState != "" {
		c.state = initialState
	}
	if c.state == worker.StateRunning {
		c.tasks = taskCount(typ, config) // created PAUSED or STOPPED: no tasks yet
	}
	h.connectors[name] = c
	h.order = append(h.order, name)
	// Tasks are not generated yet when Kafka Connect answers a create.
	info := h.info(name, c)
	info.Tasks = []worker.TaskID{}
	return true, info, nil
}

// PatchConnectorConfig implements worker.Herder.
func (h *Herder) PatchConnectorConfig(_ context.Context, name string, patch map[string]*string) (worker.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return worker.ConnectorInfo{}, err
	}
	config := maps.Clone(c.config)
	for k, v := range patch {
		if v == nil {
			delete(config, k)
		} else {
			config[k] = *v
		}
	}
	class, typ, err := validate(config)
	if err != nil {
		return worker.ConnectorInfo{}, err
	}
	info := h.info(name, c)
	info.Config = maps.Clone(config)
	c.config, c.class, c.typ = config, class, typ
	if c.state != worker.StateStopped {
		c.tasks = taskCount(typ, config)
	}
	return info, nil
}

// DeleteConnector implements worker.Herder.
func (h *Herder) DeleteConnector(_ context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.get(name); err != nil {
		return err
	}
	delete(h.connectors, name)
	h.order = slices.DeleteFunc(h.order, func(n string) bool { return n == name })
	return nil
}

func (h *Herder) status(name string, c *connector) worker.ConnectorStateInfo {
	st := worker.ConnectorStateInfo{
		Name:      name,
		Connector: worker.ConnectorState{State: c.state, WorkerID: workerID, Version: version},
		Tasks:     []worker.TaskState{},
		Type:      c.typ,
	}
	for i := range c.tasks {
		st.Tasks = append(st.Tasks, worker.TaskState{ID: i, State: c.state, WorkerID: workerID, Version: version})
	}
	return st
}

// ConnectorStatus implements worker.Herder.
func (h *Herder) ConnectorStatus(_ context.Context, name string) (worker.ConnectorStateInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return worker.ConnectorStateInfo{}, worker.Errorf(worker.KindNotFound, "No status found for connector %s", name)
	}
	return h.status(name, c), nil
}

// TaskStatus implements worker.Herder.
func (h *Herder) TaskStatus(_ context.Context, name string, task int) (worker.TaskState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok || task < 0 || task >= c.tasks {
		return worker.TaskState{}, worker.Errorf(worker.KindNotFound, "No status found for task %s-%d", name, task)
	}
	return h.status(name, c).Tasks[task], nil
}

// TaskConfigs implements worker.Herder.
func (h *Herder) TaskConfigs(_ context.Context, name string) ([]worker.TaskInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	out := []worker.TaskInfo{}
	for i := range c.tasks {
		cfg := maps.Clone(c.config)
		if c.typ == "source" {
			cfg["task.class"] = fileSourceTask
		} else {
			cfg["task.class"] = fileSinkTask
		}
		out = append(out, worker.TaskInfo{ID: worker.TaskID{Connector: name, Task: i}, Config: cfg})
	}
	return out, nil
}

func unknown(name string) error {
	return worker.Errorf(worker.KindNotFound, "Unknown connector %s", name)
}

// RestartConnector implements worker.Herder.
func (h *Herder) RestartConnector(_ context.Context, name string, includeTasks, onlyFailed bool) (*worker.ConnectorStateInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return nil, worker.Errorf(worker.KindNotFound, "Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	st := h.status(name, c)
	// Nothing here ever fails, so onlyFailed restarts nothing.
	if !onlyFailed {
		st.Connector.State = worker.StateRestarting
		if includeTasks {
			for i := range st.Tasks {
				st.Tasks[i].State = worker.StateRestarting
			}
		}
	}
	return &st, nil
}

// RestartTask implements worker.Herder.
func (h *Herder) RestartTask(_ context.Context, name string, task int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return worker.Errorf(worker.KindNotFound, "Unknown connector: %s", name)
	}
	if task < 0 || task >= c.tasks {
		return worker.Errorf(worker.KindNotFound, "Unknown task: %s-%d", name, task)
	}
	return nil
}

func (h *Herder) setState(name, state string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return unknown(name)
	}
	c.state = state
	switch {
	case state == worker.StateStopped:
		c.tasks = 0
	case state == worker.StateRunning && c.tasks == 0:
		c.tasks = taskCount(c.typ, c.config)
	}
	// Pausing keeps the tasks there are (none for a stopped connector).
	return nil
}

// PauseConnector implements worker.Herder.
func (h *Herder) PauseConnector(_ context.Context, name string) error {
	return h.setState(name, worker.StatePaused)
}

// ResumeConnector implements worker.Herder.
func (h *Herder) ResumeConnector(_ context.Context, name string) error {
	return h.setState(name, worker.StateRunning)
}

// StopConnector implements worker.Herder.
func (h *Herder) StopConnector(_ context.Context, name string) error {
	return h.setState(name, worker.StateStopped)
}

// ConnectorTopics implements worker.Herder. Like Kafka Connect, an unknown
// connector simply has no active topics.
func (h *Herder) ConnectorTopics(context.Context, string) ([]string, error) {
	return []string{}, nil
}

// ResetConnectorTopics implements worker.Herder.
func (h *Herder) ResetConnectorTopics(context.Context, string) error { return nil }

// Offsets implements worker.Herder.
func (h *Herder) Offsets(_ context.Context, name string) (worker.ConnectorOffsets, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return worker.ConnectorOffsets{}, err
	}
	return worker.ConnectorOffsets{Offsets: slices.Clone(c.offsets)}, nil
}

func (h *Herder) stopped(name string) (*connector, error) {
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	if c.state != worker.StateStopped {
		return nil, worker.Errorf(worker.KindBadRequest,
			"Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	return c, nil
}

// AlterOffsets implements worker.Herder. Like a worker, it asks the
// connector (the FileStream connectors' own alterOffsets checks) before it
// changes anything.
func (h *Herder) AlterOffsets(ctx context.Context, name string, offsets worker.ConnectorOffsets) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.stopped(name)
	if err != nil {
		return "", err
	}
	if err := worker.CheckOffsets(c.typ, offsets); err != nil {
		return "", err
	}
	var change sdk.OffsetChange
	if c.typ == "source" {
		for _, po := range offsets.Offsets {
			so := sdk.SourceOffset{Partition: worker.ConnectNumbers(po.Partition)}
			if po.Offset != nil {
				so.Offset = worker.ConnectNumbers(po.Offset)
			}
			change.Source = append(change.Source, so)
		}
	}
	if err := approve(ctx, c, change); err != nil {
		return "", err
	}
	for _, po := range offsets.Offsets {
		i := slices.IndexFunc(c.offsets, func(o worker.PartitionOffset) bool { return reflect.DeepEqual(o.Partition, po.Partition) })
		switch {
		case po.Offset == nil && i >= 0:
			c.offsets = slices.Delete(c.offsets, i, i+1)
		case po.Offset == nil:
		case i >= 0:
			c.offsets[i].Offset = po.Offset
		default:
			c.offsets = append(c.offsets, po)
		}
	}
	return "The offsets for this connector have been altered successfully", nil
}

// approve asks the connector's alterOffsets (the FileStream connectors')
// about change; a refusal is a 400 with its message.
func approve(ctx context.Context, c *connector, change sdk.OffsetChange) error {
	conn := file.Sink()
	if c.typ == "source" {
		conn = file.Source()
	}
	if _, err := conn.(sdk.OffsetApprover).ApproveOffsets(ctx, c.config, change); err != nil {
		return worker.Errorf(worker.KindBadRequest, "%s", err.Error())
	}
	return nil
}

// ResetOffsets implements worker.Herder.
func (h *Herder) ResetOffsets(ctx context.Context, name string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.stopped(name)
	if err != nil {
		return "", err
	}
	change := sdk.OffsetChange{Source: []sdk.SourceOffset{}}
	for _, o := range c.offsets {
		change.Source = append(change.Source, sdk.SourceOffset{Partition: o.Partition})
	}
	if err := approve(ctx, c, change); err != nil {
		return "", err
	}
	c.offsets = nil
	return "The offsets for this connector have been reset successfully", nil
}

// pluginDesc renders a plugin as Kafka Connect's PluginDesc.toString does
// (the fake's plugins are built in: location 'classpath').
func pluginDesc(class, typ string) string {
	return "PluginDesc{klass=class " + class + ", name='" + class + "', version='" + version + "', encodedVersion=" + version +
		", type=" + typ + ", typeName='" + typ + "', location='classpath'}"
}

// Plugins implements worker.Herder.
func (h *Herder) Plugins(_ context.Context, all bool) ([]worker.PluginInfo, error) {
	out := []worker.PluginInfo{
		{Class: FileSinkClass, Type: "sink", Version: version},
		{Class: FileSourceClass, Type: "source", Version: version},
	}
	if all {
		out = append(out,
			worker.PluginInfo{Class: "org.apache.kafka.connect.transforms.InsertField$Value", Type: "transformation", Version: version},
			worker.PluginInfo{Class: "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", Type: "predicate", Version: version},
		)
		for _, c := range []string{worker.BooleanConverter, worker.ByteArrayConverter, worker.DoubleConverter, worker.FloatConverter,
			worker.IntegerConverter, worker.LongConverter, worker.ShortConverter, worker.JSONConverter, worker.StringConverter} {
			out = append(out, worker.PluginInfo{Class: c, Type: "converter", Version: version})
		}
	}
	return out, nil
}

// fileSpec is the spec of a FileStream connector by class or alias.
func fileSpec(class string) (sdk.Spec, bool) {
	for _, c := range []sdk.Connector{file.Source(), file.Sink()} {
		if spec := c.Spec(); spec.Matches(class) {
			spec.Version = version
			return spec, true
		}
	}
	return sdk.Spec{}, false
}

// PluginConfig implements worker.Herder: the FileStream connectors' keys
// and the worker's, as a worker answers.
func (h *Herder) PluginConfig(_ context.Context, plugin string) ([]sdk.ConfigKeyInfo, error) {
	spec, ok := fileSpec(plugin)
	if !ok {
		if defs, ok := worker.ConverterConfig(plugin); ok {
			return defs, nil
		}
		if defs, _, ok := transform.Definition(plugin); ok {
			return defs, nil
		}
		return nil, worker.Errorf(worker.KindNotFound, "Unknown plugin %s.", plugin)
	}
	return worker.ConnectorConfigDefs(spec), nil
}

// fakeConverters are the fake worker's converters.
var fakeConverters = worker.Converters{Key: worker.JSONConverter, Value: worker.JSONConverter}

// ValidateConfig implements worker.Herder, as a worker does, with the real
// FileStream connectors' validation of their keys.
func (h *Herder) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (sdk.ConfigInfos, error) {
	spec, ok := fileSpec(config["connector.class"])
	if !ok {
		return sdk.ConfigInfos{}, worker.Errorf(worker.KindBadRequest,
			"Failed to find any class that implements Connector and which name matches %s, available connectors are: %s, %s", config["connector.class"],
			pluginDesc(FileSinkClass, "sink"), pluginDesc(FileSourceClass, "source"))
	}
	conn := file.Sink()
	if spec.Type == sdk.Source {
		conn = file.Source()
	}
	own, err := conn.Validate(ctx, config)
	if err != nil {
		return sdk.ConfigInfos{}, err
	}
	return worker.Validation(spec, fakeConverters, config, own, worker.ClientOverrides{}), nil
}

// Loggers implements worker.Herder.
func (h *Herder) Loggers(context.Context) (map[string]worker.LoggerLevel, error) {
	out := map[string]worker.LoggerLevel{}
	for n, l := range h.loggers.Levels() {
		out[n] = worker.LoggerLevel{Level: l.Level, LastModified: l.LastModified}
	}
	return out, nil
}

// Logger implements worker.Herder.
func (h *Herder) Logger(_ context.Context, name string) (worker.LoggerLevel, error) {
	l, ok := h.loggers.Level(name)
	if !ok {
		return worker.LoggerLevel{}, worker.Errorf(worker.KindNotFound, "Logger %s not found.", name)
	}
	return worker.LoggerLevel{Level: l.Level, LastModified: l.LastModified}, nil
}

// SetLogLevel implements worker.Herder as a worker does: name and every
// logger under it get level (on this one fake worker for either scope).
func (h *Herder) SetLogLevel(_ context.Context, name, level, scope string) ([]string, error) {
	changed, err := h.loggers.SetLevel(name, level)
	if err != nil {
		return nil, worker.Errorf(worker.KindNotFound, "invalid log level '%s'.", level)
	}
	if scope == "cluster" {
		return nil, nil
	}
	return changed, nil
}
