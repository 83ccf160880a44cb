package log

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchSpec describes a v2 record batch to build. Zero values give a plain
// (non-idempotent) uncompressed batch with timestamp 0.
type batchSpec struct {
	ProducerID    int64 // -1 (the default when Idempotent is false) for none
	ProducerEpoch int16
	BaseSequence  int32
	Idempotent    bool
	Timestamp     int64 // first timestamp; record i has Timestamp+i
	Gzip          bool
	Values        []string
}

// makeBatch builds a valid v2 batch (correct length and CRC-32C) with kmsg.
func makeBatch(t testing.TB, spec batchSpec) []byte {
	t.Helper()
	if len(spec.Values) == 0 {
		t.Fatal("makeBatch: a batch needs at least one record")
	}
	var recs []byte
	for i, v := range spec.Values {
		r := kmsg.Record{
			TimestampDelta64: int64(i),
			OffsetDelta:      int32(i),
			Key:              []byte("k" + v),
			Value:            []byte(v),
			Headers:          []kmsg.Header{{Key: "h", Value: []byte(v)}},
		}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1) // the zero length varint is one byte
		recs = r.AppendTo(recs)
	}
	attrs := int16(0)
	if spec.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(recs)
		zw.Close()
		recs = buf.Bytes()
		attrs = 1
	}
	b := kmsg.RecordBatch{
		FirstOffset:     0,
		Magic:           2,
		Attributes:      attrs,
		LastOffsetDelta: int32(len(spec.Values) - 1),
		FirstTimestamp:  spec.Timestamp,
		MaxTimestamp:    spec.Timestamp + int64(len(spec.Values)-1),
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      int32(len(spec.Values)),
		Records:         recs,
	}
	if spec.Idempotent {
		b.ProducerID, b.ProducerEpoch, b.FirstSequence = spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[offLength:], uint32(len(out)-lengthOverhead))
	binary.BigEndian.PutUint32(out[offCRC:], crc32.Checksum(out[offAttributes:], crcTable))
	return out
}

// vals returns n values "prefix-i".
func vals(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + "-" + strconv.Itoa(from+i)
	}
	return out
}

// openLog opens a log in dir with cfg, closing it at the end of the test.
func openLog(t testing.TB, dir string, cfg Config) *Log {
	t.Helper()
	l, err := Open(dir, cfg, nil)
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// testConfig is DefaultConfig with a segment size and a small index interval.
func testConfig(segmentBytes int64) Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = segmentBytes
	cfg.IndexIntervalBytes = 256
	cfg.RetentionAge = -1
	return cfg
}

// appendBatch validates a copy of batch like the broker does and appends it.
func appendBatch(t testing.TB, l *Log, batch []byte, now time.Time) (AppendResult, error) {
	t.Helper()
	b := append([]byte(nil), batch...)
	batches, hdrs, err := SplitBatches(b)
	if err != nil {
		t.Fatalf("SplitBatches of a test batch: %v", err)
	}
	if len(batches) != 1 {
		t.Fatalf("test batch split into %d", len(batches))
	}
	return l.Append(batches[0], hdrs[0], now)
}

// mustAppend appends and fails the test on error.
func mustAppend(t testing.TB, l *Log, batch []byte, now time.Time) AppendResult {
	t.Helper()
	res, err := appendBatch(t, l, batch, now)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return res
}

func mustSync(t testing.TB, l *Log) {
	t.Helper()
	if err := l.Sync(); err != nil {
		t.Fatalf("sync: %v", err)
	}
}

// readRecords reads every record from offset up to the high watermark,
// following segment boundaries, and checks that offsets are consecutive.
func readRecords(t testing.TB, l *Log, from int64) []Record {
	t.Helper()
	var dec Decompressor
	defer dec.Close()
	var out []Record
	off := from
	for {
		c, err := l.Read(off, 1<<20, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		b, err := c.Bytes()
		c.Release()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			return out
		}
		for len(b) > 0 {
			h, err := ParseHeader(b)
			if err != nil {
				t.Fatalf("read at %d: %v", off, err)
			}
			batch := b[:h.Size()]
			if _, err := ValidateBatch(batch); err != nil {
				t.Fatalf("read at %d: stored batch invalid: %v", off, err)
			}
			recs, err := dec.Records(batch)
			if err != nil {
				t.Fatalf("records at %d: %v", h.BaseOffset, err)
			}
			for _, r := range recs {
				if r.Offset < from {
					continue
				}
				out = append(out, r)
			}
			off = h.LastOffset() + 1
			b = b[h.Size():]
		}
	}
}

// recordValues returns the values of recs, checking offsets follow on from first.
func recordValues(t testing.TB, recs []Record, first int64) []string {
	t.Helper()
	var out []string
	for i, r := range recs {
		if r.Offset != first+int64(i) {
			t.Fatalf("record %d has offset %d, want %d", i, r.Offset, first+int64(i))
		}
		out = append(out, string(r.Value))
	}
	return out
}

// segmentFiles returns the sorted paths of files with ext in dir.
func segmentFiles(t testing.TB, dir, ext string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// batchPositions walks the batches of a segment file and returns their
// start positions (only of complete headers).
func batchPositions(t testing.TB, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for pos := 0; pos+HeaderSize <= len(b); {
		h, err := ParseHeader(b[pos:])
		if err != nil {
			break
		}
		out = append(out, int64(pos))
		pos += h.Size()
	}
	return out
}
