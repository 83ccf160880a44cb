package txn

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The transaction state log uses Kafka's __transaction_state formats:
// kmsg.TxnMetadataKey (version 0) and kmsg.TxnMetadataValue (version 1,
// flexible, with KIP-890's previous and next producer ids as tags).

func stateKey(id string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = 0, id
	return k.AppendTo(nil)
}

func stateValue(t *txn) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = 1
	v.ProducerID, v.ProducerEpoch = t.pid, t.epoch
	v.TimeoutMillis = int32(t.timeout.Milliseconds())
	v.State = kmsg.TransactionState(t.state)
	v.LastUpdateTimestamp = t.updated.UnixMilli()
	v.StartTimestamp = -1
	if !t.start.IsZero() {
		v.StartTimestamp = t.start.UnixMilli()
	}
	v.PreviousProducerID = -1
	if t.lastPID != t.pid {
		v.PreviousProducerID = t.lastPID
	}
	v.ClientTransactionVersion = 1
	if t.tv2 {
		v.ClientTransactionVersion = 2
	}
	byTopic := map[string][]int32{}
	var order []string
	ps := make([]TopicPartition, 0, len(t.parts))
	for tp := range t.parts {
		ps = append(ps, tp)
	}
	sortPartitions(ps)
	for _, tp := range ps {
		if _, ok := byTopic[tp.Topic]; !ok {
			order = append(order, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	for _, name := range order {
		vt := kmsg.NewTxnMetadataValueTopic()
		vt.Topic, vt.Partitions = name, byTopic[name]
		v.Topics = append(v.Topics, vt)
	}
	return v.AppendTo(nil)
}

// Replay applies one record of the transaction state log, read back on
// start; a nil value deletes. Records with an unknown key version are
// skipped so that a log written by a newer broker still loads.
func (c *Coordinator) Replay(key, value []byte) error {
	if len(key) < 2 {
		return fmt.Errorf("txn: record key of %d bytes is too short", len(key))
	}
	if binary.BigEndian.Uint16(key) != 0 {
		return nil
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return fmt.Errorf("txn: bad state key: %w", err)
	}
	if value == nil {
		delete(c.txns, k.TransactionalID)
		return nil
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return fmt.Errorf("txn: bad state of %s: %w", k.TransactionalID, err)
	}
	t := &txn{
		id: k.TransactionalID, pid: v.ProducerID, epoch: v.ProducerEpoch,
		lastPID: -1, lastEpoch: -1,
		timeout: time.Duration(v.TimeoutMillis) * time.Millisecond,
		state:   State(v.State), parts: map[TopicPartition]bool{},
		updated: time.UnixMilli(v.LastUpdateTimestamp),
		tv2:     v.ClientTransactionVersion >= 2,
	}
	if v.StartTimestamp >= 0 {
		t.start = time.UnixMilli(v.StartTimestamp)
	}
	if t.tv2 && (t.state == CompleteCommit || t.state == CompleteAbort) && t.epoch > 0 {
		// The bump of the last EndTxn: its retry must still succeed.
		t.lastPID, t.lastEpoch = t.pid, t.epoch-1
	}
	for _, vt := range v.Topics {
		for _, p := range vt.Partitions {
			t.parts[TopicPartition{vt.Topic, p}] = true
		}
	}
	c.txns[t.id] = t
	return nil
}

// Recover is called once after Replay: transactions that were prepared but
// not completed come back as marker jobs in Ready.
func (c *Coordinator) Recover() {
	for _, id := range c.sortedIDs() {
		t := c.txns[id]
		if t.state != PrepareCommit && t.state != PrepareAbort {
			continue
		}
		m := Markers{TransactionalID: t.id, ProducerID: t.pid, ProducerEpoch: t.epoch, Commit: t.state == PrepareCommit}
		for tp := range t.parts {
			m.Partitions = append(m.Partitions, tp)
		}
		sortPartitions(m.Partitions)
		c.ready.Markers = append(c.ready.Markers, m)
	}
}

// compilePattern compiles a ListTransactions pattern, which must match the
// whole transactional id (as Java's Matcher.matches).
func compilePattern(p string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + p + ")$")
}
