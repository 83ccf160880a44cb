package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// The Herder methods the REST API calls.

var _ Herder = (*herder)(nil)

func (h *herder) ServerInfo(ctx context.Context) ServerInfo {
	return ServerInfo{Version: Version, Commit: Commit, KafkaClusterID: h.clusterID}
}

// Version and Commit are reported by GET /; the binary sets them.
var (
	Version = "4.4.0-tributary"
	Commit  = "unknown"
)

func (h *herder) Health(ctx context.Context) error {
	if !h.ready.Load() {
		return h.stillStarting()
	}
	if err := h.do(ctx, func(context.Context) error { return nil }); err != nil {
		return Errorf(KindInternal, "Worker was unable to handle this request and may be unable to handle other requests. %s", err)
	}
	return nil
}

func (h *herder) snapshot() map[string]ConnectorSnapshot {
	s, _ := h.configs.Snapshot()
	return s
}

// backendsReady is nil once the internal topics are read (the worker sets
// the backends, then apiReady), and the 503 of a worker still starting
// before: the REST API listens from the start.
func (h *herder) backendsReady() error {
	if h.apiReady.Load() {
		return nil
	}
	return h.stillStarting()
}

func (h *herder) Connectors(ctx context.Context) ([]string, error) {
	if err := h.backendsReady(); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(h.snapshot())), nil
}

// pluginLoader wraps a plugins.Loader for herder.pl.
type pluginLoader struct{ plugins.Loader }

// loader returns the plugin loader, or the 503 of a worker still starting
// when it is not yet there (the REST API listens from the start; the plugin
// host can take a while to discover plugin.path).
func (h *herder) loader() (plugins.Loader, error) {
	if l := h.pl.Load(); l != nil {
		return l.Loader, nil
	}
	return nil, h.stillStarting()
}

// stillStarting is the 503 of a request the worker cannot answer before
// it has started, saying what it is doing.
func (h *herder) stillStarting() error {
	return Errorf(KindUnavailable, "Worker is still starting up. The worker is currently %s", h.stage.Load())
}

func (h *herder) connectorType(config map[string]string) string {
	l, err := h.loader()
	if err != nil {
		return "unknown"
	}
	spec, err := l.Spec(config["connector.class"])
	if err != nil {
		return "unknown"
	}
	return string(spec.Type)
}

func (h *herder) info(name string, cs ConnectorSnapshot) ConnectorInfo {
	info := ConnectorInfo{Name: name, Config: maps.Clone(cs.Config), Tasks: []TaskID{}, Type: h.connectorType(cs.Config)}
	for i := range cs.Tasks {
		info.Tasks = append(info.Tasks, TaskID{Connector: name, Task: i})
	}
	return info
}

func (h *herder) lookup(name string) (ConnectorSnapshot, error) {
	if err := h.backendsReady(); err != nil {
		return ConnectorSnapshot{}, err
	}
	cs, ok := h.snapshot()[name]
	if !ok {
		return cs, ErrUnknownConnector(name)
	}
	return cs, nil
}

func (h *herder) ConnectorInfo(ctx context.Context, name string) (ConnectorInfo, error) {
	cs, err := h.lookup(name)
	if err != nil {
		return ConnectorInfo{}, err
	}
	return h.info(name, cs), nil
}

func (h *herder) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	cs, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	return maps.Clone(cs.Config), nil
}

// validate checks a connector config the way Kafka Connect does before
// anything is written.
func (h *herder) validate(ctx context.Context, config map[string]string) (sdk.ConfigInfos, sdk.Spec, error) {
	class := strings.TrimSpace(config["connector.class"])
	if class == "" {
		return sdk.ConfigInfos{}, sdk.Spec{}, Errorf(KindBadRequest, "Connector config %s contains no connector type", formatConfig(config))
	}
	l, err := h.loader()
	if err != nil {
		return sdk.ConfigInfos{}, sdk.Spec{}, err
	}
	spec, err := l.Spec(class)
	if err != nil {
		return sdk.ConfigInfos{}, sdk.Spec{}, Errorf(KindBadRequest, "Failed to find any class that implements Connector and which name matches %s, available connectors are: %s", class, h.available(l))
	}
	pluginInfos, err := l.Validate(ctx, spec.Class, config)
	if err != nil {
		// The connector failed (a panic, a Check that could not run):
		// Kafka Connect answers 500 with the connector's message.
		return sdk.ConfigInfos{}, spec, Errorf(KindInternal, "Failed to validate the configuration of %s: %v", class, err)
	}
	return Validation(spec, h.converters(), config, pluginInfos), spec, nil
}

// converters are the worker's converters, every connector's defaults.
func (h *herder) converters() Converters {
	return Converters{Key: h.cfg.KeyConverter, Value: h.cfg.ValueConverter, Header: h.cfg.HeaderConverter}
}

func (h *herder) available(l plugins.Loader) string {
	var names []string
	for _, s := range l.Specs() {
		names = append(names, fmt.Sprintf("PluginDesc{klass=%s, name='%s', version='%s', type=%s}", s.Class, s.Class, s.Version, s.Type))
	}
	return strings.Join(names, ", ")
}

func formatConfig(c map[string]string) string {
	keys := slices.Sorted(maps.Keys(c))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+c[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (h *herder) PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string) (bool, ConnectorInfo, error) {
	config = maps.Clone(config)
	config["name"] = name
	infos, _, err := h.validate(ctx, config)
	if err != nil {
		return false, ConnectorInfo{}, err
	}
	if err := ValidationError(infos); err != nil {
		return false, ConnectorInfo{}, err
	}
	target := ""
	switch strings.ToUpper(strings.TrimSpace(initialState)) {
	case "", "RUNNING":
	case "PAUSED":
		target = TargetPaused
	case "STOPPED":
		target = TargetStopped
	default:
		return false, ConnectorInfo{}, Errorf(KindBadRequest, "Invalid initial state %s; must be one of RUNNING, PAUSED or STOPPED", initialState)
	}
	var created bool
	var info ConnectorInfo
	err = h.do(ctx, func(ctx context.Context) error {
		cs, exists := h.snapshot()[name]
		if exists && !allowReplace {
			return ErrConnectorExists(name)
		}
		if err := h.mustLead(); err != nil {
			return err
		}
		if !exists && target != "" {
			if err := h.configs.PutTargetState(ctx, name, target); err != nil {
				return err
			}
		}
		if err := h.configs.PutConnectorConfig(ctx, name, config); err != nil {
			return err
		}
		created = !exists
		delete(h.failedConnectors, name)
		cs.Config = config
		info = h.info(name, cs)
		if !exists {
			info.Tasks = []TaskID{}
		}
		h.reconcile(ctx)
		return nil
	})
	return created, info, err
}

func (h *herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error) {
	cs, err := h.lookup(name)
	if err != nil {
		return ConnectorInfo{}, err
	}
	next := maps.Clone(cs.Config)
	for k, v := range patch {
		if v == nil {
			delete(next, k)
		} else {
			next[k] = *v
		}
	}
	_, info, err := h.PutConnectorConfig(ctx, name, next, true, "")
	return info, err
}

func (h *herder) DeleteConnector(ctx context.Context, name string) error {
	return h.do(ctx, func(ctx context.Context) error {
		if _, ok := h.snapshot()[name]; !ok {
			return ErrUnknownConnector(name)
		}
		if err := h.mustLead(); err != nil {
			return err
		}
		if err := h.configs.DeleteConnector(ctx, name); err != nil {
			return err
		}
		delete(h.failedConnectors, name)
		h.reconcile(ctx)
		return nil
	})
}

func (h *herder) ConnectorStatus(ctx context.Context, name string) (ConnectorStateInfo, error) {
	if err := h.backendsReady(); err != nil {
		return ConnectorStateInfo{}, err
	}
	cs, ok := h.snapshot()[name]
	st, found := h.statuses.Connector(name)
	if !ok || !found {
		return ConnectorStateInfo{}, Errorf(KindNotFound, "No status found for connector %s", name)
	}
	out := ConnectorStateInfo{Name: name, Connector: st, Tasks: []TaskState{}, Type: h.connectorType(cs.Config)}
	for _, t := range sortedTasks(h.statuses.Tasks(name)) {
		if t.ID < len(cs.Tasks) {
			out.Tasks = append(out.Tasks, t)
		}
	}
	return out, nil
}

func (h *herder) TaskStatus(ctx context.Context, name string, task int) (TaskState, error) {
	if err := h.backendsReady(); err != nil {
		return TaskState{}, err
	}
	cs, ok := h.snapshot()[name]
	if ok && task < len(cs.Tasks) {
		if st, ok := h.taskStatus(TaskID{Connector: name, Task: task}); ok {
			return st, nil
		}
	}
	return TaskState{}, Errorf(KindNotFound, "No status found for task %s-%d", name, task)
}

func (h *herder) TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error) {
	cs, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	out := []TaskInfo{}
	for i, tc := range cs.Tasks {
		out = append(out, TaskInfo{ID: TaskID{Connector: name, Task: i}, Config: maps.Clone(tc)})
	}
	return out, nil
}

func (h *herder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error) {
	var out *ConnectorStateInfo
	err := h.do(ctx, func(ctx context.Context) error {
		cs, ok := h.snapshot()[name]
		if !ok {
			return errUnknownConnectorColon(name)
		}
		st, _ := h.statuses.Connector(name)
		restartConn := !onlyFailed || st.State == StateFailed
		var restartTasks []TaskID
		if includeTasks {
			for i := range cs.Tasks {
				id := TaskID{Connector: name, Task: i}
				ts, _ := h.taskStatus(id)
				if !onlyFailed || ts.State == StateFailed {
					restartTasks = append(restartTasks, id)
				}
			}
		}
		if includeTasks || onlyFailed {
			state, _ := h.ConnectorStatus(ctx, name)
			if restartConn {
				state.Connector.State = StateRestarting
			}
			for i := range state.Tasks {
				if slices.Contains(restartTasks, TaskID{Connector: name, Task: state.Tasks[i].ID}) {
					state.Tasks[i].State = StateRestarting
				}
			}
			out = &state
		}
		if restartConn && h.mine(name) {
			h.stopConnector(ctx, name)
			delete(h.failedConnectors, name)
			if cs.Target == TargetStarted || cs.Target == "" {
				h.putConnectorStatus(ctx, name, StateRestarting, "")
			}
		}
		for _, id := range restartTasks {
			if h.mineTask(id) {
				h.stopTask(ctx, id)
				delete(h.failedTasks, id)
				h.putTaskStatus(ctx, id, StateRestarting, "")
			}
		}
		h.reconcile(ctx)
		return nil
	})
	return out, err
}

func (h *herder) RestartTask(ctx context.Context, name string, task int) error {
	return h.do(ctx, func(ctx context.Context) error {
		cs, ok := h.snapshot()[name]
		if !ok {
			return errUnknownConnectorColon(name)
		}
		id := TaskID{Connector: name, Task: task}
		if task < 0 || task >= len(cs.Tasks) {
			return Errorf(KindNotFound, "Unknown task: %s-%d", name, task)
		}
		h.stopTask(ctx, id)
		delete(h.failedTasks, id)
		h.reconcile(ctx)
		return nil
	})
}

func (h *herder) setTarget(ctx context.Context, name, target string) error {
	return h.do(ctx, func(ctx context.Context) error {
		cs, ok := h.snapshot()[name]
		if !ok {
			return errUnknownConnectorPlain(name)
		}
		if target == TargetStopped {
			// Only the leader writes task configs (pause and resume may
			// be written by any worker, as in Kafka Connect).
			if err := h.mustLead(); err != nil {
				return err
			}
		}
		if target == TargetStopped && len(cs.Tasks) > 0 {
			if err := h.configs.PutTaskConfigs(ctx, name, nil); err != nil {
				return err
			}
		}
		if cs.Target == target {
			return nil
		}
		if err := h.configs.PutTargetState(ctx, name, target); err != nil {
			return err
		}
		h.reconcile(ctx)
		return nil
	})
}

// errUnknownConnectorPlain is Kafka Connect's 404 of pause, resume and stop.
func errUnknownConnectorPlain(name string) *Error {
	return Errorf(KindNotFound, "Unknown connector %s", name)
}

// errUnknownConnectorColon is Kafka Connect's 404 of the connector and task
// restarts.
func errUnknownConnectorColon(name string) *Error {
	return Errorf(KindNotFound, "Unknown connector: %s", name)
}

// cleanStatuses is the leader's status-topic cleanup at the end of a
// reconcile, once the tasks are down: the statuses of deleted connectors
// (and their tasks and active topics) and of tasks beyond a connector's
// task count (a stopped or downsized connector) are tombstoned, as Kafka
// Connect does (KAFKA-9472).
func (h *herder) cleanStatuses(ctx context.Context, snap map[string]ConnectorSnapshot, deleted []string) {
	if !h.assign.leader {
		return
	}
	for _, name := range deleted {
		if err := h.statuses.DeleteConnector(ctx, name, h.taskCounts[name]); err != nil {
			h.connLogger(name).Warn("deleting statuses failed", "err", err)
		}
		delete(h.taskCounts, name)
	}
	for name, cs := range snap {
		for _, t := range h.statuses.Tasks(name) {
			if t.ID < len(cs.Tasks) {
				continue
			}
			if err := h.statuses.DeleteTask(ctx, TaskID{Connector: name, Task: t.ID}); err != nil {
				h.connLogger(name).Warn("deleting a task status failed", "task", t.ID, "err", err)
			}
		}
	}
}

func (h *herder) PauseConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, TargetPaused)
}

func (h *herder) ResumeConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, TargetStarted)
}

func (h *herder) StopConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, TargetStopped)
}

func (h *herder) ConnectorTopics(ctx context.Context, name string) ([]string, error) {
	if !h.cfg.TopicTracking {
		return nil, Errorf(KindForbidden, "Topic tracking is disabled.")
	}
	if err := h.backendsReady(); err != nil {
		return nil, err
	}
	// Like Kafka Connect, an unknown connector simply has no active topics.
	t := h.statuses.Topics(name)
	if t == nil {
		t = []string{}
	}
	return t, nil
}

func (h *herder) ResetConnectorTopics(ctx context.Context, name string) error {
	if !h.cfg.TopicTracking {
		return Errorf(KindForbidden, "Topic tracking is disabled.")
	}
	if !h.cfg.TopicTrackingReset {
		return Errorf(KindForbidden, "Topic tracking reset is disabled.")
	}
	if err := h.backendsReady(); err != nil {
		return err
	}
	// Kafka Connect accepts a reset for an unknown connector (202).
	return h.statuses.ResetTopics(ctx, name)
}

func (h *herder) Offsets(ctx context.Context, name string) (ConnectorOffsets, error) {
	cs, err := h.lookup(name)
	if err != nil {
		return ConnectorOffsets{}, err
	}
	out := ConnectorOffsets{Offsets: []PartitionOffset{}}
	if h.connectorType(cs.Config) == "sink" {
		offs, err := h.groups.Fetch(ctx, "connect-"+name)
		if err != nil {
			return out, err
		}
		for _, tp := range slices.SortedFunc(maps.Keys(offs), compareTP) {
			out.Offsets = append(out.Offsets, PartitionOffset{
				Partition: map[string]any{"kafka_topic": tp.Topic, "kafka_partition": tp.Partition},
				Offset:    map[string]any{"kafka_offset": offs[tp]},
			})
		}
		return out, nil
	}
	for _, so := range h.offsets.All(name) {
		out.Offsets = append(out.Offsets, PartitionOffset{Partition: so.Partition, Offset: so.Offset})
	}
	return out, nil
}

func compareTP(a, b sdk.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition - b.Partition)
}

// mustBeStopped is Kafka Connect's precondition of the offsets writes.
func (h *herder) mustBeStopped(name string) (ConnectorSnapshot, error) {
	cs, err := h.lookup(name)
	if err != nil {
		return cs, err
	}
	if cs.Target != TargetStopped || len(cs.Tasks) > 0 {
		return cs, Errorf(KindBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	return cs, nil
}

func (h *herder) AlterOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error) {
	cs, err := h.mustBeStopped(name)
	if err != nil {
		return "", err
	}
	if len(offsets.Offsets) == 0 {
		return "", Errorf(KindBadRequest, "The offsets to be altered may not be null or empty")
	}
	sink := h.connectorType(cs.Config) == "sink"
	var change sdk.OffsetChange
	if sink {
		change.Sink = map[sdk.TopicPartition]*int64{}
		for _, po := range offsets.Offsets {
			tp, err := sinkPartition(po.Partition)
			if err != nil {
				return "", err
			}
			if po.Offset == nil {
				change.Sink[tp] = nil
				continue
			}
			off, err := sinkOffset(po.Offset)
			if err != nil {
				return "", err
			}
			change.Sink[tp] = &off
		}
	} else {
		for _, po := range offsets.Offsets {
			so := sdk.SourceOffset{Partition: sdk.Partition(ConnectNumbers(po.Partition))}
			if po.Offset != nil {
				so.Offset = sdk.Offset(ConnectNumbers(po.Offset))
			}
			change.Source = append(change.Source, so)
		}
	}
	// The connector decides first (Kafka Connect's alterOffsets); nothing
	// is written unless it agrees.
	accepted, err := h.approveOffsets(ctx, name, cs.Config, sink, change)
	if err != nil {
		return "", err
	}
	err = h.do(ctx, func(ctx context.Context) error {
		if _, err := h.mustBeStopped(name); err != nil {
			return err
		}
		if err := h.mustLead(); err != nil {
			return err
		}
		if sink {
			commit := map[sdk.TopicPartition]int64{}
			var del []sdk.TopicPartition
			for tp, off := range change.Sink {
				if off == nil {
					del = append(del, tp)
				} else {
					commit[tp] = *off
				}
			}
			if len(commit) > 0 {
				if err := h.groups.Commit(ctx, "connect-"+name, commit); err != nil {
					return err
				}
			}
			if len(del) > 0 {
				if err := h.groups.Delete(ctx, "connect-"+name, del); err != nil {
					return err
				}
			}
			return nil
		}
		return h.offsets.WriteOffsets(ctx, name, change.Source)
	})
	if err != nil {
		return "", err
	}
	return offsetsMessage(accepted, "altered"), nil
}

// approveOffsets asks the connector of name (a sink or a source) about a
// change to its offsets, and turns a refusal into the REST answer: the
// connector's message (a 400, where Kafka Connect answers 500 with it), or
// Kafka Connect's message for a connector that does not support the change.
func (h *herder) approveOffsets(ctx context.Context, name string, config map[string]string, sink bool, change sdk.OffsetChange) (bool, error) {
	l, err := h.loader()
	if err != nil {
		return false, err
	}
	class := config["connector.class"]
	if spec, err := l.Spec(class); err == nil {
		class = spec.Class
	}
	accepted, err := l.AlterOffsets(ctx, class, name, maps.Clone(config), change)
	var refused *plugins.OffsetsRefusedError
	kind := "source"
	if sink {
		kind = "sink"
	}
	switch {
	case err == nil:
		return accepted, nil
	case errors.As(err, &refused):
		return false, &Error{Kind: KindBadRequest, Message: refused.Message, Err: err}
	case errors.Is(err, sdk.ErrOffsetsUnsupported):
		return false, &Error{Kind: KindBadRequest, Err: err, Message: fmt.Sprintf(
			"Failed to modify offsets for connector %s because it doesn't support external modification of offsets", name)}
	}
	return false, &Error{Kind: KindInternal, Err: err, Message: fmt.Sprintf("Failed to modify offsets for %s connector %s: %v", kind, name, err)}
}

// offsetsMessage is Kafka Connect's answer to an offsets change (op is
// "altered" or "reset"), depending on whether the connector's hook
// accepted it or the connector has none.
func offsetsMessage(accepted bool, op string) string {
	if accepted {
		return "The offsets for this connector have been " + op + " successfully"
	}
	return "The Connect framework-managed offsets for this connector have been " + op +
		" successfully. However, if this connector manages offsets externally, they will need to be manually " +
		op + " in the system that the connector uses."
}

// ConnectNumbers returns m with the json.Numbers of a REST body (decoded
// with UseNumber) made int64 (integers written without a fraction or
// exponent, that fit) or float64: the Long and Double that Kafka Connect's
// JsonConverter gives a connector's alterOffsets.
func ConnectNumbers(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonNumber(v)
	}
	return out
}

func jsonNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case map[string]any:
		return ConnectNumbers(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonNumber(e)
		}
		return out
	}
	return v
}

func sinkPartition(p map[string]any) (sdk.TopicPartition, error) {
	topic, ok := p["kafka_topic"].(string)
	if !ok || topic == "" {
		return sdk.TopicPartition{}, Errorf(KindBadRequest, "Kafka topic names must be valid strings and may not be null")
	}
	part, err := asInt(p["kafka_partition"])
	if err != nil {
		return sdk.TopicPartition{}, Errorf(KindBadRequest, "Failed to parse the following Kafka partition value in the provided offsets: '%v'. Partition values for sink connectors need to be integers.", p["kafka_partition"])
	}
	return sdk.TopicPartition{Topic: topic, Partition: int32(part)}, nil
}

func sinkOffset(o map[string]any) (int64, error) {
	off, err := asInt(o["kafka_offset"])
	if err != nil || off < 0 {
		return 0, Errorf(KindBadRequest, "Failed to parse the following Kafka offset value in the provided offsets: '%v'. Offset values for sink connectors need to be integers.", o["kafka_offset"])
	}
	return off, nil
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return 0, fmt.Errorf("not an integer")
		}
		return int64(x), nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("not an integer")
}

func (h *herder) ResetOffsets(ctx context.Context, name string) (string, error) {
	cs, err := h.mustBeStopped(name)
	if err != nil {
		return "", err
	}
	// Kafka Connect asks the connector about a reset too: every partition
	// with a stored offset, each to null.
	sink := h.connectorType(cs.Config) == "sink"
	var change sdk.OffsetChange
	if sink {
		offs, err := h.groups.Fetch(ctx, "connect-"+name)
		if err != nil {
			return "", err
		}
		change.Sink = map[sdk.TopicPartition]*int64{}
		for tp := range offs {
			change.Sink[tp] = nil
		}
	} else {
		change.Source = []sdk.SourceOffset{}
		for _, o := range h.offsets.All(name) {
			change.Source = append(change.Source, sdk.SourceOffset{Partition: o.Partition})
		}
	}
	accepted, err := h.approveOffsets(ctx, name, cs.Config, sink, change)
	if err != nil {
		return "", err
	}
	err = h.do(ctx, func(ctx context.Context) error {
		if _, err := h.mustBeStopped(name); err != nil {
			return err
		}
		if err := h.mustLead(); err != nil {
			return err
		}
		if sink {
			offs, err := h.groups.Fetch(ctx, "connect-"+name)
			if err != nil || len(offs) == 0 {
				return err
			}
			return h.groups.Delete(ctx, "connect-"+name, slices.Collect(maps.Keys(offs)))
		}
		var so []sdk.SourceOffset
		for _, o := range h.offsets.All(name) {
			so = append(so, sdk.SourceOffset{Partition: o.Partition})
		}
		if len(so) == 0 {
			return nil
		}
		return h.offsets.WriteOffsets(ctx, name, so)
	})
	if err != nil {
		return "", err
	}
	return offsetsMessage(accepted, "reset"), nil
}

func (h *herder) Plugins(ctx context.Context, all bool) ([]PluginInfo, error) {
	l, err := h.loader()
	if err != nil {
		return nil, err
	}
	// Kafka Connect 4.4's order: connectors by class, then (all) the
	// transformations, predicates, converters and header converters, each
	// by class.
	var out []PluginInfo
	for _, s := range l.Specs() {
		out = append(out, PluginInfo{Class: s.Class, Type: string(s.Type), Version: s.Version})
	}
	slices.SortStableFunc(out, func(a, b PluginInfo) int { return strings.Compare(a.Class, b.Class) })
	if all {
		for _, c := range converterClasses(false) {
			out = append(out, PluginInfo{Class: c, Type: "converter", Version: Version})
		}
		for _, c := range converterClasses(true) {
			out = append(out, PluginInfo{Class: c, Type: "header_converter", Version: Version})
		}
	}
	return out, nil
}

func (h *herder) PluginConfig(ctx context.Context, plugin string) ([]sdk.ConfigKeyInfo, error) {
	l, err := h.loader()
	if err != nil {
		return nil, err
	}
	spec, err := l.Spec(plugin)
	if err != nil {
		if defs, ok := ConverterConfig(plugin); ok {
			return defs, nil
		}
		return nil, Errorf(KindNotFound, "Unknown plugin %s.", plugin)
	}
	return ConnectorConfigDefs(spec), nil
}

func (h *herder) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (sdk.ConfigInfos, error) {
	class := strings.TrimSpace(config["connector.class"])
	if class == "" {
		return sdk.ConfigInfos{}, Errorf(KindBadRequest, "Connector config %s contains no connector type", formatConfig(config))
	}
	l, err := h.loader()
	if err != nil {
		return sdk.ConfigInfos{}, err
	}
	ps, err1 := l.Spec(plugin)
	cs, err2 := l.Spec(class)
	if err1 == nil && err2 == nil && ps.Class != cs.Class {
		return sdk.ConfigInfos{}, Errorf(KindBadRequest, "Included connector type %s does not match request type %s", class, plugin)
	}
	infos, _, err := h.validate(ctx, config)
	return infos, err
}

// mustLead refuses writes that only the leader may do (invariant 4). Kafka
// Connect forwards them to the leader; until forwarding exists a follower
// answers 409, which clients retry.
func (h *herder) mustLead() error {
	if h.assign.leader || h.assign.all {
		return nil
	}
	return Errorf(KindConflict, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
}
