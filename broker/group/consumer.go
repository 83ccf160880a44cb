package group

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is the consumer group protocol of KIP-848 (ConsumerGroupHeartbeat,
// ConsumerGroupDescribe), following the rules of Kafka's group coordinator
// (GroupMetadataManager, ConsumerGroup, CurrentAssignmentBuilder):
//
//   - the group epoch is bumped whenever membership, a subscription, or the
//     subscribed topics' partitions change; the target assignment is then
//     recomputed by the server-side assignor, at the group epoch;
//   - each member reconciles towards its target at its own pace: partitions
//     it must give up are first revoked (the member keeps its epoch, state
//     UNREVOKED_PARTITIONS, until a heartbeat no longer lists them), and a
//     partition is given to its new owner only once no other member holds or
//     is still revoking it (UNRELEASED_PARTITIONS until then);
//   - a member whose heartbeat carries an epoch ahead of the coordinator's, or
//     behind it (other than the previous epoch with a subset of its
//     partitions, a lost response), is FENCED_MEMBER_EPOCH; one that is not
//     in the group UNKNOWN_MEMBER_ID;
//   - members that miss their session timeout, or do not revoke within their
//     rebalance timeout, are removed; epoch -1 leaves, -2 leaves a static
//     member's partitions in place until the same instance id rejoins.

// Member epochs with a meaning (ConsumerGroupHeartbeatRequest.MemberEpoch).
const (
	joinEpoch        = 0
	leaveEpoch       = -1
	staticLeaveEpoch = -2
)

// memberState is a member's reconciliation state.
type memberState int8

const (
	stable memberState = iota
	unrevokedPartitions
	unreleasedPartitions
)

// cgroup is a consumer-protocol group.
type cgroup struct {
	epoch           int32 // group epoch
	assignmentEpoch int32 // epoch of the target assignment
	members         map[string]*cmember
	static          map[string]string // instance id -> member id
	target          map[string]parts  // member id -> target assignment
	subscribed      map[[16]byte]TopicMeta
}

// cmember is a member of a consumer-protocol group.
type cmember struct {
	ID               string   `json:"id"`
	InstanceID       *string  `json:"instance_id,omitempty"`
	RackID           *string  `json:"rack_id,omitempty"`
	Epoch            int32    `json:"epoch"`
	PrevEpoch        int32    `json:"prev_epoch"`
	State            int8     `json:"state"`
	ClientID         string   `json:"client_id"`
	ClientHost       string   `json:"client_host"`
	RebalanceTimeout int32    `json:"rebalance_timeout_ms"`
	Topics           []string `json:"topics"`
	Regex            string   `json:"regex,omitempty"`
	Assignor         string   `json:"assignor,omitempty"`
	Assigned         parts    `json:"-"`
	Revoking         parts    `json:"-"`

	deadline       time.Time // session
	revokeDeadline time.Time // rebalance timeout while revoking; zero otherwise
}

// newCGroup returns an empty group at epoch 1 with an empty target
// assignment at epoch 1, as Kafka 4.3+ creates them (KAFKA-20268): the first
// computed assignment has epoch 2.
func newCGroup() *cgroup {
	return &cgroup{epoch: 1, assignmentEpoch: 1, members: map[string]*cmember{}, static: map[string]string{}, target: map[string]parts{}, subscribed: map[[16]byte]TopicMeta{}}
}

// SetTopics replaces the coordinator's view of the broker's topics. Call it
// on start and whenever a topic is created, deleted or gains partitions:
// consumer groups re-resolve their subscriptions (names and regular
// expressions) against it at their members' next heartbeats.
func (c *Coordinator) SetTopics(topics []TopicMeta) {
	c.topics = make(map[string]TopicMeta, len(topics))
	c.topicIDs = make(map[[16]byte]TopicMeta, len(topics))
	for _, t := range topics {
		c.topics[t.Name] = t
		c.topicIDs[t.ID] = t
	}
}

func newUUIDString() string {
	var u [16]byte
	rand.Read(u[:])
	return base64.RawURLEncoding.EncodeToString(u[:])
}

func hbFail(resp *kmsg.ConsumerGroupHeartbeatResponse, e *kerr.Error, msg string) {
	resp.ErrorCode = e.Code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	resp.MemberEpoch = 0
	resp.Assignment = nil
}

// compileRegex compiles a subscription regex as Kafka matches it: against
// the whole topic name (RE2 syntax, as Kafka's RE2/J).
func compileRegex(re string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + re + `)$`)
}

// regex returns a member's compiled subscription regex (cached; nil if it
// does not compile, which validateHeartbeat refuses).
func (c *Coordinator) regex(s string) *regexp.Regexp {
	if re, ok := c.regexes[s]; ok {
		return re
	}
	re, _ := compileRegex(s)
	if len(c.regexes) >= 1024 {
		clear(c.regexes)
	}
	c.regexes[s] = re
	return re
}

// validateHeartbeat applies Kafka's checks of a ConsumerGroupHeartbeat
// request; it returns the error and its message.
func (c *Coordinator) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (*kerr.Error, string) {
	switch {
	case req.Group == "":
		return kerr.InvalidRequest, "GroupId can't be empty."
	case req.InstanceID != nil && *req.InstanceID == "":
		return kerr.InvalidRequest, "InstanceId can't be empty."
	case req.RackID != nil && *req.RackID == "":
		return kerr.InvalidRequest, "RackId can't be empty."
	case req.Version >= 1 && req.MemberID == "":
		return kerr.InvalidRequest, "MemberId can't be empty."
	}
	switch e := req.MemberEpoch; {
	case e > 0 || e == leaveEpoch:
		if req.MemberID == "" {
			return kerr.InvalidRequest, "MemberId can't be empty."
		}
	case e == joinEpoch:
		if req.RebalanceTimeoutMillis == -1 {
			return kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."
		}
		if req.Topics == nil || len(req.Topics) > 0 {
			return kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return kerr.InvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
		}
	case e == staticLeaveEpoch:
		if req.MemberID == "" {
			return kerr.InvalidRequest, "MemberId can't be empty."
		}
		if req.InstanceID == nil {
			return kerr.InvalidRequest, "InstanceId can't be null."
		}
	default:
		return kerr.InvalidRequest, "MemberEpoch is invalid."
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := compileRegex(*req.SubscribedTopicRegex); err != nil {
			return kerr.InvalidRegularExpression, "SubscribedTopicRegex `" + *req.SubscribedTopicRegex + "` is not a valid regular expression: " + err.Error() + "."
		}
	}
	if req.ServerAssignor != nil && !slices.Contains(c.cfg.ConsumerAssignors, *req.ServerAssignor) {
		return kerr.UnsupportedAssignor, "ServerAssignor " + *req.ServerAssignor + " is not supported. Supported assignors: " +
			strings.Join(c.cfg.ConsumerAssignors, ", ") + "."
	}
	return nil, ""
}

// ConsumerHeartbeat handles a ConsumerGroupHeartbeat request.
func (c *Coordinator) ConsumerHeartbeat(now time.Time, to any, req *kmsg.ConsumerGroupHeartbeatRequest, clientID, clientHost string) {
	c.now = now
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	before := len(c.ready.Records)
	if e, msg := c.consumerHeartbeat(now, req, resp, clientID, clientHost); e != nil {
		hbFail(resp, e, msg)
	}
	c.reply(to, resp, len(c.ready.Records) > before)
}

func (c *Coordinator) consumerHeartbeat(now time.Time, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse, clientID, clientHost string) (*kerr.Error, string) {
	if e, msg := c.validateHeartbeat(req); e != nil {
		return e, msg
	}
	g := c.groups[req.Group]
	if req.MemberEpoch == leaveEpoch || req.MemberEpoch == staticLeaveEpoch {
		if g == nil || g.consumer == nil {
			return kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group)
		}
		return c.consumerLeave(g, req, resp)
	}
	switch {
	case g == nil && req.MemberEpoch != joinEpoch:
		return kerr.GroupIDNotFound, fmt.Sprintf("Consumer group %s not found.", req.Group)
	case g == nil:
		g = newGroup(req.Group)
		c.groups[g.id] = g
		g.consumer = newCGroup()
		g.protocolType = "consumer"
	case g.consumer == nil:
		// Offline migration: an empty classic group becomes a consumer
		// group on its first heartbeat, keeping its offsets.
		if len(g.members) > 0 || g.state != Empty {
			return kerr.GroupIDNotFound, fmt.Sprintf("Cannot upgrade classic group %s to consumer group because it has members: only empty classic groups are converted.", req.Group)
		}
		if req.MemberEpoch != joinEpoch {
			return kerr.GroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", req.Group)
		}
		// No classic tombstone: that would drop the offsets on replay;
		// the consumer group record, later in the log, takes precedence.
		g.consumer = newCGroup()
		g.protocolType = "consumer"
		g.generation, g.protocol, g.leader = 0, "", ""
	}
	cg := g.consumer

	// The member.
	memberID := req.MemberID
	if memberID == "" {
		memberID = newUUIDString()
	}
	var m *cmember
	if req.InstanceID != nil {
		cur := cg.static[*req.InstanceID]
		if req.MemberEpoch == joinEpoch {
			if old := cg.members[cur]; cur != "" && cur != memberID && old != nil {
				if old.Epoch != staticLeaveEpoch {
					return kerr.UnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, *req.InstanceID, cur)
				}
				// The instance id rejoins: the new member id takes the
				// old one's place and assignment.
				m = old
				delete(cg.members, cur)
				m.ID = memberID
				m.Epoch, m.PrevEpoch, m.State = 0, 0, int8(stable)
				cg.members[memberID] = m
				cg.static[*req.InstanceID] = memberID
				cg.target[memberID] = cg.target[cur]
				delete(cg.target, cur)
			}
		} else {
			switch {
			case cur == "":
				return kerr.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", *req.InstanceID)
			case cur != memberID:
				return kerr.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", memberID, *req.InstanceID, cur)
			}
		}
	}
	if m == nil {
		m = cg.members[memberID]
	}
	if m == nil {
		if req.MemberEpoch != joinEpoch {
			return kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", memberID, req.Group)
		}
		m = &cmember{ID: memberID, Assigned: parts{}, Revoking: parts{}}
	} else if req.MemberEpoch != joinEpoch || m.Epoch == 0 {
		if e, msg := m.checkEpoch(req.MemberEpoch, req.Topics); e != nil {
			return e, msg
		}
	}
	// A known member rejoining with epoch 0 owns nothing (it says so): it
	// keeps its place and is reconciled from what the group still gives it.

	// Apply the request's changes; a changed subscription bumps the epoch.
	bump := false
	_, known := cg.members[m.ID]
	if !known {
		bump = true
	}
	if req.InstanceID != nil {
		m.InstanceID = req.InstanceID
	}
	if req.RackID != nil {
		m.RackID = req.RackID
	}
	if req.RebalanceTimeoutMillis != -1 {
		m.RebalanceTimeout = req.RebalanceTimeoutMillis
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.Assignor {
		m.Assignor = *req.ServerAssignor
		bump = true
	}
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		names = slices.Compact(names)
		if !slices.Equal(names, m.Topics) {
			m.Topics = names
			bump = true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.Regex {
		m.Regex = *req.SubscribedTopicRegex
		bump = true
	}
	changed := !known || m.ClientID != clientID || m.ClientHost != clientHost
	m.ClientID, m.ClientHost = clientID, clientHost
	cg.members[m.ID] = m
	if m.InstanceID != nil {
		cg.static[*m.InstanceID] = m.ID
	}

	// Subscribed topics as they exist now: a topic created, deleted or
	// grown also bumps the epoch.
	if sub := c.subscribedTopics(cg); !sameTopics(sub, cg.subscribed) {
		cg.subscribed = sub
		bump = true
	}
	if bump {
		cg.epoch++
		changed = true
	}
	if cg.epoch > cg.assignmentEpoch {
		c.computeTarget(cg)
	}

	// Reconcile the member towards its target.
	prevAssigned := m.Assigned.clone()
	prevEpoch, prevState := m.Epoch, m.State
	c.reconcile(cg, m, req.Topics)
	if m.Epoch != prevEpoch || m.State != prevState || !m.Assigned.equal(prevAssigned) {
		changed = true
	}
	if m.State == int8(unrevokedPartitions) {
		if m.revokeDeadline.IsZero() || m.Epoch != prevEpoch || prevState != int8(unrevokedPartitions) {
			m.revokeDeadline = now.Add(millis(m.RebalanceTimeout))
		}
	} else {
		m.revokeDeadline = time.Time{}
	}
	m.deadline = now.Add(c.cfg.ConsumerSessionTimeout)
	if changed {
		c.persistConsumer(g)
	}

	resp.MemberID = &m.ID
	resp.MemberEpoch = m.Epoch
	resp.HeartbeatIntervalMillis = ms(c.cfg.ConsumerHeartbeatInterval)
	full := req.MemberEpoch == joinEpoch || (req.RebalanceTimeoutMillis != -1 && req.SubscribedTopicNames != nil && req.Topics != nil)
	if full || !m.Assigned.equal(prevAssigned) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, p := range sortedTopicIDs(m.Assigned) {
			at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			at.TopicID, at.Partitions = p, slices.Clone(m.Assigned[p])
			a.Topics = append(a.Topics, at)
		}
		resp.Assignment = &a
	}
	return nil, ""
}

func sortedTopicIDs(p parts) [][16]byte {
	ids := make([][16]byte, 0, len(p))
	for id := range p {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return string(ids[i][:]) < string(ids[j][:]) })
	return ids
}

// checkEpoch is Kafka's member epoch check of a heartbeat.
func (m *cmember) checkEpoch(epoch int32, owned []kmsg.ConsumerGroupHeartbeatRequestTopic) (*kerr.Error, string) {
	if epoch > m.Epoch {
		return kerr.FencedMemberEpoch, fmt.Sprintf("The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", epoch, m.Epoch)
	}
	if epoch < m.Epoch && (epoch != m.PrevEpoch || !ownedSubset(owned, m.Assigned)) {
		return kerr.FencedMemberEpoch, fmt.Sprintf("The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", epoch, m.Epoch)
	}
	return nil, ""
}

func ownedSubset(owned []kmsg.ConsumerGroupHeartbeatRequestTopic, p parts) bool {
	if owned == nil {
		return false
	}
	for _, t := range owned {
		if _, ok := p[t.TopicID]; !ok {
			return false
		}
		for _, n := range t.Partitions {
			if !p.has(t.TopicID, n) {
				return false
			}
		}
	}
	return true
}

// consumerLeave handles epoch -1 (leave) and -2 (a static member leaves for
// now, keeping its partitions until it rejoins or its session expires).
func (c *Coordinator) consumerLeave(g *group, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) (*kerr.Error, string) {
	cg := g.consumer
	id := req.MemberID
	if req.InstanceID != nil {
		cur := cg.static[*req.InstanceID]
		switch {
		case cur == "":
			return kerr.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", *req.InstanceID)
		case cur != id:
			return kerr.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", id, *req.InstanceID, cur)
		}
	}
	m := cg.members[id]
	if m == nil {
		return kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", id, req.Group)
	}
	resp.MemberID = &id
	resp.MemberEpoch = req.MemberEpoch
	if req.MemberEpoch == staticLeaveEpoch {
		m.Epoch, m.State, m.Revoking = staticLeaveEpoch, int8(stable), parts{}
		m.revokeDeadline = time.Time{}
		c.persistConsumer(g)
		return nil, ""
	}
	c.removeConsumerMember(g, m)
	return nil, ""
}

// removeConsumerMember removes a member (left, fenced or expired): its
// partitions are free and the group epoch is bumped.
func (c *Coordinator) removeConsumerMember(g *group, m *cmember) {
	cg := g.consumer
	delete(cg.members, m.ID)
	delete(cg.target, m.ID)
	if m.InstanceID != nil && cg.static[*m.InstanceID] == m.ID {
		delete(cg.static, *m.InstanceID)
	}
	cg.subscribed = c.subscribedTopics(cg)
	cg.epoch++
	if len(cg.members) == 0 {
		// An empty group's target assignment is at the group epoch
		// (KAFKA-20442).
		cg.assignmentEpoch = cg.epoch
	}
	c.persistConsumer(g)
}

// subscribedTopics is every existing topic some member subscribes to, by
// name or regular expression.
func (c *Coordinator) subscribedTopics(cg *cgroup) map[[16]byte]TopicMeta {
	out := map[[16]byte]TopicMeta{}
	for _, m := range cg.members {
		for _, t := range c.memberTopics(m) {
			out[t.ID] = t
		}
	}
	return out
}

// memberTopics is the existing topics a member subscribes to.
func (c *Coordinator) memberTopics(m *cmember) []TopicMeta {
	var out []TopicMeta
	seen := map[string]bool{}
	for _, name := range m.Topics {
		if t, ok := c.topics[name]; ok && !seen[name] {
			out = append(out, t)
			seen[name] = true
		}
	}
	if m.Regex != "" {
		if re := c.regex(m.Regex); re != nil {
			for name, t := range c.topics {
				if !seen[name] && re.MatchString(name) {
					out = append(out, t)
					seen[name] = true
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].ID[:]) < string(out[j].ID[:]) })
	return out
}

func sameTopics(a, b map[[16]byte]TopicMeta) bool {
	if len(a) != len(b) {
		return false
	}
	for id, t := range a {
		if o, ok := b[id]; !ok || o != t {
			return false
		}
	}
	return true
}

// assignorOf is the group's assignor: the one most members name, else the
// default (the first configured).
func (c *Coordinator) assignorOf(cg *cgroup) string {
	votes := map[string]int{}
	best := ""
	for _, m := range cg.sortedMembers() {
		if m.Assignor == "" {
			continue
		}
		votes[m.Assignor]++
		if best == "" || votes[m.Assignor] > votes[best] {
			best = m.Assignor
		}
	}
	if best == "" {
		return c.cfg.ConsumerAssignors[0]
	}
	return best
}

func (cg *cgroup) sortedMembers() []*cmember {
	ms := make([]*cmember, 0, len(cg.members))
	for _, m := range cg.members {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	return ms
}

// computeTarget recomputes the target assignment at the group epoch.
func (c *Coordinator) computeTarget(cg *cgroup) {
	var in []assignMember
	for _, m := range cg.sortedMembers() {
		am := assignMember{id: m.ID, prev: cg.target[m.ID]}
		for _, t := range c.memberTopics(m) {
			am.topics = append(am.topics, t.ID)
		}
		in = append(in, am)
	}
	cg.target = assign(c.assignorOf(cg), in, cg.subscribed)
	cg.assignmentEpoch = cg.epoch
}

// owner returns the member that holds or is revoking a partition, "" if none.
func (cg *cgroup) owner(topic [16]byte, partition int32) string {
	for _, m := range cg.members {
		if m.Epoch == staticLeaveEpoch && !m.Assigned.has(topic, partition) {
			continue
		}
		if m.Assigned.has(topic, partition) || m.Revoking.has(topic, partition) {
			return m.ID
		}
	}
	return ""
}

// reconcile moves a member towards its target assignment (Kafka's
// CurrentAssignmentBuilder). owned is the member's owned partitions from the
// request, nil if not given.
func (c *Coordinator) reconcile(cg *cgroup, m *cmember, owned []kmsg.ConsumerGroupHeartbeatRequestTopic) {
	ownsAny := func(p parts) bool {
		if owned == nil {
			return true
		}
		for _, t := range owned {
			for _, n := range t.Partitions {
				if p.has(t.TopicID, n) {
					return true
				}
			}
		}
		return false
	}
	switch memberState(m.State) {
	case stable:
		if m.Epoch == cg.assignmentEpoch {
			return
		}
	case unrevokedPartitions:
		if ownsAny(m.Revoking) {
			return
		}
	}
	target := cg.target[m.ID]
	if target == nil {
		target = parts{}
	}
	assigned, revoking, pending := parts{}, parts{}, parts{}
	unreleased := false
	for _, p := range m.Assigned.list() {
		if target.has(p.topic, p.partition) {
			assigned.add(p.topic, p.partition)
		} else {
			revoking.add(p.topic, p.partition)
		}
	}
	for _, p := range target.list() {
		if assigned.has(p.topic, p.partition) {
			continue
		}
		if o := cg.owner(p.topic, p.partition); o != "" && o != m.ID {
			unreleased = true
			continue
		}
		pending.add(p.topic, p.partition)
	}
	setEpoch := func(e int32) {
		if e != m.Epoch {
			m.PrevEpoch, m.Epoch = m.Epoch, e
		}
	}
	switch {
	case revoking.count() > 0 && ownsAny(revoking):
		m.State, m.Assigned, m.Revoking = int8(unrevokedPartitions), assigned, revoking
	case pending.count() > 0:
		for _, p := range pending.list() {
			assigned.add(p.topic, p.partition)
		}
		m.State = int8(stable)
		if unreleased {
			m.State = int8(unreleasedPartitions)
		}
		m.Assigned, m.Revoking = assigned, parts{}
		setEpoch(cg.assignmentEpoch)
	default:
		m.State = int8(stable)
		if unreleased {
			m.State = int8(unreleasedPartitions)
		}
		m.Assigned, m.Revoking = assigned, parts{}
		setEpoch(cg.assignmentEpoch)
	}
}

// tickConsumer expires members whose session or revocation time ran out.
func (c *Coordinator) tickConsumer(now time.Time, g *group) {
	cg := g.consumer
	for _, m := range cg.sortedMembers() {
		if m.deadline.IsZero() {
			m.deadline = now.Add(c.cfg.ConsumerSessionTimeout)
			continue
		}
		if !now.Before(m.deadline) || (!m.revokeDeadline.IsZero() && !now.Before(m.revokeDeadline)) {
			c.removeConsumerMember(g, m)
		}
	}
}

func (c *Coordinator) consumerDeadline(g *group, earlier func(time.Time)) {
	for _, m := range g.consumer.members {
		if m.deadline.IsZero() {
			earlier(time.Unix(0, 0))
			continue
		}
		earlier(m.deadline)
		if !m.revokeDeadline.IsZero() {
			earlier(m.revokeDeadline)
		}
	}
}

// consumerState is the group's state as Kafka names it.
func (cg *cgroup) state() string {
	if len(cg.members) == 0 {
		return "Empty"
	}
	if cg.epoch != cg.assignmentEpoch {
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.Epoch != cg.assignmentEpoch || m.State != int8(stable) {
			return "Reconciling"
		}
	}
	return "Stable"
}

// ConsumerDescribe handles a ConsumerGroupDescribe request.
func (c *Coordinator) ConsumerDescribe(to any, req *kmsg.ConsumerGroupDescribeRequest) {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		sg := kmsg.NewConsumerGroupDescribeResponseGroup()
		sg.Group = id
		sg.AuthorizedOperations = -2147483648
		if req.IncludeAuthorizedOperations {
			sg.AuthorizedOperations = groupAuthorizedOps
		}
		g := c.groups[id]
		switch {
		case g == nil:
			sg.ErrorCode = kerr.GroupIDNotFound.Code
			sg.ErrorMessage = strp("Group " + id + " not found.")
			sg.State = "Dead"
		case g.consumer == nil:
			sg.ErrorCode = kerr.GroupIDNotFound.Code
			sg.ErrorMessage = strp("Group " + id + " is not a consumer group.")
			sg.State = "Dead"
		default:
			cg := g.consumer
			sg.State, sg.Epoch, sg.AssignmentEpoch, sg.AssignorName = cg.state(), cg.epoch, cg.assignmentEpoch, c.assignorOf(cg)
			for _, m := range cg.sortedMembers() {
				sm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
				sm.MemberID, sm.InstanceID, sm.RackID, sm.MemberEpoch = m.ID, m.InstanceID, m.RackID, m.Epoch
				sm.ClientID, sm.ClientHost = m.ClientID, m.ClientHost
				sm.SubscribedTopics = slices.Clone(m.Topics)
				if sm.SubscribedTopics == nil {
					sm.SubscribedTopics = []string{}
				}
				if m.Regex != "" {
					sm.SubscribedTopicRegex = strp(m.Regex)
				}
				sm.Assignment = c.describeAssignment(m.Assigned)
				sm.TargetAssignment = c.describeAssignment(cg.target[m.ID])
				sm.MemberType = 1 // consumer protocol (0 would be classic)
				sg.Members = append(sg.Members, sm)
			}
		}
		resp.Groups = append(resp.Groups, sg)
	}
	c.reply(to, resp, false)
}

func (c *Coordinator) describeAssignment(p parts) kmsg.Assignment {
	a := kmsg.NewAssignment()
	for _, id := range sortedTopicIDs(p) {
		at := kmsg.NewAssignmentTopicPartition()
		at.TopicID, at.Topic, at.Partitions = id, c.topicIDs[id].Name, slices.Clone(p[id])
		a.TopicPartitions = append(a.TopicPartitions, at)
	}
	return a
}

// checkConsumerCommit is Kafka's offset commit check for a consumer group:
// simple commits (epoch < 0) only while it is empty, members with their
// current epoch (STALE_MEMBER_EPOCH otherwise), OffsetCommit v9+.
func checkConsumerCommit(cg *cgroup, memberID string, epoch int32, version int16) int16 {
	if epoch < 0 && len(cg.members) == 0 {
		return 0
	}
	m := cg.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case version < 9:
		return kerr.UnsupportedVersion.Code
	case epoch != m.Epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// checkConsumerFetch is Kafka's offset fetch check for a consumer group:
// without a member id anyone may read; a member with its current epoch.
func checkConsumerFetch(cg *cgroup, memberID *string, epoch int32) int16 {
	if memberID == nil || (*memberID == "" && epoch < 0) {
		return 0
	}
	m := cg.members[*memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case epoch != m.Epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// describeConsumerAsClassic fills a DescribeGroups entry for a consumer
// group: protocol type "consumer", the group's state, and its members with
// their current assignments as ConsumerMemberAssignment bytes.
func (c *Coordinator) describeConsumerAsClassic(sg *kmsg.DescribeGroupsResponseGroup, g *group) {
	cg := g.consumer
	sg.State, sg.ProtocolType, sg.Protocol = cg.state(), "consumer", c.assignorOf(cg)
	for _, m := range cg.sortedMembers() {
		sm := kmsg.NewDescribeGroupsResponseGroupMember()
		sm.MemberID, sm.InstanceID, sm.ClientID, sm.ClientHost = m.ID, m.InstanceID, m.ClientID, m.ClientHost
		meta := kmsg.NewConsumerMemberMetadata()
		meta.Version, meta.Topics = 3, slices.Clone(m.Topics)
		sm.ProtocolMetadata = meta.AppendTo(nil)
		a := kmsg.NewConsumerMemberAssignment()
		a.Version = 3
		for _, id := range sortedTopicIDs(m.Assigned) {
			at := kmsg.NewConsumerMemberAssignmentTopic()
			at.Topic, at.Partitions = c.topicIDs[id].Name, slices.Clone(m.Assigned[id])
			a.Topics = append(a.Topics, at)
		}
		sm.MemberAssignment = a.AppendTo(nil)
		sg.Members = append(sg.Members, sm)
	}
}
