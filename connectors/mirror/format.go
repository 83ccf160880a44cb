package mirror

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The records of MirrorMaker 2's internal topics, in Kafka's protocol
// primitives: STRING is an int16 length and UTF-8 bytes, integers are
// big-endian. A null STRING (length -1) is read as "".

// OffsetSync says that the record at Upstream offset of Topic/Partition on
// the source is at Downstream on the target (the offset-syncs topic).
type OffsetSync struct {
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
}

// Checkpoint is a consumer group's translated offset (the checkpoints
// topic). Topic is the topic's name on the target.
type Checkpoint struct {
	Group      string
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string
}

// Heartbeat is a record of the heartbeats topic.
type Heartbeat struct {
	Source, Target string
	Timestamp      int64 // milliseconds since the epoch
}

// errShort is returned for a record cut short.
var errShort = errors.New("mirror: record too short")

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errShort
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string {
	n := r.int16()
	if r.err != nil || n < 0 {
		return ""
	}
	b := r.take(int(n))
	if r.err == nil && !utf8.Valid(b) {
		r.err = errors.New("mirror: string is not UTF-8")
	}
	return string(b)
}

// Key is the offset sync's record key.
func (s OffsetSync) Key() []byte {
	b := appendString(nil, s.Topic)
	return binary.BigEndian.AppendUint32(b, uint32(s.Partition))
}

// Value is the offset sync's record value (no version header).
func (s OffsetSync) Value() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(s.Upstream))
	return binary.BigEndian.AppendUint64(b, uint64(s.Downstream))
}

// DecodeOffsetSync reads an offset-syncs record.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	k, v := reader{b: key}, reader{b: value}
	s := OffsetSync{Topic: k.string(), Partition: k.int32(), Upstream: v.int64(), Downstream: v.int64()}
	if err := errors.Join(k.err, v.err); err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync: %w", err)
	}
	return s, nil
}

// Key is the checkpoint's record key.
func (c Checkpoint) Key() []byte {
	b := appendString(nil, c.Group)
	b = appendString(b, c.Topic)
	return binary.BigEndian.AppendUint32(b, uint32(c.Partition))
}

// Value is the checkpoint's record value: version 0, then the offsets and
// the metadata.
func (c Checkpoint) Value() []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 20+len(c.Metadata)), 0)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Upstream))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Downstream))
	return appendString(b, c.Metadata)
}

// DecodeCheckpoint reads a checkpoints record.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	k, v := reader{b: key}, reader{b: value}
	c := Checkpoint{Group: k.string(), Topic: k.string(), Partition: k.int32()}
	if ver := v.int16(); v.err == nil && ver != 0 {
		return Checkpoint{}, fmt.Errorf("checkpoint: version %d, only 0 is known", ver)
	}
	c.Upstream, c.Downstream, c.Metadata = v.int64(), v.int64(), v.string()
	if err := errors.Join(k.err, v.err); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return c, nil
}

// Key is the heartbeat's record key.
func (h Heartbeat) Key() []byte { return appendString(appendString(nil, h.Source), h.Target) }

// Value is the heartbeat's record value: version 0 and the timestamp.
func (h Heartbeat) Value() []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 10), 0)
	return binary.BigEndian.AppendUint64(b, uint64(h.Timestamp))
}

// DecodeHeartbeat reads a heartbeats record.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	k, v := reader{b: key}, reader{b: value}
	h := Heartbeat{Source: k.string(), Target: k.string()}
	if ver := v.int16(); v.err == nil && ver != 0 {
		return Heartbeat{}, fmt.Errorf("heartbeat: version %d, only 0 is known", ver)
	}
	h.Timestamp = v.int64()
	if err := errors.Join(k.err, v.err); err != nil {
		return Heartbeat{}, fmt.Errorf("heartbeat: %w", err)
	}
	return h, nil
}
