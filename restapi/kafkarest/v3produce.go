package kafkarest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// v3PayloadInfo describes a produced key or value in a delivery report.
type v3PayloadInfo struct {
	Type          string `json:"type"`
	Subject       string `json:"subject,omitempty"`
	SchemaID      int    `json:"schema_id,omitempty"`
	SchemaVersion int    `json:"schema_version,omitempty"`
	Size          int    `json:"size"`
}

// v3Report is a successful delivery report.
type v3Report struct {
	ErrorCode   int            `json:"error_code"`
	ClusterID   string         `json:"cluster_id"`
	TopicName   string         `json:"topic_name"`
	PartitionID int32          `json:"partition_id"`
	Offset      int64          `json:"offset"`
	Timestamp   string         `json:"timestamp"`
	Key         *v3PayloadInfo `json:"key,omitempty"`
	Value       *v3PayloadInfo `json:"value,omitempty"`
}

// inFlight bounds the records of one streaming request produced but not
// yet reported; the body is read no further until reports go out. A
// stream's rate is at most inFlight per broker round trip (with fsync), so
// the window is wide: 32 MiB of 1 KiB records.
const inFlight = 32768

// slot is one record's place in the ordered stream of reports.
type slot struct {
	done       chan struct{} // acknowledged, or failed
	decoded    chan struct{} // rec and cl are set, or err (streams only)
	raw        json.RawMessage
	rec        *kgo.Record
	cl         *kgo.Client
	err        error
	key, value v3Payload
}

func payloadInfo(p v3Payload) *v3PayloadInfo {
	if p.Type == "" {
		return nil
	}
	return &v3PayloadInfo{Type: p.Type, Subject: p.Subject, SchemaID: p.SchemaID, SchemaVersion: p.SchemaVersion, Size: len(p.Bytes)}
}

// report is s's delivery report and its status.
func (s *slot) report(cluster string) (int, any) {
	if s.err != nil {
		e := asError(s.err)
		return e.Status, e
	}
	return http.StatusOK, v3Report{
		ErrorCode: http.StatusOK, ClusterID: cluster, TopicName: s.rec.Topic,
		PartitionID: s.rec.Partition, Offset: s.rec.Offset,
		Timestamp: s.rec.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"),
		Key:       payloadInfo(s.key), Value: payloadInfo(s.value),
	}
}

// appendReport appends s's report and a newline to dst: the successful
// ones written by hand (the hot path of a stream), the others as JSON.
func (s *slot) appendReport(dst []byte, cluster string) []byte {
	if s.err != nil {
		_, body := s.report(cluster)
		b, _ := json.Marshal(body)
		return append(append(dst, b...), '\n')
	}
	dst = append(dst, `{"error_code":200,"cluster_id":`...)
	dst = appendJSONString(dst, cluster)
	dst = append(dst, `,"topic_name":`...)
	dst = appendJSONString(dst, s.rec.Topic)
	dst = append(dst, `,"partition_id":`...)
	dst = strconv.AppendInt(dst, int64(s.rec.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, s.rec.Offset, 10)
	dst = append(dst, `,"timestamp":"`...)
	dst = s.rec.Timestamp.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
	dst = append(dst, '"')
	for _, kv := range []struct {
		name string
		p    v3Payload
	}{{"key", s.key}, {"value", s.value}} {
		if kv.p.Type == "" {
			continue
		}
		dst = append(dst, `,"`+kv.name+`":{"type":"`...)
		dst = append(dst, kv.p.Type...)
		dst = append(dst, '"')
		if kv.p.SchemaID != 0 {
			dst = append(dst, `,"subject":`...)
			dst = appendJSONString(dst, kv.p.Subject)
			dst = append(dst, `,"schema_id":`...)
			dst = strconv.AppendInt(dst, int64(kv.p.SchemaID), 10)
			if kv.p.SchemaVersion != 0 {
				dst = append(dst, `,"schema_version":`...)
				dst = strconv.AppendInt(dst, int64(kv.p.SchemaVersion), 10)
			}
		}
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(len(kv.p.Bytes)), 10)
		dst = append(dst, '}')
	}
	return append(dst, "}\n"...)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// v3Produce answers POST /v3/clusters/{id}/topics/{t}/records. The body is
// one JSON record or a stream of concatenated ones. One record in a body
// of known length gets one answer whose status is its error code; a
// chunked body (or several records) gets status 200 and one report per
// record, in the order of the records, each written once that record is
// acknowledged by the broker (acks=all). A record that does not parse is
// reported as a 400 and not produced; one that cannot be parsed at all
// ends the stream after its report.
func (p *Proxy) v3Produce(w http.ResponseWriter, r *http.Request, c v3) {
	topic := chi.URLParam(r, "topic")
	n, err := p.partitionCount(r.Context(), topic)
	if err != nil {
		if errors.Is(err, errTopicNotFound) {
			err = v3TopicNotFound(topic)
		}
		v3Fail(w, err)
		return
	}
	sp := newSplitter(r.Body)
	if r.ContentLength < 0 {
		p.v3Stream(w, r, c, topic, n, sp, nil, nil)
		return
	}
	raw, err := sp.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("the body is empty")
		}
		v3Fail(w, badRequest("Error processing JSON: %v", err))
		return
	}
	second, err := sp.next()
	if !errors.Is(err, io.EOF) {
		// Several records in one body: report them as a stream.
		pre := [][]byte{raw}
		if err == nil {
			pre = append(pre, second)
		}
		p.v3Stream(w, r, c, topic, n, sp, pre, err)
		return
	}
	req, derr := decodeV3Fast(raw)
	if derr != nil {
		v3Fail(w, jsonError(derr))
		return
	}
	s := p.v3Send(topic, n, req)
	<-s.done
	status, body := s.report(c.cluster)
	writeJSON(w, status, v3ContentType, body)
}

// prepare decodes req into s's record (and the client to produce it
// with), or s's error.
func (p *Proxy) prepare(topic string, partitions int, s *slot, req *v3Produce) {
	skey, svalue, perr := p.prepareSchemas(topic, req)
	if perr != nil {
		s.err = perr
		return
	}
	rec, perr := decodeV3Record(req)
	if perr != nil {
		s.err = perr
		return
	}
	if skey != nil {
		rec.Key = *skey
	}
	if svalue != nil {
		rec.Value = *svalue
	}
	if int(rec.Partition) >= partitions {
		s.err = v3NotFound("This server does not host this topic-partition.")
		return
	}
	kr := &kgo.Record{Topic: topic, Key: rec.Key.Bytes, Value: rec.Value.Bytes, Timestamp: rec.Timestamp}
	for _, h := range rec.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	s.key, s.value = rec.Key, rec.Value
	s.cl = p.prod
	if rec.Partition >= 0 {
		kr.Partition = rec.Partition
		s.cl = p.manual
	}
	s.rec = kr
}

// send produces s's prepared record, closing s.done once the broker
// answered; a slot with an error is done at once.
func (s *slot) send() {
	if s.err != nil {
		close(s.done)
		return
	}
	s.cl.Produce(context.Background(), s.rec, func(kr *kgo.Record, err error) {
		s.rec, s.err = kr, err
		close(s.done)
	})
}

// v3Send produces one record and returns its slot.
func (p *Proxy) v3Send(topic string, partitions int, req *v3Produce) *slot {
	s := &slot{done: make(chan struct{})}
	p.prepare(topic, partitions, s, req)
	s.send()
	return s
}

// decoders is how many goroutines of a stream decode records in parallel.
const decoders = 2

// v3Stream reads records from sp (after pre and preErr, what was read
// already) and writes their reports in order as they are acknowledged. A pipeline: this
// goroutine splits the body into records, decoders decode them, one
// goroutine produces them in the order of the body and one writes the
// reports in that order.
func (p *Proxy) v3Stream(w http.ResponseWriter, r *http.Request, c v3, topic string, partitions int, sp *splitter, pre [][]byte, preErr error) {
	rc := http.NewResponseController(w)
	// Reports go out while the body is still being read.
	_ = rc.EnableFullDuplex()
	w.Header().Set("Content-Type", v3ContentType)
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()

	slots := make(chan *slot, inFlight)    // to the writer, in order
	produceQ := make(chan *slot, inFlight) // to the producer, in order
	decodeQ := make(chan *slot, 1024)      // to the decoders, any order
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		bw := bufio.NewWriterSize(w, 32<<10)
		var buf []byte
		failed := false
		for s := range slots {
			<-s.done
			if failed {
				continue
			}
			buf = s.appendReport(buf[:0], c.cluster)
			if _, err := bw.Write(buf); err != nil {
				failed = true
				continue
			}
			if len(slots) == 0 {
				if bw.Flush() != nil || rc.Flush() != nil {
					failed = true
				}
			}
		}
		if !failed {
			_ = bw.Flush()
			_ = rc.Flush()
		}
	}()
	go func() {
		for s := range produceQ {
			<-s.decoded
			s.send()
		}
	}()
	for range decoders {
		go func() {
			for s := range decodeQ {
				if req, err := decodeV3Fast(s.raw); err != nil {
					s.err = jsonError(err)
				} else {
					p.prepare(topic, partitions, s, req)
				}
				s.raw = nil
				close(s.decoded)
			}
		}()
	}
	push := func(s *slot) {
		produceQ <- s
		slots <- s
	}
	failed := func(err *Error) *slot {
		s := &slot{done: make(chan struct{}), decoded: make(chan struct{}), err: err}
		close(s.decoded)
		return s
	}
	next := func() ([]byte, error) {
		if len(pre) > 0 {
			raw := pre[0]
			pre = pre[1:]
			return raw, nil
		}
		if preErr != nil {
			return nil, preErr
		}
		return sp.next()
	}
	for {
		raw, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *streamSyntaxError
			if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
				push(failed(badRequest("Error processing JSON: %v", err)))
			}
			// Otherwise the connection is gone: nothing more to read.
			break
		}
		s := &slot{done: make(chan struct{}), decoded: make(chan struct{}), raw: raw}
		decodeQ <- s
		push(s)
	}
	close(decodeQ)
	close(produceQ)
	close(slots)
	<-writerDone
}
