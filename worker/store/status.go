package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tributary-dev/tributary/sdk/schema/jackson"
	"github.com/twmb/franz-go/pkg/kgo"
)

// State is a connector or task state as Kafka Connect names it.
type State string

// States written to the status topic.
const (
	StateUnassigned State = "UNASSIGNED"
	StateRunning    State = "RUNNING"
	StatePaused     State = "PAUSED"
	StateStopped    State = "STOPPED" // connectors only
	StateFailed     State = "FAILED"
	StateRestarting State = "RESTARTING"
)

// Status is one status-topic value.
type Status struct {
	State    State
	Trace    string // "" is written as null
	WorkerID string
	// Generation is the group generation of the writer (for putSafe).
	Generation int32
	// Version is the plugin version (Kafka 4.x); "" is written as null.
	Version string
}

// EncodeStatus is the status-topic value, field for field as Kafka's
// KafkaStatusBackingStore.STATUS_SCHEMA_V0 (state, trace, worker_id,
// generation, version).
func EncodeStatus(st Status) []byte {
	b := append([]byte(nil), `{"state":`...)
	b = jackson.AppendString(b, string(st.State))
	b = append(b, `,"trace":`...)
	b = appendNullable(b, st.Trace)
	b = append(b, `,"worker_id":`...)
	b = jackson.AppendString(b, st.WorkerID)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, int64(st.Generation), 10)
	b = append(b, `,"version":`...)
	b = appendNullable(b, st.Version)
	return append(b, '}')
}

func appendNullable(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jackson.AppendString(b, s)
}

// StatusSnapshot is a copy of every status read.
type StatusSnapshot struct {
	Connectors map[string]Status
	Tasks      map[TaskID]Status
}

// StatusStore is the status topic (Kafka Connect's KafkaStatusBackingStore).
// Methods are safe for concurrent use.
type StatusStore struct {
	l   *kafkaLog
	log *slog.Logger // set before the first record is applied

	mu     sync.Mutex
	conns  map[string]Status
	tasks  map[TaskID]Status
	topics map[string]map[string]bool // connector -> active topics (KIP-558)
}

// OpenStatusStore creates or verifies the status topic (default 5
// partitions, compacted), reads it to the end and tails it.
func OpenStatusStore(ctx context.Context, o Options) (*StatusStore, error) {
	s := newStatusStore(storeLogger(o))
	l, err := openLog(ctx, o, logSpec{partitions: 5}, s.apply)
	if err != nil {
		return nil, err
	}
	s.l = l
	return s, nil
}

// newStatusStore is an empty store that applies records, not yet reading
// a topic.
func newStatusStore(log *slog.Logger) *StatusStore {
	return &StatusStore{log: log, conns: map[string]Status{}, tasks: map[TaskID]Status{}, topics: map[string]map[string]bool{}}
}

// Close stops tailing. It is idempotent.
func (s *StatusStore) Close() { s.l.close() }

// Refresh reads the topic to its current end.
func (s *StatusStore) Refresh(ctx context.Context) error { return s.l.readToEnd(ctx) }

const (
	connectorStatusPrefix = "status-connector-"
	taskStatusPrefix      = "status-task-"
	topicStatusPrefix     = "status-topic-"
)

func connectorStatusKey(name string) string { return connectorStatusPrefix + name }
func taskStatusKey(id TaskID) string {
	return taskStatusPrefix + id.Connector + "-" + strconv.Itoa(id.Task)
}

// canWriteSafely is CacheEntry.canWriteSafely: no previous value, the same
// worker, or a generation at least as new.
func canWriteSafely(prev Status, ok bool, st Status) bool {
	return !ok || prev.WorkerID == st.WorkerID || prev.Generation <= st.Generation
}

// PutConnector writes a connector's status unconditionally.
func (s *StatusStore) PutConnector(ctx context.Context, name string, st Status) error {
	return s.write(ctx, connectorStatusKey(name), EncodeStatus(st))
}

// PutConnectorSafe writes a connector's status unless another worker wrote
// one with a newer generation (Kafka's putSafe); written reports which.
func (s *StatusStore) PutConnectorSafe(ctx context.Context, name string, st Status) (written bool, err error) {
	s.mu.Lock()
	prev, ok := s.conns[name]
	s.mu.Unlock()
	if !canWriteSafely(prev, ok, st) {
		return false, nil
	}
	return true, s.PutConnector(ctx, name, st)
}

// PutTask writes a task's status unconditionally.
func (s *StatusStore) PutTask(ctx context.Context, id TaskID, st Status) error {
	return s.write(ctx, taskStatusKey(id), EncodeStatus(st))
}

// PutTaskSafe is PutConnectorSafe for a task.
func (s *StatusStore) PutTaskSafe(ctx context.Context, id TaskID, st Status) (written bool, err error) {
	s.mu.Lock()
	prev, ok := s.tasks[id]
	s.mu.Unlock()
	if !canWriteSafely(prev, ok, st) {
		return false, nil
	}
	return true, s.PutTask(ctx, id, st)
}

// DeleteConnector tombstones a connector's status.
func (s *StatusStore) DeleteConnector(ctx context.Context, name string) error {
	return s.write(ctx, connectorStatusKey(name), nil)
}

// DeleteTask tombstones a task's status.
func (s *StatusStore) DeleteTask(ctx context.Context, id TaskID) error {
	return s.write(ctx, taskStatusKey(id), nil)
}

func (s *StatusStore) write(ctx context.Context, key string, value []byte) error {
	return s.l.sendAndWait(ctx, s.l.keyed(key, value))
}

// Connector returns a connector's last status.
func (s *StatusStore) Connector(name string) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.conns[name]
	return st, ok
}

// Task returns a task's last status.
func (s *StatusStore) Task(id TaskID) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[id]
	return st, ok
}

// Tasks returns the statuses of a connector's tasks by task id.
func (s *StatusStore) Tasks(connector string) map[int]Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]Status{}
	for id, st := range s.tasks {
		if id.Connector == connector {
			out[id.Task] = st
		}
	}
	return out
}

// Connectors lists, sorted, every connector with a connector, task or
// active-topic status.
func (s *StatusStore) Connectors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := make(map[string]bool, len(s.conns))
	for n := range s.conns {
		set[n] = true
	}
	for id := range s.tasks {
		set[id.Connector] = true
	}
	for n, ts := range s.topics {
		if len(ts) > 0 {
			set[n] = true
		}
	}
	return sortedKeys(set)
}

// Snapshot copies every status.
func (s *StatusStore) Snapshot() StatusSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := StatusSnapshot{Connectors: make(map[string]Status, len(s.conns)), Tasks: make(map[TaskID]Status, len(s.tasks))}
	for k, v := range s.conns {
		snap.Connectors[k] = v
	}
	for k, v := range s.tasks {
		snap.Tasks[k] = v
	}
	return snap
}

func decodeStatus(value []byte) (Status, error) {
	var v struct {
		State      string  `json:"state"`
		Trace      *string `json:"trace"`
		WorkerID   string  `json:"worker_id"`
		Generation int32   `json:"generation"`
		Version    *string `json:"version"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return Status{}, err
	}
	if v.State == "" {
		return Status{}, fmt.Errorf("no state")
	}
	st := Status{State: State(v.State), WorkerID: v.WorkerID, Generation: v.Generation}
	if v.Trace != nil {
		st.Trace = *v.Trace
	}
	if v.Version != nil {
		st.Version = *v.Version
	}
	return st, nil
}

// unreadableStatus stands for a status record that does not decode: the
// connector or task shows FAILED with the reason until its worker writes a
// new status (a restart does).
func unreadableStatus(r *kgo.Record, err error) Status {
	return Status{State: StateFailed, Trace: fmt.Sprintf("The status record (offset %d of partition %d of the status topic %s, %d bytes) cannot be read: %v. "+
		"Restart the connector or task to write a new one.", r.Offset, r.Partition, r.Topic, len(r.Value), err)}
}

func (s *StatusStore) apply(r *kgo.Record) {
	key := string(r.Key)
	switch {
	case strings.HasPrefix(key, connectorStatusPrefix):
		name := key[len(connectorStatusPrefix):]
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.Value == nil {
			delete(s.conns, name)
			return
		}
		st, err := decodeStatus(r.Value)
		if err != nil {
			s.log.Error("cannot read a connector status record; showing the connector FAILED", "key", ClipKey(key), "offset", r.Offset, "err", err)
			st = unreadableStatus(r, err)
		}
		s.conns[name] = st
	case strings.HasPrefix(key, taskStatusPrefix):
		rest := key[len(taskStatusPrefix):]
		i := strings.LastIndexByte(rest, '-')
		n, err := strconv.Atoi(rest[i+1:])
		if i <= 0 || err != nil || n < 0 {
			s.log.Error("ignoring task status with malformed key", "key", ClipKey(key), "offset", r.Offset)
			return
		}
		id := TaskID{rest[:i], n}
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.Value == nil {
			delete(s.tasks, id)
			return
		}
		st, err := decodeStatus(r.Value)
		if err != nil {
			s.log.Error("cannot read a task status record; showing the task FAILED", "key", ClipKey(key), "offset", r.Offset, "err", err)
			st = unreadableStatus(r, err)
		}
		s.tasks[id] = st
	case strings.HasPrefix(key, topicStatusPrefix):
		topic, conn, ok := strings.Cut(key[len(topicStatusPrefix):], ":connector-")
		if !ok || topic == "" || conn == "" {
			s.log.Error("ignoring topic status with malformed key", "key", ClipKey(key), "offset", r.Offset)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.Value == nil {
			delete(s.topics[conn], topic)
			return
		}
		if s.topics[conn] == nil {
			s.topics[conn] = map[string]bool{}
		}
		s.topics[conn][topic] = true
	default:
		s.log.Warn("ignoring status record with unknown key (written by a newer version?)", "key", ClipKey(key), "offset", r.Offset)
	}
}

func topicStatusKey(topic, connector string) string {
	return topicStatusPrefix + topic + ":connector-" + connector
}

// EncodeTopicStatus is an active-topic value (KIP-558), field for field as
// Kafka's KafkaStatusBackingStore writes it.
func EncodeTopicStatus(topic, connector string, task int, discovered int64) []byte {
	b := []byte(`{"topic":{"name":`)
	b = jackson.AppendString(b, topic)
	b = append(b, `,"connector":`...)
	b = jackson.AppendString(b, connector)
	b = append(b, `,"task":`...)
	b = strconv.AppendInt(b, int64(task), 10)
	b = append(b, `,"discoverTimestamp":`...)
	b = strconv.AppendInt(b, discovered, 10)
	return append(b, "}}"...)
}

// PutTopic records that a connector's task used a topic, once per topic.
func (s *StatusStore) PutTopic(ctx context.Context, topic, connector string, task int, discovered int64) error {
	s.mu.Lock()
	known := s.topics[connector][topic]
	s.mu.Unlock()
	if known {
		return nil
	}
	return s.write(ctx, topicStatusKey(topic, connector), EncodeTopicStatus(topic, connector, task, discovered))
}

// Topics returns a connector's active topics, sorted.
func (s *StatusStore) Topics(connector string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.topics[connector]))
	for t := range s.topics[connector] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ResetTopics tombstones every active topic of a connector.
func (s *StatusStore) ResetTopics(ctx context.Context, connector string) error {
	for _, t := range s.Topics(connector) {
		if err := s.write(ctx, topicStatusKey(t, connector), nil); err != nil {
			return err
		}
	}
	return nil
}
