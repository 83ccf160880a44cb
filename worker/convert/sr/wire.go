package sr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// MagicByte starts every record of Confluent's wire format.
const MagicByte = 0

// HeaderLen is the length of the magic byte and the schema id.
const HeaderLen = 5

// ErrNotWireFormat is wrapped when bytes do not start with the magic byte
// and a schema id.
var ErrNotWireFormat = errors.New("sr: not Confluent's wire format (magic byte 0 and a 4-byte schema id)")

// AppendHeader appends the magic byte and the big-endian schema id.
func AppendHeader(dst []byte, id int) []byte {
	return binary.BigEndian.AppendUint32(append(dst, MagicByte), uint32(id))
}

// ParseHeader splits b into its schema id and the payload after it.
func ParseHeader(b []byte) (id int, payload []byte, err error) {
	if len(b) < HeaderLen {
		return 0, nil, fmt.Errorf("%w: %d bytes", ErrNotWireFormat, len(b))
	}
	if b[0] != MagicByte {
		return 0, nil, fmt.Errorf("%w: unknown magic byte %d", ErrNotWireFormat, b[0])
	}
	return int(int32(binary.BigEndian.Uint32(b[1:5]))), b[5:], nil
}

// AppendIndexes appends Protobuf message indexes as Confluent writes them:
// the zigzag varint count then each index; the common [0] is the single
// byte 0.
func AppendIndexes(dst []byte, indexes []int) []byte {
	if len(indexes) == 1 && indexes[0] == 0 {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(len(indexes)))
	for _, i := range indexes {
		dst = binary.AppendVarint(dst, int64(i))
	}
	return dst
}

// ParseIndexes reads Protobuf message indexes off b; an empty count means
// [0].
func ParseIndexes(b []byte) (indexes []int, rest []byte, err error) {
	n, k := binary.Varint(b)
	if k <= 0 || n < 0 || n > int64(len(b)) {
		return nil, nil, fmt.Errorf("%w: bad message index count", ErrNotWireFormat)
	}
	b = b[k:]
	if n == 0 {
		return []int{0}, b, nil
	}
	indexes = make([]int, n)
	for i := range indexes {
		v, k := binary.Varint(b)
		if k <= 0 || v < 0 || v > 1<<31 {
			return nil, nil, fmt.Errorf("%w: bad message index", ErrNotWireFormat)
		}
		indexes[i] = int(v)
		b = b[k:]
	}
	return indexes, b, nil
}

// Subject name strategies, by Confluent's class names.
const (
	TopicNameStrategy       = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
	RecordNameStrategy      = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
	TopicRecordNameStrategy = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
)

// SubjectNameStrategy names the subject of a record's key or value schema
// from its topic and the schema's full record name.
type SubjectNameStrategy func(topic string, isKey bool, recordName string) string

// Strategy returns the subject name strategy of a Confluent class name (or
// its simple name); the empty string is TopicNameStrategy, the default.
func Strategy(class string) (SubjectNameStrategy, error) {
	class = strings.TrimSpace(class)
	simple := class[strings.LastIndexByte(class, '.')+1:]
	switch simple {
	case "", "TopicNameStrategy":
		return func(topic string, isKey bool, _ string) string {
			if isKey {
				return topic + "-key"
			}
			return topic + "-value"
		}, nil
	case "RecordNameStrategy":
		return func(_ string, _ bool, record string) string { return record }, nil
	case "TopicRecordNameStrategy":
		return func(topic string, _ bool, record string) string { return topic + "-" + record }, nil
	}
	return nil, fmt.Errorf("sr: unknown subject name strategy %q: want %s, %s or %s", class,
		TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)
}
