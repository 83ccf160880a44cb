package postgres

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

type replayed struct {
	lsn uint64
	msg string
}

func replay(t *testing.T, b *streamedTxs, xid uint32) []replayed {
	t.Helper()
	var got []replayed
	if err := b.commit(xid, func(lsn uint64, msg []byte) error {
		got = append(got, replayed{lsn, string(msg)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func mustAdd(t *testing.T, b *streamedTxs, xid, subxid uint32, lsn uint64, kind byte, body string) {
	t.Helper()
	if err := b.add(xid, subxid, lsn, kind, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// Both in memory and spilled to a file, the buffer replays each
// transaction's messages in order, keeps interleaved transactions apart,
// drops aborted transactions and only the aborted subtransactions'
// changes (not the schema messages sent in them).
func TestStreamedTxs(t *testing.T) {
	for _, limit := range []int64{1 << 30, 0, 200} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			dir := t.TempDir()
			b := newStreamedTxs(limit, dir)
			defer b.close()
			// Transactions 100 (subtransactions 101, 102) and 200
			// interleaved; 300 aborted.
			mustAdd(t, b, 100, 100, 10, 'R', "rel")
			mustAdd(t, b, 100, 100, 11, 'I', "a1")
			mustAdd(t, b, 200, 200, 12, 'I', "b1")
			mustAdd(t, b, 100, 101, 13, 'I', "a2-sub1")
			mustAdd(t, b, 300, 300, 14, 'I', "c1")
			mustAdd(t, b, 100, 102, 15, 'R', "rel2-in-sub2")
			mustAdd(t, b, 100, 102, 16, 'U', "a3-sub2")
			mustAdd(t, b, 200, 200, 17, 'D', "b2")
			mustAdd(t, b, 100, 100, 18, 'I', "a4")
			b.abort(100, 102)
			b.abort(300, 300)
			b.abort(999, 999) // unknown: nothing
			if _, ok := b.txs[300]; ok {
				t.Fatal("aborted transaction 300 still buffered")
			}
			got := replay(t, b, 200)
			want := []replayed{{12, "Ib1"}, {17, "Db2"}}
			if !slices.Equal(got, want) {
				t.Fatalf("transaction 200: got %v, want %v", got, want)
			}
			got = replay(t, b, 100)
			want = []replayed{{10, "Rrel"}, {11, "Ia1"}, {13, "Ia2-sub1"}, {15, "Rrel2-in-sub2"}, {18, "Ia4"}}
			if !slices.Equal(got, want) {
				t.Fatalf("transaction 100: got %v, want %v", got, want)
			}
			if b.pending() || b.mem != 0 {
				t.Fatalf("after the commits: pending %v, %d bytes in memory", b.pending(), b.mem)
			}
			if got := replay(t, b, 100); got != nil {
				t.Fatalf("a committed transaction replayed again: %v", got)
			}
			// Spill files are unlinked when created.
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("spill files left in %s: %v", dir, ents)
			}
		})
	}
}

// Memory stays under the limit (plus one message): the largest
// transaction moves to a file, and its later messages go there too.
func TestStreamedTxsSpillBound(t *testing.T) {
	b := newStreamedTxs(4096, t.TempDir())
	defer b.close()
	body := string(make([]byte, 100))
	for i := range 1000 {
		xid := uint32(1 + i%3)
		mustAdd(t, b, xid, xid, uint64(i), 'I', body)
		if b.mem > 4096+100+frameOverhead {
			t.Fatalf("after %d messages %d bytes in memory", i+1, b.mem)
		}
	}
	spilled := 0
	for _, tx := range b.txs {
		if tx.file != nil {
			spilled++
		}
	}
	if spilled < 2 {
		t.Fatalf("%d transactions spilled, want at least 2", spilled)
	}
	for xid := uint32(1); xid <= 3; xid++ {
		got := replay(t, b, xid)
		if len(got) != 333+boolInt(xid == 1) {
			t.Fatalf("transaction %d: %d messages", xid, len(got))
		}
		for i, r := range got {
			if want := uint64(i*3) + uint64(xid-1); r.lsn != want || r.msg != "I"+body {
				t.Fatalf("transaction %d message %d: lsn %d, want %d", xid, i, r.lsn, want)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A replay error stops the replay and is returned; the transaction is
// dropped all the same (the stream restarts from the slot).
func TestStreamedTxsReplayError(t *testing.T) {
	b := newStreamedTxs(0, t.TempDir())
	defer b.close()
	mustAdd(t, b, 7, 7, 1, 'I', "x")
	mustAdd(t, b, 7, 7, 2, 'I', "y")
	n := 0
	err := b.commit(7, func(uint64, []byte) error { n++; return fmt.Errorf("boom") })
	if err == nil || n != 1 {
		t.Fatalf("err %v after %d messages", err, n)
	}
	if b.pending() {
		t.Fatal("transaction still buffered")
	}
}
