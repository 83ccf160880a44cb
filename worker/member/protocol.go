package member

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Protocol is a Connect sub-protocol offered in JoinGroup, named as Kafka
// Connect names it (connect.protocol).
type Protocol string

// The sub-protocols, in Kafka Connect's preference order.
const (
	// Sessioned is IncrementalCooperativeConnectProtocol v2 (KIP-507).
	Sessioned Protocol = "sessioned"
	// Compatible is IncrementalCooperativeConnectProtocol v1 (KIP-415).
	Compatible Protocol = "compatible"
	// Eager is ConnectProtocol v0, named "default" on the wire.
	Eager Protocol = "default"
)

// Version is the metadata/assignment version the protocol uses.
func (p Protocol) Version() int16 {
	switch p {
	case Sessioned:
		return 2
	case Compatible:
		return 1
	}
	return 0
}

// Incremental reports whether the protocol is incremental cooperative.
func (p Protocol) Incremental() bool { return p == Sessioned || p == Compatible }

// ProtocolsFor returns the protocols a worker offers for a connect.protocol
// setting (eager, compatible, sessioned).
func ProtocolsFor(setting string) ([]Protocol, error) {
	switch setting {
	case "sessioned", "":
		return []Protocol{Sessioned, Compatible, Eager}, nil
	case "compatible":
		return []Protocol{Compatible, Eager}, nil
	case "eager", "default":
		return []Protocol{Eager}, nil
	}
	return nil, fmt.Errorf("member: unknown connect.protocol %q (want eager, compatible or sessioned)", setting)
}

// Assignment errors.
const (
	NoError        int16 = 0
	ConfigMismatch int16 = 1 // the leader is behind or members disagree
)

// TaskID names a task. ConnectorTask (-1) is never a TaskID's Task: a
// connector instance is listed in Connectors instead.
type TaskID struct {
	Connector string
	Task      int32
}

// ConnectorTask is the task id Kafka's encoding uses for the connector
// instance itself.
const ConnectorTask int32 = -1

// Assignment is ConnectProtocol.Assignment (v0) or ExtendedAssignment
// (v1/v2). For incremental protocols Connectors and Tasks are what is newly
// assigned this generation, Revoked* what the member must stop.
type Assignment struct {
	Error             int16
	Leader            string // member id
	LeaderURL         string
	ConfigOffset      int64
	Connectors        []string
	Tasks             []TaskID
	RevokedConnectors []string
	RevokedTasks      []TaskID
	// Delay is the scheduled rebalance delay in milliseconds.
	Delay int32
}

// Metadata is a member's JoinGroup metadata: ConnectProtocol.WorkerState
// (v0) or ExtendedWorkerState (v1/v2, carrying the member's current
// allocation).
type Metadata struct {
	Version      int16
	URL          string
	ConfigOffset int64
	// Allocation is the member's current assignment (v1/v2 only; nil is
	// encoded as null bytes).
	Allocation *Assignment
}

// MaxStringBytes is the longest string the connect protocol carries (an
// int16 length, as every Kafka protocol string).
const MaxStringBytes = math.MaxInt16

type writer struct {
	b   []byte
	err error
}

func (w *writer) i16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) i32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) i64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) str(s string) {
	if len(s) > MaxStringBytes && w.err == nil {
		w.err = fmt.Errorf("member: a string of %d bytes (%.40q…) is longer than the %d bytes the connect protocol carries", len(s), s, MaxStringBytes)
	}
	w.i16(int16(len(s)))
	w.b = append(w.b, s...)
}

// EncodeMetadata is ConnectProtocol.serializeMetadata (v0) or
// IncrementalCooperativeConnectProtocol.serializeMetadata (v1/v2). It
// fails, instead of writing data no member can read, when a string (a URL
// or connector name) is longer than MaxStringBytes.
func EncodeMetadata(m Metadata) ([]byte, error) {
	w := &writer{}
	w.i16(m.Version)
	w.str(m.URL)
	w.i64(m.ConfigOffset)
	if m.Version >= 1 {
		if m.Allocation == nil {
			w.i32(-1)
		} else {
			a, err := EncodeAssignment(m.Version, *m.Allocation)
			if err != nil {
				return nil, err
			}
			w.i32(int32(len(a)))
			w.b = append(w.b, a...)
		}
	}
	return w.b, w.err
}

// EncodeAssignment serializes an assignment at a version (0, 1 or 2).
// Connectors are sorted; each connector's entry lists the connector
// instance (-1) first when assigned, then its tasks in order. Like
// EncodeMetadata it fails on a string longer than MaxStringBytes.
func EncodeAssignment(version int16, a Assignment) ([]byte, error) {
	w := &writer{}
	w.i16(version)
	w.i16(a.Error)
	w.str(a.Leader)
	w.str(a.LeaderURL)
	w.i64(a.ConfigOffset)
	writeConnectorAssignments(w, a.Connectors, a.Tasks)
	if version >= 1 {
		writeConnectorAssignments(w, a.RevokedConnectors, a.RevokedTasks)
		w.i32(a.Delay)
	}
	return w.b, w.err
}

func writeConnectorAssignments(w *writer, conns []string, tasks []TaskID) {
	by := map[string][]int32{}
	for _, c := range conns {
		by[c] = append(by[c], ConnectorTask)
	}
	for _, t := range tasks {
		by[t.Connector] = append(by[t.Connector], t.Task)
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	w.i32(int32(len(names)))
	for _, n := range names {
		ids := by[n]
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		w.str(n)
		w.i32(int32(len(ids)))
		for _, id := range ids {
			w.i32(id)
		}
	}
}

var errShort = errors.New("member: truncated connect protocol data")

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
func (r *reader) i16() int16 {
	b := r.take(2)
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}
func (r *reader) i32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}
func (r *reader) i64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}
func (r *reader) str() string {
	n := r.i16()
	if n < 0 {
		r.err = errors.New("member: null string in connect protocol data")
		return ""
	}
	return string(r.take(int(n)))
}

// DecodeMetadata parses any version's member metadata. Versions above 2
// are read as 2 (Kafka reads the fields it knows).
func DecodeMetadata(b []byte) (Metadata, error) {
	r := &reader{b: b}
	m := Metadata{Version: r.i16()}
	m.URL = r.str()
	m.ConfigOffset = r.i64()
	if r.err == nil && m.Version >= 1 && len(r.b) > 0 {
		n := r.i32()
		if n >= 0 {
			ab := r.take(int(n))
			if r.err == nil {
				a, err := DecodeAssignment(ab)
				if err != nil {
					return Metadata{}, err
				}
				m.Allocation = &a
			}
		}
	}
	if r.err != nil {
		return Metadata{}, r.err
	}
	if m.Version < 0 {
		return Metadata{}, fmt.Errorf("member: invalid metadata version %d", m.Version)
	}
	return m, nil
}

// DecodeAssignment parses any version's assignment; v1/v2 fields missing
// at the end take their defaults, as Kafka tolerates.
func DecodeAssignment(b []byte) (Assignment, error) {
	r := &reader{b: b}
	version := r.i16()
	a := Assignment{Error: r.i16()}
	a.Leader = r.str()
	a.LeaderURL = r.str()
	a.ConfigOffset = r.i64()
	a.Connectors, a.Tasks = readConnectorAssignments(r)
	if r.err == nil && version >= 1 && len(r.b) > 0 {
		a.RevokedConnectors, a.RevokedTasks = readConnectorAssignments(r)
		if r.err == nil && len(r.b) > 0 {
			a.Delay = r.i32()
		}
	}
	if r.err != nil {
		return Assignment{}, r.err
	}
	if version < 0 {
		return Assignment{}, fmt.Errorf("member: invalid assignment version %d", version)
	}
	return a, nil
}

func readConnectorAssignments(r *reader) ([]string, []TaskID) {
	n := r.i32()
	if n < 0 {
		return nil, nil // null array
	}
	var conns []string
	var tasks []TaskID
	for i := int32(0); i < n && r.err == nil; i++ {
		name := r.str()
		m := r.i32()
		if m < 0 || int(m) > len(r.b)/4 {
			r.err = errShort
			break
		}
		for j := int32(0); j < m && r.err == nil; j++ {
			id := r.i32()
			if id == ConnectorTask {
				conns = append(conns, name)
			} else {
				tasks = append(tasks, TaskID{name, id})
			}
		}
	}
	return conns, tasks
}
