package broker

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// panicWatch is a slog handler that counts logged handler panics, so that a
// test notices a panic handleFrame recovered from.
type panicWatch struct {
	panics atomic.Int64
	last   atomic.Value
}

func (p *panicWatch) Enabled(context.Context, slog.Level) bool { return true }
func (p *panicWatch) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		p.panics.Add(1)
		var sb strings.Builder
		sb.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			sb.WriteString(" " + a.Key + "=" + a.Value.String())
			return true
		})
		p.last.Store(sb.String())
	}
	return nil
}
func (p *panicWatch) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p *panicWatch) WithGroup(string) slog.Handler      { return p }

// testConn is a conn on b for feeding handleFrame directly; its socket is
// one end of a pipe nothing reads (handlers only ask its address).
func testConn(b *Broker) *conn {
	nc, _ := net.Pipe()
	return &conn{b: b, logger: b.logger, nc: nc, l: b.lns[0], principal: anonymous, host: "127.0.0.1"}
}

// seedFrames are valid request frames (without the size prefix) covering
// every API, used as fuzz seeds and as the base of the malformed-frame table.
func seedFrames() [][]byte {
	var out []kmsg.Request
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "fuzz", "1.0"
	out = append(out, av)
	av0 := kmsg.NewPtrApiVersionsRequest()
	out = append(out, av0)
	for _, v := range []int16{1, 9, 12} {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = v
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("fuzz")
		md.Topics = append(md.Topics, mt)
		out = append(out, md)
	}
	for _, v := range []int16{3, 7, 9, 12} {
		out = append(out, produceRequest(v, -1, "fuzz", 0, testBatch(-1, 0, 0, 1, "a", "b")))
	}
	out = append(out, produceRequest(9, 1, "fuzz", 0, testBatch(5, 0, 0, 1, "idem")))
	for _, v := range []int16{4, 11, 12} {
		f := kmsg.NewPtrFetchRequest()
		f.Version = v
		f.MaxBytes = 1 << 20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "fuzz"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		f.Topics = append(f.Topics, ft)
		out = append(out, f)
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "fuzz"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -2
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	out = append(out, lo)
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 7
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "fuzz-created", 2, 1
	ctt.Configs = append(ctt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: "retention.ms", Value: kmsg.StringPtr("1000")})
	ct.Topics = append(ct.Topics, ctt)
	out = append(out, ct)
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	dcr := kmsg.NewDescribeConfigsRequestResource()
	dcr.ResourceType, dcr.ResourceName = kmsg.ConfigResourceTypeTopic, "fuzz"
	dc.Resources = append(dc.Resources, dcr)
	out = append(out, dc)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	out = append(out, ip)
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.Version = 4
	oet := kmsg.NewOffsetForLeaderEpochRequestTopic()
	oet.Topic = "fuzz"
	oet.Partitions = append(oet.Partitions, kmsg.NewOffsetForLeaderEpochRequestTopicPartition())
	oe.Topics = append(oe.Topics, oet)
	out = append(out, oe)
	dcl := kmsg.NewPtrDescribeClusterRequest()
	out = append(out, dcl)
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "fuzz", 3
	cp.Topics = append(cp.Topics, cpt)
	out = append(out, cp)
	ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ia.Version = 1
	iar := kmsg.NewIncrementalAlterConfigsRequestResource()
	iar.ResourceType, iar.ResourceName = kmsg.ConfigResourceTypeTopic, "fuzz"
	iar.Configs = append(iar.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "segment.ms", Value: kmsg.StringPtr("100000")})
	ia.Resources = append(ia.Resources, iar)
	out = append(out, ia)

	// KIP-848: a v0 join (the broker names the member), a v1 join by
	// regex, a heartbeat, a leave, and ConsumerGroupDescribe.
	for _, v := range []int16{0, 1} {
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Version, hb.Group, hb.RebalanceTimeoutMillis = v, "fuzz-848", 30000
		hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if v == 0 {
			hb.SubscribedTopicNames = []string{"fuzz"}
		} else {
			hb.MemberID, hb.SubscribedTopicRegex = "m1", kmsg.StringPtr("fu.*")
		}
		out = append(out, hb)
	}
	for _, epoch := range []int32{1, -1} {
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch = 1, "fuzz-848", "m1", epoch
		out = append(out, hb)
	}
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Version, cgd.Groups, cgd.IncludeAuthorizedOperations = 1, []string{"fuzz-848", "none"}, true
	out = append(out, cgd)

	var frames [][]byte
	for i, req := range out {
		frames = append(frames, frameRequest(req, int32(i+1))[4:])
	}
	return frames
}

// tooExpensive reports whether frame is a request the fuzzer skips because
// it is slow by design rather than wrong: a Fetch that long-polls (waiting
// goroutines would pile up) or a request creating many partitions (each one
// is a directory and open files).
func tooExpensive(frame []byte) bool {
	rd := kbin.Reader{Src: frame}
	key, version := rd.Int16(), rd.Int16()
	rd.Int32()
	rd.NullableString()
	if rd.Complete() != nil || (key != 1 && key != 19 && key != 37) {
		return false
	}
	req := kmsg.RequestForKey(key)
	if req == nil {
		return false
	}
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&rd)
	}
	if req.ReadFrom(rd.Src) != nil {
		return false
	}
	const maxParts = 16
	switch req := req.(type) {
	case *kmsg.FetchRequest:
		return req.MaxWaitMillis > 20
	case *kmsg.CreateTopicsRequest:
		for _, t := range req.Topics {
			if t.NumPartitions > maxParts || len(t.ReplicaAssignment) > maxParts {
				return true
			}
		}
	case *kmsg.CreatePartitionsRequest:
		for _, t := range req.Topics {
			if t.Count > maxParts {
				return true
			}
		}
	}
	return false
}

// exercise runs one frame through handleFrame and, like writeLoop, encodes
// the reply; it fails on a recovered handler panic.
func exercise(t *testing.T, c *conn, watch *panicWatch, frame []byte) error {
	before := watch.panics.Load()
	r, err := c.handleFrame(frame)
	if watch.panics.Load() != before {
		t.Fatalf("handler panicked on frame %x: %v", frame, watch.last.Load())
	}
	if err != nil {
		if r != nil {
			t.Fatalf("error %v with a reply", err)
		}
		return err
	}
	if r == nil {
		t.Fatal("no reply and no error")
	}
	if r.ready != nil {
		select {
		case <-r.ready:
		case <-time.After(10 * time.Second):
			t.Fatalf("reply to frame %x not ready after 10s", frame)
		}
	}
	switch {
	case r.fetch != nil:
		r.fetch.encode(r.corr)
		r.fetch.release()
	case r.resp != nil:
		appendResponse(nil, r.corr, r.flexible && r.key != apiVersionsKey, r.resp)
	case r.none || r.fail != nil:
	default:
		t.Fatalf("reply to frame %x has nothing to send", frame)
	}
	return nil
}

func fuzzBroker(t testing.TB) (*Broker, *panicWatch) {
	watch := &panicWatch{}
	b := startBroker(t, "", func(cfg *Config) {
		cfg.Logger = slog.New(watch)
		cfg.AutoCreateTopics = false
	})
	createTopic(t, b, "fuzz", 2, nil)
	return b, watch
}

// FuzzHandleFrame feeds arbitrary request frames to the frame parser and
// dispatch: nothing panics (not even a panic the handler wrapper recovers
// from), and every frame gets either a reply or an error (which closes the
// connection).
func FuzzHandleFrame(f *testing.F) {
	for _, fr := range seedFrames() {
		f.Add(fr)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 18, 0, 99, 0, 0, 0, 1, 0xff, 0xff})
	b, watch := fuzzBroker(f)
	c := testConn(b)
	f.Fuzz(func(t *testing.T, frame []byte) {
		if tooExpensive(frame) {
			return
		}
		exercise(t, c, watch, frame)
	})
}

func TestHandleFrameSeedsAreAnswered(t *testing.T) {
	b, watch := fuzzBroker(t)
	c := testConn(b)
	for i, fr := range seedFrames() {
		if err := exercise(t, c, watch, fr); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

func TestHandleFrameRejectsMalformed(t *testing.T) {
	b, watch := fuzzBroker(t)
	c := testConn(b)
	header := func(key, version int16) []byte {
		return kbin.AppendString(kbin.AppendInt32(kbin.AppendInt16(kbin.AppendInt16(nil, key), version), 1), "cl")
	}
	cases := map[string][]byte{
		"empty":                           {},
		"three bytes":                     {0, 3, 0},
		"no correlation id":               {0, 3, 0, 9},
		"client id longer than frame":     {0, 3, 0, 9, 0, 0, 0, 1, 0, 100, 'a'},
		"unknown api key":                 header(9999, 0),
		"unsupported api key (JoinGroup)": header(11, 0),
		"negative api key":                header(-1, 0),
		"unsupported version":             header(3, 99),
		"fetch below v4":                  header(1, 3),
		"flexible header without tags":    header(3, 12),
		"metadata v9 truncated body":      append(header(3, 9), 0),
	}
	for i, fr := range seedFrames() {
		// Any seed cut before its last byte is malformed.
		cases["seed "+string(rune('A'+i))+" minus one byte"] = fr[:len(fr)-1]
		cases["seed "+string(rune('A'+i))+" header only"] = fr[:min(len(fr), 10)]
	}
	for name, fr := range cases {
		t.Run(name, func(t *testing.T) {
			if err := exercise(t, c, watch, fr); err == nil {
				t.Fatalf("frame %x accepted", fr)
			}
		})
	}
}
