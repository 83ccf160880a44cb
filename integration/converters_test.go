package integration

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPrimitiveConvertersEndToEnd: Kafka's IntegerConverter works as a
// connector's value.converter (issue 21): 4-byte big-endian integers in a
// topic reach a FileStreamSink as their decimal text.
func TestPrimitiveConvertersEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs a worker")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, b.Bootstrap(), "prim", nil))
	r := rest{t, w.URL()}

	createTopicAt(t, b.Bootstrap(), "ints", 1)
	cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic("ints"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 100
	for i := range n {
		v := binary.BigEndian.AppendUint32(nil, uint32(int32(i-50)))
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.txt")
	r.must("POST", "/connectors", map[string]any{"name": "ints", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": "ints",
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "IntegerConverter",
	}}, 201)
	got := waitLines(t, out, n, 60*time.Second)
	for i, l := range got[:n] {
		if l != strconv.Itoa(i-50) {
			t.Fatalf("line %d = %q, want %d", i, l, i-50)
		}
	}
}
