package worker

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 23, case 6: an object or array inside a partition or offset is a
// 400 with Kafka Connect's message, never a 500 naming a Go type.
func TestCheckOffsets(t *testing.T) {
	for _, tc := range []struct {
		typ, body, want string
	}{
		{"source", `{"offsets":[{"partition":{"filename":"f"},"offset":{"position":1,"ok":true,"s":"x","n":null,"f":1.5}}]}`, ""},
		{"source", `{"offsets":[{"partition":{"filename":{"a":1}},"offset":{"position":1}}]}`, "Offsets may only contain primitive types as values, but field filename contains MAP"},
		{"source", `{"offsets":[{"partition":{"filename":"f"},"offset":{"position":[1,2]}}]}`, "Offsets may only contain primitive types as values, but field position contains ARRAY"},
		{"source", `{"offsets":[{"partition":{"filename":[1]},"offset":null}]}`, "Offsets may only contain primitive types as values, but field filename contains ARRAY"},
		{"source", `{"offsets":[{"offset":{"position":1}}]}`, "The partition for a source connector offset cannot be null or missing"},
		{"sink", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}]}`, ""},
		{"sink", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":null}]}`, ""},
		{"sink", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":[0]},"offset":{"kafka_offset":1}}]}`,
			"Failed to parse the following Kafka partition value in the provided offsets: '[0]'. Partition values for sink connectors need to be integers."},
		{"sink", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":{"a":1,"b":[1,"x"]}}}]}`,
			"Failed to parse the following Kafka offset value in the provided offsets: '{a=1, b=[1, x]}'. Offset values for sink connectors need to be integers."},
		{"sink", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":1.5}}]}`,
			"Failed to parse the following Kafka offset value in the provided offsets: '1.5'. Offset values for sink connectors need to be integers."},
		{"sink", `{"offsets":[{"partition":{"kafka_topic":{"a":1},"kafka_partition":0},"offset":{"kafka_offset":1}}]}`,
			"Kafka topic names must be valid strings and may not be null"},
	} {
		var offs ConnectorOffsets
		if err := json.Unmarshal([]byte(tc.body), &offs); err != nil {
			t.Fatal(err)
		}
		err := CheckOffsets(tc.typ, offs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v", tc.typ, tc.body, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || KindOf(err) != KindBadRequest):
			t.Errorf("%s %s: %v (kind %d), want the 400 %q", tc.typ, tc.body, err, KindOf(err), tc.want)
		case err != nil && (strings.Contains(err.Error(), "interface") || strings.Contains(err.Error(), "map[")):
			t.Errorf("%s: a Go type in %q", tc.body, err)
		}
	}
}
