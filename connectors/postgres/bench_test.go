package postgres

import (
	"context"
	"encoding/binary"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// BenchmarkStreamInsert measures the plugin's cost per streamed insert of
// a 10-column row (decoding the pgoutput message, converting the values,
// building the Debezium event, batching and encoding it for the worker as
// the SDK does), without I/O.
// benchTable is the benchmark's 10-column table (the integration
// benchmark's): its catalog, table, and a row's column values as text.
func benchTable(b *testing.B) (*Config, *catalog, *table, []string) {
	cfg := &Config{TopicPrefix: "p", DBName: "db", DecimalMode: "precise", TimePrecisionMode: "adaptive", BinaryMode: "bytes",
		IntervalMode: "numeric", TombstonesOnDelete: true, Placeholder: "__p", SnapshotFetchSize: 10240, StatusInterval: 10 * time.Second}
	types := map[uint32]*pgType{20: {oid: 20, name: "int8", typtype: 'b'}, 23: {oid: 23, name: "int4", typtype: 'b'},
		25: {oid: 25, name: "text", typtype: 'b'}, 1700: {oid: 1700, name: "numeric", typtype: 'b'},
		1114: {oid: 1114, name: "timestamp", typtype: 'b'}, 16: {oid: 16, name: "bool", typtype: 'b'}}
	f, _ := newFilters(cfg)
	cat := newCatalog(cfg, f, slog.New(slog.DiscardHandler))
	cat.types, cat.mapper = types, newTypeMapper(cfg, types)
	cols := []struct {
		name   string
		typ    uint32
		typmod int32
		val    string
	}{{"id", 20, -1, "123456"}, {"a", 23, -1, "456"}, {"b", 23, -1, "864192"}, {"c", 20, -1, "123456370368"},
		{"d", 1700, 4 + 12<<16 + 2, "1234.56"}, {"e", 25, -1, "c4ca4238a0b923820dcc509a6f75849bc81e728d9d4c2f636f067f89cc14862c"},
		{"f", 25, -1, "eccbc87e4b5ce2fe28308fd9f2a7baf3a87ff679a2f3e71d9181a67b7542122c"}, {"g", 1114, -1, "2024-01-02 10:17:36"},
		{"h", 16, -1, "t"}, {"i", 25, -1, "e4da3b7fbbce2345d7772b0674a318d5"}}
	tb := &table{id: tableID{"public", "bench"}}
	var vals []string
	for i, c := range cols {
		tb.columns = append(tb.columns, &column{name: c.name, typ: c.typ, typmod: c.typmod, pk: i == 0, notNull: i < 2})
		vals = append(vals, c.val)
	}
	if err := cat.build(tb, make([]int, len(cols))); err != nil {
		b.Fatal(err)
	}
	return cfg, cat, tb, vals
}

// encodeBatches encodes the batches sent on the returned channel as the
// SDK does (the wire encoding, in batches of about 1 MiB) until it is
// closed; then the error channel says how it went.
func encodeBatches() (chan<- []sdk.SourceRecord, <-chan error) {
	out := make(chan []sdk.SourceRecord, 4)
	done := make(chan error, 1)
	go func() {
		enc := wire.Encoder{ReusePartitions: true, ValueLengths: true}
		var w wire.Record
		for batch := range out {
			enc.ForgetPartition()
			for i := range batch {
				r := &batch[i]
				w = wire.Record{Partition: r.Partition, Offset: r.Offset, Topic: r.Topic, KafkaPartition: wire.NoPartition,
					Timestamp: wire.NoTimestamp, KeySchema: r.KeySchema, Key: r.Key, ValueSchema: r.ValueSchema, Value: r.Value}
				if err := enc.Append(&w); err != nil {
					done <- err
					return
				}
				if enc.Len() > 1<<20 {
					enc.Reset()
				}
			}
		}
		done <- nil
	}()
	return out, done
}

// cpuPerOp reports the process's CPU time per iteration (every thread's:
// the collector's and the encoding goroutine's too) as cpu-ns/op, the
// figure that counts on a busy machine, where ns/op includes the waits
// for a core. The returned func, called after the loop, reports it.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op") }
}

// BenchmarkSnapshotRow measures the plugin's cost per snapshot row of the
// 10-column table: splitting and decoding a COPY text row, building the
// read event, and encoding it for the worker as the SDK does (batches of
// the wire encoding), without I/O.
func BenchmarkSnapshotRow(b *testing.B) {
	cfg, cat, tb, vals := benchTable(b)
	row := []byte(strings.Join(vals, "\t") + "\n")
	out, done := encodeBatches()
	s := &snapshotter{cfg: cfg, cat: cat, logger: cat.logger, part: sdk.Partition{"server": "p"}, lsn: 1 << 30}
	var cols []int
	for i := range tb.columns {
		cols = append(cols, i)
	}
	r := newRowReader(context.Background(), s, tb, cols, 7, time.Now(), out, nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(row)))
	report := cpuPerOp(b)
	for b.Loop() {
		if _, err := r.Write(row); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.finish(); err != nil {
		b.Fatal(err)
	}
	close(out)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	report()
}

func BenchmarkStreamInsert(b *testing.B) {
	cfg, cat, tb, vals := benchTable(b)
	msg := []byte{'I', 0, 0, 0, 1, 'N', 0, byte(len(vals))}
	for _, v := range vals {
		msg = append(msg, 't')
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(v)))
		msg = append(msg, v...)
	}
	s := &streamer{cfg: cfg, cat: cat, logger: cat.logger, rels: map[uint32]*relState{1: {t: tb}}}
	s.pos = position{commit: 1 << 30, txID: 7, commitTs: pgTime(0)}
	out, done := encodeBatches()
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for i := 0; b.Loop(); i++ {
		if err := s.message(context.Background(), uint64(i), msg); err != nil {
			b.Fatal(err)
		}
		// While catching up, the stream flushes every streamFlushDelay
		// with a few dozen events (the integration benchmark's pace).
		if len(s.batch) >= 64 {
			if err := s.flush(context.Background(), out); err != nil {
				b.Fatal(err)
			}
		}
	}
	close(out)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
