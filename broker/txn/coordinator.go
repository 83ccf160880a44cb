package txn

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// State is a transaction's state, with Kafka's codes.
type State int8

// The states of a transaction.
const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
	PrepareEpochFence
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Config holds the coordinator's settings and the few facts it needs from
// the broker.
type Config struct {
	// MaxTimeout is the largest transaction timeout a producer may ask for
	// (transaction.max.timeout.ms, default 15 min).
	MaxTimeout time.Duration
	// IDExpiration removes a transactional id without a transaction for
	// this long (transactional.id.expiration.ms, default 7 days).
	IDExpiration time.Duration
	// NewProducerID hands out a producer id never used before.
	NewProducerID func() (int64, error)
	// PartitionExists reports whether a partition exists; nil accepts all.
	PartitionExists func(topic string, partition int32) bool
	// OffsetsPartition is the __consumer_offsets partition of a group,
	// added to a transaction by AddOffsetsToTxn.
	OffsetsPartition func(group string) TopicPartition
}

// DefaultConfig returns Kafka's defaults; NewProducerID and
// OffsetsPartition must still be set.
func DefaultConfig() Config {
	return Config{MaxTimeout: 15 * time.Minute, IDExpiration: 7 * 24 * time.Hour}
}

// Reply is the response to one request, for the caller identified by To.
type Reply struct {
	To   any
	Resp kmsg.Response
	// Durable replies may be sent only once the records of the same Ready
	// (and every earlier one) are on disk.
	Durable bool
}

// Record is one record for the transaction state log; a nil Value deletes.
type Record struct {
	Key, Value []byte
}

// Markers is a marker job: write a commit or abort control batch with this
// producer id and epoch to each partition, then call MarkersWritten.
type Markers struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
	Partitions      []TopicPartition
}

// Ready is the work the caller must do after an input.
type Ready struct {
	Records []Record
	Markers []Markers
	Replies []Reply
}

type txn struct {
	id        string
	pid       int64
	epoch     int16
	lastPID   int64 // the producer id and epoch before the last bump, for retries
	lastEpoch int16
	timeout   time.Duration
	state     State
	parts     map[TopicPartition]bool
	start     time.Time // when the ongoing transaction began
	updated   time.Time
	tv2       bool // the producer uses transaction version 2 (EndTxn v5+)
	endTo     any  // the EndTxn waiting for its markers
	endVer    int16
}

// Coordinator holds every transactional id of this broker.
type Coordinator struct {
	cfg   Config
	txns  map[string]*txn
	ready Ready
}

// New returns an empty coordinator.
func New(cfg Config) *Coordinator {
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 15 * time.Minute
	}
	if cfg.IDExpiration <= 0 {
		cfg.IDExpiration = 7 * 24 * time.Hour
	}
	if cfg.OffsetsPartition == nil {
		cfg.OffsetsPartition = func(string) TopicPartition { return TopicPartition{"__consumer_offsets", 0} }
	}
	return &Coordinator{cfg: cfg, txns: map[string]*txn{}}
}

// Ready returns and clears the pending work.
func (c *Coordinator) Ready() Ready {
	rd := c.ready
	c.ready = Ready{}
	return rd
}

func (c *Coordinator) reply(to any, resp kmsg.Response, durable bool) {
	c.ready.Replies = append(c.ready.Replies, Reply{To: to, Resp: resp, Durable: durable})
}

// fenced is the error for a stale epoch: PRODUCER_FENCED from the request
// version that introduced it (KIP-588), INVALID_PRODUCER_EPOCH before.
func fenced(version, since int16) int16 {
	if version >= since {
		return kerr.ProducerFenced.Code
	}
	return kerr.InvalidProducerEpoch.Code
}

// check validates a request's producer id and epoch against t. It returns
// 0 or the error code; retry reports a TV2 request from the epoch before the
// last bump.
func (t *txn) check(pid int64, epoch int16, version, fencedSince int16) (code int16, retry bool) {
	switch {
	case t == nil:
		return kerr.InvalidProducerIDMapping.Code, false
	case pid == t.pid && epoch == t.epoch:
		return 0, false
	case pid == t.lastPID && epoch == t.lastEpoch && t.lastEpoch >= 0:
		return 0, true
	case pid != t.pid:
		return kerr.InvalidProducerIDMapping.Code, false
	}
	return fenced(version, fencedSince), false
}

// bump moves t to its next epoch, or a new producer id when the epoch is
// exhausted.
func (c *Coordinator) bump(t *txn) error {
	t.lastPID, t.lastEpoch = t.pid, t.epoch
	if t.epoch >= math.MaxInt16-1 {
		pid, err := c.cfg.NewProducerID()
		if err != nil {
			return err
		}
		t.pid, t.epoch = pid, 0
		return nil
	}
	t.epoch++
	return nil
}

// persist queues t's current state as a record.
func (c *Coordinator) persist(t *txn, now time.Time) {
	t.updated = now
	c.ready.Records = append(c.ready.Records, Record{Key: stateKey(t.id), Value: stateValue(t)})
}

// ------------------------------------------------------------ InitProducerId

// InitProducerID handles an InitProducerId request with a transactional id.
func (c *Coordinator) InitProducerID(now time.Time, to any, req *kmsg.InitProducerIDRequest) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	fail := func(code int16) { resp.ErrorCode = code; c.reply(to, resp, false) }
	id := *req.TransactionalID
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	switch {
	case id == "":
		fail(kerr.InvalidRequest.Code)
		return
	case req.TransactionTimeoutMillis <= 0 || timeout > c.cfg.MaxTimeout:
		fail(kerr.InvalidTransactionTimeout.Code)
		return
	}
	t := c.txns[id]
	if t == nil {
		pid, err := c.cfg.NewProducerID()
		if err != nil {
			fail(kerr.CoordinatorNotAvailable.Code)
			return
		}
		t = &txn{id: id, pid: pid, epoch: 0, lastPID: -1, lastEpoch: -1, timeout: timeout, state: Empty, parts: map[TopicPartition]bool{}}
		c.txns[id] = t
		c.persist(t, now)
		resp.ProducerID, resp.ProducerEpoch = t.pid, t.epoch
		c.reply(to, resp, true)
		return
	}
	if req.ProducerID >= 0 && req.Version >= 3 {
		code, retry := t.check(req.ProducerID, req.ProducerEpoch, req.Version, 4)
		if code != 0 {
			fail(code)
			return
		}
		if retry && (t.state == Empty || t.state == CompleteCommit || t.state == CompleteAbort) {
			// A retried bump: hand out the epoch it already produced.
			resp.ProducerID, resp.ProducerEpoch = t.pid, t.epoch
			c.reply(to, resp, false)
			return
		}
	}
	switch t.state {
	case PrepareCommit, PrepareAbort, PrepareEpochFence:
		fail(kerr.ConcurrentTransactions.Code)
		return
	case Ongoing:
		// Fence the current producer and abort its transaction; the
		// client retries and then gets the next epoch.
		if err := c.bump(t); err != nil {
			fail(kerr.CoordinatorNotAvailable.Code)
			return
		}
		t.lastEpoch = -1 // a fenced producer may not retry with its old epoch
		c.prepare(t, now, false)
		fail(kerr.ConcurrentTransactions.Code)
		return
	}
	if err := c.bump(t); err != nil {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	t.timeout, t.state, t.tv2 = timeout, Empty, false
	t.parts = map[TopicPartition]bool{}
	c.persist(t, now)
	resp.ProducerID, resp.ProducerEpoch = t.pid, t.epoch
	c.reply(to, resp, true)
}

// prepare moves t to PrepareCommit or PrepareAbort and queues the marker
// job. The record must be durable before any marker is written.
func (c *Coordinator) prepare(t *txn, now time.Time, commit bool) {
	t.state = PrepareAbort
	if commit {
		t.state = PrepareCommit
	}
	c.persist(t, now)
	m := Markers{TransactionalID: t.id, ProducerID: t.pid, ProducerEpoch: t.epoch, Commit: commit}
	for tp := range t.parts {
		m.Partitions = append(m.Partitions, tp)
	}
	sortPartitions(m.Partitions)
	c.ready.Markers = append(c.ready.Markers, m)
}

func sortPartitions(ps []TopicPartition) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
}

// ------------------------------------------------------------ AddPartitionsToTxn

// AddPartitions handles an AddPartitionsToTxn request: v0-3 for one
// transaction (clients), v4+ for several, possibly verify-only.
func (c *Coordinator) AddPartitions(now time.Time, to any, req *kmsg.AddPartitionsToTxnRequest) {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	wrote := false
	if req.Version <= 3 {
		var tps []TopicPartition
		for _, rt := range req.Topics {
			for _, p := range rt.Partitions {
				tps = append(tps, TopicPartition{rt.Topic, p})
			}
		}
		codes, w := c.addPartitions(now, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps, false, req.Version)
		wrote = w
		for _, rt := range req.Topics {
			st := kmsg.NewAddPartitionsToTxnResponseTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[TopicPartition{rt.Topic, p}]
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		c.reply(to, resp, wrote)
		return
	}
	for _, rx := range req.Transactions {
		var tps []TopicPartition
		for _, rt := range rx.Topics {
			for _, p := range rt.Partitions {
				tps = append(tps, TopicPartition{rt.Topic, p})
			}
		}
		codes, w := c.addPartitions(now, rx.TransactionalID, rx.ProducerID, rx.ProducerEpoch, tps, rx.VerifyOnly, req.Version)
		wrote = wrote || w
		sx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		sx.TransactionalID = rx.TransactionalID
		for _, rt := range rx.Topics {
			st := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[TopicPartition{rt.Topic, p}]
				st.Partitions = append(st.Partitions, sp)
			}
			sx.Topics = append(sx.Topics, st)
		}
		resp.Transactions = append(resp.Transactions, sx)
	}
	c.reply(to, resp, wrote)
}

// addPartitions adds tps to a transaction (or, verifyOnly, checks that they
// are in it) and returns a code per partition.
func (c *Coordinator) addPartitions(now time.Time, id string, pid int64, epoch int16, tps []TopicPartition, verifyOnly bool, version int16) (map[TopicPartition]int16, bool) {
	codes := make(map[TopicPartition]int16, len(tps))
	all := func(code int16) (map[TopicPartition]int16, bool) {
		for _, tp := range tps {
			codes[tp] = code
		}
		return codes, false
	}
	// Like Kafka, unknown partitions are answered before the producer is
	// looked at.
	unknown := false
	for _, tp := range tps {
		if c.cfg.PartitionExists != nil && !c.cfg.PartitionExists(tp.Topic, tp.Partition) {
			codes[tp] = kerr.UnknownTopicOrPartition.Code
			unknown = true
		}
	}
	if unknown {
		for _, tp := range tps {
			if codes[tp] == 0 {
				codes[tp] = kerr.OperationNotAttempted.Code
			}
		}
		return codes, false
	}
	t := c.txns[id]
	if code, retry := t.check(pid, epoch, version, 2); code != 0 || retry {
		if retry {
			code = fenced(version, 2)
		}
		return all(code)
	}
	if verifyOnly {
		for _, tp := range tps {
			if t.state == Ongoing && t.parts[tp] {
				codes[tp] = 0
			} else {
				codes[tp] = kerr.InvalidTxnState.Code
			}
		}
		return codes, false
	}
	switch t.state {
	case PrepareCommit, PrepareAbort, PrepareEpochFence:
		return all(kerr.ConcurrentTransactions.Code)
	}
	return codes, c.add(t, now, tps)
}

// add puts tps into t's transaction, starting it if needed; it reports
// whether a record was queued.
func (c *Coordinator) add(t *txn, now time.Time, tps []TopicPartition) bool {
	changed := false
	if t.state != Ongoing {
		t.state, t.start, t.parts = Ongoing, now, map[TopicPartition]bool{}
		changed = true
	}
	for _, tp := range tps {
		if !t.parts[tp] {
			t.parts[tp] = true
			changed = true
		}
	}
	if changed {
		c.persist(t, now)
	}
	return changed
}

// ------------------------------------------------------------ AddOffsetsToTxn

// AddOffsets handles an AddOffsetsToTxn request: the group's offsets
// partition joins the transaction.
func (c *Coordinator) AddOffsets(now time.Time, to any, req *kmsg.AddOffsetsToTxnRequest) {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	t := c.txns[req.TransactionalID]
	code, retry := t.check(req.ProducerID, req.ProducerEpoch, req.Version, 2)
	if retry {
		code = fenced(req.Version, 2)
	}
	if code == 0 {
		switch t.state {
		case PrepareCommit, PrepareAbort, PrepareEpochFence:
			code = kerr.ConcurrentTransactions.Code
		}
	}
	if code != 0 {
		resp.ErrorCode = code
		c.reply(to, resp, false)
		return
	}
	wrote := c.add(t, now, []TopicPartition{c.cfg.OffsetsPartition(req.Group)})
	c.reply(to, resp, wrote)
}

// ------------------------------------------------------------ implicit adds and checks

// AddImplicit is the broker's check of a transactional Produce batch or
// TxnOffsetCommit: the producer id and epoch must be the transaction's
// current ones and the partition part of its ongoing transaction. With
// implicit (Produce v12+, TxnOffsetCommit v5+: transaction version 2) a
// missing partition is added; then added reports that a record was
// queued, which must be durable before the caller writes anything
// (take Ready and make its records durable first).
func (c *Coordinator) AddImplicit(now time.Time, id string, pid int64, epoch int16, tp TopicPartition, implicit bool, version int16) (code int16, added bool) {
	t := c.txns[id]
	if t == nil {
		return kerr.InvalidProducerIDMapping.Code, false
	}
	if pid != t.pid {
		return kerr.InvalidProducerIDMapping.Code, false
	}
	if epoch != t.epoch {
		if epoch < t.epoch {
			return kerr.InvalidProducerEpoch.Code, false
		}
		return kerr.InvalidProducerEpoch.Code, false
	}
	if t.state == Ongoing && t.parts[tp] {
		return 0, false
	}
	if !implicit {
		return kerr.InvalidTxnState.Code, false
	}
	switch t.state {
	case PrepareCommit, PrepareAbort, PrepareEpochFence:
		return kerr.ConcurrentTransactions.Code, false
	}
	t.tv2 = true
	return 0, c.add(t, now, []TopicPartition{tp})
}

// OffsetsPartitionOf returns the offsets partition of a group.
func (c *Coordinator) OffsetsPartitionOf(group string) TopicPartition {
	return c.cfg.OffsetsPartition(group)
}

// ------------------------------------------------------------ EndTxn

// EndTxn handles an EndTxn request. The reply comes out of MarkersWritten
// once the markers are durable; an EndTxn that needs no markers (a retry of a
// completed transaction) is answered at once.
func (c *Coordinator) EndTxn(now time.Time, to any, req *kmsg.EndTxnRequest) {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	fail := func(code int16) { resp.ErrorCode = code; c.reply(to, resp, false) }
	t := c.txns[req.TransactionalID]
	tv2 := req.Version >= 5
	code, retry := t.check(req.ProducerID, req.ProducerEpoch, req.Version, 2)
	if code != 0 {
		fail(code)
		return
	}
	done := CompleteAbort
	if req.Commit {
		done = CompleteCommit
	}
	if retry {
		// A TV2 EndTxn retried after the epoch bump it caused.
		if tv2 && t.state == done {
			resp.ProducerID, resp.ProducerEpoch = t.pid, t.epoch
			c.reply(to, resp, false)
			return
		}
		fail(fenced(req.Version, 2))
		return
	}
	switch t.state {
	case Ongoing:
		if tv2 {
			t.tv2 = true
			if err := c.bump(t); err != nil {
				fail(kerr.CoordinatorNotAvailable.Code)
				return
			}
		}
		t.endTo, t.endVer = to, req.Version
		c.prepare(t, now, req.Commit)
	case PrepareCommit, PrepareAbort:
		if (t.state == PrepareCommit) == req.Commit {
			fail(kerr.ConcurrentTransactions.Code)
		} else {
			fail(kerr.InvalidTxnState.Code)
		}
	case PrepareEpochFence:
		fail(kerr.ConcurrentTransactions.Code)
	case CompleteCommit, CompleteAbort, Empty:
		switch {
		case tv2 && !req.Commit:
			// KIP-890: an abort with nothing to abort still bumps the
			// epoch, so a producer can always abort.
			if err := c.bump(t); err != nil {
				fail(kerr.CoordinatorNotAvailable.Code)
				return
			}
			t.tv2, t.state, t.parts = true, CompleteAbort, map[TopicPartition]bool{}
			c.persist(t, now)
			resp.ProducerID, resp.ProducerEpoch = t.pid, t.epoch
			c.reply(to, resp, true)
		case !tv2 && t.state == done:
			c.reply(to, resp, false) // a retry of the EndTxn that completed it
		default:
			fail(kerr.InvalidTxnState.Code)
		}
	default:
		fail(kerr.InvalidTxnState.Code)
	}
}

// MarkersWritten completes a prepared transaction once its markers are
// durable: the state becomes CompleteCommit or CompleteAbort and a waiting
// EndTxn is answered.
func (c *Coordinator) MarkersWritten(now time.Time, m Markers) {
	t := c.txns[m.TransactionalID]
	if t == nil || t.pid != m.ProducerID || t.epoch != m.ProducerEpoch {
		return
	}
	switch {
	case t.state == PrepareCommit && m.Commit:
		t.state = CompleteCommit
	case t.state == PrepareAbort && !m.Commit:
		t.state = CompleteAbort
	default:
		return
	}
	t.parts = map[TopicPartition]bool{}
	c.persist(t, now)
	if t.endTo != nil {
		resp := kmsg.NewPtrEndTxnResponse()
		resp.Version = t.endVer
		resp.ProducerID, resp.ProducerEpoch = t.pid, t.epoch
		c.reply(t.endTo, resp, false)
		t.endTo = nil
	}
}

// FailEnd answers a waiting EndTxn with a retriable error when its markers
// could not be written yet; the markers are retried by the caller.
func (c *Coordinator) FailEnd(m Markers) {
	t := c.txns[m.TransactionalID]
	if t == nil || t.endTo == nil {
		return
	}
	resp := kmsg.NewPtrEndTxnResponse()
	resp.Version = t.endVer
	resp.ErrorCode = kerr.ConcurrentTransactions.Code
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	c.reply(t.endTo, resp, false)
	t.endTo = nil
}

// ------------------------------------------------------------ Tick

// Tick aborts ongoing transactions past their timeout, fencing their
// producer (the epoch is bumped), and removes transactional ids that have
// been idle for longer than IDExpiration.
func (c *Coordinator) Tick(now time.Time) {
	for _, id := range c.sortedIDs() {
		t := c.txns[id]
		switch t.state {
		case Ongoing:
			if now.Sub(t.start) < t.timeout {
				continue
			}
			if err := c.bump(t); err != nil {
				continue // retried at the next tick
			}
			t.lastEpoch = -1
			c.prepare(t, now, false)
		case Empty, CompleteCommit, CompleteAbort:
			if now.Sub(t.updated) > c.cfg.IDExpiration {
				delete(c.txns, id)
				c.ready.Records = append(c.ready.Records, Record{Key: stateKey(id)})
			}
		}
	}
}

func (c *Coordinator) sortedIDs() []string {
	ids := make([]string, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ------------------------------------------------------------ Describe, List

// Describe handles a DescribeTransactions request.
func (c *Coordinator) Describe(to any, req *kmsg.DescribeTransactionsRequest) {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		t := c.txns[id]
		if t == nil {
			st.ErrorCode = kerr.TransactionalIDNotFound.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		st.State = t.state.String()
		st.TimeoutMillis = int32(t.timeout.Milliseconds())
		st.StartTimestamp = -1
		if !t.start.IsZero() {
			st.StartTimestamp = t.start.UnixMilli() // the last transaction's, as Kafka keeps it
		}
		st.ProducerID, st.ProducerEpoch = t.pid, t.epoch
		byTopic := map[string][]int32{}
		for tp := range t.parts {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		topics := make([]string, 0, len(byTopic))
		for tp := range byTopic {
			topics = append(topics, tp)
		}
		sort.Strings(topics)
		for _, name := range topics {
			dt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			dt.Topic = name
			dt.Partitions = byTopic[name]
			sort.Slice(dt.Partitions, func(i, j int) bool { return dt.Partitions[i] < dt.Partitions[j] })
			st.Topics = append(st.Topics, dt)
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	c.reply(to, resp, false)
}

// List handles a ListTransactions request with its state, producer id,
// duration (v1+) and transactional id pattern (v2+) filters.
func (c *Coordinator) List(now time.Time, to any, req *kmsg.ListTransactionsRequest) {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	states := map[string]bool{}
	for _, s := range req.StateFilters {
		known := false
		for _, n := range stateNames {
			known = known || n == s
		}
		if !known {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
			continue
		}
		states[s] = true
	}
	pids := map[int64]bool{}
	for _, p := range req.ProducerIDFilters {
		pids[p] = true
	}
	var match func(string) bool
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := compilePattern(*req.TransactionalIDPattern)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			c.reply(to, resp, false)
			return
		}
		match = re.MatchString
	}
	for _, id := range c.sortedIDs() {
		t := c.txns[id]
		if len(req.StateFilters) > 0 && !states[t.state.String()] {
			continue
		}
		if len(pids) > 0 && !pids[t.pid] {
			continue
		}
		if req.Version >= 1 && req.DurationFilterMillis >= 0 {
			if t.state != Ongoing || now.Sub(t.start).Milliseconds() < req.DurationFilterMillis {
				continue
			}
		}
		if match != nil && !match(id) {
			continue
		}
		ls := kmsg.NewListTransactionsResponseTransactionState()
		ls.TransactionalID, ls.ProducerID, ls.TransactionState = id, t.pid, t.state.String()
		resp.TransactionStates = append(resp.TransactionStates, ls)
	}
	c.reply(to, resp, false)
}

// Transactions returns the ids of every transactional id, sorted.
func (c *Coordinator) Transactions() []string { return c.sortedIDs() }

// TransactionState returns a transaction's state, producer id and epoch
// (Dead, -1, -1 if unknown).
func (c *Coordinator) TransactionState(id string) (State, int64, int16) {
	t := c.txns[id]
	if t == nil {
		return Dead, -1, -1
	}
	return t.state, t.pid, t.epoch
}
