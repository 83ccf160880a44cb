package herder

import (
	"fmt"
	"time"
)

// TaskID names a task of a connector.
type TaskID struct {
	Connector string
	Task      int
}

func (t TaskID) String() string { return fmt.Sprintf("%s-%d", t.Connector, t.Task) }

// Target is a connector's target state in the config topic.
type Target string

// Target states.
const (
	Started Target = "STARTED"
	Paused  Target = "PAUSED"
	Stopped Target = "STOPPED"
)

// Connector is what the config topic says about one connector.
type Connector struct {
	Config map[string]string
	// ConfigOffset is the config-topic offset of the connector's config
	// record: a new record restarts the connector even if equal.
	ConfigOffset int64
	Target       Target
	// Tasks are the committed task configs, by task id.
	Tasks []map[string]string
	// Applied is the connector config in effect when Tasks were committed
	// (nil: Config). Tasks run with it, so a task never runs a task config
	// with a connector config it was not generated for; a connector config
	// change commits task configs again even when they are unchanged, and
	// that restarts the tasks (KAFKA-9228).
	Applied map[string]string
	// Inconsistent: the last commit did not match its task records (after
	// compaction); the connector's tasks must be generated again.
	Inconsistent bool
	// Problem, when set, says why the connector cannot run as the internal
	// topics hold it (a record it cannot apply, a name the group protocol
	// cannot carry): it is not assigned, runs nowhere, and the leader
	// reports it FAILED with Problem as the trace, until a new record mends
	// it or it is deleted. With OffsetsProblem (offsets it cannot read) it
	// is assigned as usual, but its worker does not start it and reports
	// it FAILED instead.
	Problem        string
	OffsetsProblem bool
	// Source: a source connector (by its plugin). With exactly-once
	// support (Config.ExactlyOnce) its tasks are fenced and run in
	// transactions.
	Source bool
	// TaskCount is its latest task count record (tasks-fencing-<name>,
	// KIP-618), HasTaskCount whether there is one: how many
	// transactional producers of its tasks may still run.
	TaskCount    int
	HasTaskCount bool
	// PendingFencing: task configs were committed after the task count
	// record; a round of zombie fencing is due before its tasks start.
	PendingFencing bool
	// Generation counts its committed task config sets: a task started
	// for one may not run once another is committed.
	Generation int
}

// runnable reports whether the connector and its tasks may run.
func (c Connector) runnable() bool { return c.Problem == "" }

// assignable reports whether the leader assigns the connector.
func (c Connector) assignable() bool { return c.Problem == "" || c.OffsetsProblem }

// SessionKey is the config topic's session-key record (KIP-507).
type SessionKey struct {
	Key       []byte
	Algorithm string
	Created   time.Time
}

// Snapshot is the config topic as read up to Offset.
type Snapshot struct {
	Offset     int64
	Connectors map[string]Connector
	SessionKey *SessionKey
}

// Protocol is the group's sub-protocol (connect.protocol).
type Protocol string

// Sub-protocols.
const (
	Eager      Protocol = "default"
	Compatible Protocol = "compatible"
	Sessioned  Protocol = "sessioned"
)

// Token identifies a caller waiting for a Reply (a REST request, a group
// callback). The driver chooses tokens; the machine only hands them back.
type Token uint64

// States written to the status topic.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// Event is an input of Machine.Step.
type Event interface{ event() }

// Config topic events.
type (
	// Configs is the config topic after the driver read new records.
	Configs struct{ Snapshot Snapshot }
	// RestartRequested is a restart-connector-<name> record read after the
	// worker started (records older than the worker are history).
	RestartRequested struct {
		Connector                string
		IncludeTasks, OnlyFailed bool
	}
)

// Group events.
type (
	// JoinPrepare: the member is about to (re)join the group. When Lost
	// (the membership expired, or could not be renewed in time) or Eager,
	// every connector and task is stopped and then Reply is answered;
	// otherwise Reply is answered at once. Writes are held until the next
	// Assigned.
	JoinPrepare struct {
		Reply       Token
		Lost, Eager bool
	}
	// Shutdown: the worker is stopping. Everything stops (writing
	// UNASSIGNED, as Kafka Connect does), nothing starts again, and Reply
	// is answered once all has stopped; then the member leaves the group.
	Shutdown struct{ Reply Token }
	// Assigned is a completed rebalance: the member's whole ownership.
	// Work not in it stops before Reply is answered (the member rejoins
	// after revocations, and the leader may give the work to another).
	Assigned struct {
		Reply      Token
		Generation int32
		Protocol   Protocol
		Leader     bool
		LeaderURL  string
		// ConfigOffset is the leader's config offset; a member behind it
		// reads the config topic first (ReadConfigs) and applies the
		// assignment once caught up.
		ConfigOffset int64
		Connectors   []string
		Tasks        []TaskID
		// Owners is, on the leader, every member's URL by the work it owns
		// (to forward a task restart to its owner).
		ConnectorOwners map[string]string
		TaskOwners      map[TaskID]string
	}
)

// Runtime results, each for the Run of the action that caused it.
type (
	// ConnectorStarted: StartConnector finished; Err non-empty if the
	// connector could not start (it is then FAILED with Err as trace).
	ConnectorStarted struct {
		Name string
		Run  uint64
		Err  string
	}
	// ConnectorFailed: a running connector raised an error.
	ConnectorFailed struct {
		Name  string
		Run   uint64
		Trace string
	}
	// ReconfigurationRequested: the connector asked for its task configs
	// to be generated again (requestTaskReconfiguration).
	ReconfigurationRequested struct {
		Name string
		Run  uint64
	}
	// TaskConfigsGenerated answers GenerateTaskConfigs (Gen); Configs carry
	// task.class already.
	TaskConfigsGenerated struct {
		Name    string
		Run     uint64
		Gen     uint64
		Configs []map[string]string
		Err     string
	}
	// ConnectorStopped: StopConnector finished.
	ConnectorStopped struct {
		Name string
		Run  uint64
	}
	// TaskStarted: StartTask finished; Err non-empty if it failed.
	TaskStarted struct {
		ID  TaskID
		Run uint64
		Err string
	}
	// TaskFailed: a running task failed.
	TaskFailed struct {
		ID    TaskID
		Run   uint64
		Trace string
	}
	// TaskStopped: StopTask finished.
	TaskStopped struct {
		ID  TaskID
		Run uint64
	}
	// Done: the write or call Op finished (Err nil on success). Result is
	// the driver's answer for ModifyOffsets.
	Done struct {
		Op     uint64
		Err    error
		Result string
	}
	// Tick: time passed (call at NextDeadline, or any time).
	Tick struct{}
)

// Request is a REST write (or a question that must go through the loop).
type Request struct {
	Reply Token
	Op    Op
}

// Op is one kind of request.
type Op interface{ op() }

// Requests.
type (
	// PutConfig creates or replaces a connector config (already validated).
	// Target is the initial state of a new connector ("" for STARTED).
	PutConfig struct {
		Name         string
		Config       map[string]string
		AllowReplace bool
		Target       Target
		// Base, for a PATCH, is the config the patch was applied to:
		// nothing is written, and the Result is Stale, if the connector's
		// config is another one by now or a write of it is in flight (the
		// caller patches the new config and tries again).
		Base map[string]string
	}
	// DeleteConnector deletes a connector.
	DeleteConnector struct{ Name string }
	// SetTarget pauses, resumes or stops a connector. Pause and resume may
	// be written by any worker, as in Kafka Connect; stop by the leader.
	SetTarget struct {
		Name   string
		Target Target
	}
	// RestartConnector writes a restart request (KIP-745); the workers that
	// own the connector and its tasks act on it.
	RestartConnector struct {
		Name                     string
		IncludeTasks, OnlyFailed bool
	}
	// RestartTask restarts one task on the worker that owns it.
	RestartTask struct{ ID TaskID }
	// PutTaskConfigs is a follower's task configs (the internal POST
	// /connectors/{name}/tasks, signature already checked).
	PutTaskConfigs struct {
		Name    string
		Configs []map[string]string
	}
	// ModifyOffsets alters or resets a stopped connector's offsets; Payload
	// is the driver's description, handed back in the ModifyOffsets action.
	ModifyOffsets struct {
		Name    string
		Payload any
	}
	// Ping answers at once; a health check of the loop.
	Ping struct{}
	// Leader answers with the leader's URL ("" when this worker leads),
	// held while a rebalance is in progress.
	Leader struct{}
	// FenceZombies is a round of zombie fencing for a source connector
	// (KIP-618): before a task of a new generation of its tasks starts,
	// the leader fences the transactional producers its task count record
	// says may still run, then writes a new task count record. The
	// driver reads the config topic to its end before it asks (Kafka
	// Connect's refreshConfigSnapshot). A follower answers with the
	// leader's URL (the internal PUT /connectors/{name}/fence).
	FenceZombies struct{ Name string }
	// VerifyTask answers whether an exactly-once source task whose
	// producer was just initialized may run: its connector's task configs
	// are still of Generation, and the task is still assigned here
	// (DistributedHerder.verifyTaskGenerationAndOwnership). The driver
	// reads the config topic to its end first.
	VerifyTask struct {
		ID         TaskID
		Generation int
	}
)

func (Configs) event()                  {}
func (RestartRequested) event()         {}
func (JoinPrepare) event()              {}
func (Assigned) event()                 {}
func (Shutdown) event()                 {}
func (ConnectorStarted) event()         {}
func (ConnectorFailed) event()          {}
func (ReconfigurationRequested) event() {}
func (TaskConfigsGenerated) event()     {}
func (ConnectorStopped) event()         {}
func (TaskStarted) event()              {}
func (TaskFailed) event()               {}
func (TaskStopped) event()              {}
func (Done) event()                     {}
func (Tick) event()                     {}
func (Request) event()                  {}

func (PutConfig) op()        {}
func (DeleteConnector) op()  {}
func (SetTarget) op()        {}
func (RestartConnector) op() {}
func (RestartTask) op()      {}
func (PutTaskConfigs) op()   {}
func (ModifyOffsets) op()    {}
func (Ping) op()             {}
func (Leader) op()           {}
func (FenceZombies) op()     {}
func (VerifyTask) op()       {}

// Action is an output of Machine.Ready.
type Action interface{ action() }

// Actions.
type (
	// StartConnector starts a connector instance with Config; report
	// ConnectorStarted, then ConnectorFailed / ReconfigurationRequested
	// while it runs.
	StartConnector struct {
		Name   string
		Run    uint64
		Config map[string]string
	}
	// GenerateTaskConfigs calls the running connector's taskConfigs(MaxTasks)
	// and reports TaskConfigsGenerated; the machine fails the connector if
	// no answer comes within Config.TaskConfigsTimeout (the driver should
	// give up the call then too).
	GenerateTaskConfigs struct {
		Name     string
		Run      uint64
		Gen      uint64
		MaxTasks int
	}
	// StopConnector stops a connector instance; report ConnectorStopped.
	StopConnector struct {
		Name string
		Run  uint64
	}
	// StartTask starts a task; report TaskStarted, then TaskFailed.
	StartTask struct {
		ID         TaskID
		Run        uint64
		Connector  map[string]string
		Config     map[string]string
		Paused     bool
		Generation int32
		// ExactlyOnce: a source task run in transactions. Before its
		// producer starts, the driver asks for a round of zombie fencing
		// (FenceZombies, at the leader); once the producer is initialized
		// (which fences its own previous instance), it asks VerifyTask
		// with TaskGeneration, the generation of the task configs.
		ExactlyOnce    bool
		TaskGeneration int
	}
	// PauseTask and ResumeTask pause or resume a running task.
	PauseTask struct {
		ID  TaskID
		Run uint64
	}
	ResumeTask struct {
		ID  TaskID
		Run uint64
	}
	// StopTask stops a task (within task.shutdown.graceful.timeout.ms, then
	// abandoned and its plugin killed); report TaskStopped.
	StopTask struct {
		ID  TaskID
		Run uint64
	}
	// PutStatus writes a connector's (Task < 0) or task's status, unless
	// another worker wrote a newer generation (putSafe).
	PutStatus struct {
		Connector  string
		Task       int
		State      string
		Trace      string
		Generation int32
	}
	// CleanStatuses tombstones the statuses of connectors that are not in
	// Tasks (connector -> task count, the machine's view of the config
	// topic) and of tasks beyond their connector's count: the leader, after
	// every rebalance, once the work being removed has stopped and written
	// UNASSIGNED (KAFKA-9472). The driver keeps what a newer read of the
	// config topic still has.
	CleanStatuses struct{ Tasks map[string]int }
	// WriteConfigs writes records to the config topic in order, then reads
	// it to the end; report Done{Op} (Op 0: nobody waits, but report it).
	WriteConfigs struct {
		Op     uint64
		Writes []Write
	}
	// SendTaskConfigs POSTs task configs to the leader's internal endpoint
	// (signed when the protocol is sessioned); report Done{Op}.
	SendTaskConfigs struct {
		Op        uint64
		Name      string
		Configs   []map[string]string
		LeaderURL string
		Signed    bool
	}
	// ModifyOffsetsAction performs a ModifyOffsets request; report Done{Op}
	// with the message to return as Result.
	ModifyOffsetsAction struct {
		Op      uint64
		Name    string
		Config  map[string]string
		Payload any
	}
	// FenceProducers fences the transactional producers of a source
	// connector's tasks 0 to Tasks-1 (an InitProducerId for each
	// <group.id>-<connector>-<task>, through the connector's admin
	// settings, Config), then reads the config topic to its end; report
	// Done{Op} after the records read (Kafka Connect's
	// Worker.fenceZombies, then refreshConfigSnapshot).
	FenceProducers struct {
		Op     uint64
		Name   string
		Tasks  int
		Config map[string]string
	}
	// ClaimWrites initializes the leader's transactional producer of the
	// config topic, fencing any earlier leader's (claimWritePrivileges);
	// Claim false gives it up. Ordered with the config writes.
	ClaimWrites struct{ Claim bool }
	// ReadConfigs reads the config topic to its end and reports Configs.
	ReadConfigs struct{}
	// Rejoin asks the member to rejoin the group (the work to assign changed).
	Rejoin struct{}
	// Reply answers the caller Token.
	Reply struct {
		To     Token
		Result Result
	}
)

func (StartConnector) action()      {}
func (GenerateTaskConfigs) action() {}
func (StopConnector) action()       {}
func (StartTask) action()           {}
func (PauseTask) action()           {}
func (ResumeTask) action()          {}
func (StopTask) action()            {}
func (PutStatus) action()           {}
func (CleanStatuses) action()       {}
func (WriteConfigs) action()        {}
func (SendTaskConfigs) action()     {}
func (ModifyOffsetsAction) action() {}
func (FenceProducers) action()      {}
func (ClaimWrites) action()         {}
func (ReadConfigs) action()         {}
func (Rejoin) action()              {}
func (Reply) action()               {}

// Write is one config-topic write.
type Write struct {
	Kind WriteKind
	Name string
	// Config for WriteConnector (nil: delete the connector).
	Config map[string]string
	// Target for WriteTarget.
	Target Target
	// Tasks for WriteTasks.
	Tasks []map[string]string
	// Run, for WriteTasks of generated task configs, is the connector
	// instance that generated them: if the write fails, the driver reports
	// ConnectorFailed (it can never succeed, the configs being too large)
	// or ReconfigurationRequested (to try again) for it.
	Run uint64
	// IncludeTasks, OnlyFailed for WriteRestart.
	IncludeTasks, OnlyFailed bool
	// TaskCount for WriteTaskCount.
	TaskCount int
}

// WriteKind is the kind of a Write.
type WriteKind int

// Write kinds.
const (
	// WriteConnector writes connector-<name> (Config nil: deletes the
	// connector and its target state).
	WriteConnector WriteKind = iota + 1
	// WriteTarget writes target-state-<name>.
	WriteTarget
	// WriteTasks writes task-<name>-<i> and commit-<name>.
	WriteTasks
	// WriteRestart writes restart-connector-<name>.
	WriteRestart
	// WriteSessionKey writes a new session key (the driver makes it).
	WriteSessionKey
	// WriteTaskCount writes tasks-fencing-<name> (KIP-618).
	WriteTaskCount
)

// Result is the answer to a Request or a group callback.
type Result struct {
	Err *Error
	// Created: PutConfig made a new connector.
	Created bool
	// Tasks is the connector's committed task count (PutConfig).
	Tasks int
	// LeaderURL answers Leader ("" when this worker leads).
	LeaderURL string
	// Message answers ModifyOffsets.
	Message string
	// Stale: a PutConfig with a Base that is not the current config.
	Stale bool
}

// Error is a request's failure with Kafka Connect's status code and
// message. Forward, when set, is the URL of the worker that can do it (the
// leader, or the owner of a task): the REST layer forwards the request
// there.
type Error struct {
	Code    int
	Message string
	Forward string
}

func (e *Error) Error() string { return e.Message }

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Kafka Connect's messages for requests that cannot be done here and now.
// MsgConflict is the message of Kafka Connect's 409 for a request that
// met a rebalance (or no known leader): asking again once the rebalance
// is over may succeed.
const MsgConflict = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"

const (
	msgConflict    = MsgConflict
	msgNoLeader    = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgStaleConfig = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
)
