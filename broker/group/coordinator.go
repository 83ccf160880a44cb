package group

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config holds the coordinator's settings; the Kafka broker property each one
// stands for is named in its comment.
type Config struct {
	// InitialRebalanceDelay is how long the first rebalance of an empty group
	// waits for more members (group.initial.rebalance.delay.ms, default 3s).
	InitialRebalanceDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the session timeouts
	// members may ask for (group.min.session.timeout.ms, default 6s;
	// group.max.session.timeout.ms, default 30 min).
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// MaxSize is the most members a group may have (group.max.size; 0 means
	// no limit, Kafka's default).
	MaxSize int
	// MaxMetadataBytes bounds a committed offset's metadata string
	// (offset.metadata.max.bytes, default 4096).
	MaxMetadataBytes int
	// PartitionExists reports whether a topic partition exists; commits to
	// others fail with UNKNOWN_TOPIC_OR_PARTITION. Nil accepts every partition.
	PartitionExists func(topic string, partition int32) bool
	// NewMemberID returns a fresh member id for a client; nil gives Kafka's
	// "clientID-UUID". Tests set it to get deterministic ids.
	NewMemberID func(clientID string) string

	// ConsumerSessionTimeout is how long a consumer-protocol (KIP-848)
	// member may go without heartbeating before it is removed
	// (group.consumer.session.timeout.ms, default 45s).
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is the heartbeat interval given to
	// consumer-protocol members (group.consumer.heartbeat.interval.ms,
	// default 5s).
	ConsumerHeartbeatInterval time.Duration
	// ConsumerAssignors are the server-side assignors members may name, the
	// first the default (group.consumer.assignors, default uniform, range).
	ConsumerAssignors []string
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		InitialRebalanceDelay: 3 * time.Second,
		MinSessionTimeout:     6 * time.Second,
		MaxSessionTimeout:     30 * time.Minute,
		MaxMetadataBytes:      4096,

		ConsumerSessionTimeout:    45 * time.Second,
		ConsumerHeartbeatInterval: 5 * time.Second,
		ConsumerAssignors:         []string{AssignorUniform, AssignorRange},
	}
}

// Reply is the response to one request, for the caller identified by To.
type Reply struct {
	To   any
	Resp kmsg.Response
	// Durable replies may be sent only once the records of the same Ready
	// (and every earlier one) are on disk.
	Durable bool
}

// Record is one record for the group metadata log. A nil Value deletes the key.
type Record struct {
	Key, Value []byte
}

// TxnRecords are offset commit records of a transaction: the caller
// appends them as one transactional batch of the producer, after Records.
// They take effect when the transaction's commit marker reaches the log
// (CompleteTxn).
type TxnRecords struct {
	ProducerID    int64
	ProducerEpoch int16
	Records       []Record
}

// Ready is the work the caller must do after an input.
type Ready struct {
	Records []Record
	Txn     []TxnRecords
	Replies []Reply
}

// Coordinator is the state of every group on this broker.
type Coordinator struct {
	cfg    Config
	groups map[string]*group
	ready  Ready
	now    time.Time
	// txnOffsets are the offsets committed by open transactions, by
	// producer id and group, applied or dropped by CompleteTxn.
	txnOffsets map[int64]map[string]map[string]map[int32]offset
	// topics is the broker's topics, by name and by id, as SetTopics last
	// gave them (consumer-protocol groups assign their partitions).
	topics   map[string]TopicMeta
	topicIDs map[[16]byte]TopicMeta
	regexes  map[string]*regexp.Regexp // compiled subscription regexes
}

// New returns an empty coordinator.
func New(cfg Config) *Coordinator {
	if cfg.NewMemberID == nil {
		cfg.NewMemberID = randomMemberID
	}
	if cfg.MaxMetadataBytes <= 0 {
		cfg.MaxMetadataBytes = 4096
	}
	if cfg.MaxSessionTimeout <= 0 {
		cfg.MaxSessionTimeout = 30 * time.Minute
	}
	if cfg.ConsumerSessionTimeout <= 0 {
		cfg.ConsumerSessionTimeout = 45 * time.Second
	}
	if cfg.ConsumerHeartbeatInterval <= 0 {
		cfg.ConsumerHeartbeatInterval = 5 * time.Second
	}
	if len(cfg.ConsumerAssignors) == 0 {
		cfg.ConsumerAssignors = []string{AssignorUniform, AssignorRange}
	}
	return &Coordinator{cfg: cfg, groups: map[string]*group{}, txnOffsets: map[int64]map[string]map[string]map[int32]offset{},
		topics: map[string]TopicMeta{}, topicIDs: map[[16]byte]TopicMeta{}, regexes: map[string]*regexp.Regexp{}}
}

func randomMemberID(clientID string) string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", clientID, u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
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

// State is a group's state in the classic protocol.
type State int8

// The states of a classic group.
const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	}
	return "Dead"
}

// waiter is a request waiting for its response.
type waiter struct {
	to      any
	version int16
}

type member struct {
	id               string
	instanceID       *string
	protocolType     string
	clientID         string
	clientHost       string
	protocols        []kmsg.JoinGroupRequestProtocol
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	assignment       []byte
	join             *waiter // awaiting the end of the join phase
	sync             *waiter // awaiting the leader's assignment
	deadline         time.Time
}

func (m *member) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

func (m *member) sameProtocols(ps []kmsg.JoinGroupRequestProtocol) bool {
	return slices.EqualFunc(m.protocols, ps, func(a, b kmsg.JoinGroupRequestProtocol) bool {
		return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
	})
}

type group struct {
	id           string
	state        State
	protocolType string
	protocol     string
	generation   int32
	leader       string
	members      map[string]*member
	static       map[string]string    // instance id -> member id
	pending      map[string]time.Time // member ids handed out by MEMBER_ID_REQUIRED -> expiry

	rebalanceDeadline time.Time
	initialPhase      bool // in group.initial.rebalance.delay
	remainingDelay    time.Duration
	newMemberAdded    bool

	offsets map[string]map[int32]offset

	// consumer is set while the group is a consumer-protocol (KIP-848)
	// group; the classic fields above are then unused.
	consumer *cgroup
}

type offset struct {
	offset      int64
	leaderEpoch int32
	metadata    string
	commitTime  int64 // ms
}

func newGroup(id string) *group {
	return &group{
		id:      id,
		members: map[string]*member{},
		static:  map[string]string{},
		pending: map[string]time.Time{},
		offsets: map[string]map[int32]offset{},
	}
}

// getOrNew returns the group, creating and registering it if needed.
func (c *Coordinator) getOrNew(id string) *group {
	g := c.groups[id]
	if g == nil {
		g = newGroup(id)
		c.groups[id] = g
	}
	return g
}

// sortedMembers returns the members ordered by id, for deterministic output.
func (g *group) sortedMembers() []*member {
	ms := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].id < ms[j].id })
	return ms
}

func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// supports reports whether a joiner with this protocol type and protocols
// may join: same type, and at least one protocol every member supports.
func (g *group) supports(protocolType string, ps []kmsg.JoinGroupRequestProtocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(ps) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		all := true
		for _, m := range g.members {
			if !slices.ContainsFunc(m.protocols, func(q kmsg.JoinGroupRequestProtocol) bool { return q.Name == p.Name }) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol every member supports that most members
// prefer (each votes for its first supported candidate), ties broken by the
// leader's preference order.
func (g *group) selectProtocol() string {
	ms := g.sortedMembers()
	if len(ms) == 0 {
		return ""
	}
	first := ms[0]
	if l := g.members[g.leader]; l != nil {
		first = l
	}
	var candidates []string
	for _, p := range first.protocols {
		all := true
		for _, m := range ms {
			if !slices.ContainsFunc(m.protocols, func(q kmsg.JoinGroupRequestProtocol) bool { return q.Name == p.Name }) {
				all = false
				break
			}
		}
		if all && !slices.Contains(candidates, p.Name) {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, m := range ms {
		for _, p := range m.protocols {
			if slices.Contains(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, name := range candidates {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

func ms(d time.Duration) int32 { return int32(d / time.Millisecond) }

func millis(n int32) time.Duration { return time.Duration(n) * time.Millisecond }

func strp(s string) *string { return &s }

// ---------------------------------------------------------------- JoinGroup

// Join handles a JoinGroup request from the caller to.
func (c *Coordinator) Join(now time.Time, to any, req *kmsg.JoinGroupRequest, clientID, clientHost string) {
	c.now = now
	w := &waiter{to: to, version: req.Version}
	fail := func(code int16, memberID string) {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation, resp.MemberID = code, -1, memberID
		c.reply(to, resp, false)
	}
	session := millis(req.SessionTimeoutMillis)
	rebalance := millis(req.RebalanceTimeoutMillis)
	if req.Version == 0 {
		rebalance = session
	}
	if req.Group == "" {
		fail(kerr.InvalidGroupID.Code, req.MemberID)
		return
	}
	if session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout {
		fail(kerr.InvalidSessionTimeout.Code, req.MemberID)
		return
	}
	g := c.groups[req.Group]
	if g == nil {
		if req.MemberID != "" {
			fail(kerr.UnknownMemberID.Code, req.MemberID)
			return
		}
		g = newGroup(req.Group)
	}
	if g.consumer != nil {
		if len(g.consumer.members) > 0 {
			// A classic member cannot join a live consumer-protocol group.
			fail(kerr.InconsistentGroupProtocol.Code, req.MemberID)
			return
		}
		// Offline migration back: an empty consumer group becomes a
		// classic group on its first JoinGroup, keeping its offsets.
		c.ready.Records = append(c.ready.Records, Record{Key: consumerGroupKey(g.id)})
		g.consumer = nil
		g.protocolType = ""
	}
	if !g.supports(req.ProtocolType, req.Protocols) {
		fail(kerr.InconsistentGroupProtocol.Code, req.MemberID)
		return
	}
	_, known := g.members[req.MemberID]
	if _, pend := g.pending[req.MemberID]; !known && !pend && c.cfg.MaxSize > 0 && len(g.members) >= c.cfg.MaxSize {
		if req.InstanceID == nil || g.static[*req.InstanceID] == "" {
			fail(kerr.GroupMaxSizeReached.Code, req.MemberID)
			return
		}
	}
	c.groups[g.id] = g
	m := &member{
		instanceID:       req.InstanceID,
		protocolType:     req.ProtocolType,
		clientID:         clientID,
		clientHost:       clientHost,
		protocols:        req.Protocols,
		rebalanceTimeout: rebalance,
		sessionTimeout:   session,
	}

	if req.MemberID == "" {
		id := c.cfg.NewMemberID(clientID)
		if req.InstanceID != nil {
			if old := g.static[*req.InstanceID]; old != "" && g.members[old] != nil {
				c.replaceStatic(g, g.members[old], id, m, w)
				return
			}
			m.id = id
			c.addMember(g, m, w)
			return
		}
		if req.Version >= 4 {
			g.pending[id] = now.Add(session)
			fail(kerr.MemberIDRequired.Code, id)
			return
		}
		m.id = id
		c.addMember(g, m, w)
		return
	}

	if req.InstanceID != nil {
		switch cur := g.static[*req.InstanceID]; {
		case cur == "":
			fail(kerr.UnknownMemberID.Code, req.MemberID)
			return
		case cur != req.MemberID:
			fail(kerr.FencedInstanceID.Code, req.MemberID)
			return
		}
	}
	if _, ok := g.pending[req.MemberID]; ok {
		delete(g.pending, req.MemberID)
		m.id = req.MemberID
		c.addMember(g, m, w)
		return
	}
	cur := g.members[req.MemberID]
	if cur == nil {
		fail(kerr.UnknownMemberID.Code, req.MemberID)
		return
	}
	switch g.state {
	case PreparingRebalance:
		c.updateMember(g, cur, m, w)
	case CompletingRebalance:
		if cur.sameProtocols(req.Protocols) {
			c.answerJoin(g, cur, w, cur.id == g.leader, g.leader, false)
			return
		}
		c.updateMember(g, cur, m, w)
	case Stable:
		if cur.id == g.leader || !cur.sameProtocols(req.Protocols) {
			c.updateMember(g, cur, m, w)
			return
		}
		c.answerJoin(g, cur, w, false, g.leader, false)
	default:
		fail(kerr.UnknownMemberID.Code, req.MemberID)
	}
}

// answerJoin answers one member's join with the current generation.
func (c *Coordinator) answerJoin(g *group, m *member, w *waiter, withMembers bool, leader string, skip bool) {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = w.version
	resp.Generation = g.generation
	resp.ProtocolType = strp(g.protocolType)
	resp.Protocol = strp(g.protocol)
	resp.LeaderID = leader
	resp.MemberID = m.id
	resp.SkipAssignment = skip
	if withMembers {
		for _, o := range g.sortedMembers() {
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = o.id, o.instanceID, o.metadata(g.protocol)
			resp.Members = append(resp.Members, jm)
		}
	}
	c.reply(w.to, resp, false)
}

func (c *Coordinator) addMember(g *group, m *member, w *waiter) {
	m.join = w
	g.members[m.id] = m
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if len(g.members) == 1 {
		g.protocolType = m.protocolType
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.newMemberAdded = true
	c.maybePrepareRebalance(g)
	c.tryCompleteJoin(g)
}

// updateMember applies a known member's rejoin and rebalances.
func (c *Coordinator) updateMember(g *group, cur, next *member, w *waiter) {
	if cur.join != nil {
		c.failJoin(cur, kerr.RebalanceInProgress.Code)
	}
	cur.protocols = next.protocols
	cur.rebalanceTimeout = next.rebalanceTimeout
	cur.sessionTimeout = next.sessionTimeout
	cur.clientID, cur.clientHost = next.clientID, next.clientHost
	cur.join = w
	c.maybePrepareRebalance(g)
	c.tryCompleteJoin(g)
}

// replaceStatic gives a static member's instance id to a new member id. The
// old member's waiting requests are fenced. A stable group whose protocol
// choice does not change keeps its assignment and does not rebalance.
func (c *Coordinator) replaceStatic(g *group, old *member, newID string, next *member, w *waiter) {
	if old.join != nil {
		c.failJoin(old, kerr.FencedInstanceID.Code)
	}
	if old.sync != nil {
		c.failSync(old, kerr.FencedInstanceID.Code)
	}
	prevLeader := g.leader
	delete(g.members, old.id)
	old.id = newID
	old.protocols = next.protocols
	old.rebalanceTimeout, old.sessionTimeout = next.rebalanceTimeout, next.sessionTimeout
	old.clientID, old.clientHost = next.clientID, next.clientHost
	g.members[newID] = old
	g.static[*old.instanceID] = newID
	if g.leader == prevLeader && prevLeader != "" && g.members[prevLeader] == nil {
		g.leader = newID
	}
	m := old
	switch g.state {
	case Stable:
		if g.selectProtocol() == g.protocol {
			m.deadline = c.now.Add(m.sessionTimeout)
			c.persistGroup(g)
			isLeader := g.leader == m.id
			if isLeader && w.version < 9 {
				// Before v9 (KIP-814) a static leader that learns it
				// leads would reassign; hide the leadership instead.
				c.answerJoin(g, m, w, false, prevLeader, false)
			} else {
				c.answerJoin(g, m, w, isLeader, g.leader, isLeader)
			}
			c.ready.Replies[len(c.ready.Replies)-1].Durable = true
			return
		}
		m.join = w
		c.prepareRebalance(g)
	case CompletingRebalance:
		m.join = w
		c.prepareRebalance(g)
	default:
		m.join = w
		c.tryCompleteJoin(g)
	}
}

func (c *Coordinator) failJoin(m *member, code int16) {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = m.join.version
	resp.ErrorCode, resp.Generation, resp.MemberID = code, -1, m.id
	c.reply(m.join.to, resp, false)
	m.join = nil
}

func (c *Coordinator) failSync(m *member, code int16) {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = m.sync.version
	resp.ErrorCode = code
	c.reply(m.sync.to, resp, false)
	m.sync = nil
}

func (c *Coordinator) maybePrepareRebalance(g *group) {
	switch g.state {
	case Empty, Stable, CompletingRebalance:
		c.prepareRebalance(g)
	}
}

func (c *Coordinator) prepareRebalance(g *group) {
	if g.state == CompletingRebalance {
		for _, m := range g.sortedMembers() {
			if m.sync != nil {
				c.failSync(m, kerr.RebalanceInProgress.Code)
			}
		}
	}
	for _, m := range g.members {
		m.assignment = nil
	}
	if g.state == Empty && c.cfg.InitialRebalanceDelay > 0 {
		g.initialPhase = true
		g.rebalanceDeadline = c.now.Add(c.cfg.InitialRebalanceDelay)
		g.remainingDelay = max(g.rebalanceTimeout()-c.cfg.InitialRebalanceDelay, 0)
	} else {
		g.initialPhase = false
		g.rebalanceDeadline = c.now.Add(g.rebalanceTimeout())
	}
	g.newMemberAdded = false
	g.state = PreparingRebalance
}

// tryCompleteJoin ends the join phase early once every member (and every
// member id handed out) has joined.
func (c *Coordinator) tryCompleteJoin(g *group) {
	if g.state != PreparingRebalance || g.initialPhase || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.join == nil {
			return
		}
	}
	c.completeJoin(g)
}

// completeJoin ends the join phase: members that did not rejoin are removed,
// the generation advances and every joined member gets its response (the
// leader with the member list).
func (c *Coordinator) completeJoin(g *group) {
	for _, m := range g.sortedMembers() {
		if m.join == nil {
			c.dropMember(g, m)
		}
	}
	g.initialPhase = false
	g.generation++
	if len(g.members) == 0 {
		g.state, g.protocol, g.leader = Empty, "", ""
		c.persistGroup(g)
		return
	}
	if g.members[g.leader] == nil {
		g.leader = g.sortedMembers()[0].id
	}
	g.protocol = g.selectProtocol()
	g.state = CompletingRebalance
	for _, m := range g.sortedMembers() {
		w := m.join
		m.join = nil
		m.deadline = c.now.Add(m.sessionTimeout)
		c.answerJoin(g, m, w, m.id == g.leader, g.leader, false)
	}
}

// dropMember removes a member without rebalancing; its waiting requests get
// UNKNOWN_MEMBER_ID.
func (c *Coordinator) dropMember(g *group, m *member) {
	if m.join != nil {
		c.failJoin(m, kerr.UnknownMemberID.Code)
	}
	if m.sync != nil {
		c.failSync(m, kerr.UnknownMemberID.Code)
	}
	delete(g.members, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	if g.leader == m.id {
		g.leader = ""
		if ms := g.sortedMembers(); len(ms) > 0 {
			g.leader = ms[0].id
		}
	}
}

// removeMember removes a member that left or expired and rebalances.
func (c *Coordinator) removeMember(g *group, m *member) {
	c.dropMember(g, m)
	switch g.state {
	case Stable, CompletingRebalance:
		c.prepareRebalance(g)
		c.tryCompleteJoin(g)
	case PreparingRebalance:
		c.tryCompleteJoin(g)
	}
}

// ---------------------------------------------------------------- SyncGroup

// Sync handles a SyncGroup request.
func (c *Coordinator) Sync(now time.Time, to any, req *kmsg.SyncGroupRequest) {
	c.now = now
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		c.reply(to, resp, false)
	}
	g := c.groups[req.Group]
	if g == nil {
		fail(kerr.UnknownMemberID.Code)
		return
	}
	if code := g.checkInstance(req.InstanceID, req.MemberID); code != 0 {
		fail(code)
		return
	}
	m := g.members[req.MemberID]
	switch {
	case m == nil:
		fail(kerr.UnknownMemberID.Code)
		return
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration.Code)
		return
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	switch g.state {
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress.Code)
	case Stable:
		m.deadline = now.Add(m.sessionTimeout)
		c.answerSync(g, m, &waiter{to: to, version: req.Version}, false)
	case CompletingRebalance:
		if m.sync != nil {
			c.failSync(m, kerr.RebalanceInProgress.Code)
		}
		m.sync = &waiter{to: to, version: req.Version}
		m.deadline = now.Add(m.sessionTimeout)
		if m.id != g.leader {
			return
		}
		assigned := map[string][]byte{}
		for _, a := range req.GroupAssignment {
			assigned[a.MemberID] = a.MemberAssignment
		}
		for _, o := range g.members {
			o.assignment = assigned[o.id]
			if o.assignment == nil {
				o.assignment = []byte{}
			}
		}
		g.state = Stable
		c.persistGroup(g)
		for _, o := range g.sortedMembers() {
			if o.sync != nil {
				w := o.sync
				o.sync = nil
				c.answerSync(g, o, w, true)
			}
		}
	default:
		fail(kerr.UnknownMemberID.Code)
	}
}

func (c *Coordinator) answerSync(g *group, m *member, w *waiter, durable bool) {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = w.version
	resp.ProtocolType = strp(g.protocolType)
	resp.Protocol = strp(g.protocol)
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	c.reply(w.to, resp, durable)
}

// checkInstance returns FENCED_INSTANCE_ID if instanceID now belongs to
// another member id.
func (g *group) checkInstance(instanceID *string, memberID string) int16 {
	if instanceID == nil {
		return 0
	}
	if cur, ok := g.static[*instanceID]; ok && cur != memberID {
		return kerr.FencedInstanceID.Code
	}
	return 0
}

// ---------------------------------------------------------------- Heartbeat

// Heartbeat handles a Heartbeat request.
func (c *Coordinator) Heartbeat(now time.Time, to any, req *kmsg.HeartbeatRequest) {
	c.now = now
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.heartbeat(now, req)
	c.reply(to, resp, false)
}

func (c *Coordinator) heartbeat(now time.Time, req *kmsg.HeartbeatRequest) int16 {
	g := c.groups[req.Group]
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	if code := g.checkInstance(req.InstanceID, req.MemberID); code != 0 {
		return code
	}
	m := g.members[req.MemberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	m.deadline = now.Add(m.sessionTimeout)
	if g.state == PreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// ---------------------------------------------------------------- LeaveGroup

// Leave handles a LeaveGroup request (one member before v3, a batch after).
func (c *Coordinator) Leave(now time.Time, to any, req *kmsg.LeaveGroupRequest) {
	c.now = now
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	members := req.Members
	if req.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	g := c.groups[req.Group]
	for _, lm := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID = lm.MemberID, lm.InstanceID
		rm.ErrorCode = c.leave(g, lm)
		resp.Members = append(resp.Members, rm)
	}
	if req.Version < 3 {
		resp.ErrorCode = resp.Members[0].ErrorCode
		resp.Members = nil
	}
	c.reply(to, resp, false)
}

func (c *Coordinator) leave(g *group, lm kmsg.LeaveGroupRequestMember) int16 {
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	id := lm.MemberID
	if lm.InstanceID != nil {
		cur, ok := g.static[*lm.InstanceID]
		switch {
		case !ok:
			return kerr.UnknownMemberID.Code
		case id != "" && cur != id:
			return kerr.FencedInstanceID.Code
		}
		id = cur
	}
	if _, ok := g.pending[id]; ok {
		delete(g.pending, id)
		c.tryCompleteJoin(g)
		return 0
	}
	m := g.members[id]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	c.removeMember(g, m)
	return 0
}

// ---------------------------------------------------------------- time

// Tick advances time: it ends join phases whose deadline passed, expires
// members whose session timed out and member ids never used to join.
func (c *Coordinator) Tick(now time.Time) {
	c.now = now
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := c.groups[id]
		if g.consumer != nil {
			c.tickConsumer(now, g)
			continue
		}
		for mid, exp := range g.pending {
			if !now.Before(exp) {
				delete(g.pending, mid)
				c.tryCompleteJoin(g)
			}
		}
		for _, m := range g.sortedMembers() {
			if m.join == nil && m.sync == nil && g.state != Empty && !now.Before(m.deadline) {
				c.removeMember(g, m)
			}
		}
		if g.state == PreparingRebalance && !now.Before(g.rebalanceDeadline) {
			if g.initialPhase && g.newMemberAdded && g.remainingDelay > 0 {
				d := min(c.cfg.InitialRebalanceDelay, g.remainingDelay)
				g.remainingDelay -= d
				g.rebalanceDeadline = now.Add(d)
				g.newMemberAdded = false
				continue
			}
			c.completeJoin(g)
		}
	}
}

// NextDeadline is when Tick must next be called; zero if never.
func (c *Coordinator) NextDeadline() time.Time {
	var next time.Time
	earlier := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, g := range c.groups {
		if g.consumer != nil {
			c.consumerDeadline(g, earlier)
			continue
		}
		for _, exp := range g.pending {
			earlier(exp)
		}
		if g.state == PreparingRebalance {
			earlier(g.rebalanceDeadline)
		}
		if g.state == Empty {
			continue
		}
		for _, m := range g.members {
			if m.join == nil && m.sync == nil {
				earlier(m.deadline)
			}
		}
	}
	return next
}
