package postgres

import (
	"strconv"
	"time"
	"unicode/utf16"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Transaction metadata (provide.transaction.metadata), as Debezium's
// TransactionMonitor writes it: a BEGIN event when a transaction starts and
// an END event with the number of events per table when it commits, on
// <topic.prefix>.<topic.transaction>, keyed by the transaction id; each
// change event of the transaction gets a transaction block (id,
// total_order and data_collection_order, counting from 1). Tombstones are
// not counted, as Debezium's are not. The id is Debezium's for PostgreSQL:
// "<xid>:<lsn>", with the LSN of the message at hand (the BEGIN's, the
// change's, the COMMIT's), so it differs between a transaction's events.
//
// A restarted stream reads a transaction that was partly delivered from its
// start again, skipping what was delivered: the counts go on from where
// they were, and the BEGIN event is not sent twice.

// txMeta is the transaction being read.
type txMeta struct {
	xid      string
	total    int64
	perTable map[string]int64
	order    []string // tables in the order of their first event
}

// txBegin starts the metadata of the transaction xid and emits its BEGIN
// event (not when the stream resumes inside it: it went out before).
func (s *streamer) txBegin(xid uint32, ts time.Time, lsn uint64) {
	if !s.cfg.ProvideTxMetadata {
		return
	}
	s.tx = &txMeta{xid: strconv.FormatUint(uint64(xid), 10), perTable: map[string]int64{}}
	if s.skipTx || s.resume.active && s.resume.inTx && s.pos.commit == s.resume.commit {
		return
	}
	// At the latest position with nothing undelivered before it: a
	// restart from here reads the transaction again, BEGIN included.
	off := sdk.Offset{offLSN: int64(s.walEnd), offLSNProc: int64(s.walEnd), offLSNCommit: int64(s.walEnd),
		offTxID: int64(xid), offTsUsec: ts.UnixMicro()}
	s.addTxRecord(off, s.tx.id(lsn), "BEGIN", ts, nil)
}

// id is the transaction's id at the message at lsn.
func (tx *txMeta) id(lsn uint64) string { return tx.xid + ":" + strconv.FormatUint(lsn, 10) }

// txEvent counts an event of table t and returns its transaction block
// (nil without transaction metadata). Events skipped on resume are counted
// too.
func (s *streamer) txEvent(t *table, lsn uint64) *schema.Struct {
	if s.tx == nil {
		return nil
	}
	name := t.id.String()
	if _, ok := s.tx.perTable[name]; !ok {
		s.tx.order = append(s.tx.order, name)
	}
	s.tx.perTable[name]++
	s.tx.total++
	b := schema.NewStruct(s.cat.src.block)
	b.SetIndex(0, s.tx.id(lsn))
	b.SetIndex(1, s.tx.total)
	b.SetIndex(2, s.tx.perTable[name])
	return b
}

// txEnd emits the END event of the transaction committed at end, whose
// COMMIT message is at lsn.
func (s *streamer) txEnd(end, lsn uint64, ts time.Time) {
	tx := s.tx
	s.tx = nil
	if tx == nil || s.skipTx {
		return
	}
	off := sdk.Offset{offLSN: int64(end), offLSNProc: int64(end), offLSNCommit: int64(end),
		offTxID: s.pos.txID, offTsUsec: ts.UnixMicro()}
	var cols []any
	for _, name := range javaHashMapOrder(tx.order) {
		c := schema.NewStruct(s.cat.src.txCollection)
		c.SetIndex(0, name)
		c.SetIndex(1, tx.perTable[name])
		cols = append(cols, c)
	}
	if cols == nil {
		cols = []any{}
	}
	s.addTxRecord(off, tx.id(lsn), "END", ts, func(v *schema.Struct) {
		v.SetIndex(2, tx.total)
		v.SetIndex(3, cols)
	})
}

func (s *streamer) addTxRecord(off sdk.Offset, id, status string, ts time.Time, fill func(*schema.Struct)) {
	key := schema.NewStruct(s.cat.src.txKey)
	key.SetIndex(0, id)
	val := schema.NewStruct(s.cat.src.txValue)
	val.SetIndex(0, status)
	val.SetIndex(1, id)
	val.SetIndex(4, ts.UnixMilli())
	if fill != nil {
		fill(val)
	}
	s.add(sdk.SourceRecord{
		Partition: s.part, Offset: off, Topic: s.cfg.TopicPrefix + "." + s.cfg.TopicTransaction,
		KeySchema: s.cat.src.txKey, Key: key, ValueSchema: s.cat.src.txValue, Value: val,
		Timestamp: ts,
	})
}

// javaHashMapOrder returns keys (distinct, in insertion order) in the
// order a java.util.HashMap of them iterates: Debezium lists an END event's
// tables so.
func javaHashMapOrder(keys []string) []string {
	if len(keys) < 2 {
		return keys
	}
	spread := func(k string) uint32 {
		var h int32
		for _, u := range utf16.Encode([]rune(k)) {
			h = 31*h + int32(u)
		}
		x := uint32(h)
		return x ^ x>>16
	}
	capacity := 16
	buckets := make([][]string, capacity)
	for n, k := range keys {
		i := spread(k) & uint32(capacity-1)
		buckets[i] = append(buckets[i], k)
		if n+1 > capacity*3/4 { // resize: each bucket splits in order
			next := make([][]string, capacity*2)
			for _, b := range buckets {
				for _, k := range b {
					j := spread(k) & uint32(capacity*2-1)
					next[j] = append(next[j], k)
				}
			}
			buckets, capacity = next, capacity*2
		}
	}
	var out []string
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}
