package log

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"
	"time"
)

// txnBatch is a transactional batch of a producer (sequence seq).
func txnBatch(t testing.TB, pid int64, epoch int16, seq int32, values ...string) []byte {
	b := makeBatch(t, batchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Idempotent: true, Values: values})
	binary.BigEndian.PutUint16(b[offAttributes:], 0x10)
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], crcTable))
	return b
}

func mustMarker(t testing.TB, l *Log, pid int64, epoch int16, commit bool) int64 {
	t.Helper()
	off, err := l.AppendMarker(pid, epoch, commit, time.Now())
	if err != nil {
		t.Fatalf("marker: %v", err)
	}
	return off
}

// committedValues reads everything below the LSO with ReadCommitted and
// drops records of aborted transactions, as a read_committed client does.
func committedValues(t testing.TB, l *Log) []string {
	t.Helper()
	var dec Decompressor
	defer dec.Close()
	var out []string
	start, _, _ := l.Offsets()
	for off := start; ; {
		c, err := l.ReadCommitted(off, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := c.Bytes()
		next := c.Next
		c.Release()
		if len(b) == 0 {
			return out
		}
		aborted := l.AbortedTxns(off, next)
		for len(b) > 0 {
			h, _ := ParseHeader(b)
			skip := h.IsControl()
			for _, a := range aborted {
				if h.IsTransactional() && a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.BaseOffset <= a.LastOffset {
					skip = true
				}
			}
			if !skip {
				recs, err := dec.Records(b[:h.Size()])
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					out = append(out, string(r.Value))
				}
			}
			b = b[h.Size():]
		}
		off = next
	}
}

func TestTransactionsLSOAndAbortedIndex(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testConfig(1<<20))
	now := time.Now()
	mustAppend(t, l, makeBatch(t, batchSpec{Values: vals("plain", 0, 2)}), now) // 0-1
	mustAppend(t, l, txnBatch(t, 7, 0, 0, vals("a", 0, 3)...), now)             // 2-4, open
	mustAppend(t, l, txnBatch(t, 8, 0, 0, vals("b", 0, 2)...), now)             // 5-6, open
	mustSync(t, l)
	if lso := l.LastStable(); lso != 2 {
		t.Fatalf("LSO with two open transactions = %d, want 2", lso)
	}
	if c, _ := l.ReadCommitted(2, 1<<20, true); c.Len != 0 {
		t.Fatalf("read_committed read %d bytes at the LSO", c.Len)
	}
	mustMarker(t, l, 7, 0, false) // 7: abort a
	mustSync(t, l)
	if lso := l.LastStable(); lso != 5 {
		t.Fatalf("LSO after aborting a = %d, want 5 (b still open)", lso)
	}
	mustMarker(t, l, 8, 0, true) // 8: commit b
	mustSync(t, l)
	if lso, hwm := l.LastStable(), l.HighWatermark(); lso != hwm || hwm != 9 {
		t.Fatalf("LSO %d, HWM %d, want both 9", lso, hwm)
	}
	want := []AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 7}}
	if got := l.AbortedTxns(0, 9); len(got) != 1 || got[0].ProducerID != 7 || got[0].FirstOffset != 2 || got[0].LastOffset != 7 {
		t.Fatalf("aborted %+v, want %+v", got, want)
	}
	if got := l.AbortedTxns(8, 9); len(got) != 0 {
		t.Fatalf("aborted after the marker: %+v", got)
	}
	if got := committedValues(t, l); len(got) != 4 || got[2] != "b-0" {
		t.Fatalf("committed %v", got)
	}

	// The aborted index and open transactions survive a restart, from the
	// active segment (rebuilt) and from a closed one (its .txnindex).
	mustAppend(t, l, txnBatch(t, 9, 0, 0, "c-0"), now) // 9, open across the restart
	mustSync(t, l)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if fi, err := os.Stat(segmentPath(dir, 0, ".txnindex")); err != nil || fi.Size() != txnIndexEntrySize {
		t.Fatalf("closed segment's txnindex: %v %v", fi, err)
	}
	l2 := openLog(t, dir, testConfig(1<<20))
	if lso := l2.LastStable(); lso != 9 {
		t.Fatalf("LSO after restart = %d, want 9 (c open)", lso)
	}
	if got := l2.AbortedTxns(0, 10); len(got) != 1 || got[0].FirstOffset != 2 {
		t.Fatalf("aborted after restart %+v", got)
	}
	mustMarker(t, l2, 9, 0, false)
	mustSync(t, l2)
	l2.Close()
	l3 := openLog(t, dir, testConfig(1<<20))
	if got := l3.AbortedTxns(0, 20); len(got) != 2 || got[1].FirstOffset != 9 || got[1].LastOffset != 10 {
		t.Fatalf("aborted after the second restart (rebuilt active segment) %+v", got)
	}
	if lso, hwm := l3.LastStable(), l3.HighWatermark(); lso != hwm {
		t.Fatalf("LSO %d HWM %d", lso, hwm)
	}
	// A marker with an older epoch than the producer's is refused.
	mustAppend(t, l3, txnBatch(t, 9, 3, 0, "d"), now)
	if _, err := l3.AppendMarker(9, 2, true, now); err == nil {
		t.Fatal("stale marker accepted")
	}
}

func TestTransactionsRetentionAndCompaction(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(1 << 20)
	l := openLog(t, dir, cfg)
	now := time.Now()
	// Segment 0: an aborted and a committed transaction over the same keys,
	// and a transaction left open.
	mustAppend(t, l, txnBatch(t, 1, 0, 0, "x", "y"), now) // 0-1 aborted
	mustMarker(t, l, 1, 0, false)                         // 2
	mustAppend(t, l, txnBatch(t, 2, 0, 0, "x"), now)      // 3 committed; key kx
	mustMarker(t, l, 2, 0, true)                          // 4
	mustSync(t, l)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, txnBatch(t, 3, 0, 0, "z"), now) // 5 open
	mustSync(t, l)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"w"}}), now) // 6
	mustSync(t, l)

	// Compaction cleans segment 0 only (segment 5 holds an open
	// transaction): the aborted records go, the markers stay.
	st, err := l.Compact(now, CompactConfig{MinCleanableRate: 0})
	if err != nil {
		t.Fatal(err)
	}
	if st.Segments != 1 || st.RecordsAfter != 1 {
		t.Fatalf("compaction %+v, want segment 0 cleaned to its one committed record", st)
	}
	var seen []string
	for _, r := range readRecords(t, l, 0) {
		seen = append(seen, string(r.Value))
	}
	// abort marker, x (committed), commit marker, z (open), w.
	if len(seen) != 5 || seen[1] != "x" || seen[3] != "z" || seen[4] != "w" {
		t.Fatalf("records after compaction: %q", seen)
	}
	// Retention never passes the LSO.
	l.SetConfig(Config{SegmentBytes: cfg.SegmentBytes, SegmentAge: cfg.SegmentAge, RetentionAge: time.Nanosecond, RetentionBytes: -1, IndexIntervalBytes: 256})
	if _, err := l.EnforceRetention(now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	start, _, _ := l.Offsets()
	if start > 5 {
		t.Fatalf("retention moved the log start to %d, past the open transaction at 5", start)
	}
	mustMarker(t, l, 3, 0, true)
	mustSync(t, l)
	if got := committedValues(t, l); len(got) != 2 || got[0] != "z" || got[1] != "w" {
		t.Fatalf("read_committed after retention: %q", got)
	}
}

// FuzzTxnIndex feeds arbitrary bytes to the aborted transaction index
// reader: it never panics, stops at the first bad entry, and what it
// accepts re-encodes to exactly the valid prefix.
func FuzzTxnIndex(f *testing.F) {
	good := encodeTxnEntry(encodeTxnEntry(nil, AbortedTxn{ProducerID: 1, FirstOffset: 2, LastOffset: 9, LastStable: 10}),
		AbortedTxn{ProducerID: -1, FirstOffset: 0, LastOffset: 1 << 40, LastStable: -1})
	f.Add(good)
	f.Add(good[:txnIndexEntrySize+3])
	f.Add([]byte{})
	bad := append([]byte(nil), good...)
	bad[5] ^= 1
	f.Add(bad)
	f.Fuzz(func(t *testing.T, in []byte) {
		entries, valid := decodeTxnIndex(in)
		if valid%txnIndexEntrySize != 0 || valid > len(in) || len(entries) != valid/txnIndexEntrySize {
			t.Fatalf("valid %d of %d bytes, %d entries", valid, len(in), len(entries))
		}
		var re []byte
		for _, e := range entries {
			re = encodeTxnEntry(re, e)
		}
		if string(re) != string(in[:valid]) {
			t.Fatal("accepted entries do not re-encode to the input")
		}
	})
}

// FuzzControlType feeds arbitrary batch bodies to ControlType: it never
// panics, and recognizes the markers this package writes.
func FuzzControlType(f *testing.F) {
	for _, commit := range []bool{true, false} {
		b := controlBatch(5, 2, commit, 100)
		got, err := ControlType(b)
		if err != nil || got != commit {
			f.Fatalf("marker commit=%v read back as %v, %v", commit, got, err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		ControlType(in)
	})
}
