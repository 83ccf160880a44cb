package log

import (
	"sync"
	"testing"
	"time"
)

// Regression: a Sync whose fsync overlapped a Delete closed the wait
// channel a second time and panicked the group-commit goroutine.
func TestSyncConcurrentWithDelete(t *testing.T) {
	for i := 0; i < 2000; i++ {
		l, err := Open(t.TempDir(), DefaultConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"a"}}), time.Now())
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); l.Sync() }()
		go func() { defer wg.Done(); l.Delete() }()
		wg.Wait()
	}
}

// Regression: the rolled segment's time index on disk held a stale last
// timestamp, so after a restart retention saw too old a max timestamp.
func TestMaxTimestampSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testConfig(1<<20))
	base := time.Now().Add(-time.Hour).UnixMilli()
	for i := 0; i < 10; i++ {
		mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"v"}, Timestamp: base + int64(i)*60000}), time.Now())
	}
	mustSync(t, l)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	before := l.MaxTimestamp()
	l.Close()
	l2 := openLog(t, dir, testConfig(1<<20))
	defer l2.Close()
	if after := l2.MaxTimestamp(); after != before {
		t.Fatalf("max timestamp before restart %d, after %d (stale by %d ms)", before, after, before-after)
	}
}

// Regression: compaction swapped out the segment holding the high
// watermark, after which reads went past it into unsynced data.
func TestCompactKeepsHighWatermarkSegment(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testConfig(1<<20))
	defer l.Close()
	mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"a0"}}), time.Now())
	mustSync(t, l)
	mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"a1"}}), time.Now())
	if err := l.Roll(); err != nil { // hwm(1) != leo(2): hwmSeg stays the rolled segment
		t.Fatal(err)
	}
	if _, err := l.Compact(time.Now(), CompactConfig{}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"b"}}), time.Now())
	_, hwm, leo := l.Offsets()
	c, err := l.Read(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	b, _ := c.Bytes()
	var last int64 = -1
	for len(b) > 0 {
		h, err := ParseHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		last = h.LastOffset()
		b = b[h.Size():]
	}
	if last >= hwm {
		t.Fatalf("Read returned offset %d >= hwm %d (leo %d)", last, hwm, leo)
	}
}
