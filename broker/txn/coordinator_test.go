package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives a coordinator the way the broker does, without I/O: it
// keeps the state log in memory and writes markers when asked.
type harness struct {
	t       testing.TB
	c       *Coordinator
	now     time.Time
	nextPID int64
	log     []Record  // the transaction state log
	markers []Markers // marker jobs handed out
	replies map[any]kmsg.Response
}

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, now: time.Unix(1_700_000_000, 0), nextPID: 1000, replies: map[any]kmsg.Response{}}
	cfg := DefaultConfig()
	cfg.NewProducerID = func() (int64, error) { h.nextPID++; return h.nextPID, nil }
	cfg.PartitionExists = func(topic string, _ int32) bool { return topic != "missing" }
	h.c = New(cfg)
	return h
}

// step takes the coordinator's Ready after an input.
func (h *harness) step() {
	rd := h.c.Ready()
	h.log = append(h.log, rd.Records...)
	h.markers = append(h.markers, rd.Markers...)
	for _, r := range rd.Replies {
		h.replies[r.To] = r.Resp
	}
}

// writeMarkers completes every pending marker job.
func (h *harness) writeMarkers() {
	jobs := h.markers
	h.markers = nil
	for _, m := range jobs {
		h.c.MarkersWritten(h.now, m)
		h.step()
	}
}

func (h *harness) init(id string, version int16, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = version, &id, 60000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	to := new(int)
	h.c.InitProducerID(h.now, to, req)
	h.step()
	return h.replies[to].(*kmsg.InitProducerIDResponse)
}

func (h *harness) add(id string, pid int64, epoch int16, tps ...TopicPartition) []int16 {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
	for _, tp := range tps {
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = tp.Topic, []int32{tp.Partition}
		req.Topics = append(req.Topics, rt)
	}
	to := new(int)
	h.c.AddPartitions(h.now, to, req)
	h.step()
	var codes []int16
	for _, st := range h.replies[to].(*kmsg.AddPartitionsToTxnResponse).Topics {
		for _, sp := range st.Partitions {
			codes = append(codes, sp.ErrorCode)
		}
	}
	return codes
}

// end sends EndTxn; the reply is nil until the markers are written.
func (h *harness) end(id string, version int16, pid int64, epoch int16, commit bool) (to any) {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, id, pid, epoch, commit
	to = new(int)
	h.c.EndTxn(h.now, to, req)
	h.step()
	return to
}

func (h *harness) endReply(to any) *kmsg.EndTxnResponse {
	h.t.Helper()
	r, ok := h.replies[to]
	if !ok {
		h.t.Fatal("EndTxn not answered")
	}
	return r.(*kmsg.EndTxnResponse)
}

func (h *harness) state(id string) State {
	s, _, _ := h.c.TransactionState(id)
	return s
}

var tp0 = TopicPartition{"t", 0}

func TestCommitWritesMarkersAfterPrepare(t *testing.T) {
	h := newHarness(t)
	r := h.init("a", 4, -1, -1)
	if r.ErrorCode != 0 || r.ProducerEpoch != 0 {
		t.Fatalf("init: %+v", r)
	}
	pid := r.ProducerID
	if codes := h.add("a", pid, 0, tp0, TopicPartition{"t", 1}); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("add: %v", codes)
	}
	if h.state("a") != Ongoing {
		t.Fatalf("state %v", h.state("a"))
	}
	logBefore := len(h.log)
	to := h.end("a", 4, pid, 0, true)
	if _, answered := h.replies[to]; answered {
		t.Fatal("EndTxn answered before its markers were written")
	}
	if len(h.log) != logBefore+1 || h.state("a") != PrepareCommit {
		t.Fatalf("prepare not persisted: %d records, state %v", len(h.log)-logBefore, h.state("a"))
	}
	if len(h.markers) != 1 || !h.markers[0].Commit || len(h.markers[0].Partitions) != 2 || h.markers[0].ProducerEpoch != 0 {
		t.Fatalf("marker jobs %+v", h.markers)
	}
	// While the markers are written, the transaction cannot move.
	if codes := h.add("a", pid, 0, tp0); codes[0] != kerr.ConcurrentTransactions.Code {
		t.Fatalf("add during PrepareCommit: %v", codes)
	}
	h.writeMarkers()
	if h.state("a") != CompleteCommit || h.endReply(to).ErrorCode != 0 {
		t.Fatalf("after markers: %v %+v", h.state("a"), h.endReply(to))
	}
	// A retry of the same EndTxn (v4) succeeds without new markers; the
	// opposite outcome is refused.
	if r := h.endReply(h.end("a", 4, pid, 0, true)); r.ErrorCode != 0 || len(h.markers) != 0 {
		t.Fatalf("retried commit: %+v, markers %v", r, h.markers)
	}
	if r := h.endReply(h.end("a", 4, pid, 0, false)); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("abort after commit: %+v", r)
	}
}

func TestFencingAndErrors(t *testing.T) {
	h := newHarness(t)
	pid := h.init("a", 4, -1, -1).ProducerID
	cases := []struct {
		name  string
		codes []int16
		want  int16
	}{
		{"unknown id", h.add("nope", pid, 0, tp0), kerr.InvalidProducerIDMapping.Code},
		{"wrong producer id", h.add("a", pid+1, 0, tp0), kerr.InvalidProducerIDMapping.Code},
		{"future epoch", h.add("a", pid, 3, tp0), kerr.ProducerFenced.Code},
	}
	for _, c := range cases {
		if c.codes[0] != c.want {
			t.Errorf("%s: %v, want %d", c.name, c.codes, c.want)
		}
	}
	if codes := h.add("a", pid, 0, tp0, TopicPartition{"missing", 0}); codes[0] != kerr.OperationNotAttempted.Code || codes[1] != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown partition: %v", codes)
	}
	if r := h.endReply(h.end("a", 4, pid, 0, true)); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Errorf("commit with no transaction: %+v", r)
	}
	h.add("a", pid, 0, tp0)
	// A second producer with the same id: the open transaction is aborted
	// with a bumped epoch (fencing) and the caller retries.
	if r := h.init("a", 4, -1, -1); r.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Fatalf("init with an open transaction: %+v", r)
	}
	if len(h.markers) != 1 || h.markers[0].Commit || h.markers[0].ProducerEpoch != 1 {
		t.Fatalf("fencing abort: %+v", h.markers)
	}
	h.writeMarkers()
	r := h.init("a", 4, -1, -1)
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 2 {
		t.Fatalf("init after the fence: %+v", r)
	}
	// The zombie (epoch 0) is fenced everywhere.
	if codes := h.add("a", pid, 0, tp0); codes[0] != kerr.ProducerFenced.Code {
		t.Errorf("zombie add: %v", codes)
	}
	if r := h.endReply(h.end("a", 1, pid, 0, true)); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Errorf("zombie EndTxn v1: %+v (want INVALID_PRODUCER_EPOCH before v2)", r)
	}
	if code, _ := h.c.AddImplicit(h.now, "a", pid, 0, tp0, false, 11); code != kerr.InvalidProducerEpoch.Code {
		t.Errorf("zombie produce: %d", code)
	}
}

func TestKIP360Bump(t *testing.T) {
	h := newHarness(t)
	r := h.init("a", 4, -1, -1)
	pid := r.ProducerID
	r = h.init("a", 4, pid, 0)
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 1 {
		t.Fatalf("bump: %+v", r)
	}
	// The same request retried (its answer lost) gets the same epoch.
	if r2 := h.init("a", 4, pid, 0); r2.ErrorCode != 0 || r2.ProducerEpoch != 1 {
		t.Fatalf("retried bump: %+v", r2)
	}
	if r3 := h.init("a", 4, pid, 7); r3.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("bump with a stale epoch: %+v", r3)
	}
}

func TestTV2EpochBumpsAndRetries(t *testing.T) {
	h := newHarness(t)
	pid := h.init("a", 5, -1, -1).ProducerID
	code, added := h.c.AddImplicit(h.now, "a", pid, 0, tp0, true, 12)
	h.step()
	if code != 0 || !added || h.state("a") != Ongoing || len(h.log) != 2 {
		t.Fatalf("implicit add: %d %v %v %d", code, added, h.state("a"), len(h.log))
	}
	to := h.end("a", 5, pid, 0, true)
	if h.markers[0].ProducerEpoch != 1 {
		t.Fatalf("TV2 markers carry epoch %d, want the bumped 1", h.markers[0].ProducerEpoch)
	}
	h.writeMarkers()
	if r := h.endReply(to); r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 1 {
		t.Fatalf("EndTxn v5: %+v", r)
	}
	// A retry with the old epoch succeeds and reports the new one.
	if r := h.endReply(h.end("a", 5, pid, 0, true)); r.ErrorCode != 0 || r.ProducerEpoch != 1 {
		t.Fatalf("retried EndTxn v5: %+v", r)
	}
	// An abort with nothing open still bumps.
	if r := h.endReply(h.end("a", 5, pid, 1, false)); r.ErrorCode != 0 || r.ProducerEpoch != 2 {
		t.Fatalf("empty abort: %+v", r)
	}
	// Epoch exhaustion moves to a new producer id.
	tx := h.c.txns["a"]
	tx.epoch = 32766
	h.c.AddImplicit(h.now, "a", pid, 32766, tp0, true, 12)
	h.step()
	to = h.end("a", 5, pid, 32766, false)
	h.writeMarkers()
	if r := h.endReply(to); r.ErrorCode != 0 || r.ProducerID == pid || r.ProducerEpoch != 0 {
		t.Fatalf("exhausted epoch: %+v", r)
	}
}

func TestTimeoutAbortsAndFences(t *testing.T) {
	h := newHarness(t)
	pid := h.init("a", 4, -1, -1).ProducerID
	h.add("a", pid, 0, tp0)
	h.now = h.now.Add(59 * time.Second)
	h.c.Tick(h.now)
	h.step()
	if len(h.markers) != 0 {
		t.Fatal("aborted before its timeout")
	}
	h.now = h.now.Add(2 * time.Second)
	h.c.Tick(h.now)
	h.step()
	if len(h.markers) != 1 || h.markers[0].Commit || h.markers[0].ProducerEpoch != 1 {
		t.Fatalf("timeout abort: %+v", h.markers)
	}
	h.writeMarkers()
	if h.state("a") != CompleteAbort {
		t.Fatalf("state %v", h.state("a"))
	}
	if r := h.endReply(h.end("a", 4, pid, 0, true)); r.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("commit after the timeout: %+v", r)
	}
	// Idle ids expire.
	h.now = h.now.Add(8 * 24 * time.Hour)
	h.c.Tick(h.now)
	h.step()
	if h.state("a") != Dead || h.log[len(h.log)-1].Value != nil {
		t.Fatalf("not expired: %v", h.state("a"))
	}
}

func TestReplayRecoversPreparedTransactions(t *testing.T) {
	h := newHarness(t)
	pid := h.init("a", 4, -1, -1).ProducerID
	h.add("a", pid, 0, tp0)
	h.end("a", 4, pid, 0, true) // PrepareCommit persisted, markers not written: a crash
	pidB := h.init("b", 4, -1, -1).ProducerID
	h.add("b", pidB, 0, TopicPartition{"t", 1})

	c2 := New(DefaultConfig())
	for _, r := range h.log {
		if err := c2.Replay(r.Key, r.Value); err != nil {
			t.Fatal(err)
		}
	}
	c2.Recover()
	rd := c2.Ready()
	if len(rd.Markers) != 1 || rd.Markers[0].TransactionalID != "a" || !rd.Markers[0].Commit || rd.Markers[0].Partitions[0] != tp0 {
		t.Fatalf("recovered markers %+v", rd.Markers)
	}
	if s, p, _ := c2.TransactionState("b"); s != Ongoing || p != pidB {
		t.Fatalf("b after replay: %v %d", s, p)
	}
	c2.MarkersWritten(h.now, rd.Markers[0])
	if s, _, _ := c2.TransactionState("a"); s != CompleteCommit {
		t.Fatalf("a after markers: %v", s)
	}
}

func TestListAndDescribe(t *testing.T) {
	h := newHarness(t)
	pid := h.init("a", 4, -1, -1).ProducerID
	h.init("b", 4, -1, -1)
	h.add("a", pid, 0, tp0)
	lreq := kmsg.NewPtrListTransactionsRequest()
	lreq.Version = 2
	lreq.StateFilters = []string{"Ongoing", "Nope"}
	to := new(int)
	h.c.List(h.now, to, lreq)
	h.step()
	lr := h.replies[to].(*kmsg.ListTransactionsResponse)
	if len(lr.TransactionStates) != 1 || lr.TransactionStates[0].TransactionalID != "a" || len(lr.UnknownStateFilters) != 1 {
		t.Fatalf("list: %+v", lr)
	}
	lreq.StateFilters = nil
	lreq.TransactionalIDPattern = kmsg.StringPtr("b.*")
	h.c.List(h.now, to, lreq)
	h.step()
	if lr := h.replies[to].(*kmsg.ListTransactionsResponse); len(lr.TransactionStates) != 1 || lr.TransactionStates[0].TransactionalID != "b" {
		t.Fatalf("list by pattern: %+v", lr)
	}
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"a"}
	h.c.Describe(to, dreq)
	h.step()
	st := h.replies[to].(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
	if st.State != "Ongoing" || st.StartTimestamp != h.now.UnixMilli() || len(st.Topics) != 1 || st.TimeoutMillis != 60000 {
		t.Fatalf("describe: %+v", st)
	}
}

// FuzzReplay feeds arbitrary transaction state records to Replay: it never
// panics, and a coordinator that replayed them still answers requests.
func FuzzReplay(f *testing.F) {
	h := newHarness(f)
	pid := h.init("a", 4, -1, -1).ProducerID
	h.add("a", pid, 0, tp0)
	for _, r := range h.log {
		f.Add(r.Key, r.Value)
	}
	f.Add(stateKey("x"), []byte{0, 1, 2})
	f.Add([]byte{0}, []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c := New(DefaultConfig())
		c.Replay(key, value)
		c.Recover()
		c.Ready()
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = c.Transactions()
		c.Describe(nil, req)
		c.Tick(time.Unix(1e9, 0))
	})
}
