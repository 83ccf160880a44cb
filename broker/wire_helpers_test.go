package broker

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testBatch builds a valid uncompressed v2 record batch (length and CRC-32C
// filled in) with the given values; pid < 0 makes it non-idempotent.
func testBatch(pid int64, epoch int16, seq int32, ts int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Key: []byte("k-" + v), Value: []byte(v)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		Magic:           2,
		LastOffsetDelta: int32(len(values) - 1),
		FirstTimestamp:  ts,
		MaxTimestamp:    ts + int64(len(values)-1),
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      int32(len(values)),
		Records:         recs,
	}
	if pid >= 0 {
		b.ProducerID, b.ProducerEpoch, b.FirstSequence = pid, epoch, seq
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// produceRequest is a Produce request for one partition.
func produceRequest(version int16, acks int16, topic string, partition int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = acks
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// frameRequest encodes a request as a size-prefixed frame, as a client sends it.
func frameRequest(req kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test")).AppendRequest(nil, req, corr)
}

// rawClient is a bare TCP connection speaking Kafka frames.
type rawClient struct {
	t  testing.TB
	nc net.Conn
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc}
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readFrame reads one response frame and returns the correlation id and the
// rest of it.
func (c *rawClient) readFrame() (int32, []byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 64<<20 {
		return 0, nil, fmt.Errorf("response frame of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.nc, b); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}

// expectClosed checks that the broker closes the connection (EOF or reset)
// without sending a response.
func (c *rawClient) expectClosed(what string) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	n, err := c.nc.Read(b[:])
	if err == nil {
		c.t.Fatalf("%s: broker sent %d bytes instead of closing the connection", what, n)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatalf("%s: connection still open after 10s", what)
	}
}

// decodeResponse parses the body of a response frame (after the correlation
// id) for key/version, handling the flexible header rule (ApiVersions
// responses never have header tags).
func decodeResponse(t testing.TB, key, version int16, body []byte) kmsg.Response {
	t.Helper()
	resp := kmsg.ResponseForKey(key)
	resp.SetVersion(version)
	if resp.IsFlexible() && key != 18 {
		if len(body) == 0 || body[0] != 0 {
			t.Fatalf("%s v%d: response header tags %x, want empty", kmsg.NameForKey(key), version, body[:min(len(body), 1)])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d: decode response: %v", kmsg.NameForKey(key), version, err)
	}
	return resp
}
