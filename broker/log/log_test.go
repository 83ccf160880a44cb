package log

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_000)

// fill appends n plain batches of perBatch records each, values "v-i", and
// returns the values in order.
func fill(t *testing.T, l *Log, n, perBatch int, ts func(i int) int64) []string {
	t.Helper()
	var all []string
	for i := 0; i < n; i++ {
		v := vals("v", len(all)+int(firstOffset(l)), perBatch)
		var stamp int64
		if ts != nil {
			stamp = ts(i)
		}
		mustAppend(t, l, makeBatch(t, batchSpec{Values: v, Timestamp: stamp}), t0)
		all = append(all, v...)
	}
	return all
}

func firstOffset(l *Log) int64 {
	_, _, leo := l.Offsets()
	return leo
}

func TestAppendReadAcrossSegmentRolls(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testConfig(1024))
	var want []string
	for i := 0; i < 150; i++ {
		v := vals("v", len(want), 1+i%3)
		res := mustAppend(t, l, makeBatch(t, batchSpec{Values: v}), t0)
		if res.BaseOffset != int64(len(want)) || res.LastOffset != int64(len(want)+len(v)-1) {
			t.Fatalf("batch %d: offsets [%d, %d], want [%d, %d]", i, res.BaseOffset, res.LastOffset, len(want), len(want)+len(v)-1)
		}
		if !res.NeedsSync || res.Duplicate || res.NumMessages != len(v) {
			t.Fatalf("batch %d: result %+v", i, res)
		}
		want = append(want, v...)
	}
	mustSync(t, l)
	if n := l.NumSegments(); n < 5 {
		t.Fatalf("%d segments, want several with segment.bytes=1024", n)
	}
	if got := len(segmentFiles(t, dir, ".log")); got != l.NumSegments() {
		t.Fatalf("%d .log files for %d segments", got, l.NumSegments())
	}
	check := func(l *Log) {
		t.Helper()
		if got := recordValues(t, readRecords(t, l, 0), 0); !slices.Equal(got, want) {
			t.Fatalf("read back %d records, want %d\n got %v\nwant %v", len(got), len(want), got, want)
		}
		// Every offset, including ones in the middle of a batch and at
		// segment boundaries, reads from the batch that holds it.
		for off := int64(0); off < int64(len(want)); off++ {
			c, err := l.Read(off, 1, true)
			if err != nil {
				t.Fatalf("read %d: %v", off, err)
			}
			b, _ := c.Bytes()
			c.Release()
			h, err := ParseHeader(b)
			if err != nil {
				t.Fatalf("read %d: %v", off, err)
			}
			if off < h.BaseOffset || off > h.LastOffset() || h.Size() != len(b) {
				t.Fatalf("read %d returned batch [%d, %d] of %d bytes (chunk %d)", off, h.BaseOffset, h.LastOffset(), h.Size(), len(b))
			}
		}
		start, hwm, leo := l.Offsets()
		if start != 0 || hwm != int64(len(want)) || leo != int64(len(want)) {
			t.Fatalf("offsets %d/%d/%d, want 0/%d/%d", start, hwm, leo, len(want), len(want))
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, testConfig(1024))
	check(l)
	// Appends continue after the reopen.
	res := mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"after"}}), t0)
	if res.BaseOffset != int64(len(want)) {
		t.Fatalf("append after reopen at %d, want %d", res.BaseOffset, len(want))
	}
}

func TestReadMaxBytesMinOneAndHighWatermark(t *testing.T) {
	l := openLog(t, t.TempDir(), testConfig(1<<20))
	batch := makeBatch(t, batchSpec{Values: []string{"a", "b"}})
	size := int64(len(batch))
	for i := 0; i < 4; i++ {
		mustAppend(t, l, batch, t0)
	}
	// Nothing is readable before Sync.
	if start, hwm, leo := l.Offsets(); start != 0 || hwm != 0 || leo != 8 {
		t.Fatalf("before sync: offsets %d/%d/%d, want 0/0/8", start, hwm, leo)
	}
	if c, err := l.Read(0, 1<<20, true); err != nil || c.Len != 0 {
		t.Fatalf("read before sync: %d bytes, %v; want nothing", c.Len, err)
	}
	if _, err := l.Read(1, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read above hwm before sync: %v, want ErrOffsetOutOfRange", err)
	}
	mustSync(t, l)
	if hwm := l.HighWatermark(); hwm != 8 {
		t.Fatalf("hwm %d after sync, want 8", hwm)
	}
	for _, tc := range []struct {
		name     string
		offset   int64
		maxBytes int64
		minOne   bool
		want     int64
	}{
		{"below one batch, minOne", 0, size - 1, true, size},
		{"below one batch, no minOne", 0, size - 1, false, 0},
		{"zero max, minOne", 2, 0, true, size},
		{"exactly one batch", 0, size, false, size},
		{"two and a half batches", 0, 2*size + size/2, false, 2 * size},
		{"all", 0, 1 << 20, false, 4 * size},
		{"from the middle of a batch", 3, 1 << 20, false, 3 * size},
		{"at the high watermark", 8, 1 << 20, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := l.Read(tc.offset, tc.maxBytes, tc.minOne)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			if c.Len != tc.want {
				t.Fatalf("read %d bytes, want %d", c.Len, tc.want)
			}
		})
	}
	// Unsynced appends stay invisible; the synced prefix stays readable.
	mustAppend(t, l, batch, t0)
	c, err := l.Read(0, 1<<20, true)
	if err != nil || c.Len != 4*size {
		t.Fatalf("read with unsynced tail: %d bytes, %v; want %d", c.Len, err, 4*size)
	}
	c.Release()
	if _, err := l.Read(9, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read of an unsynced offset: %v, want ErrOffsetOutOfRange", err)
	}
	if _, err := l.Read(-1, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read of -1: %v, want ErrOffsetOutOfRange", err)
	}
	// Wait is released by the next Sync.
	ch := l.Wait()
	select {
	case <-ch:
		t.Fatal("wait channel closed before sync")
	default:
	}
	mustSync(t, l)
	select {
	case <-ch:
	default:
		t.Fatal("wait channel not closed by sync")
	}
	if start, hwm, leo := l.Offsets(); start != 0 || hwm != 10 || leo != 10 {
		t.Fatalf("after sync: offsets %d/%d/%d, want 0/10/10", start, hwm, leo)
	}
}

// TestHighWatermarkAcrossRoll checks that data appended to a new segment
// after a roll stays invisible until Sync.
func TestHighWatermarkAcrossRoll(t *testing.T) {
	l := openLog(t, t.TempDir(), testConfig(300))
	var want []string
	for i := 0; i < 20; i++ {
		v := vals("v", len(want), 1)
		mustAppend(t, l, makeBatch(t, batchSpec{Values: v}), t0)
		want = append(want, v...)
		_, hwm, _ := l.Offsets()
		got := recordValues(t, readRecords(t, l, 0), 0)
		if int64(len(got)) != hwm {
			t.Fatalf("after append %d: read %d records, hwm %d", i, len(got), hwm)
		}
		if i%3 == 0 {
			mustSync(t, l)
		}
	}
	mustSync(t, l)
	if got := recordValues(t, readRecords(t, l, 0), 0); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestTornTailRecovery(t *testing.T) {
	type corruption struct {
		name string
		// corrupt damages the last segment file, given the positions of
		// its batches; it returns how many of those batches survive.
		corrupt func(t *testing.T, path string, pos []int64, size int64) int
	}
	truncate := func(t *testing.T, path string, n int64) {
		if err := os.Truncate(path, n); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(t *testing.T, path string, at int64) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var b [1]byte
		f.ReadAt(b[:], at)
		b[0] ^= 0xff
		if _, err := f.WriteAt(b[:], at); err != nil {
			t.Fatal(err)
		}
	}
	appendBytes := func(t *testing.T, path string, b []byte) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	cases := []corruption{
		{"truncate mid header", func(t *testing.T, p string, pos []int64, _ int64) int {
			truncate(t, p, pos[len(pos)-1]+HeaderSize/2)
			return len(pos) - 1
		}},
		{"truncate after length field", func(t *testing.T, p string, pos []int64, _ int64) int {
			truncate(t, p, pos[len(pos)-1]+12)
			return len(pos) - 1
		}},
		{"truncate mid batch", func(t *testing.T, p string, pos []int64, size int64) int {
			truncate(t, p, pos[len(pos)-1]+HeaderSize+(size-pos[len(pos)-1]-HeaderSize)/2)
			return len(pos) - 1
		}},
		{"truncate one byte short", func(t *testing.T, p string, pos []int64, size int64) int {
			truncate(t, p, size-1)
			return len(pos) - 1
		}},
		{"flip CRC byte of last batch", func(t *testing.T, p string, pos []int64, _ int64) int {
			flip(t, p, pos[len(pos)-1]+offCRC+2)
			return len(pos) - 1
		}},
		{"flip record byte of last batch", func(t *testing.T, p string, pos []int64, size int64) int {
			flip(t, p, size-3)
			return len(pos) - 1
		}},
		{"flip magic of a middle batch", func(t *testing.T, p string, pos []int64, _ int64) int {
			flip(t, p, pos[2]+offMagic)
			return 2
		}},
		{"garbage appended", func(t *testing.T, p string, pos []int64, _ int64) int {
			appendBytes(t, p, []byte("this is not a record batch, it is garbage that a torn write left behind......"))
			return len(pos)
		}},
		{"zeros appended", func(t *testing.T, p string, pos []int64, _ int64) int {
			appendBytes(t, p, make([]byte, 4096))
			return len(pos)
		}},
		{"plausible header appended", func(t *testing.T, p string, pos []int64, _ int64) int {
			b, _ := os.ReadFile(p)
			appendBytes(t, p, b[pos[len(pos)-1]:pos[len(pos)-1]+HeaderSize+3])
			return len(pos)
		}},
		{"whole batch duplicated", func(t *testing.T, p string, pos []int64, _ int64) int {
			// A valid batch with a base offset that does not follow.
			b, _ := os.ReadFile(p)
			appendBytes(t, p, b[pos[len(pos)-1]:])
			return len(pos)
		}},
		{"truncate to empty", func(t *testing.T, p string, pos []int64, _ int64) int {
			truncate(t, p, 0)
			return 0
		}},
		{"truncate into first batch", func(t *testing.T, p string, pos []int64, _ int64) int {
			truncate(t, p, 20)
			return 0
		}},
	}
	for _, rolled := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if rolled {
				name += "/after rolls"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				cfg := testConfig(1 << 20)
				if rolled {
					cfg.SegmentBytes = 1200
				}
				l, err := Open(dir, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := fill(t, l, 30, 2, nil)
				mustSync(t, l)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				logs := segmentFiles(t, dir, ".log")
				if rolled && len(logs) < 3 {
					t.Fatalf("only %d segments", len(logs))
				}
				last := logs[len(logs)-1]
				base, _ := strconv.ParseInt(filepath.Base(last)[:20], 10, 64)
				pos := batchPositions(t, last)
				st, _ := os.Stat(last)
				if len(pos) < 4 {
					t.Fatalf("last segment has %d batches, want at least 4", len(pos))
				}
				kept := tc.corrupt(t, last, pos, st.Size())
				wantLEO := base + int64(2*kept)
				want = want[:wantLEO]
				wantSize := st.Size()
				if kept < len(pos) {
					wantSize = pos[kept]
				}

				l = openLog(t, dir, cfg)
				if _, hwm, leo := l.Offsets(); leo != wantLEO || hwm != wantLEO {
					t.Fatalf("after recovery hwm/leo %d/%d, want %d", hwm, leo, wantLEO)
				}
				if st, _ := os.Stat(last); st.Size() != wantSize {
					t.Fatalf("last segment is %d bytes after recovery, want %d", st.Size(), wantSize)
				}
				if got := recordValues(t, readRecords(t, l, 0), 0); !slices.Equal(got, want) {
					t.Fatalf("after recovery read %v, want %v", got, want)
				}
				more := vals("new", 0, 3)
				res := mustAppend(t, l, makeBatch(t, batchSpec{Values: more}), t0)
				if res.BaseOffset != wantLEO {
					t.Fatalf("append after recovery at %d, want %d", res.BaseOffset, wantLEO)
				}
				mustSync(t, l)
				want = append(want, more...)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l = openLog(t, dir, cfg)
				if got := recordValues(t, readRecords(t, l, 0), 0); !slices.Equal(got, want) {
					t.Fatalf("after second reopen read %v, want %v", got, want)
				}
			})
		}
	}
}

func TestIndexFilesRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, dir string)
	}{
		{"offset indexes deleted", func(t *testing.T, dir string) {
			for _, p := range segmentFiles(t, dir, ".index") {
				os.Remove(p)
			}
		}},
		{"time indexes deleted", func(t *testing.T, dir string) {
			for _, p := range segmentFiles(t, dir, ".timeindex") {
				os.Remove(p)
			}
		}},
		{"indexes emptied", func(t *testing.T, dir string) {
			for _, p := range append(segmentFiles(t, dir, ".index"), segmentFiles(t, dir, ".timeindex")...) {
				os.Truncate(p, 0)
			}
		}},
		{"torn index entries", func(t *testing.T, dir string) {
			for _, p := range segmentFiles(t, dir, ".index") {
				st, _ := os.Stat(p)
				os.Truncate(p, st.Size()-3)
			}
			for _, p := range segmentFiles(t, dir, ".timeindex") {
				st, _ := os.Stat(p)
				os.Truncate(p, st.Size()-5)
			}
		}},
		{"garbage indexes", func(t *testing.T, dir string) {
			garbage := []byte("0123456789abcdef0123456789abcdef0123456789abcdef")
			for _, p := range append(segmentFiles(t, dir, ".index"), segmentFiles(t, dir, ".timeindex")...) {
				os.WriteFile(p, garbage, 0o644)
			}
		}},
		{"index positions beyond the segment", func(t *testing.T, dir string) {
			for _, p := range segmentFiles(t, dir, ".index") {
				os.WriteFile(p, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0x7f, 0, 0, 0}, 0o644)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(2000)
			cfg.IndexIntervalBytes = 100
			l, err := Open(dir, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := fill(t, l, 60, 2, func(i int) int64 { return 1000 * int64(i+1) })
			mustSync(t, l)
			l.Close()
			if n := len(segmentFiles(t, dir, ".log")); n < 3 {
				t.Fatalf("%d segments", n)
			}
			tc.corrupt(t, dir)

			l = openLog(t, dir, cfg)
			if got := recordValues(t, readRecords(t, l, 0), 0); !slices.Equal(got, want) {
				t.Fatalf("read %v, want %v", got, want)
			}
			for off := int64(0); off < int64(len(want)); off++ {
				c, err := l.Read(off, 1, true)
				if err != nil {
					t.Fatalf("read %d: %v", off, err)
				}
				b, _ := c.Bytes()
				c.Release()
				h, err := ParseHeader(b)
				if err != nil || off < h.BaseOffset || off > h.LastOffset() {
					t.Fatalf("read %d: batch [%d, %d], %v", off, h.BaseOffset, h.LastOffset(), err)
				}
			}
			for i := 0; i < 60; i++ {
				off, _, err := l.OffsetForTimestamp(1000 * int64(i+1))
				if err != nil || off != int64(2*i) {
					t.Fatalf("offset for timestamp %d: %d, %v; want %d", 1000*(i+1), off, err, 2*i)
				}
			}
			// The rebuilt index files are there and sane for the next open.
			segs := segmentFiles(t, dir, ".log")
			for _, p := range segs[:len(segs)-1] {
				s := &segment{base: 0}
				base, _ := strconv.ParseInt(filepath.Base(p)[:20], 10, 64)
				s.base = base
				st, _ := os.Stat(p)
				if !s.loadIndexFiles(dir, st.Size()) {
					t.Errorf("index files of segment %d were not rebuilt", base)
				}
			}
		})
	}
}

func TestIdempotentProducerDedup(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(1 << 20)
	l := openLog(t, dir, cfg)
	idem := func(pid int64, epoch int16, seq int32, n int) []byte {
		return makeBatch(t, batchSpec{Idempotent: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Values: vals("p"+strconv.FormatInt(pid, 10)+"e"+strconv.Itoa(int(epoch)), int(seq), n)})
	}
	expect := func(b []byte, wantOff int64, wantDup bool) {
		t.Helper()
		res, err := appendBatch(t, l, b, t0)
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		if res.BaseOffset != wantOff || res.Duplicate != wantDup {
			t.Fatalf("append: offset %d duplicate %v, want %d %v", res.BaseOffset, res.Duplicate, wantOff, wantDup)
		}
		if res.Duplicate && res.NeedsSync {
			t.Fatal("a duplicate needs no sync")
		}
	}
	expectErr := func(b []byte, want error) {
		t.Helper()
		_, err := appendBatch(t, l, b, t0)
		if !errors.Is(err, want) {
			t.Fatalf("append: %v, want %v", err, want)
		}
	}

	expect(idem(7, 0, 0, 3), 0, false)
	expect(idem(7, 0, 0, 3), 0, true)
	expect(idem(8, 0, 0, 1), 3, false) // another producer is independent
	expect(idem(7, 0, 3, 2), 4, false)
	expect(idem(7, 0, 0, 3), 0, true) // an older batch within the window
	expect(idem(7, 0, 3, 2), 4, true)
	expectErr(idem(7, 0, 9, 1), ErrOutOfOrderSequence) // gap
	expectErr(idem(7, 0, 4, 1), ErrOutOfOrderSequence) // overlaps, not identical
	expectErr(idem(7, 1, 5, 1), ErrOutOfOrderSequence) // new epoch must start at 0
	expect(idem(7, 0, 5, 1), 6, false)
	expect(plainBatchAt(t), 7, false) // non-idempotent batches are never de-duplicated
	expect(plainBatchAt(t), 8, false)
	expect(idem(7, 1, 0, 2), 9, false) // epoch bump
	expectErr(idem(7, 0, 6, 1), ErrInvalidEpoch)
	expect(idem(7, 1, 0, 2), 9, true)

	// The last five batches are remembered; older ones are not.
	seq := int32(2)
	off := int64(11)
	var window [][]byte
	var offs []int64
	for i := 0; i < 6; i++ {
		b := idem(7, 1, seq, 1)
		expect(b, off, false)
		window, offs = append(window, b), append(offs, off)
		seq, off = seq+1, off+1
	}
	for i := 1; i < 6; i++ {
		expect(window[i], offs[i], true)
	}
	expectErr(window[0], ErrOutOfOrderSequence)
	mustSync(t, l)

	// De-duplication survives a close and reopen (state rebuilt from the log).
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, cfg)
	for i := 1; i < 6; i++ {
		expect(window[i], offs[i], true)
	}
	expect(idem(8, 0, 0, 1), 3, true)
	expectErr(idem(7, 0, 6, 1), ErrInvalidEpoch)
	expectErr(idem(7, 1, seq+1, 1), ErrOutOfOrderSequence)
	expect(idem(7, 1, seq, 1), off, false)
}

func plainBatchAt(t *testing.T) []byte {
	return makeBatch(t, batchSpec{Values: []string{"plain"}})
}

// TestIdempotentDedupAfterRoll checks the snapshot path: producer state of
// batches in closed segments comes back after a reopen.
func TestIdempotentDedupAfterRoll(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after is what happens after the producers' last batches.
		after func(t *testing.T, l *Log)
	}{
		{"last batch in active segment", func(t *testing.T, l *Log) {}},
		{"explicit roll leaves active segment empty", func(t *testing.T, l *Log) {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}},
		{"other data rolls several segments", func(t *testing.T, l *Log) {
			fill(t, l, 40, 3, nil)
		}},
		{"snapshot files deleted", func(t *testing.T, l *Log) {
			fill(t, l, 40, 3, nil)
			for _, p := range segmentFiles(t, l.Dir(), ".snapshot") {
				os.Remove(p)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(700)
			l, err := Open(dir, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			type sent struct {
				b   []byte
				off int64
			}
			var last []sent
			seqs := map[int64]int32{}
			for i := 0; i < 60; i++ {
				pid := int64(100 + i%3)
				b := makeBatch(t, batchSpec{Idempotent: true, ProducerID: pid, ProducerEpoch: 2, BaseSequence: seqs[pid], Values: vals("x", i, 2)})
				seqs[pid] += 2
				res := mustAppend(t, l, b, t0)
				if i >= 60-15 {
					last = append(last, sent{b, res.BaseOffset})
				}
			}
			if l.NumSegments() < 4 {
				t.Fatalf("%d segments, want rolls", l.NumSegments())
			}
			tc.after(t, l)
			mustSync(t, l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, cfg)
			for _, s := range last {
				res, err := appendBatch(t, l, s.b, t0)
				if err != nil || !res.Duplicate || res.BaseOffset != s.off {
					t.Fatalf("resend of batch at %d: %+v, %v; want a duplicate", s.off, res, err)
				}
			}
			for pid, seq := range seqs {
				b := makeBatch(t, batchSpec{Idempotent: true, ProducerID: pid, ProducerEpoch: 2, BaseSequence: seq + 1, Values: []string{"gap"}})
				if _, err := appendBatch(t, l, b, t0); !errors.Is(err, ErrOutOfOrderSequence) {
					t.Fatalf("producer %d: sequence gap after reopen: %v", pid, err)
				}
				b = makeBatch(t, batchSpec{Idempotent: true, ProducerID: pid, ProducerEpoch: 2, BaseSequence: seq, Values: []string{"next"}})
				if res, err := appendBatch(t, l, b, t0); err != nil || res.Duplicate {
					t.Fatalf("producer %d: next sequence after reopen: %+v, %v", pid, res, err)
				}
			}
		})
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	l := openLog(t, t.TempDir(), testConfig(800))
	// Batch i has records at 10000+100i and 10000+100i+1 (two records).
	fill(t, l, 40, 2, func(i int) int64 { return 10000 + 100*int64(i) })
	if off, _, _ := l.OffsetForTimestamp(0); off != -1 {
		t.Fatalf("before sync: offset %d for timestamp 0, want -1 (nothing readable)", off)
	}
	mustSync(t, l)
	if l.NumSegments() < 3 {
		t.Fatalf("%d segments", l.NumSegments())
	}
	for _, tc := range []struct {
		ts   int64
		want int64
	}{
		{0, 0},
		{10000, 0},
		{10001, 0},
		{10002, 2},
		{10050, 2},
		{10100, 2},
		{12345, 48},
		{10000 + 100*39, 78},
		{10000 + 100*39 + 1, 78},
		{10000 + 100*39 + 2, -1},
		{1 << 50, -1},
	} {
		off, batch, err := l.OffsetForTimestamp(tc.ts)
		if err != nil {
			t.Fatal(err)
		}
		if off != tc.want {
			t.Errorf("timestamp %d: offset %d, want %d", tc.ts, off, tc.want)
		}
		if off >= 0 {
			h, err := ValidateBatch(batch)
			if err != nil || h.BaseOffset != off || h.MaxTimestamp < tc.ts {
				t.Errorf("timestamp %d: returned batch %+v, %v", tc.ts, h, err)
			}
		}
	}
	if ts := l.MaxTimestamp(); ts != 10000+100*39+1 {
		t.Errorf("max timestamp %d", ts)
	}
}

func TestRetentionBySize(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(1000)
	cfg.RetentionBytes = 3000
	l := openLog(t, dir, cfg)
	want := fill(t, l, 100, 2, nil)
	mustSync(t, l)
	before := l.NumSegments()
	files := segmentFiles(t, dir, ".log")
	n, err := l.EnforceRetention(t0)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || l.NumSegments() != before-n {
		t.Fatalf("deleted %d of %d segments, %d left", n, before, l.NumSegments())
	}
	// Kafka deletes the oldest segment while the rest is still at least
	// retention.bytes, so what is left is under retention.bytes plus one segment.
	if size := l.Size(); size >= cfg.RetentionBytes+cfg.SegmentBytes || size < cfg.RetentionBytes {
		t.Fatalf("log is %d bytes after retention.bytes=%d", size, cfg.RetentionBytes)
	}
	for _, p := range files[:n] {
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			if _, err := os.Stat(p[:len(p)-4] + ext); !os.IsNotExist(err) {
				t.Errorf("%s%s still exists: %v", filepath.Base(p[:len(p)-4]), ext, err)
			}
		}
	}
	start, hwm, leo := l.Offsets()
	firstKept, _ := strconv.ParseInt(filepath.Base(files[n])[:20], 10, 64)
	if start != firstKept || start == 0 || hwm != int64(len(want)) || leo != hwm {
		t.Fatalf("offsets %d/%d/%d, want start %d, hwm/leo %d", start, hwm, leo, firstKept, len(want))
	}
	if _, err := l.Read(0, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start: %v", err)
	}
	if got := recordValues(t, readRecords(t, l, start), start); !slices.Equal(got, want[start:]) {
		t.Fatalf("kept records %v, want %v", got, want[start:])
	}
	// Running it again deletes nothing more.
	if n, err := l.EnforceRetention(t0); err != nil || n != 0 {
		t.Fatalf("second retention run deleted %d, %v", n, err)
	}
	// The log start survives a reopen.
	l.Close()
	l = openLog(t, dir, cfg)
	if s, _, leo := l.Offsets(); s != start || leo != int64(len(want)) {
		t.Fatalf("after reopen start %d leo %d, want %d %d", s, leo, start, len(want))
	}
}

func TestRetentionByTime(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	cfg := testConfig(1000)
	cfg.RetentionAge = time.Hour
	l := openLog(t, t.TempDir(), cfg)
	old := now.Add(-2 * time.Hour).UnixMilli()
	fill(t, l, 40, 2, func(int) int64 { return old })
	mustSync(t, l)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	oldEnd := firstOffset(l)
	recent := fill(t, l, 40, 2, func(int) int64 { return now.Add(-time.Minute).UnixMilli() })
	mustSync(t, l)

	n, err := l.EnforceRetention(now)
	if err != nil || n == 0 {
		t.Fatalf("retention deleted %d, %v", n, err)
	}
	start, _, leo := l.Offsets()
	if start != oldEnd {
		t.Fatalf("log start %d, want %d (first recent offset)", start, oldEnd)
	}
	if got := recordValues(t, readRecords(t, l, start), start); !slices.Equal(got, recent) {
		t.Fatalf("kept %v, want %v", got, recent)
	}

	// Later everything has expired: the active segment is rolled and the
	// log is empty, starting at its end.
	n, err = l.EnforceRetention(now.Add(2 * time.Hour))
	if err != nil || n == 0 {
		t.Fatalf("second retention deleted %d, %v", n, err)
	}
	if s, hwm, e := l.Offsets(); s != leo || hwm != leo || e != leo || l.NumSegments() != 1 {
		t.Fatalf("after full expiry offsets %d/%d/%d with %d segments, want all %d and 1 segment", s, hwm, e, l.NumSegments(), leo)
	}
	if c, err := l.Read(leo, 1<<20, true); err != nil || c.Len != 0 {
		t.Fatalf("read at end of empty log: %d, %v", c.Len, err)
	}
	res := mustAppend(t, l, makeBatch(t, batchSpec{Values: []string{"fresh"}, Timestamp: now.UnixMilli()}), now)
	if res.BaseOffset != leo {
		t.Fatalf("append after full expiry at %d, want %d", res.BaseOffset, leo)
	}
}

// TestRetentionKeepsUnsyncedSegment checks that retention never deletes the
// segment holding the high watermark.
func TestRetentionKeepsUnsynced(t *testing.T) {
	cfg := testConfig(1000)
	cfg.RetentionBytes = 0
	l := openLog(t, t.TempDir(), cfg)
	fill(t, l, 50, 2, nil)
	// Nothing synced: hwm 0 is in the first segment.
	if n, err := l.EnforceRetention(t0); err != nil || n != 0 {
		t.Fatalf("retention before sync deleted %d, %v", n, err)
	}
	mustSync(t, l)
	if _, err := l.EnforceRetention(t0); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != 1 {
		t.Fatalf("%d segments left with retention.bytes=0", l.NumSegments())
	}
}

func TestCompressedBatchRoundTrip(t *testing.T) {
	l := openLog(t, t.TempDir(), testConfig(1<<20))
	v := vals("z", 0, 50)
	mustAppend(t, l, makeBatch(t, batchSpec{Values: v, Gzip: true}), t0)
	mustSync(t, l)
	recs := readRecords(t, l, 0)
	if got := recordValues(t, recs, 0); !slices.Equal(got, v) {
		t.Fatalf("got %v", got)
	}
	if string(recs[3].Key) != "kz-3" || recs[3].Timestamp != 3 {
		t.Fatalf("record 3: %+v", recs[3])
	}
}

func TestSplitBatches(t *testing.T) {
	a := makeBatch(t, batchSpec{Values: []string{"a"}})
	b := makeBatch(t, batchSpec{Values: []string{"b", "c"}})
	both := append(append([]byte(nil), a...), b...)
	batches, hdrs, err := SplitBatches(both)
	if err != nil || len(batches) != 2 || hdrs[1].NumRecords != 2 {
		t.Fatalf("split: %d batches, %v", len(batches), err)
	}
	bad := func(name string, in []byte, want error) {
		t.Helper()
		if _, _, err := SplitBatches(in); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	bad("empty", nil, ErrCorruptBatch)
	bad("short", a[:HeaderSize-1], ErrCorruptBatch)
	bad("truncated", a[:len(a)-1], ErrCorruptBatch)
	bad("trailing bytes", append(append([]byte(nil), a...), 1, 2, 3), ErrCorruptBatch)
	crc := append([]byte(nil), a...)
	crc[offCRC] ^= 1
	bad("crc", crc, ErrCorruptBatch)
	magic := append([]byte(nil), a...)
	magic[offMagic] = 1
	bad("magic 1", magic, ErrUnsupportedMagic)
}

// A batch that expands beyond the decompressor's bound is refused, not
// allocated; the same batch passes under the default bound.
func TestDecompressedSizeIsBounded(t *testing.T) {
	v := make([]string, 50)
	for i := range v {
		v[i] = strings.Repeat("x", 1000) // compresses ~50 KB into a few hundred bytes
	}
	batch := makeBatch(t, batchSpec{Values: v, Gzip: true})
	small := Decompressor{Max: 10_000}
	defer small.Close()
	if _, err := small.Records(batch); !errors.Is(err, ErrCorruptBatch) || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("50 KB batch under a 10 KB bound: %v", err)
	}
	var def Decompressor
	defer def.Close()
	if recs, err := def.Records(batch); err != nil || len(recs) != 50 {
		t.Fatalf("default bound: %d records, %v", len(recs), err)
	}
}
