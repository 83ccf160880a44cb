package postgres

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/worker/convert"
)

// BenchmarkWorkerConvert measures the worker's cost per snapshot read event
// of the 10-column table on the source task path, without I/O: decoding the
// plugin's wire batches as the plugin host does (values left encoded,
// aliasing the batch, offsets left encoded) and converting each record's key
// and value with JsonConverters with schemas (Debezium's default) into
// shared chunks as the source runner does. The events are the connector's
// own, encoded as the SDK encodes them, in batches of the given number of
// records (the SDK sends at most 2,000 a batch; fewer when the plugin
// produces more slowly than the linger time).
//
//	go test -run '^$' -bench WorkerConvert -benchmem ./connectors/postgres/
func BenchmarkWorkerConvert(b *testing.B) {
	for _, per := range []int{256, 2000} {
		b.Run("batch="+strconv.Itoa(per), func(b *testing.B) { benchWorkerConvert(b, per) })
	}
}

func benchWorkerConvert(b *testing.B, per int) {
	batches := snapshotBatches(b, per, 8)
	key, err := convert.NewJSON(map[string]string{})
	if err != nil {
		b.Fatal(err)
	}
	val, err := convert.NewJSON(map[string]string{})
	if err != nil {
		b.Fatal(err)
	}
	dec := wire.Decoder{AliasInput: true, RawOffsets: true, RawValues: true}
	var chunk []byte
	var bytesOut int
	convertOne := func(c *convert.JSONConverter, r *wire.Record, isKey bool) {
		if cap(chunk)-len(chunk) < 16<<10 {
			chunk = make([]byte, 0, 64<<10)
		}
		start := len(chunk)
		var err error
		if isKey {
			chunk, _, err = c.AppendFromConnect(chunk, r.Topic, r.KeySchema, r.Key)
		} else {
			chunk, _, err = c.AppendFromConnect(chunk, r.Topic, r.ValueSchema, r.Value)
		}
		if err != nil {
			b.Fatal(err)
		}
		bytesOut += len(chunk) - start
	}
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime(b)
	for b.Loop() {
		recs, err := dec.Decode(batches[n%len(batches)], per)
		if err != nil {
			b.Fatal(err)
		}
		n++
		for i := range recs {
			convertOne(key, &recs[i], true)
			convertOne(val, &recs[i], false)
		}
	}
	// One op is one batch; per record. The process's CPU time (including
	// the garbage collector's) is the figure to compare on a shared
	// machine, where the elapsed time depends on the neighbours.
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*per), "ns/record")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(n*per), "cpu-ns/record")
	b.ReportMetric(float64(bytesOut)/float64(n*per), "B-json/record")
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// snapshotBatches returns nb wire batches of per read events each, of the
// benchmark table, as the connector builds them and the SDK encodes them.
func snapshotBatches(b *testing.B, per, nb int) [][]byte {
	cfg, cat, tb, vals := benchTable(b)
	out := make(chan []sdk.SourceRecord, per*nb)
	s := &snapshotter{cfg: cfg, cat: cat, logger: cat.logger, part: sdk.Partition{"server": "p"}, lsn: 1 << 30}
	var cols []int
	for i := range tb.columns {
		cols = append(cols, i)
	}
	r := newRowReader(context.Background(), s, tb, cols, 7, time.Now(), out, nil)
	for i := range per * nb {
		v := append([]string(nil), vals...)
		v[0] = strconv.Itoa(123456 + i)
		if _, err := r.Write([]byte(strings.Join(v, "\t") + "\n")); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.finish(); err != nil {
		b.Fatal(err)
	}
	close(out)
	var recs []sdk.SourceRecord
	for batch := range out {
		recs = append(recs, batch...)
	}
	var batches [][]byte
	enc := wire.Encoder{ReusePartitions: true, ValueLengths: true}
	for i := range recs {
		rec := &recs[i]
		w := wire.Record{Partition: rec.Partition, Offset: rec.Offset, Topic: rec.Topic, KafkaPartition: wire.NoPartition,
			Timestamp: wire.NoTimestamp, KeySchema: rec.KeySchema, Key: rec.Key, ValueSchema: rec.ValueSchema, Value: rec.Value}
		if err := enc.Append(&w); err != nil {
			b.Fatal(err)
		}
		if enc.Count() == per {
			batches = append(batches, append([]byte(nil), enc.Bytes()...))
			enc.Reset()
		}
	}
	return batches
}
