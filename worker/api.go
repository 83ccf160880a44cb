package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// Herder is what the REST API needs from the worker. Every method is safe
// for concurrent use. Errors are *Error values whose Kind the REST layer maps
// to an HTTP status; any other error is a 500.
type Herder interface {
	// ServerInfo is GET /.
	ServerInfo(ctx context.Context) ServerInfo
	// Health is GET /health: nil when the worker has started and its herder
	// loop answers; an *Error of KindUnavailable (starting) or KindInternal
	// (stuck) otherwise.
	Health(ctx context.Context) error

	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (ConnectorInfo, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// PutConnectorConfig creates or (if allowReplace) replaces a connector's
	// config; initialState is "", RUNNING, PAUSED or STOPPED (creation only).
	// The config is validated first; an invalid one is a KindBadRequest error
	// with Kafka Connect's message and nothing is written.
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string) (created bool, info ConnectorInfo, err error)
	// PatchConnectorConfig merges patch into the stored config; a nil value
	// deletes the key.
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string) error

	// ConnectorStatus is the connector's status from the status topic; a
	// connector that no worker has reported on yet (just created) is
	// UNASSIGNED. Unknown connectors are a KindNotFound error.
	ConnectorStatus(ctx context.Context, name string) (ConnectorStateInfo, error)
	TaskStatus(ctx context.Context, name string, task int) (TaskState, error)
	TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error)

	// RestartConnector restarts the connector (and, per the flags, tasks).
	// With both flags false it returns nil state (204); otherwise the state
	// with the instances to restart shown as RESTARTING (202).
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error)
	RestartTask(ctx context.Context, name string, task int) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	StopConnector(ctx context.Context, name string) error

	ConnectorTopics(ctx context.Context, name string) ([]string, error)
	ResetConnectorTopics(ctx context.Context, name string) error

	// Offsets, AlterOffsets and ResetOffsets are the /offsets endpoints;
	// the last two need a STOPPED connector, ask the connector before they
	// write anything (Kafka Connect's alterOffsets: a refusal is a
	// KindBadRequest error with the connector's message) and return the
	// message to show. Numbers in AlterOffsets' maps may be json.Number
	// (the REST layer keeps them as written, so that an integer stays exact
	// and 5.0 stays a float).
	Offsets(ctx context.Context, name string) (ConnectorOffsets, error)
	AlterOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error)
	ResetOffsets(ctx context.Context, name string) (string, error)

	// Plugins lists installed plugins (connectors only unless all).
	Plugins(ctx context.Context, all bool) ([]PluginInfo, error)
	// PluginConfig is GET /connector-plugins/{plugin}/config.
	PluginConfig(ctx context.Context, plugin string) ([]sdk.ConfigKeyInfo, error)
	// ValidateConfig is PUT /connector-plugins/{plugin}/config/validate:
	// validation problems are in the result, not the error.
	ValidateConfig(ctx context.Context, plugin string, config map[string]string) (sdk.ConfigInfos, error)

	// Loggers, Logger and SetLogLevel are the /admin/loggers endpoints;
	// SetLogLevel returns the affected logger names (scope worker).
	Loggers(ctx context.Context) (map[string]LoggerLevel, error)
	Logger(ctx context.Context, name string) (LoggerLevel, error)
	SetLogLevel(ctx context.Context, name, level, scope string) ([]string, error)
}

// Probes is implemented by a Herder that answers Kubernetes' probes:
// GET /healthz (liveness) and GET /readyz (readiness). Errors are *Error
// values as for Health.
type Probes interface {
	// Alive is nil unless the worker is stuck: its herder loop runs and
	// does not answer within ctx. A worker still starting is alive.
	Alive(ctx context.Context) error
	// Ready is nil once the worker has joined its group (an assignment
	// applied), caught up on the config topic (read to its end now), its
	// membership is not lost and its herder loop answers: it can take
	// requests and run its work.
	Ready(ctx context.Context) error
}

// Fencer is implemented by a Herder whose worker runs exactly-once source
// tasks: FenceZombies is the internal PUT /connectors/{name}/fence, a round
// of zombie fencing for a connector, which only the leader performs (a
// follower answers with a KindConflict error whose Forward is the leader).
// sig is checked as PutTaskConfigs's.
type Fencer interface {
	FenceZombies(ctx context.Context, name string, sig *Signature) error
}

// Cluster is implemented by a Herder whose worker is one of a group: the
// REST layer forwards requests between workers and serves the internal
// endpoints with it.
type Cluster interface {
	// LeaderURL returns the group leader's REST URL, "" when this worker
	// leads. It waits while a rebalance is in progress (up to the hold
	// timeout, then a KindConflict error).
	LeaderURL(ctx context.Context) (string, error)
	// PutTaskConfigs is the internal POST /connectors/{name}/tasks: task
	// configs generated by a connector on another worker, for the leader
	// to write. sig is the request's signature (nil if it has none); it is
	// checked against the session key when the group signs requests.
	PutTaskConfigs(ctx context.Context, name string, configs []map[string]string, sig *Signature) error
	// HoldTimeout is how long a request may wait for a rebalance to end
	// (rest.rebalance.hold.ms).
	HoldTimeout() time.Duration
	// SyncConfigs reads the config topic to its end and returns once this
	// worker answers from what it read, its herder included: a follower
	// calls it after the leader carried out a write for it, so that its
	// next answers see the write (a status, a task restart right after a
	// create forwarded to the leader).
	SyncConfigs(ctx context.Context) error
}

// ServerInfo is the body of GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// ConnectorInfo is Kafka Connect's ConnectorInfo entity.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   string            `json:"type"` // source, sink or unknown
}

// TaskID names a task.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// TaskInfo is an entry of GET /connectors/{name}/tasks.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// Connector and task states, as Kafka Connect names them.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// ConnectorStateInfo is the body of GET /connectors/{name}/status.
type ConnectorStateInfo struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	Type      string         `json:"type"`
}

// ConnectorState is the connector part of a status.
type ConnectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	Version  string `json:"version,omitempty"` // plugin version (KIP-891, Kafka 4.1+)
}

// TaskState is one task's status.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	Version  string `json:"version,omitempty"` // plugin version (KIP-891, Kafka 4.1+)
}

// ConnectorOffsets is the body of the /offsets endpoints.
type ConnectorOffsets struct {
	Offsets []PartitionOffset `json:"offsets"`
}

// PartitionOffset is one partition's offset; Offset nil resets it.
type PartitionOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// PluginInfo is an entry of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// LoggerLevel is a logger's level; LastModified is null until changed.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// Kind classifies a herder error; the REST layer maps it to a status code.
type Kind int

// Error kinds, with the HTTP status Kafka Connect answers.
const (
	KindBadRequest  Kind = 400
	KindForbidden   Kind = 403
	KindNotFound    Kind = 404
	KindConflict    Kind = 409
	KindTooLarge    Kind = 413 // more than an internal topic takes
	KindInternal    Kind = 500
	KindUnavailable Kind = 503
)

// Error is a herder error with Kafka Connect's message.
type Error struct {
	Kind    Kind
	Message string
	Err     error // optional cause
	// Forward, when set, is the REST URL of the worker that can do the
	// request (the leader, or the owner of a task): the REST layer
	// forwards the request there (Kafka Connect's NotLeaderException and
	// NotAssignedException), and answers Kind and Message only when it may
	// not forward again.
	Forward string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an *Error.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err (KindInternal if it is not an *Error).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Common errors with Kafka Connect's messages.
func ErrUnknownConnector(name string) *Error {
	return Errorf(KindNotFound, "Connector %s not found", name)
}

// ErrConnectorExists is the 409 for a duplicate create.
func ErrConnectorExists(name string) *Error {
	return Errorf(KindConflict, "Connector %s already exists", name)
}
