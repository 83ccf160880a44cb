package worker

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CheckOffsets checks the shape of an alter-offsets request for a
// connector of type typ (source or sink) and returns the 400 Kafka Connect
// words for the first problem: a sink's partitions name a topic and an
// integer partition, its offsets an integer kafka_offset; a source's hold
// only primitive values.
func CheckOffsets(typ string, offsets ConnectorOffsets) error {
	if typ != "sink" {
		return checkSourceOffsets(offsets.Offsets)
	}
	for _, po := range offsets.Offsets {
		if _, err := sinkPartition(po.Partition); err != nil {
			return err
		}
		if po.Offset != nil {
			if _, err := sinkOffset(po.Offset); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSourceOffsets is Kafka Connect's OffsetUtils.validateFormat over an
// alter-offsets request for a source connector: partitions and offsets may
// hold only primitive values (no objects or arrays). Kafka Connect answers
// a 500 with this message; a malformed request is a 400 here.
func checkSourceOffsets(offsets []PartitionOffset) error {
	for _, po := range offsets {
		if po.Partition == nil {
			return Errorf(KindBadRequest, "The partition for a source connector offset cannot be null or missing")
		}
		for _, m := range []map[string]any{po.Partition, po.Offset} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if t := nonPrimitive(m[k]); t != "" {
					return Errorf(KindBadRequest, "Offsets may only contain primitive types as values, but field %s contains %s", k, t)
				}
			}
		}
	}
	return nil
}

// nonPrimitive names the Kafka Connect schema type of a JSON value that is
// not primitive (MAP, ARRAY), or returns "".
func nonPrimitive(v any) string {
	switch v.(type) {
	case map[string]any:
		return "MAP"
	case []any:
		return "ARRAY"
	}
	return ""
}

// javaString renders a decoded JSON value as Java's toString renders what
// Jackson made of it ({a=1}, [1, 2], 1.5, abc, null), for messages that
// quote a value as Kafka Connect's do.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+"="+javaString(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
