package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// SessionKeyUpdated: session-key written.
	SessionKeyUpdated
	// LoggerLevelSet: logger-cluster-<namespace> written (a cluster-wide
	// log level, KIP-976) after the store was opened; Logger and Level
	// say what. Levels written before are history, as in Kafka Connect.
	LoggerLevelSet
	// TaskCountRecorded: tasks-fencing-<name> written (KIP-618).
	TaskCountRecorded
)

// ConfigEvent tells the herder what a config-topic record changed; it then
// reads a Snapshot. Offset is the config offset after the record.
type ConfigEvent struct {
	Kind      ConfigEventKind
	Connector string
	// ProblemChanged: the record made the connector's Problem appear or
	// go (ConfigSnapshot.Problems), which changes whether it can be
	// assigned.
	ProblemChanged bool
	Restart        RestartRequest // RestartRequested only
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
	// ConfigOffsets is the offset of each connector's latest config record.
	ConfigOffsets map[string]int64
	// Problems says, per connector, why a record of it could not be applied
	// (a config or target state that does not decode, a target state a
	// newer version wrote): such a connector is listed (with its last good
	// config, or none) but must not run; a later good record clears it.
	Problems map[string]string
	// TasksStale lists connectors whose config changed (to another
	// config), since this store was opened, after their task configs were
	// committed: those task configs were generated from an older config (a
	// different class, perhaps) and must not be started; the leader
	// regenerates and commits them (even if equal).
	TasksStale map[string]bool
	// Applied is, per connector, its config when its task configs were last
	// committed (Kafka Connect's appliedConnectorConfigs).
	Applied map[string]map[string]string
	// SessionKey is the latest session-key record (KIP-507), nil if none.
	SessionKey *SessionKey
	// TaskCountRecords holds, by connector, the task count of its latest
	// tasks-fencing-<name> record (KIP-618): how many transactional
	// producers of its tasks may still run and must be fenced before a
	// new generation of its tasks starts. Absent: none was ever written.
	// Records of deleted connectors stay, as in Kafka Connect.
	TaskCountRecords map[string]int
	// PendingFencing lists connectors whose latest task configs were
	// committed after their latest task count record: their tasks need a
	// round of zombie fencing before they start.
	PendingFencing map[string]bool
	// TaskGenerations counts, by connector, the task config sets committed
	// since the store was opened (Kafka Connect's task config generation):
	// a task started for one generation may not run once another is
	// committed.
	TaskGenerations map[string]int
}

// SessionKey is the session-key record: the key that signs internal
// requests between workers of a sessioned group.
type SessionKey struct {
	Key       []byte
	Algorithm string // HmacSHA256
	Created   int64  // creation-timestamp, Unix milliseconds
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
	log      *slog.Logger // set before the first record is applied
	listener func(ConfigEvent)

	mu       sync.Mutex
	offset   int64
	conns    map[string]map[string]string
	tasks    map[string][]map[string]string
	counts   map[string]int
	targets  map[string]TargetState
	incons   map[string]bool
	applied  map[string]map[string]string
	key      *SessionKey
	deferred map[string]map[int]map[string]string
	opened   bool // read to the end once: later logger levels apply
	// connOffset is the offset of each connector's latest config record;
	// tasksFor the config its latest consistent commit was applied with.
	connOffset map[string]int64
	tasksFor   map[string]map[string]string
	// cfgProblems and targetProblems: why a connector's latest config or
	// target-state record could not be applied.
	cfgProblems    map[string]string
	targetProblems map[string]string
	// taskCounts, pending and generations: see ConfigSnapshot's
	// TaskCountRecords, PendingFencing and TaskGenerations.
	taskCounts  map[string]int
	pending     map[string]bool
	generations map[string]int

	// txn writes the records a leader writes through a transactional
	// producer (exactly.once.source.support preparing or enabled); nil
	// without.
	txn *txnWriter
}

// ConfigTopicMaxMessageBytes is the max.message.bytes the config topic is
// created with (unless config.storage.max.message.bytes says otherwise): a
// connector config the REST API accepts (a body of up to 1 MiB, which
// grows by at most 40% when stored: numbers and booleans become strings)
// fits in one record, and so do its task configs, one a record.
const ConfigTopicMaxMessageBytes = 2 << 20

var configTopicDefaults = map[string]string{"max.message.bytes": strconv.Itoa(ConfigTopicMaxMessageBytes)}

// OpenConfigStore creates or verifies the config topic (one partition,
// compacted), reads it to the end and tails it. listener, if non-nil, is
// called after every record that changes state, from the tailing goroutine
// in topic order; it must not block for long and must not call the
// store's write methods.
func OpenConfigStore(ctx context.Context, o Options, listener func(ConfigEvent)) (*ConfigStore, error) {
	s := newConfigStore(storeLogger(o), listener)
	l, err := openLog(ctx, o, logSpec{partitions: 1, exact: true, defaults: configTopicDefaults}, s.apply)
	if err != nil {
		return nil, err
	}
	s.l = l
	if o.TransactionalID != "" {
		s.txn = &txnWriter{id: o.TransactionalID, log: storeLogger(o), opts: append([]kgo.Opt{
			kgo.SeedBrokers(o.Brokers...),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerLinger(0),
			kgo.ProducerBatchMaxBytes(int32(l.maxRecordBytes)),
			kgo.MetadataMinAge(100 * time.Millisecond),
		}, o.ClientOpts...)}
	}
	// What was committed before this worker started counts as current:
	// only config changes seen from now on make task configs stale (an
	// older worker, or Kafka Connect, did not commit task configs again
	// when they came out the same).
	s.mu.Lock()
	maps.Copy(s.tasksFor, s.conns)
	s.opened = true
	s.mu.Unlock()
	return s, nil
}

// newConfigStore is an empty store that applies records, not yet reading
// a topic.
func newConfigStore(log *slog.Logger, listener func(ConfigEvent)) *ConfigStore {
	return &ConfigStore{
		log:      log,
		listener: listener,
		conns:    map[string]map[string]string{},
		tasks:    map[string][]map[string]string{},
		counts:   map[string]int{},
		targets:  map[string]TargetState{},
		incons:   map[string]bool{},
		applied:  map[string]map[string]string{},
		deferred: map[string]map[int]map[string]string{},

		connOffset: map[string]int64{},
		tasksFor:   map[string]map[string]string{},

		cfgProblems:    map[string]string{},
		targetProblems: map[string]string{},

		taskCounts:  map[string]int{},
		pending:     map[string]bool{},
		generations: map[string]int{},
	}
}

// Close stops tailing and closes the transactional producer. It is
// idempotent.
func (s *ConfigStore) Close() {
	s.RelinquishWritePrivileges()
	s.l.close()
}

// Refresh reads the topic to its current end (what a member does before it
// answers a CONFIG_MISMATCH or trusts its snapshot as leader).
func (s *ConfigStore) Refresh(ctx context.Context) error { return s.l.readToEnd(ctx) }

// Snapshot returns a deep copy of the current state.
func (s *ConfigStore) Snapshot() ConfigSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := ConfigSnapshot{
		Offset:        s.offset,
		Connectors:    make(map[string]map[string]string, len(s.conns)),
		Tasks:         make(map[string][]map[string]string, len(s.tasks)),
		TaskCounts:    make(map[string]int, len(s.counts)),
		TargetStates:  make(map[string]TargetState, len(s.targets)),
		Inconsistent:  make(map[string]bool, len(s.incons)),
		ConfigOffsets: make(map[string]int64, len(s.conns)),
		TasksStale:    map[string]bool{},
		Problems:      map[string]string{},
		Applied:       make(map[string]map[string]string, len(s.applied)),
	}
	if s.key != nil {
		k := *s.key
		snap.SessionKey = &k
	}
	for k, v := range s.applied {
		snap.Applied[k] = copyMap(v)
	}
	for k := range s.conns {
		if p := s.cfgProblems[k] + s.targetProblems[k]; p != "" {
			snap.Problems[k] = p
		}
		snap.ConfigOffsets[k] = s.connOffset[k]
		if s.stale(k) {
			snap.TasksStale[k] = true
		}
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
	snap.TaskCountRecords = maps.Clone(s.taskCounts)
	snap.PendingFencing = maps.Clone(s.pending)
	snap.TaskGenerations = maps.Clone(s.generations)
	return snap
}

// SessionKey returns the latest session key, nil if none was read.
func (s *ConfigStore) SessionKey() *SessionKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		return nil
	}
	k := *s.key
	return &k
}

// Connector returns a copy of one connector's config.
func (s *ConfigStore) Connector(name string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[name]
	if !ok {
		return nil, false
	}
	return copyMap(c), true
}

// ConnectorEntry returns copies of one connector's config and task
// configs, and its target state ("" when none was written): Snapshot's
// entries for it, without copying every other connector's (a status of
// each of a thousand connectors would otherwise copy them all a thousand
// times).
func (s *ConfigStore) ConnectorEntry(name string) (cfg map[string]string, tasks []map[string]string, target TargetState, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[name]
	if !ok {
		return nil, nil, "", false
	}
	if ts, has := s.tasks[name]; has {
		tasks = make([]map[string]string, len(ts))
		for i, t := range ts {
			tasks[i] = copyMap(t)
		}
	}
	return copyMap(c), tasks, s.targets[name], true
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

// EncodeTaskCount is the value of tasks-fencing-<name> (Kafka's
// TASK_COUNT_RECORD_V0).
func EncodeTaskCount(tasks int) []byte {
	return []byte(`{"task-count":` + strconv.Itoa(tasks) + `}`)
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
	return s.putTaskConfigs(ctx, name, configs)
}

func (s *ConfigStore) putTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	recs := make([]*kgo.Record, 0, len(configs)+1)
	for i, c := range configs {
		recs = append(recs, s.record(taskPrefix+name+"-"+strconv.Itoa(i), encodeProps(c)))
	}
	recs = append(recs, s.record(commitPrefix+name, EncodeTaskCommit(len(configs))))
	return s.write(ctx, recs...)
}

// stale reports whether a connector's config changed after its task
// configs were committed (or none were); s.mu is held.
func (s *ConfigStore) stale(name string) bool {
	at, ok := s.tasksFor[name]
	return !ok || !maps.Equal(at, s.conns[name])
}

// ErrStaleTaskConfigs is PutTaskConfigsFor's answer when the connector's
// config changed since the task configs were generated: nothing was
// written; they are to be generated again from the new config.
var ErrStaleTaskConfigs = errors.New("store: the connector's config changed since its task configs were generated")

// PutTaskConfigsFor is PutTaskConfigs for task configs generated from the
// connector config generatedFrom: if the connector's config is another one
// by now, it writes nothing and returns ErrStaleTaskConfigs.
func (s *ConfigStore) PutTaskConfigsFor(ctx context.Context, name string, configs []map[string]string, generatedFrom map[string]string) error {
	if err := s.l.readToEnd(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	cur, ok := s.conns[name]
	s.mu.Unlock()
	if !ok || !maps.Equal(cur, generatedFrom) {
		return ErrStaleTaskConfigs
	}
	return s.putTaskConfigs(ctx, name, configs)
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
	return s.l.sendAndWait(ctx, recs...)
}

// apply is KafkaConfigBackingStore.ConsumeCallback.
func (s *ConfigStore) apply(r *kgo.Record) {
	key := string(r.Key)
	var ev *ConfigEvent
	s.mu.Lock()
	s.offset = r.Offset + 1
	// Only connector and target-state records make or mend a Problem.
	name, problemKey := "", false
	switch {
	case strings.HasPrefix(key, targetStatePrefix):
		name, problemKey = key[len(targetStatePrefix):], true
	case strings.HasPrefix(key, connectorPrefix):
		name, problemKey = key[len(connectorPrefix):], true
	}
	hadProblem := s.cfgProblems[name]+s.targetProblems[name] != ""
	switch {
	case strings.HasPrefix(key, targetStatePrefix):
		ev = s.applyTargetState(key[len(targetStatePrefix):], r)
	case strings.HasPrefix(key, connectorPrefix):
		ev = s.applyConnector(key[len(connectorPrefix):], r)
	case strings.HasPrefix(key, taskPrefix):
		s.applyTask(key[len(taskPrefix):], r.Value)
	case strings.HasPrefix(key, commitPrefix):
		ev = s.applyCommit(key[len(commitPrefix):], r.Value)
	case strings.HasPrefix(key, restartPrefix):
		ev = s.applyRestart(key[len(restartPrefix):], r.Value)
	case key == sessionKeyKey:
		ev = s.applySessionKey(r.Value)
	case strings.HasPrefix(key, loggerLevelPrefix):
		ev = s.applyLoggerLevel(key[len(loggerLevelPrefix):], r.Value)
	case strings.HasPrefix(key, fencingPrefix):
		ev = s.applyTaskCount(key[len(fencingPrefix):], r)
	default:
		s.log.Warn("ignoring config record with unknown key (written by a newer version?)", "key", ClipKey(key), "offset", r.Offset)
	}
	if ev != nil {
		ev.Offset = s.offset
		ev.ProblemChanged = problemKey && hadProblem != (s.cfgProblems[name]+s.targetProblems[name] != "")
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

func (s *ConfigStore) applyConnector(name string, r *kgo.Record) *ConfigEvent {
	if r.Value == nil {
		delete(s.connOffset, name)
		delete(s.tasksFor, name)
		delete(s.cfgProblems, name)
		delete(s.targetProblems, name)
		delete(s.conns, name)
		delete(s.tasks, name)
		delete(s.counts, name)
		delete(s.targets, name)
		delete(s.incons, name)
		delete(s.applied, name)
		delete(s.deferred, name)
		return &ConfigEvent{Kind: ConnectorRemoved, Connector: name}
	}
	props, err := decodeProps(r.Value)
	if err != nil {
		// The connector is listed, FAILED with the reason and deletable;
		// its last good config (if any) stays for GET /config.
		s.log.Error("cannot apply a connector config record; the connector is FAILED until a new config or a delete", "key", ClipKey(string(r.Key)),
			"offset", r.Offset, "bytes", len(r.Value), "err", err)
		s.cfgProblems[name] = fmt.Sprintf("The connector's config record (offset %d of the config topic %s, %d bytes) cannot be read: %v. "+
			"Put a new config (PUT /connectors/{name}/config) or delete the connector.", r.Offset, r.Topic, len(r.Value), err)
		if _, ok := s.conns[name]; !ok {
			s.conns[name] = map[string]string{}
		}
	} else {
		delete(s.cfgProblems, name)
		s.conns[name] = props
	}
	s.connOffset[name] = r.Offset
	if _, ok := s.targets[name]; !ok {
		s.targets[name] = TargetStarted
	}
	return &ConfigEvent{Kind: ConnectorConfigUpdated, Connector: name}
}

func (s *ConfigStore) applyTask(rest string, value []byte) {
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		s.log.Error("ignoring task config record with malformed key", "key", ClipKey(taskPrefix+rest))
		return
	}
	name := rest[:i]
	id, err := strconv.Atoi(rest[i+1:])
	if err != nil || id < 0 {
		s.log.Error("ignoring task config record with malformed key", "key", ClipKey(taskPrefix+rest))
		return
	}
	if value == nil {
		return // Kafka ignores task tombstones
	}
	props, err := decodeProps(value)
	if err != nil {
		s.log.Error("ignoring malformed task config record; the leader regenerates the task configs", "key", ClipKey(taskPrefix+rest), "connector", ClipKey(name), "task", id, "err", err)
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
		s.log.Error("ignoring malformed task commit record", "key", ClipKey(commitPrefix+name), "connector", ClipKey(name))
		return nil
	}
	n := *v.Tasks
	deferred := s.deferred[name]
	complete := len(deferred) >= n
	for i := 0; i < n && complete; i++ {
		_, complete = deferred[i]
	}
	if !complete {
		s.log.Warn("task configs for connector are inconsistent; the leader must regenerate them", "connector", ClipKey(name), "tasks", n)
		s.incons[name] = true
	} else {
		ts := make([]map[string]string, n)
		for i := range ts {
			ts[i] = deferred[i]
		}
		s.tasks[name] = ts
		delete(s.incons, name)
		s.tasksFor[name] = s.conns[name]
		if c, ok := s.conns[name]; ok {
			s.applied[name] = copyMap(c)
		}
	}
	delete(s.deferred, name)
	s.counts[name] = n
	if complete {
		s.generations[name]++
	}
	// Task configs after the latest task count record: a round of zombie
	// fencing is due before the tasks start (KafkaConfigBackingStore).
	s.pending[name] = true
	return &ConfigEvent{Kind: TaskConfigsCommitted, Connector: name}
}

// applyTaskCount reads tasks-fencing-<name> = {"task-count": N}: the
// connector's tasks of the latest generation are fenced (or need not be).
func (s *ConfigStore) applyTaskCount(name string, r *kgo.Record) *ConfigEvent {
	var v struct {
		TaskCount *int `json:"task-count"`
	}
	if r.Value == nil || json.Unmarshal(r.Value, &v) != nil || v.TaskCount == nil || *v.TaskCount < 0 {
		s.log.Error("ignoring malformed task count record", "key", ClipKey(string(r.Key)), "connector", ClipKey(name), "offset", r.Offset)
		return nil
	}
	s.taskCounts[name] = *v.TaskCount
	delete(s.pending, name)
	return &ConfigEvent{Kind: TaskCountRecorded, Connector: name}
}

func (s *ConfigStore) applyTargetState(name string, r *kgo.Record) *ConfigEvent {
	if r.Value == nil {
		delete(s.targets, name)
		delete(s.targetProblems, name)
		return &ConfigEvent{Kind: TargetStateChanged, Connector: name}
	}
	var v struct {
		State   string `json:"state"`
		StateV2 string `json:"state.v2"`
	}
	err := json.Unmarshal(r.Value, &v)
	st := TargetState(v.StateV2)
	if st == "" {
		st = TargetState(v.State)
	}
	if err == nil {
		switch st {
		case TargetStarted, TargetPaused, TargetStopped:
		default:
			err = fmt.Errorf("unknown target state %q (written by a newer version?)", st)
		}
	}
	if err != nil {
		s.log.Error("cannot apply a target state record; the connector is FAILED until a new target state or a delete", "key", ClipKey(string(r.Key)),
			"offset", r.Offset, "err", err)
		s.targetProblems[name] = fmt.Sprintf("The connector's target state record (offset %d of the config topic %s) cannot be read: %v. "+
			"Pause, resume or stop the connector to write a new one, or delete it.", r.Offset, r.Topic, err)
		return &ConfigEvent{Kind: TargetStateChanged, Connector: name}
	}
	delete(s.targetProblems, name)
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
		s.log.Error("ignoring malformed restart request record", "key", ClipKey(restartPrefix+name), "err", err)
		return nil
	}
	return &ConfigEvent{Kind: RestartRequested, Connector: name, Restart: RestartRequest{Connector: name, IncludeTasks: v.IncludeTasks, OnlyFailed: v.OnlyFailed}}
}

func (s *ConfigStore) applySessionKey(value []byte) *ConfigEvent {
	if value == nil {
		return nil
	}
	var v struct {
		Key       string `json:"key"`
		Algorithm string `json:"algorithm"`
		Created   *int64 `json:"creation-timestamp"`
	}
	if err := json.Unmarshal(value, &v); err != nil || v.Created == nil || v.Algorithm == "" {
		s.log.Error("ignoring malformed session key record", "err", err)
		return nil
	}
	k, err := base64.StdEncoding.DecodeString(v.Key)
	if err != nil || len(k) == 0 {
		s.log.Error("ignoring session key record with a malformed key", "err", err)
		return nil
	}
	s.key = &SessionKey{Key: k, Algorithm: v.Algorithm, Created: *v.Created}
	return &ConfigEvent{Kind: SessionKeyUpdated}
}

// EncodeSessionKey is the value of session-key, field for field as Kafka's
// SESSION_KEY_V0 (key as standard base64, algorithm, creation-timestamp).
func EncodeSessionKey(k SessionKey) []byte {
	b := append([]byte(nil), `{"key":`...)
	b = jackson.AppendString(b, base64.StdEncoding.EncodeToString(k.Key))
	b = append(b, `,"algorithm":`...)
	b = jackson.AppendString(b, k.Algorithm)
	b = append(b, `,"creation-timestamp":`...)
	b = strconv.AppendInt(b, k.Created, 10)
	return append(b, '}')
}

// Write is one config-topic change for Apply.
type Write struct {
	Kind WriteKind
	Name string
	// Config of WriteConnector; nil deletes the connector (and its target
	// state).
	Config map[string]string
	// Target of WriteTarget.
	Target TargetState
	// Tasks of WriteTasks (none: a stopped connector's empty set).
	Tasks []map[string]string
	// Restart of WriteRestart.
	Restart RestartRequest
	// Key of WriteSessionKey.
	Key SessionKey
	// TaskCount of WriteTaskCount.
	TaskCount int
}

// WriteKind says what a Write changes.
type WriteKind int

// Write kinds.
const (
	WriteConnector WriteKind = iota + 1
	WriteTarget
	WriteTasks
	WriteRestart
	WriteSessionKey
	// WriteTaskCount writes tasks-fencing-<name> (KIP-618).
	WriteTaskCount
)

// Apply writes the records of several changes in one produce, in order,
// and returns once the store has read them back: one round trip for many
// REST writes. A batch with task configs reads the topic to its end first,
// as PutTaskConfigs does.
func (s *ConfigStore) Apply(ctx context.Context, ws []Write) error {
	var recs []*kgo.Record
	tasks, privileged := false, false
	for _, w := range ws {
		switch w.Kind {
		case WriteConnector:
			if w.Config == nil {
				recs = append(recs, s.record(connectorPrefix+w.Name, nil), s.record(targetStatePrefix+w.Name, nil))
			} else {
				recs = append(recs, s.record(connectorPrefix+w.Name, EncodeConnectorConfig(w.Config)))
			}
		case WriteTarget:
			switch w.Target {
			case TargetStarted, TargetPaused, TargetStopped:
			default:
				return fmt.Errorf("store: invalid target state %q", w.Target)
			}
			recs = append(recs, s.record(targetStatePrefix+w.Name, EncodeTargetState(w.Target)))
		case WriteTasks:
			tasks = true
			for i, c := range w.Tasks {
				recs = append(recs, s.record(taskPrefix+w.Name+"-"+strconv.Itoa(i), encodeProps(c)))
			}
			recs = append(recs, s.record(commitPrefix+w.Name, EncodeTaskCommit(len(w.Tasks))))
		case WriteRestart:
			w.Restart.Connector = w.Name
			recs = append(recs, s.record(restartPrefix+w.Name, EncodeRestartRequest(w.Restart)))
		case WriteSessionKey:
			privileged = true
			recs = append(recs, s.record(sessionKeyKey, EncodeSessionKey(w.Key)))
		case WriteTaskCount:
			privileged = true
			recs = append(recs, s.record(fencingPrefix+w.Name, EncodeTaskCount(w.TaskCount)))
		default:
			return fmt.Errorf("store: unknown write kind %d", w.Kind)
		}
		if w.Kind != WriteTarget {
			privileged = true
		}
	}
	if tasks {
		if err := s.l.readToEnd(ctx); err != nil {
			return err
		}
	}
	if len(recs) == 0 {
		return nil
	}
	if privileged && s.txn != nil {
		// The leader's writes (a batch with anything but target states,
		// which any worker writes) go through its transactional producer:
		// a deposed leader's are fenced (Kafka Connect's sendPrivileged).
		return s.writeTransactional(ctx, recs)
	}
	return s.write(ctx, recs...)
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
