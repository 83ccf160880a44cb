package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/tributary-dev/tributary/sdk/schema/jackson"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TargetState is what a connector should be doing (Kafka Connect's
// TargetState). A connector without a target-state record is STARTED.
type TargetState string

// Target states.
const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// TaskID names a task of a connector.
type TaskID struct {
	Connector string
	Task      int
}

// RestartRequest is a KIP-745 restart request (restart-connector-<name>).
type RestartRequest struct {
	Connector    string
	IncludeTasks bool
	OnlyFailed   bool
}

// ConfigEventKind says what a config-topic record changed.
type ConfigEventKind int

// Config event kinds.
const (
	// ConnectorConfigUpdated: connector-<name> written.
	ConnectorConfigUpdated ConfigEventKind = iota + 1
	// ConnectorRemoved: connector-<name> tombstoned.
	ConnectorRemoved
	// TaskConfigsCommitted: commit-<name> applied task configs (or found
	// them inconsistent; see ConfigSnapshot.Inconsistent).
	TaskConfigsCommitted
	// TargetStateChanged: target-state-<name> written or tombstoned.
	TargetStateChanged
	// RestartRequested: restart-connector-<name> written.
	RestartRequested
	// LoggerLevelSet: logger-cluster-<namespace> written (a cluster-wide
	// log level, KIP-976) after the store was opened; Logger and Level
	// say what. Levels written before are history, as in Kafka Connect.
	LoggerLevelSet
)

// ConfigEvent tells the herder what a config-topic record changed; it then
// reads a Snapshot. Offset is the config offset after the record.
type ConfigEvent struct {
	Kind      ConfigEventKind
	Connector string
	Restart   RestartRequest // RestartRequested only
	// Logger and Level: LoggerLevelSet only.
	Logger, Level string
	Offset        int64
}

// ConfigSnapshot is a consistent copy of the config topic's state (Kafka
// Connect's ClusterConfigState).
type ConfigSnapshot struct {
	// Offset is the position in the config topic: the offset after the last
	// record read. Members advertise it in the group protocol.
	Offset int64
	// Connectors maps connector name to its raw config.
	Connectors map[string]map[string]string
	// Tasks maps connector name to its committed task configs, by task id.
	Tasks map[string][]map[string]string
	// TaskCounts is the task count of the latest commit record.
	TaskCounts map[string]int
	// TargetStates holds every connector's target state.
	TargetStates map[string]TargetState
	// Inconsistent lists connectors whose latest commit did not match the
	// task records before it (compaction can do that); the leader should
	// regenerate their task configs.
	Inconsistent map[string]bool
}

// TaskIDs lists a connector's committed tasks.
func (s ConfigSnapshot) TaskIDs(connector string) []TaskID {
	out := make([]TaskID, len(s.Tasks[connector]))
	for i := range out {
		out[i] = TaskID{connector, i}
	}
	return out
}

// ConfigStore is the config topic (Kafka Connect's KafkaConfigBackingStore).
// Methods are safe for concurrent use. Only the group leader should call
// the write methods other than PutTargetState (pause/resume) and
// PutRestartRequest; the store does not enforce that.
type ConfigStore struct {
	l        *kafkaLog
	listener func(ConfigEvent)

	mu       sync.Mutex
	offset   int64
	conns    map[string]map[string]string
	tasks    map[string][]map[string]string
	counts   map[string]int
	targets  map[string]TargetState
	incons   map[string]bool
	deferred map[string]map[int]map[string]string
	opened   bool // read to the end once: later logger levels apply
	// log is set before the tailing starts (s.l is not, during the first
	// read).
	log *slog.Logger
}

// OpenConfigStore creates or verifies the config topic (one partition,
// compacted), reads it to the end and tails it. listener, if non-nil, is
// called after every record that changes state, from the tailing goroutine
// in topic order; it must not block for long and must not call the
// store's write methods.
func OpenConfigStore(ctx context.Context, o Options, listener func(ConfigEvent)) (*ConfigStore, error) {
	lg := o.Logger
	if lg == nil {
		lg = slog.Default()
	}
	s := &ConfigStore{
		log:      lg.With("topic", o.Topic),
		listener: listener,
		conns:    map[string]map[string]string{},
		tasks:    map[string][]map[string]string{},
		counts:   map[string]int{},
		targets:  map[string]TargetState{},
		incons:   map[string]bool{},
		deferred: map[string]map[int]map[string]string{},
	}
	l, err := openLog(ctx, o, 1, true, s.apply)
	if err != nil {
		return nil, err
	}
	s.l = l
	s.mu.Lock()
	s.opened = true
	s.mu.Unlock()
	return s, nil
}

// Close stops tailing. It is idempotent.
func (s *ConfigStore) Close() { s.l.close() }

// Refresh reads the topic to its current end (what a member does before it
// answers a CONFIG_MISMATCH or trusts its snapshot as leader).
func (s *ConfigStore) Refresh(ctx context.Context) error { return s.l.readToEnd(ctx) }

// Snapshot returns a deep copy of the current state.
func (s *ConfigStore) Snapshot() ConfigSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := ConfigSnapshot{
		Offset:       s.offset,
		Connectors:   make(map[string]map[string]string, len(s.conns)),
		Tasks:        make(map[string][]map[string]string, len(s.tasks)),
		TaskCounts:   make(map[string]int, len(s.counts)),
		TargetStates: make(map[string]TargetState, len(s.targets)),
		Inconsistent: make(map[string]bool, len(s.incons)),
	}
	for k, v := range s.conns {
		snap.Connectors[k] = copyMap(v)
	}
	for k, v := range s.tasks {
		ts := make([]map[string]string, len(v))
		for i, t := range v {
			ts[i] = copyMap(t)
		}
		snap.Tasks[k] = ts
	}
	for k, v := range s.counts {
		snap.TaskCounts[k] = v
	}
	for k, v := range s.targets {
		snap.TargetStates[k] = v
	}
	for k, v := range s.incons {
		snap.Inconsistent[k] = v
	}
	return snap
}

// Offset is the current config offset (see ConfigSnapshot.Offset).
func (s *ConfigStore) Offset() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offset
}

// Record encodings. Field order is that of Kafka's schemas
// (KafkaConfigBackingStore.*_V0/V1), which Jackson preserves.

// EncodeConnectorConfig is the value of connector-<name>.
func EncodeConnectorConfig(cfg map[string]string) []byte {
	return encodeProps(cfg)
}

func encodeProps(cfg map[string]string) []byte {
	b := append([]byte(nil), `{"properties":`...)
	m := make(map[string]any, len(cfg))
	for k, v := range cfg {
		m[k] = v
	}
	b, _ = appendJSON(b, m) // a map of strings always encodes
	return append(b, '}')
}

// EncodeTargetState is the value of target-state-<name>: state is PAUSED
// for STOPPED so that workers older than KIP-875 pause instead.
func EncodeTargetState(t TargetState) []byte {
	v1 := t
	if t == TargetStopped {
		v1 = TargetPaused
	}
	b := append([]byte(nil), `{"state":`...)
	b = jackson.AppendString(b, string(v1))
	b = append(b, `,"state.v2":`...)
	b = jackson.AppendString(b, string(t))
	return append(b, '}')
}

// EncodeTaskCommit is the value of commit-<name>.
func EncodeTaskCommit(tasks int) []byte {
	return []byte(`{"tasks":` + strconv.Itoa(tasks) + `}`)
}

// EncodeRestartRequest is the value of restart-connector-<name>.
func EncodeRestartRequest(r RestartRequest) []byte {
	return []byte(`{"include-tasks":` + strconv.FormatBool(r.IncludeTasks) + `,"only-failed":` + strconv.FormatBool(r.OnlyFailed) + `}`)
}

// EncodeLoggerLevel is the value of logger-cluster-<namespace>.
func EncodeLoggerLevel(level string) []byte {
	return append(jackson.AppendString([]byte(`{"level":`), level), '}')
}

// Key prefixes of the config topic.
const (
	connectorPrefix   = "connector-"
	taskPrefix        = "task-"
	commitPrefix      = "commit-"
	targetStatePrefix = "target-state-"
	restartPrefix     = "restart-connector-"
	fencingPrefix     = "tasks-fencing-"
	sessionKeyKey     = "session-key"
	loggerLevelPrefix = "logger-cluster-"
)

func (s *ConfigStore) record(key string, value []byte) *kgo.Record {
	return &kgo.Record{Key: []byte(key), Value: value, Partition: 0}
}

// PutConnectorConfig writes connector-<name>. A non-empty initialState is
// written first as target-state-<name> (creation with an initial state,
// KIP-980). It returns once the store has read its own write.
func (s *ConfigStore) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string, initialState TargetState) error {
	var recs []*kgo.Record
	if initialState != "" {
		recs = append(recs, s.record(targetStatePrefix+name, EncodeTargetState(initialState)))
	}
	recs = append(recs, s.record(connectorPrefix+name, EncodeConnectorConfig(cfg)))
	return s.write(ctx, recs...)
}

// DeleteConnector tombstones connector-<name> and target-state-<name> in
// one batch.
func (s *ConfigStore) DeleteConnector(ctx context.Context, name string) error {
	return s.write(ctx, s.record(connectorPrefix+name, nil), s.record(targetStatePrefix+name, nil))
}

// PutTaskConfigs reads to the end, then writes task-<name>-<i> for every
// config followed by commit-<name> {"tasks":N}; N = 0 (no configs) is what
// a stopped connector gets.
func (s *ConfigStore) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	if err := s.l.readToEnd(ctx); err != nil {
		return err
	}
	recs := make([]*kgo.Record, 0, len(configs)+1)
	for i, c := range configs {
		recs = append(recs, s.record(taskPrefix+name+"-"+strconv.Itoa(i), encodeProps(c)))
	}
	recs = append(recs, s.record(commitPrefix+name, EncodeTaskCommit(len(configs))))
	return s.write(ctx, recs...)
}

// PutTargetState writes target-state-<name>.
func (s *ConfigStore) PutTargetState(ctx context.Context, name string, t TargetState) error {
	switch t {
	case TargetStarted, TargetPaused, TargetStopped:
	default:
		return fmt.Errorf("store: invalid target state %q", t)
	}
	return s.write(ctx, s.record(targetStatePrefix+name, EncodeTargetState(t)))
}

// PutLoggerLevel writes logger-cluster-<namespace>: every worker of the
// group sets the level when it reads the record (KIP-976).
func (s *ConfigStore) PutLoggerLevel(ctx context.Context, namespace, level string) error {
	return s.write(ctx, s.record(loggerLevelPrefix+namespace, EncodeLoggerLevel(level)))
}

// PutRestartRequest writes restart-connector-<name>.
func (s *ConfigStore) PutRestartRequest(ctx context.Context, r RestartRequest) error {
	return s.write(ctx, s.record(restartPrefix+r.Connector, EncodeRestartRequest(r)))
}

func (s *ConfigStore) write(ctx context.Context, recs ...*kgo.Record) error {
	if err := s.l.send(ctx, recs...); err != nil {
		return err
	}
	return s.l.readToEnd(ctx)
}

// apply is KafkaConfigBackingStore.ConsumeCallback.
func (s *ConfigStore) apply(r *kgo.Record) {
	key := string(r.Key)
	var ev *ConfigEvent
	s.mu.Lock()
	s.offset = r.Offset + 1
	switch {
	case strings.HasPrefix(key, targetStatePrefix):
		ev = s.applyTargetState(key[len(targetStatePrefix):], r.Value)
	case strings.HasPrefix(key, connectorPrefix):
		ev = s.applyConnector(key[len(connectorPrefix):], r.Value)
	case strings.HasPrefix(key, taskPrefix):
		s.applyTask(key[len(taskPrefix):], r.Value)
	case strings.HasPrefix(key, commitPrefix):
		ev = s.applyCommit(key[len(commitPrefix):], r.Value)
	case strings.HasPrefix(key, restartPrefix):
		ev = s.applyRestart(key[len(restartPrefix):], r.Value)
	case strings.HasPrefix(key, loggerLevelPrefix):
		ev = s.applyLoggerLevel(key[len(loggerLevelPrefix):], r.Value)
	case strings.HasPrefix(key, fencingPrefix), key == sessionKeyKey:
		// Exactly-once task counts and session keys are not used yet.
	default:
		s.log.Warn("ignoring config record with unknown key", "key", key, "offset", r.Offset)
	}
	if ev != nil {
		ev.Offset = s.offset
	}
	s.mu.Unlock()
	if ev != nil && s.listener != nil {
		s.listener(*ev)
	}
}

// applyLoggerLevel reads logger-cluster-<namespace> = {"level": "..."};
// only one written after the store opened is an event.
func (s *ConfigStore) applyLoggerLevel(namespace string, value []byte) *ConfigEvent {
	var v struct {
		Level *string `json:"level"`
	}
	if err := json.Unmarshal(value, &v); err != nil || v.Level == nil {
		s.log.Warn("ignoring a cluster log level that is not {\"level\": \"...\"}", "namespace", namespace, "value", string(value))
		return nil
	}
	if !s.opened {
		return nil
	}
	return &ConfigEvent{Kind: LoggerLevelSet, Logger: namespace, Level: *v.Level}
}

func (s *ConfigStore) applyConnector(name string, value []byte) *ConfigEvent {
	if value == nil {
		delete(s.conns, name)
		delete(s.tasks, name)
		delete(s.counts, name)
		delete(s.targets, name)
		delete(s.incons, name)
		delete(s.deferred, name)
		return &ConfigEvent{Kind: ConnectorRemoved, Connector: name}
	}
	props, err := decodeProps(value)
	if err != nil {
		s.log.Error("ignoring malformed connector config record", "connector", name, "err", err)
		return nil
	}
	s.conns[name] = props
	if _, ok := s.targets[name]; !ok {
		s.targets[name] = TargetStarted
	}
	return &ConfigEvent{Kind: ConnectorConfigUpdated, Connector: name}
}

func (s *ConfigStore) applyTask(rest string, value []byte) {
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		s.log.Error("ignoring task config record with malformed key", "key", taskPrefix+rest)
		return
	}
	name := rest[:i]
	id, err := strconv.Atoi(rest[i+1:])
	if err != nil || id < 0 {
		s.log.Error("ignoring task config record with malformed key", "key", taskPrefix+rest)
		return
	}
	if value == nil {
		return // Kafka ignores task tombstones
	}
	props, err := decodeProps(value)
	if err != nil {
		s.log.Error("ignoring malformed task config record", "connector", name, "task", id, "err", err)
		return
	}
	if s.deferred[name] == nil {
		s.deferred[name] = map[int]map[string]string{}
	}
	s.deferred[name][id] = props
}

func (s *ConfigStore) applyCommit(name string, value []byte) *ConfigEvent {
	if value == nil {
		return nil
	}
	var v struct {
		Tasks *int `json:"tasks"`
	}
	if err := json.Unmarshal(value, &v); err != nil || v.Tasks == nil || *v.Tasks < 0 {
		s.log.Error("ignoring malformed task commit record", "connector", name)
		return nil
	}
	n := *v.Tasks
	deferred := s.deferred[name]
	complete := len(deferred) >= n
	for i := 0; i < n && complete; i++ {
		_, complete = deferred[i]
	}
	if !complete {
		s.log.Warn("task configs for connector are inconsistent; the leader must regenerate them", "connector", name, "tasks", n)
		s.incons[name] = true
	} else {
		ts := make([]map[string]string, n)
		for i := range ts {
			ts[i] = deferred[i]
		}
		s.tasks[name] = ts
		delete(s.incons, name)
	}
	delete(s.deferred, name)
	s.counts[name] = n
	return &ConfigEvent{Kind: TaskConfigsCommitted, Connector: name}
}

func (s *ConfigStore) applyTargetState(name string, value []byte) *ConfigEvent {
	if value == nil {
		delete(s.targets, name)
		return &ConfigEvent{Kind: TargetStateChanged, Connector: name}
	}
	var v struct {
		State   string `json:"state"`
		StateV2 string `json:"state.v2"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		s.log.Error("ignoring malformed target state record", "connector", name, "err", err)
		return nil
	}
	st := TargetState(v.StateV2)
	if st == "" {
		st = TargetState(v.State)
	}
	switch st {
	case TargetStarted, TargetPaused, TargetStopped:
	default:
		s.log.Error("ignoring target state record with unknown state", "connector", name, "state", st)
		return nil
	}
	s.targets[name] = st
	return &ConfigEvent{Kind: TargetStateChanged, Connector: name}
}

func (s *ConfigStore) applyRestart(name string, value []byte) *ConfigEvent {
	if value == nil {
		return nil
	}
	var v struct {
		IncludeTasks bool `json:"include-tasks"`
		OnlyFailed   bool `json:"only-failed"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		s.log.Error("ignoring malformed restart request record", "connector", name, "err", err)
		return nil
	}
	return &ConfigEvent{Kind: RestartRequested, Connector: name, Restart: RestartRequest{Connector: name, IncludeTasks: v.IncludeTasks, OnlyFailed: v.OnlyFailed}}
}

func decodeProps(value []byte) (map[string]string, error) {
	var v struct {
		Properties map[string]*string `json:"properties"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, err
	}
	if v.Properties == nil {
		return nil, fmt.Errorf("no properties field")
	}
	out := make(map[string]string, len(v.Properties))
	for k, p := range v.Properties {
		if p != nil {
			out[k] = *p
		}
	}
	return out, nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
