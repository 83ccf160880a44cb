package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBadFramesCloseOnlyTheirConnection sends broken frames on raw
// connections while a franz-go producer keeps producing: each bad
// connection is closed, the producer never notices.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	b := startBroker(t, "", func(c *Config) { c.MaxRequestBytes = 1 << 20 })
	createTopic(t, b, "steady", 2, nil)
	ctx := testCtx(t)

	prod := newClient(t, b, kgo.DefaultProduceTopic("steady"), kgo.RequiredAcks(kgo.AllISRAcks()))
	var acked atomic.Int64
	var prodErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			res := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("steady")})
			if err := res.FirstErr(); err != nil {
				prodErr.Store(err)
				return
			}
			acked.Add(1)
		}
	}()
	waitAcks := func(what string) {
		t.Helper()
		n := acked.Load()
		deadline := time.Now().Add(10 * time.Second)
		for acked.Load() < n+5 {
			if err := prodErr.Load(); err != nil {
				t.Fatalf("after %s: producer failed: %v", what, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %s: producer stalled", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitAcks("start")

	frame := func(body []byte) []byte {
		return binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	}
	apiVersions := frameRequest(kmsg.NewPtrApiVersionsRequest(), 1)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	mdFrame := frameRequest(md, 2)

	cases := []struct {
		name string
		send func(c *rawClient)
	}{
		{"unknown api key", func(c *rawClient) {
			body := []byte{0x27, 0x0f, 0, 0, 0, 0, 0, 7, 0, 1, 'x'} // key 9999
			c.write(append(frame(body), body...))
		}},
		{"unsupported version", func(c *rawClient) {
			body := []byte{0, 3, 0, 99, 0, 0, 0, 7, 0, 1, 'x'}
			c.write(append(frame(body), body...))
		}},
		{"malformed body", func(c *rawClient) {
			// A Metadata v9 frame with its body cut short, size adjusted.
			body := mdFrame[4 : len(mdFrame)-2]
			c.write(append(frame(body), body...))
		}},
		{"garbage body", func(c *rawClient) {
			body := append([]byte{0, 0, 0, 9, 0, 0, 0, 7, 0, 1, 'x'}, []byte(strings.Repeat("\xff", 40))...)
			c.write(append(frame(body), body...))
		}},
		{"frame larger than socket.request.max.bytes", func(c *rawClient) {
			c.write(binary.BigEndian.AppendUint32(nil, 2<<20))
			c.write(make([]byte, 1024))
		}},
		{"negative frame size", func(c *rawClient) {
			c.write([]byte{0xff, 0xff, 0xff, 0xf0, 0, 18, 0, 0})
		}},
		{"truncated header", func(c *rawClient) {
			body := []byte{0, 18, 0, 3, 0, 0, 0, 7, 0, 50, 'a', 'b'} // client id says 50 bytes
			c.write(append(frame(body), body...))
		}},
		{"frame shorter than a header", func(c *rawClient) {
			c.write([]byte{0, 0, 0, 3, 0, 18, 0})
		}},
		{"good request then unknown key", func(c *rawClient) {
			c.write(apiVersions)
			body := []byte{0x27, 0x0f, 0, 0, 0, 0, 0, 7, 0, 1, 'x'}
			c.write(append(frame(body), body...))
			corr, _, err := c.readFrame()
			if err != nil || corr != 1 {
				c.t.Fatalf("response before the bad frame: corr %d, %v", corr, err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, b.Addr())
			tc.send(c)
			c.expectClosed(tc.name)
			waitAcks(tc.name)
			// The broker still takes new connections.
			ok := dialRaw(t, b.Addr())
			ok.write(apiVersions)
			if corr, _, err := ok.readFrame(); err != nil || corr != 1 {
				t.Fatalf("fresh connection: corr %d, %v", corr, err)
			}
		})
	}
	close(stop)
	wg.Wait()
	if err := prodErr.Load(); err != nil {
		t.Fatalf("producer: %v", err)
	}
}

// TestPipelinedRequestsAnsweredInOrder writes many requests back to back on
// one connection before reading anything; the answers come in request order.
func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	b := startBroker(t, "")
	createTopic(t, b, "pipe", 1, nil)
	c := dialRaw(t, b.Addr())
	type sent struct {
		key, version int16
	}
	var reqs []sent
	var buf []byte
	for i := 0; i < 30; i++ {
		corr := int32(100 + i)
		var req kmsg.Request
		switch i % 4 {
		case 0:
			r := kmsg.NewPtrApiVersionsRequest()
			r.Version = 3
			r.ClientSoftwareName, r.ClientSoftwareVersion = "raw", "1"
			req = r
		case 1:
			r := kmsg.NewPtrMetadataRequest()
			r.Version = int16(1 + i%12)
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr("pipe")
			r.Topics = append(r.Topics, mt)
			req = r
		case 2:
			// acks=all answers wait for the group commit, while the
			// requests behind them are answered at once: order must hold.
			req = produceRequest(int16(3+i%10), -1, "pipe", 0, testBatch(-1, 0, 0, 0, "x", "y"))
		case 3:
			req = produceRequest(9, 1, "pipe", 0, testBatch(-1, 0, 0, 0, "z"))
		}
		buf = append(buf, frameRequest(req, corr)...)
		reqs = append(reqs, sent{req.Key(), req.GetVersion()})
	}
	c.write(buf)
	var next int64
	for i, r := range reqs {
		corr, body, err := c.readFrame()
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if corr != int32(100+i) {
			t.Fatalf("response %d has correlation id %d, want %d", i, corr, 100+i)
		}
		resp := decodeResponse(t, r.key, r.version, body)
		if pr, ok := resp.(*kmsg.ProduceResponse); ok {
			p := pr.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.BaseOffset != next {
				t.Fatalf("produce %d: error %d offset %d, want offset %d", i, p.ErrorCode, p.BaseOffset, next)
			}
			next += 2
			if i%4 == 3 {
				next--
			}
		}
	}
}

// TestPartitionCountLimit checks that one request cannot ask for millions of
// partitions (each holds open files).
func TestPartitionCountLimit(t *testing.T) {
	b := startBroker(t, "")
	createTopic(t, b, "few", 1, nil)
	adm := kadm.NewClient(newClient(t, b))
	ctx := testCtx(t)
	resp, err := adm.CreateTopic(ctx, 1<<30, 1, nil, "many")
	if !errors.Is(resp.Err, kerr.InvalidPartitions) {
		t.Fatalf("create topic with 2^30 partitions: %v %v", err, resp.Err)
	}
	cp, err := adm.CreatePartitions(ctx, 805306368, "few")
	if err != nil || !errors.Is(cp["few"].Err, kerr.InvalidPartitions) {
		t.Fatalf("create partitions to 805306368: %v %v", err, cp["few"].Err)
	}
	if b.topic("many") != nil || len(b.topic("few").partitions()) != 1 {
		t.Fatal("partitions were created")
	}
}

// TestRetentionAndRollingThroughBroker produces a few MB into a topic with
// Kafka's smallest segment.bytes and a small retention.bytes: old segment
// files are deleted and ListOffsets earliest moves forward.
func TestRetentionAndRollingThroughBroker(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, func(c *Config) { c.RetentionCheckInterval = 50 * time.Millisecond })
	createTopic(t, b, "ret", 1, map[string]*string{
		"segment.bytes":   kmsg.StringPtr("1048576"),
		"retention.bytes": kmsg.StringPtr("2097152"),
	})
	ctx := testCtx(t)
	cl := newClient(t, b, kgo.DefaultProduceTopic("ret"), kgo.ProducerBatchMaxBytes(256<<10),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // so that 6000 KB of values make 6 MB of log
	adm := kadm.NewClient(cl)
	value := []byte(strings.Repeat("r", 1000))
	const n = 6000 // ~6 MB
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	segs := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "ret-0", "*.log"))
		return m
	}
	var earliest int64
	deadline := time.Now().Add(20 * time.Second)
	for {
		starts, err := adm.ListStartOffsets(ctx, "ret")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := starts.Lookup("ret", 0)
		earliest = o.Offset
		if earliest > 0 && len(segs()) <= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20s: earliest offset %d, %d segment files %v", earliest, len(segs()), segs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if first := filepath.Base(segs()[0]); first == "00000000000000000000.log" {
		t.Fatalf("first segment file still there: %v", segs())
	}
	ends, err := adm.ListEndOffsets(ctx, "ret")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("ret", 0)
	if end.Offset != n || earliest >= end.Offset || earliest < n/2 {
		t.Fatalf("earliest %d, end %d (produced %d)", earliest, end.Offset, n)
	}
	t.Logf("earliest offset %d of %d, %d segment files", earliest, end.Offset, len(segs()))

	// Consumers from the start begin at the new earliest offset.
	c := newClient(t, b, kgo.ConsumeTopics("ret"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fs := c.PollFetches(fctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	if r := fs.Records(); len(r) == 0 || r[0].Offset < earliest {
		t.Fatalf("first consumed record at %v, earliest %d", r, earliest)
	}
}
