package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/tributary-dev/tributary/broker/log"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetsTopic is the internal topic that holds committed offsets and group
// metadata, in Kafka's __consumer_offsets record formats. One compacted
// partition: this broker has one coordinator.
const offsetsTopic = "__consumer_offsets"

// groups drives the pure group coordinator (package group): it serializes
// calls, appends the records the coordinator asks for to __consumer_offsets,
// answers durable replies after the group commit fsynced them, and ticks the
// coordinator at its deadlines.
type groups struct {
	b    *Broker
	mu   sync.Mutex
	c    *group.Coordinator
	part *partition
	wake chan struct{}
}

// openGroups creates __consumer_offsets if missing and replays it into a new
// coordinator. It runs in Open before the listener serves.
func (b *Broker) openGroups() (*groups, error) {
	t := b.topic(offsetsTopic)
	if t == nil {
		var err error
		t, err = b.createTopic(offsetsTopic, 1, map[string]string{"cleanup.policy": "compact"})
		if err != nil {
			return nil, fmt.Errorf("broker: create %s: %w", offsetsTopic, err)
		}
	}
	if len(t.partitions()) == 0 {
		return nil, fmt.Errorf("broker: %s has no partitions", offsetsTopic)
	}
	cfg := group.DefaultConfig()
	cfg.InitialRebalanceDelay = b.cfg.GroupInitialRebalanceDelay
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = b.cfg.GroupMinSessionTimeout, b.cfg.GroupMaxSessionTimeout
	cfg.PartitionExists = func(topic string, p int32) bool { return b.partition(topic, p) != nil }
	cfg.ConsumerSessionTimeout, cfg.ConsumerHeartbeatInterval = b.cfg.ConsumerSessionTimeout, b.cfg.ConsumerHeartbeatInterval
	cfg.ConsumerAssignors = b.cfg.ConsumerAssignors
	gs := &groups{b: b, c: group.New(cfg), part: t.partitions()[0], wake: make(chan struct{}, 1)}
	gs.c.SetTopics(b.topicMetas())
	n, err := gs.replay()
	if err != nil {
		return nil, err
	}
	b.logger.Info("loaded groups", "records", n, "groups", len(gs.c.Groups()))
	return gs, nil
}

// replay feeds every record of __consumer_offsets to the coordinator.
func (gs *groups) replay() (int, error) {
	l := gs.part.log
	start, hwm, _ := l.Offsets()
	var dec log.Decompressor
	defer dec.Close()
	n := 0
	for off := start; off < hwm; {
		chunk, err := l.Read(off, 1<<20, true)
		if err != nil {
			return n, fmt.Errorf("broker: read %s at %d: %w", offsetsTopic, off, err)
		}
		raw, err := chunk.Bytes()
		chunk.Release()
		if err != nil {
			return n, fmt.Errorf("broker: read %s at %d: %w", offsetsTopic, off, err)
		}
		if len(raw) == 0 {
			break
		}
		for len(raw) > 0 {
			h, err := log.ParseHeader(raw)
			if err != nil || h.Size() > len(raw) {
				return n, fmt.Errorf("broker: %s at %d: bad batch: %v", offsetsTopic, off, err)
			}
			if h.IsControl() {
				if commit, err := log.ControlType(raw[:h.Size()]); err == nil && h.BaseOffset >= off {
					gs.c.CompleteTxn(h.ProducerID, commit)
				}
				off = max(off, h.LastOffset()+1)
				raw = raw[h.Size():]
				continue
			}
			recs, err := dec.Records(raw[:h.Size()])
			if err != nil {
				return n, fmt.Errorf("broker: %s batch at %d: %w", offsetsTopic, h.BaseOffset, err)
			}
			for _, r := range recs {
				if r.Offset < off || r.Key == nil {
					continue
				}
				if h.IsTransactional() {
					gs.c.ReplayTxn(h.ProducerID, r.Key, r.Value)
					n++
					continue
				}
				if err := gs.c.Replay(r.Key, r.Value); err != nil {
					// Not written by us (a client produced to the internal
					// topic): skip it rather than refuse to start.
					gs.b.logger.Warn("skipping unreadable group metadata record", "topic", offsetsTopic, "offset", r.Offset, "err", err)
					continue
				}
				n++
			}
			off = max(off, h.LastOffset()+1)
			raw = raw[h.Size():]
		}
	}
	return n, nil
}

// do runs one coordinator input under the lock and carries out its Ready.
func (gs *groups) do(fn func(c *group.Coordinator, now time.Time)) {
	gs.mu.Lock()
	fn(gs.c, time.Now())
	rd := gs.c.Ready()
	w, appendErr := gs.persist(rd.Records, rd.Txn)
	gs.mu.Unlock()
	select {
	case gs.wake <- struct{}{}:
	default:
	}
	var later []group.Reply
	for _, r := range rd.Replies {
		if r.Durable && (w != nil || appendErr != nil) {
			later = append(later, r)
			continue
		}
		deliver(r.To, r.Resp)
	}
	if len(later) == 0 {
		return
	}
	go func() {
		err := appendErr
		if w != nil {
			<-w.done
			if err == nil {
				err = w.err
			}
		}
		for _, r := range later {
			if err != nil {
				failDurable(r.Resp)
			}
			deliver(r.To, r.Resp)
		}
	}()
}

// persist appends records to __consumer_offsets as one batch, and each
// transaction's offset commits as a transactional batch of its producer, and
// returns the waiter released once they are fsynced.
func (gs *groups) persist(recs []group.Record, txn []group.TxnRecords) (*syncWaiter, error) {
	if len(recs) == 0 && len(txn) == 0 {
		return nil, nil
	}
	now := time.Now()
	var batches [][]byte
	if len(recs) > 0 {
		batches = append(batches, encodeBatch(recs, now.UnixMilli()))
	}
	for _, t := range txn {
		batches = append(batches, encodeTxnBatch(t.Records, now.UnixMilli(), t.ProducerID, t.ProducerEpoch))
	}
	for _, batch := range batches {
		h, err := log.ValidateBatch(batch)
		if err == nil {
			_, err = gs.part.log.Append(batch, h, now)
		}
		if err != nil {
			gs.b.logger.Error("writing group metadata failed", "topic", offsetsTopic, "err", err)
			return nil, err
		}
	}
	return gs.b.syncer.mark([]*log.Log{gs.part.log}, true), nil
}

// deliver completes a reply created by a group handler.
func deliver(to any, resp kmsg.Response) {
	r := to.(*reply)
	r.resp = resp
	close(r.ready)
}

// failDurable marks a reply whose records could not be made durable.
func failDurable(resp kmsg.Response) {
	const code = 15 // COORDINATOR_NOT_AVAILABLE: retriable, as Kafka maps storage errors for commits
	switch r := resp.(type) {
	case *kmsg.OffsetCommitResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				if r.Topics[i].Partitions[j].ErrorCode == 0 {
					r.Topics[i].Partitions[j].ErrorCode = code
				}
			}
		}
	case *kmsg.OffsetDeleteResponse:
		r.ErrorCode = code
	case *kmsg.DeleteGroupsResponse:
		for i := range r.Groups {
			if r.Groups[i].ErrorCode == 0 {
				r.Groups[i].ErrorCode = code
			}
		}
	case *kmsg.SyncGroupResponse:
		r.ErrorCode, r.MemberAssignment = code, nil
	case *kmsg.JoinGroupResponse:
		r.ErrorCode = code
	case *kmsg.ConsumerGroupHeartbeatResponse:
		r.ErrorCode, r.ErrorMessage, r.Assignment = code, nil, nil
	}
}

// run ticks the coordinator at its deadlines until ctx ends.
func (gs *groups) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		gs.mu.Lock()
		next := gs.c.NextDeadline()
		gs.mu.Unlock()
		d := time.Hour
		if !next.IsZero() {
			d = max(time.Until(next), 0)
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return
		case <-gs.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-timer.C:
			gs.do(func(c *group.Coordinator, now time.Time) { c.Tick(now) })
		}
	}
}

// groupReply starts a reply the coordinator completes, possibly later.
func (c *conn) groupReply(fn func(co *group.Coordinator, now time.Time, to any)) *reply {
	r := &reply{ready: make(chan struct{})}
	c.b.groups.do(func(co *group.Coordinator, now time.Time) { fn(co, now, r) })
	return r
}

// clientHost is the member's host as Kafka reports it ("/127.0.0.1").
func (c *conn) clientHost() string {
	host, _, err := net.SplitHostPort(c.nc.RemoteAddr().String())
	if err != nil {
		return "/" + c.nc.RemoteAddr().String()
	}
	return "/" + host
}

// encodeBatch encodes keyed records as one uncompressed v2 record batch with
// no producer id (offsets are stamped by the log).
func encodeBatch(recs []group.Record, ts int64) []byte {
	return encodeTxnBatch(recs, ts, -1, -1)
}

// encodeTxnBatch is encodeBatch for a producer: with pid >= 0 the batch is
// transactional (attribute bit 4), without sequence numbers.
func encodeTxnBatch(recs []group.Record, ts int64, pid int64, epoch int16) []byte {
	var body []byte
	for i, r := range recs {
		var rec []byte
		rec = append(rec, 0)                   // attributes
		rec = kbin.AppendVarlong(rec, 0)       // timestamp delta
		rec = kbin.AppendVarint(rec, int32(i)) // offset delta
		rec = kbin.AppendVarint(rec, int32(len(r.Key)))
		rec = append(rec, r.Key...)
		if r.Value == nil {
			rec = kbin.AppendVarint(rec, -1)
		} else {
			rec = kbin.AppendVarint(rec, int32(len(r.Value)))
			rec = append(rec, r.Value...)
		}
		rec = kbin.AppendVarint(rec, 0) // headers
		body = kbin.AppendVarint(body, int32(len(rec)))
		body = append(body, rec...)
	}
	b := make([]byte, log.HeaderSize, log.HeaderSize+len(body))
	binary.BigEndian.PutUint64(b[0:], 0)                                   // base offset
	binary.BigEndian.PutUint32(b[8:], uint32(log.HeaderSize-12+len(body))) // length
	binary.BigEndian.PutUint32(b[12:], 0)                                  // partition leader epoch
	b[16] = 2                                                              // magic
	binary.BigEndian.PutUint16(b[21:], 0)                                  // attributes
	binary.BigEndian.PutUint32(b[23:], uint32(len(recs)-1))                // last offset delta
	binary.BigEndian.PutUint64(b[27:], uint64(ts))                         // first timestamp
	binary.BigEndian.PutUint64(b[35:], uint64(ts))                         // max timestamp
	binary.BigEndian.PutUint64(b[43:], uint64(pid))                        // producer id
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))                      // producer epoch
	binary.BigEndian.PutUint32(b[53:], ^uint32(0))                         // base sequence -1
	binary.BigEndian.PutUint32(b[57:], uint32(len(recs)))                  // record count
	if pid >= 0 {
		binary.BigEndian.PutUint16(b[21:], 0x10) // transactional
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// setGroupDuration parses one of the group.*.ms broker properties.
func setGroupDuration(c *Config, key, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", v)
	}
	if n < 0 {
		return errors.New("must be >= 0")
	}
	d := time.Duration(n) * time.Millisecond
	switch key {
	case "group.initial.rebalance.delay.ms":
		c.GroupInitialRebalanceDelay = d
	case "group.min.session.timeout.ms":
		c.GroupMinSessionTimeout = d
	case "group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms":
		if d <= 0 {
			return errors.New("must be >= 1")
		}
		if key == "group.consumer.session.timeout.ms" {
			c.ConsumerSessionTimeout = d
		} else {
			c.ConsumerHeartbeatInterval = d
		}
	case "group.max.session.timeout.ms":
		c.GroupMaxSessionTimeout = d
	}
	return nil
}

// parseAssignors parses group.consumer.assignors: names of the server-side
// assignors this broker has (Kafka also accepts class names; only the
// built-in names are known here).
func parseAssignors(v string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		switch a {
		case "":
			continue
		case group.AssignorUniform, group.AssignorRange,
			"org.apache.kafka.coordinator.group.assignor.UniformAssignor":
			if strings.HasSuffix(a, "UniformAssignor") {
				a = group.AssignorUniform
			}
		case "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
			a = group.AssignorRange
		default:
			return nil, fmt.Errorf("unknown assignor %q (known: uniform, range)", a)
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("at least one assignor is needed")
	}
	return out, nil
}

// topicMetas lists the topics for the consumer-protocol groups.
func (b *Broker) topicMetas() []group.TopicMeta {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]group.TopicMeta, 0, len(b.topics))
	for _, t := range b.topics {
		out = append(out, group.TopicMeta{Name: t.name, ID: t.id, Partitions: int32(len(t.partitions()))})
	}
	return out
}

// topicsChanged tells the group coordinator the topics changed (created,
// deleted, grown): consumer groups re-resolve their subscriptions.
func (b *Broker) topicsChanged() {
	if b.groups == nil {
		return
	}
	metas := b.topicMetas()
	b.groups.do(func(c *group.Coordinator, _ time.Time) { c.SetTopics(metas) })
}
