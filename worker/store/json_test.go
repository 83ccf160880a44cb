package store

import (
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
	"github.com/twmb/franz-go/pkg/kgo"
)

// goldenKeys are the partitions behind the offsetkey lines, in order.
var goldenKeys = []struct {
	connector string
	partition sdk.Partition
}{
	{"file-src", sdk.Partition{"filename": "/tmp/in.txt"}},
	{"datagen", sdk.Partition{"task": int64(0)}},
	{"pg", sdk.Partition{"db": "shop", "schema": "public", "table": "orders"}},
	{"x", sdk.Partition{"server": "dbserver1"}},
	{"weird \"name\"", sdk.Partition{"a": true, "b": nil, "n": 1.5, "q": "quote\"\\\u00e9\u2028\t<>&"}},
}

func TestOffsetKeysMatchJava(t *testing.T) {
	var lines [][]string
	for _, l := range golden(t) {
		if l[0] == "offsetkey" {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(goldenKeys) {
		t.Fatalf("%d golden keys, %d cases", len(lines), len(goldenKeys))
	}
	sticky := kgo.StickyKeyPartitioner(nil).ForTopic("connect-offsets")
	for i, c := range goldenKeys {
		l := lines[i]
		k, err := EncodeOffsetKey(c.connector, c.partition)
		if err != nil {
			t.Fatal(err)
		}
		if string(k) != l[1] {
			t.Errorf("key %d:\n got %s\nwant %s", i, k, l[1])
		}
		wantHash, _ := strconv.ParseInt(l[2], 10, 32)
		if h := Murmur2(k); int64(h) != wantHash {
			t.Errorf("murmur2(%s) = %d, Java %d", k, h, wantHash)
		}
		for j, n := range []int32{25, 5} {
			want, _ := strconv.Atoi(l[3+j])
			if p := KeyPartition(k, n); p != int32(want) {
				t.Errorf("partition of %s of %d = %d, Java %d", k, n, p, want)
			}
			if p := sticky.Partition(&kgo.Record{Key: k}, int(n)); p != want {
				t.Errorf("kgo.StickyKeyPartitioner puts %s in %d of %d, Java %d", k, p, n, want)
			}
		}
	}
}

func TestRecordValuesMatchJava(t *testing.T) {
	ov, err := EncodeOffsetValue(sdk.Offset{"position": int64(30), "lsn": int64(123456789012345), "f": 1.0, "g": 1e10, "h": 0.0001, "s": "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind string
		got  []byte
	}{
		{"connector", EncodeConnectorConfig(map[string]string{"connector.class": "FileStreamSource", "name": "a", "topic": "t"})},
		{"commit", EncodeTaskCommit(3)},
		{"target", EncodeTargetState(TargetStopped)},
		{"restart", EncodeRestartRequest(RestartRequest{Connector: "a", IncludeTasks: true})},
		{"status", EncodeStatus(Status{State: StateRunning, WorkerID: "127.0.0.1:8083", Generation: 7})},
	} {
		if want := goldenLine(t, c.kind)[1]; string(c.got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.kind, c.got, want)
		}
	}
	// Java wrote the offset map in insertion order and ours is sorted: the
	// value bytes of each field must survive a decode/encode round trip.
	if _, err := decodeJSON(ov); err != nil {
		t.Fatal(err)
	}
	jv, err := decodeJSON([]byte(goldenLine(t, "offsetvalue")[1]))
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"f": "1.0", "g": "1.0E10", "h": "1.0E-4", "lsn": "123456789012345", "position": "30"} {
		b, err := appendJSON(nil, jv.(map[string]any)[field])
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("field %s re-encoded as %s, Java wrote %s", field, b, want)
		}
	}
	for _, c := range []struct {
		f    float64
		want string
	}{{1.0, "1.0"}, {1e10, "1.0E10"}, {0.0001, "1.0E-4"}, {1e7, "1.0E7"}, {9999999.0, "9999999.0"}, {0.001, "0.001"}, {123.456, "123.456"}, {negZero(), "-0.0"}, {1.2345678901234567e-20, "1.2345678901234567E-20"}, {100.0, "100.0"}, {pointOne + pointTwo, "0.30000000000000004"}, {-2.5, "-2.5"}} {
		b, err := appendJSON(nil, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%v: got %s want %s", c.f, b, c.want)
		}
	}
}

func TestEscapingMatchesJackson(t *testing.T) {
	want, err := hex.DecodeString(goldenLine(t, "escape")[1])
	if err != nil {
		t.Fatal(err)
	}
	// Same fields as the Java program, in sorted key order there too? No:
	// Java wrote insertion order, so build the object by hand in that order.
	b := []byte(`{"s":`)
	b = jackson.AppendString(b, "\u0001\b\f\n\r\t\u001f\u007f\u2028/\U0001F600")
	for _, f := range []struct {
		k string
		v any
	}{{"d1", 1e7}, {"d2", 9999999.0}, {"d3", 0.001}, {"d4", 123.456}, {"d5", negZero()}, {"d6", 1.2345678901234567e-20}, {"d7", 100.0}, {"d8", pointOne + pointTwo}, {"i", int32(-2147483648)}, {"f", float32(1.5)}} {
		b = append(b, ',')
		b = jackson.AppendString(b, f.k)
		b = append(b, ':')
		if b, err = appendJSON(b, f.v); err != nil {
			t.Fatal(err)
		}
	}
	b = append(b, '}')
	if string(b) != string(want) {
		t.Errorf("\n got %s\nwant %s", b, want)
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func TestDecodeKeepsIntegersExact(t *testing.T) {
	v, err := decodeJSON([]byte(`{"lsn":9007199254740993,"f":1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["lsn"] != int64(9007199254740993) || m["f"] != 1.5 {
		t.Fatalf("%#v", m)
	}
}

var pointOne, pointTwo = 0.1, 0.2
