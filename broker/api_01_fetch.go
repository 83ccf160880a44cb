package broker

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/tributary-dev/tributary/broker/acl"
	"github.com/tributary-dev/tributary/broker/log"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch: v4-12. Long poll on max wait / min bytes; per-partition and
// per-response byte limits with Kafka's "at least one batch" rule; batches
// are sent as stored, with sendfile. Fetch sessions are not kept: the
// response always has session id 0, which clients treat as "sessions
// unsupported" and keep sending full fetches. read_committed fetches stop
// at the last stable offset and list the aborted transactions that overlap
// the returned batches (from the partitions' aborted transaction indexes),
// so clients drop aborted records; read_uncommitted gets null lists.

func handleFetch(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.FetchRequest)
	b := c.b
	maxWait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	minBytes := int64(req.MinBytes)

	denied := c.deniedFetchTopics(req)
	waits := b.fetchWaitChans(req)
	fr := b.readFetch(req, denied)
	if fr.bytes >= minBytes || maxWait <= 0 || fr.failed {
		return &reply{fetch: fr}
	}
	r := &reply{ready: make(chan struct{})}
	go func() {
		defer close(r.ready)
		timer := time.NewTimer(maxWait)
		defer timer.Stop()
		for {
			if !waitAny(waits, timer.C, b.ctx.Done()) {
				break // timed out or shutting down
			}
			waits = b.fetchWaitChans(req)
			fr.release()
			fr = b.readFetch(req, denied)
			if fr.bytes >= minBytes || fr.failed {
				break
			}
		}
		if b.ctx.Err() != nil {
			fr.release()
			r.fail = errors.New("broker shutting down")
			return
		}
		fr.release()
		r.fetch = b.readFetch(req, denied)
	}()
	return r
}

// deniedFetchTopics returns the topics of a fetch the principal may not
// READ (by name, or by id for Fetch v13); nil without an authorizer.
func (c *conn) deniedFetchTopics(req *kmsg.FetchRequest) map[string]bool {
	if c.b.sec.authorizer() == nil {
		return nil
	}
	denied := map[string]bool{}
	for _, rt := range req.Topics {
		name := rt.Topic
		if name == "" {
			c.b.mu.RLock()
			if t := c.b.topicIDs[rt.TopicID]; t != nil {
				name = t.name
			}
			c.b.mu.RUnlock()
		}
		if !c.allowedTopic(acl.OpRead, name) {
			denied[rt.Topic+"\x00"+string(rt.TopicID[:])] = true
		}
	}
	return denied
}

// waitAny blocks until one of chans is closed (true) or timeout/done fires (false).
func waitAny(chans []<-chan struct{}, timeout <-chan time.Time, done <-chan struct{}) bool {
	if len(chans) == 0 {
		select {
		case <-timeout:
		case <-done:
		}
		return false
	}
	woke := make(chan struct{}, 1)
	stop := make(chan struct{})
	defer close(stop)
	for _, ch := range chans {
		go func(ch <-chan struct{}) {
			select {
			case <-ch:
				select {
				case woke <- struct{}{}:
				default:
				}
			case <-stop:
			}
		}(ch)
	}
	select {
	case <-woke:
		return true
	case <-timeout:
		return false
	case <-done:
		return false
	}
}

func (b *Broker) fetchWaitChans(req *kmsg.FetchRequest) []<-chan struct{} {
	var out []<-chan struct{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if p := b.partition(rt.Topic, rp.Partition); p != nil {
				out = append(out, p.log.Wait())
			}
		}
	}
	return out
}

// fetchReply is a fetch response whose record data stays in segment files
// until it is written.
type fetchReply struct {
	version int16
	topics  []fetchTopic
	bytes   int64
	failed  bool // a partition has an error: answer at once, as Kafka does
}

type fetchTopic struct {
	name  string
	id    [16]byte
	parts []fetchPart
}

type fetchPart struct {
	partition     int32
	errorCode     int16
	hwm, lso      int64
	logStart      int64
	committedRead bool
	aborted       []log.AbortedTxn
	chunk         log.Chunk
	from          int64 // the fetch offset
}

// fetched counts a fetch response's bytes and records, as written, per
// topic (records are the offsets the chunks cover from the fetch offset).
func (b *Broker) fetched(f *fetchReply) {
	for i := range f.topics {
		ft := &f.topics[i]
		var bytes, recs int64
		for j := range ft.parts {
			p := &ft.parts[j]
			if p.chunk.Len > 0 {
				bytes += p.chunk.Len
				recs += max(p.chunk.Next-p.from, 0)
			}
		}
		if bytes == 0 {
			continue
		}
		t := b.topic(ft.name)
		if t == nil && ft.name == "" { // by topic id (Fetch v13)
			b.mu.RLock()
			t = b.topicIDs[ft.id]
			b.mu.RUnlock()
		}
		if t != nil {
			t.m.bytesOut.Add(bytes)
			t.m.messagesOut.Add(recs)
		}
	}
}

func (f *fetchReply) release() {
	if f == nil {
		return
	}
	for i := range f.topics {
		for j := range f.topics[i].parts {
			f.topics[i].parts[j].chunk.Release()
		}
	}
}

func (b *Broker) readFetch(req *kmsg.FetchRequest, denied map[string]bool) *fetchReply {
	fr := &fetchReply{version: req.Version}
	maxResp := int64(req.MaxBytes)
	if req.Version < 3 || maxResp <= 0 {
		maxResp = 52428800
	}
	for _, rt := range req.Topics {
		ft := fetchTopic{name: rt.Topic, id: rt.TopicID}
		t := b.topic(rt.Topic)
		topicDenied := denied[rt.Topic+"\x00"+string(rt.TopicID[:])]
		for _, rp := range rt.Partitions {
			fp := fetchPart{partition: rp.Partition, hwm: -1, lso: -1, logStart: -1, committedRead: req.IsolationLevel == 1}
			var p *partition
			if t != nil {
				if parts := t.partitions(); rp.Partition >= 0 && int(rp.Partition) < len(parts) {
					p = parts[rp.Partition]
				}
			}
			switch {
			case topicDenied:
				fp.errorCode = errTopicAuthorizationFailed
				fr.failed = true
			case p == nil:
				fp.errorCode = errUnknownTopicOrPartition
				fr.failed = true
			case req.Version >= 9 && rp.CurrentLeaderEpoch > 0:
				fp.errorCode = errUnknownLeaderEpoch
				fr.failed = true
			default:
				logStart, hwm, _ := p.log.Offsets()
				fp.hwm, fp.lso, fp.logStart = hwm, p.log.LastStable(), logStart
				remaining := maxResp - fr.bytes
				limit := min(int64(rp.PartitionMaxBytes), remaining)
				if limit <= 0 && fr.bytes > 0 {
					break
				}
				read := p.log.Read
				if fp.committedRead {
					read = p.log.ReadCommitted
				}
				chunk, err := read(rp.FetchOffset, max(limit, 0), fr.bytes == 0)
				if err != nil {
					if errors.Is(err, log.ErrOffsetOutOfRange) {
						fp.errorCode = errOffsetOutOfRange
					} else {
						fp.errorCode = errKafkaStorageError
						b.logger.Error("fetch read failed", "topic", rt.Topic, "partition", rp.Partition, "err", err)
					}
					fp.hwm, fp.lso, fp.logStart = -1, -1, -1
					fr.failed = true
					break
				}
				fp.chunk, fp.from = chunk, rp.FetchOffset
				fr.bytes += chunk.Len
				if fp.committedRead && chunk.Len > 0 {
					fp.aborted = p.log.AbortedTxns(rp.FetchOffset, chunk.Next)
				}
			}
			ft.parts = append(ft.parts, fp)
		}
		fr.topics = append(fr.topics, ft)
	}
	return fr
}

// wirePart is a piece of an encoded response: bytes, or a chunk of a
// segment file to send as is.
type wirePart struct {
	bytes []byte
	chunk *log.Chunk
}

// encode lays out the framed response. It produces exactly what
// kmsg.FetchResponse.AppendTo would (fetchenc_test.go checks this), except
// that record data is referenced instead of copied.
func (f *fetchReply) encode(corr int32) []wirePart {
	v := f.version
	flex := v >= 12
	var parts []wirePart
	buf := make([]byte, 4, 256)
	buf = kbin.AppendInt32(buf, corr)
	if flex {
		buf = append(buf, 0)
	}
	buf = kbin.AppendInt32(buf, 0) // throttle
	if v >= 7 {
		buf = kbin.AppendInt16(buf, 0) // error code
		buf = kbin.AppendInt32(buf, 0) // session id
	}
	buf = appendArrayLen(buf, len(f.topics), flex)
	total := int64(0)
	for i := range f.topics {
		t := &f.topics[i]
		if v <= 12 {
			if flex {
				buf = kbin.AppendCompactString(buf, t.name)
			} else {
				buf = kbin.AppendString(buf, t.name)
			}
		} else {
			buf = kbin.AppendUuid(buf, t.id)
		}
		buf = appendArrayLen(buf, len(t.parts), flex)
		for j := range t.parts {
			p := &t.parts[j]
			buf = kbin.AppendInt32(buf, p.partition)
			buf = kbin.AppendInt16(buf, p.errorCode)
			buf = kbin.AppendInt64(buf, p.hwm)
			buf = kbin.AppendInt64(buf, p.lso)
			if v >= 5 {
				buf = kbin.AppendInt64(buf, p.logStart)
			}
			// Aborted transactions: null for read_uncommitted.
			switch {
			case !p.committedRead && flex:
				buf = append(buf, 0)
			case !p.committedRead:
				buf = kbin.AppendInt32(buf, -1)
			default:
				buf = appendArrayLen(buf, len(p.aborted), flex)
				for _, a := range p.aborted {
					buf = kbin.AppendInt64(buf, a.ProducerID)
					buf = kbin.AppendInt64(buf, a.FirstOffset)
					if flex {
						buf = append(buf, 0) // tags
					}
				}
			}
			if v >= 11 {
				buf = kbin.AppendInt32(buf, -1) // preferred read replica
			}
			n := p.chunk.Len
			if flex {
				buf = kbin.AppendUvarint(buf, uint32(n+1))
			} else {
				buf = kbin.AppendInt32(buf, int32(n))
			}
			if n > 0 {
				parts = append(parts, wirePart{bytes: buf})
				total += int64(len(buf))
				parts = append(parts, wirePart{chunk: &p.chunk})
				total += n
				buf = make([]byte, 0, 128)
			}
			if flex {
				buf = append(buf, 0) // partition tags
			}
		}
		if flex {
			buf = append(buf, 0) // topic tags
		}
	}
	if flex {
		buf = append(buf, 0) // response tags
	}
	parts = append(parts, wirePart{bytes: buf})
	total += int64(len(buf))
	binary.BigEndian.PutUint32(parts[0].bytes, uint32(total-4))
	return parts
}

func appendArrayLen(dst []byte, n int, flex bool) []byte {
	if flex {
		return kbin.AppendCompactArrayLen(dst, n)
	}
	return kbin.AppendArrayLen(dst, n)
}
