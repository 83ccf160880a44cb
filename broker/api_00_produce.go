package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/broker/acl"
	"github.com/tributary-dev/tributary/broker/log"
	"github.com/tributary-dev/tributary/broker/txn"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce: advertised v0-12, handled v3-12 (record batch v2 only; v0-2 get
// UNSUPPORTED_VERSION per partition, as Apache Kafka 4 does). Transactional
// batches are accepted only for partitions of the producer's ongoing
// transaction (KIP-890 part 1 verification; v12+ adds the partition
// implicitly, part 2); control batches come only from the broker itself.
//
// Batches are appended in request order on the connection's read goroutine,
// which keeps idempotent sequences in order. Nothing of the request is kept
// once handleProduce returns (the batches are in the log file, the reply
// holds its own copies), so its frame is reused (conn.readFrame). acks=all (and acks=1 with
// tributary.acks1.fsync) is answered after the group commit fsynced every
// written partition; acks=1 after the write; acks=0 not at all.

// produceKey is Produce's API key.
const produceKey int16 = 0

func handleProduce(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ProduceRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	var touched []*log.Log
	now := time.Now()
	acksOK := req.Acks == 0 || req.Acks == 1 || req.Acks == -1
	txnCodes := b.checkProduceTxn(req)
	txnDenied := req.TransactionID != nil && !c.allowed(acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionID)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		st.TopicID = rt.TopicID
		t := b.topic(rt.Topic)
		topicDenied := !c.allowedTopic(acl.OpWrite, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			switch {
			case !acksOK:
				sp.ErrorCode = errInvalidRequiredAcks
			case req.Version < 3:
				sp.ErrorCode = errUnsupportedVersion
			case txnDenied:
				sp.ErrorCode = errTxnIDAuthorizationFailed
			case topicDenied:
				sp.ErrorCode = errTopicAuthorizationFailed
			case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.partitions()):
				sp.ErrorCode = errUnknownTopicOrPartition
			default:
				p := t.partitions()[rp.Partition]
				if b.appendPartition(p, rp.Records, now, &sp, req, txnCodes) {
					touched = append(touched, p.log)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	wait := req.Acks == -1 || (req.Acks == 1 && b.cfg.Acks1WaitsForFsync)
	if len(touched) == 0 {
		if req.Acks == 0 {
			return &reply{none: true}
		}
		return &reply{resp: resp}
	}
	w := b.syncer.mark(touched, wait)
	if req.Acks == 0 {
		return &reply{none: true}
	}
	if !wait {
		return &reply{resp: resp}
	}
	r := &reply{ready: make(chan struct{})}
	go func() {
		<-w.done
		if w.err != nil {
			// The fsync failed: nothing written by this request can be
			// called durable.
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					sp := &resp.Topics[i].Partitions[j]
					if sp.ErrorCode == errNone {
						sp.ErrorCode, sp.BaseOffset = errKafkaStorageError, -1
					}
				}
			}
		}
		r.resp = resp
		close(r.ready)
	}()
	return r
}

// appendPartition appends the batches of one partition and fills sp; it
// reports whether the answer must wait for the partition's fsync (data was
// written, or a duplicate of data that may not be durable yet was found).
func (b *Broker) appendPartition(p *partition, records []byte, now time.Time, sp *kmsg.ProduceResponseTopicPartition, req *kmsg.ProduceRequest, txnCodes map[txn.TopicPartition]int16) bool {
	batches, hdrs, err := log.SplitBatches(records)
	if err != nil {
		sp.ErrorCode = errCorruptMessage
		if errors.Is(err, log.ErrUnsupportedMagic) {
			sp.ErrorCode = errUnsupportedForMessageFmt
		}
		msg := err.Error()
		sp.ErrorMessage = &msg
		return false
	}
	cfgs := p.topic.configs()
	maxBytes := b.intTopicConfig(cfgs, "max.message.bytes")
	logAppendTime := strings.EqualFold(b.strTopicConfig(cfgs, "message.timestamp.type"), "LogAppendTime")
	compacted := b.topicHasPolicy(cfgs, "compact")
	var dec log.Decompressor
	defer dec.Close()
	// Every batch is checked before any is appended, as Kafka does, so a
	// rejected request writes nothing (a retry cannot duplicate).
	for i, batch := range batches {
		h := hdrs[i]
		if int64(len(batch)) > maxBytes {
			sp.ErrorCode = errMessageTooLarge
			return false
		}
		if h.IsControl() {
			sp.ErrorCode = errInvalidRecord
			msg := "control batches are written by the transaction coordinator, not by producers"
			sp.ErrorMessage = &msg
			return false
		}
		if h.IsTransactional() && (i == 0 || hdrs[i-1].ProducerID != h.ProducerID || hdrs[i-1].ProducerEpoch != h.ProducerEpoch) {
			if req.TransactionID == nil || h.ProducerID < 0 {
				sp.ErrorCode = errInvalidTxnState
				msg := "a transactional batch needs the producer's transactional id"
				sp.ErrorMessage = &msg
				return false
			}
			tp := txn.TopicPartition{Topic: p.topic.name, Partition: p.index}
			code, checked := txnCodes[tp]
			if !checked || i > 0 {
				// Not the producer checkProduceTxn saw first: check again.
				code = b.checkTxnPartition(*req.TransactionID, h.ProducerID, h.ProducerEpoch, tp, req.Version >= 12, req.Version)
			}
			if code != errNone {
				if code == errInvalidTxnState && req.Version >= 11 {
					// Kafka 4 answers a failed verification so that the
					// client aborts and goes on (KIP-890).
					code = kerr.TransactionAbortable.Code
				}
				sp.ErrorCode = code
				return false
			}
		}
		if compacted {
			if msg := keylessRecord(&dec, batch, p); msg != "" {
				sp.ErrorCode = errInvalidRecord
				sp.ErrorMessage = &msg
				return false
			}
		}
	}
	wrote := false
	first := true
	for i, batch := range batches {
		h := hdrs[i]
		if logAppendTime {
			stampLogAppendTime(batch, &h, now)
			sp.LogAppendTime = now.UnixMilli()
		}
		res, err := p.log.Append(batch, h, now)
		if err != nil {
			switch {
			case errors.Is(err, log.ErrOutOfOrderSequence):
				sp.ErrorCode = errOutOfOrderSequence
			case errors.Is(err, log.ErrInvalidEpoch):
				sp.ErrorCode = errInvalidProducerEpoch
			default:
				sp.ErrorCode = errKafkaStorageError
				b.logger.Error("append failed", "topic", p.topic.name, "partition", p.index, "err", err)
			}
			msg := err.Error()
			sp.ErrorMessage = &msg
			break
		}
		if first {
			sp.BaseOffset = res.BaseOffset
			first = false
		}
		p.topic.m.bytesIn.Add(int64(len(batch)))
		p.topic.m.messagesIn.Add(int64(h.NumRecords))
		sp.LogStartOffset = res.LogStart
		// A duplicate is acknowledged like the original: only once the
		// original is durable, so it waits for the partition's fsync too.
		wrote = true
	}
	if sp.ErrorCode != errNone && !wrote {
		sp.BaseOffset = -1
	}
	return wrote
}

// checkProduceTxn checks every partition of a transactional produce request
// with the transaction coordinator at once (adding them to the transaction
// with Produce v12+), so that the request waits for at most one fsync of
// the transaction state. It looks at the first batch of each partition;
// appendPartition checks any other producer it finds.
func (b *Broker) checkProduceTxn(req *kmsg.ProduceRequest) map[txn.TopicPartition]int16 {
	if req.TransactionID == nil || req.Version < 3 {
		return nil
	}
	var tps []txn.TopicPartition
	pid, epoch := int64(-1), int16(-1)
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			h, err := log.ParseHeader(rp.Records)
			if err != nil || !h.IsTransactional() || h.IsControl() || h.ProducerID < 0 {
				continue
			}
			if pid >= 0 && (h.ProducerID != pid || h.ProducerEpoch != epoch) {
				continue
			}
			if b.partition(rt.Topic, rp.Partition) == nil {
				continue
			}
			pid, epoch = h.ProducerID, h.ProducerEpoch
			tps = append(tps, txn.TopicPartition{Topic: rt.Topic, Partition: rp.Partition})
		}
	}
	if len(tps) == 0 {
		return nil
	}
	return b.checkTxnPartitions(*req.TransactionID, pid, epoch, tps, req.Version >= 12, req.Version)
}

// stampLogAppendTime sets the batch's timestamp type to LogAppendTime with
// the broker's clock, as message.timestamp.type=LogAppendTime asks, and
// recomputes the CRC (these fields are covered by it).
func stampLogAppendTime(batch []byte, h *log.BatchHeader, now time.Time) {
	const offAttributes, offMaxTimestamp, offCRC = 21, 35, 17
	h.Attributes |= 0x08
	h.MaxTimestamp = now.UnixMilli()
	binary.BigEndian.PutUint16(batch[offAttributes:], uint16(h.Attributes))
	binary.BigEndian.PutUint64(batch[offMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], crc32.MakeTable(crc32.Castagnoli)))
}

// keylessRecord checks that every record of a batch for a compacted topic
// has a key, as Kafka requires; it returns Kafka's message if not.
func keylessRecord(dec *log.Decompressor, batch []byte, p *partition) string {
	recs, err := dec.Records(batch)
	if err != nil {
		return err.Error()
	}
	for _, r := range recs {
		if r.Key == nil {
			return fmt.Sprintf("Compacted topic cannot accept message without key in topic partition %s-%d.", p.topic.name, p.index)
		}
	}
	return ""
}
