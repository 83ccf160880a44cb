package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProtocolType is the group protocol type of connect workers.
const ProtocolType = "connect"

// Config configures a Member. Client, GroupID, URL, ConfigOffset, Assign
// and OnAssigned are required.
type Config struct {
	// Client sends the raw group requests (routed to the coordinator by
	// franz-go). The caller owns it and closes it after Run returns.
	Client *kgo.Client
	// GroupID is group.id.
	GroupID string
	// URL is this worker's advertised REST URL (leaders forward to it).
	URL string
	// Protocols are offered in preference order; default
	// sessioned, compatible, default (connect.protocol=sessioned).
	Protocols []Protocol
	// SessionTimeout is session.timeout.ms (default 10s).
	SessionTimeout time.Duration
	// RebalanceTimeout is rebalance.timeout.ms (default 60s).
	RebalanceTimeout time.Duration
	// HeartbeatInterval is heartbeat.interval.ms (default 3s).
	HeartbeatInterval time.Duration
	// StopTimeout is how long the worker may take to stop all its work
	// (task.shutdown.graceful.timeout.ms plus the time to kill what does
	// not stop; default 6s). If SessionTimeout - StopTimeout is shorter than
	// two heartbeat intervals, the lease is two heartbeat intervals (and a
	// warning says that work may then outlive the session). A member that has not renewed its session
	// for SessionTimeout - StopTimeout treats its membership as lost, so
	// that its work is stopped before the coordinator can expire the
	// session and give the work to another member (see Lease).
	StopTimeout time.Duration
	// ConfigOffset returns the config-topic offset this worker has read to;
	// it is advertised in JoinGroup.
	ConfigOffset func() int64
	// Assign runs on the leader: it gets every member's metadata and
	// returns each member's assignment (keyed by member id; members left out
	// get an empty assignment). Error, ConfigOffset and the work are the
	// assignor's to set; Leader and LeaderURL default to this member. An
	// error aborts this generation and the member rejoins.
	Assign func(ctx context.Context, g LeaderView) (map[string]Assignment, error)
	// OnJoinPrepare runs before every JoinGroup. lost is true when the
	// member lost its membership (fenced, unknown member, or its lease ran
	// out): the worker must stop all its work before the call returns,
	// since another member may be given it. With the eager protocol every rejoin
	// revokes everything, so the worker must stop all its work too.
	OnJoinPrepare func(ctx context.Context, protocol Protocol, lost bool)
	// OnAssigned runs after every successful SyncGroup, on the member's
	// goroutine: heartbeats wait until it returns, so it must be quick
	// (hand the work to the herder). For incremental protocols the member
	// rejoins after a generation with revocations, once OnAssigned returns.
	OnAssigned func(ctx context.Context, g Generation)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// LeaderView is what the leader's assignor sees.
type LeaderView struct {
	Generation int32
	Protocol   Protocol
	LeaderID   string
	// Members sorted by ID.
	Members []JoinedMember
}

// JoinedMember is one member of a generation as the leader sees it.
type JoinedMember struct {
	ID       string
	Metadata Metadata
}

// Generation is one completed rebalance as this member sees it.
type Generation struct {
	ID       int32
	MemberID string
	Protocol Protocol
	IsLeader bool
	// Assignment is what the leader sent (for incremental protocols: what
	// was added and what is revoked).
	Assignment Assignment
	// Connectors and Tasks are everything this member now owns: the
	// assignment for eager, the previous ownership minus revocations plus
	// additions for incremental protocols. Sorted.
	Connectors []string
	Tasks      []TaskID
}

// Member is one worker's membership in the connect group. Run drives it;
// the other methods are safe to call concurrently with Run.
type Member struct {
	cfg    Config
	log    *slog.Logger
	rejoin chan struct{}

	generation atomic.Int32
	// firedGen is the generation whose scheduled rebalance this member
	// started (it is not started twice).
	firedGen atomic.Int32
	// leaseEnd is when the membership may no longer be trusted (unix
	// nanoseconds of the monotonic-based clock; see Lease).
	leaseEnd atomic.Int64
	start    time.Time // base of leaseEnd
	lease    time.Duration
	mu       sync.Mutex
	memberID string
	leaderID string
	protocol Protocol
	owned    Assignment // cumulative (Connectors, Tasks) for metadata
	ownedSet bool
}

// New validates cfg and fills in defaults.
func New(cfg Config) (*Member, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("member: no client")
	case cfg.GroupID == "":
		return nil, errors.New("member: no group id")
	case cfg.ConfigOffset == nil || cfg.Assign == nil || cfg.OnAssigned == nil:
		return nil, errors.New("member: ConfigOffset, Assign and OnAssigned are required")
	}
	if len(cfg.Protocols) == 0 {
		cfg.Protocols = []Protocol{Sessioned, Compatible, Eager}
	}
	for _, p := range cfg.Protocols {
		if p != Sessioned && p != Compatible && p != Eager {
			return nil, fmt.Errorf("member: unknown protocol %q", p)
		}
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.RebalanceTimeout == 0 {
		cfg.RebalanceTimeout = 60 * time.Second
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 3 * time.Second
	}
	if cfg.HeartbeatInterval >= cfg.SessionTimeout {
		return nil, errors.New("member: heartbeat interval must be less than the session timeout")
	}
	if cfg.OnJoinPrepare == nil {
		cfg.OnJoinPrepare = func(context.Context, Protocol, bool) {}
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 6 * time.Second
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	m := &Member{cfg: cfg, log: lg.With("group", cfg.GroupID), rejoin: make(chan struct{}, 1), start: time.Now()}
	m.lease = cfg.SessionTimeout - cfg.StopTimeout
	// A lease must outlast one missed heartbeat.
	if floor := 2 * cfg.HeartbeatInterval; m.lease < floor {
		m.lease = floor
		m.log.Warn("the session timeout leaves too little time to stop the worker's tasks when the coordinator cannot be reached: another worker may start them before they stopped; raise session.timeout.ms or lower task.shutdown.graceful.timeout.ms",
			"session.timeout", cfg.SessionTimeout, "heartbeat.interval", cfg.HeartbeatInterval, "stop.timeout", cfg.StopTimeout)
	}
	m.generation.Store(-1)
	m.firedGen.Store(-1)
	return m, nil
}

// Lease returns how long the membership can still be trusted: the time
// left until SessionTimeout - StopTimeout after the send of the last
// request the coordinator answered for this generation (zero or less:
// expired, or not a member). The coordinator cannot expire the session
// earlier than SessionTimeout after it received that request, which was
// after it was sent; so work stopped within the lease plus StopTimeout
// has stopped before the coordinator can give it to another member.
// Time spent suspended (SIGSTOP) counts: the clock is monotonic.
func (m *Member) Lease() time.Duration {
	end := m.leaseEnd.Load()
	if end == 0 {
		return 0
	}
	return time.Duration(end - int64(time.Since(m.start)))
}

// renew extends the lease from a request sent at sent.
func (m *Member) renew(sent time.Time) {
	m.leaseEnd.Store(int64(sent.Sub(m.start) + m.lease))
}

// Generation is the current group generation, -1 when not a member. Status
// writes carry it (Kafka's putSafe fencing).
func (m *Member) Generation() int32 { return m.generation.Load() }

// MemberID is the id the coordinator gave this member ("" before joining).
func (m *Member) MemberID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// LeaderID is the leader's member id in the current generation.
func (m *Member) LeaderID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaderID
}

// Rejoin asks for a rebalance (for example after a config change that the
// leader must assign). It does not block.
func (m *Member) Rejoin() {
	select {
	case m.rejoin <- struct{}{}:
	default:
	}
}

// scheduledDelay is when to rejoin for a generation's scheduled rebalance
// (0: none). The leader's JoinGroup starts the rebalance; a follower's,
// with unchanged metadata, would just get the same generation back if it
// came first (Kafka's coordinator rebalances a stable group only for its
// leader or for new metadata), so followers rejoin a little later, and
// only once per generation.
func (m *Member) scheduledDelay(g Generation) time.Duration {
	d := time.Duration(g.Assignment.Delay) * time.Millisecond
	if d <= 0 || m.firedGen.Load() == g.ID {
		return 0
	}
	if !g.IsLeader {
		d += min(250*time.Millisecond, m.cfg.HeartbeatInterval/2)
	}
	return d
}

// errLost means the coordinator no longer knows this member/generation.
var errLost = errors.New("member: membership lost")

// Run joins the group and keeps the membership until ctx is done, then
// leaves the group and returns nil. It returns an error only for problems
// retrying cannot fix (no protocol in common, authorization).
func (m *Member) Run(ctx context.Context) error {
	defer m.leave()
	lost := false
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		m.generation.Store(-1)
		m.cfg.OnJoinPrepare(ctx, m.currentProtocol(), lost)
		if lost {
			m.leaseEnd.Store(0) // nothing runs: nothing to protect
			m.mu.Lock()
			m.owned, m.ownedSet = Assignment{}, false
			m.mu.Unlock()
		}
		lost = false
		g, err := m.joinAndSync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if fatal(err) {
				return err
			}
			if errors.Is(err, errLost) {
				lost = true
			}
			if m.leaseEnd.Load() != 0 && m.Lease() <= 0 {
				// The coordinator did not answer in time: it may
				// expire the session and give the work away.
				lost = true
			}
			m.log.Info("rejoining group", "err", err)
			if !errors.Is(err, kerr.RebalanceInProgress) {
				if !sleep(ctx, backoff) {
					return nil
				}
				backoff = min(backoff*2, 5*time.Second)
			}
			continue
		}
		backoff = 100 * time.Millisecond
		m.generation.Store(g.ID)
		m.cfg.OnAssigned(ctx, g)
		if g.Protocol.Incremental() && (len(g.Assignment.RevokedConnectors) > 0 || len(g.Assignment.RevokedTasks) > 0) {
			m.log.Info("rejoining after revocation", "generation", g.ID)
			continue
		}
		if g.Assignment.Error != NoError {
			continue // CONFIG_MISMATCH: OnAssigned read the config topic; rejoin
		}
		err = m.heartbeat(ctx, g.ID, m.scheduledDelay(g))
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errLost) {
			lost = true
		}
		m.log.Info("rejoining group", "generation", g.ID, "reason", err)
	}
	return nil
}

func fatal(err error) bool {
	return errors.Is(err, kerr.InconsistentGroupProtocol) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.InvalidGroupID) || errors.Is(err, kerr.GroupMaxSizeReached)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (m *Member) currentProtocol() Protocol {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.protocol == "" {
		return m.cfg.Protocols[0]
	}
	return m.protocol
}

func (m *Member) joinAndSync(ctx context.Context) (Generation, error) {
	offset := m.cfg.ConfigOffset()
	m.mu.Lock()
	memberID := m.memberID
	var alloc *Assignment
	if m.ownedSet {
		a := m.owned
		alloc = &a
	}
	m.mu.Unlock()

	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = m.cfg.GroupID
	join.SessionTimeoutMillis = int32(m.cfg.SessionTimeout.Milliseconds())
	join.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout.Milliseconds())
	join.ProtocolType = ProtocolType
	for _, p := range m.cfg.Protocols {
		md := Metadata{Version: p.Version(), URL: m.cfg.URL, ConfigOffset: offset}
		if p.Incremental() {
			md.Allocation = alloc
		}
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name = string(p)
		b, err := EncodeMetadata(md)
		if err != nil {
			return Generation{}, fmt.Errorf("member: join group: %w", err)
		}
		jp.Metadata = b
		join.Protocols = append(join.Protocols, jp)
	}
	var resp *kmsg.JoinGroupResponse
	for range 2 {
		join.MemberID = memberID
		sent := time.Now()
		r, err := join.RequestWith(ctx, m.cfg.Client)
		if err == nil && r.ErrorCode == 0 && m.leaseEnd.Load() != 0 {
			m.renew(sent) // the coordinator restarts the session at the join
		}
		if err != nil {
			return Generation{}, fmt.Errorf("member: join group: %w", err)
		}
		err = kerr.ErrorForCode(r.ErrorCode)
		if errors.Is(err, kerr.MemberIDRequired) {
			memberID = r.MemberID // KIP-394: join again with the given id
			m.setMemberID(memberID)
			continue
		}
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.FencedInstanceID) {
			m.setMemberID("")
			return Generation{}, fmt.Errorf("member: join group: %w (%w)", err, errLost)
		}
		if err != nil {
			return Generation{}, fmt.Errorf("member: join group: %w", err)
		}
		resp = r
		break
	}
	if resp == nil {
		return Generation{}, errors.New("member: join group: coordinator kept asking for a member id")
	}
	memberID = resp.MemberID
	proto := Protocol(derefOr(resp.Protocol, ""))
	if proto.Version() == 0 && proto != Eager {
		return Generation{}, fmt.Errorf("member: coordinator chose unknown protocol %q", proto)
	}
	m.mu.Lock()
	m.memberID = memberID
	m.leaderID = resp.LeaderID
	m.protocol = proto
	m.mu.Unlock()
	isLeader := resp.LeaderID == memberID
	m.log.Debug("joined group", "generation", resp.Generation, "member", memberID, "leader", resp.LeaderID, "protocol", proto, "members", len(resp.Members))

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group = m.cfg.GroupID
	sync.Generation = resp.Generation
	sync.MemberID = memberID
	sync.ProtocolType = kmsg.StringPtr(ProtocolType)
	sync.Protocol = kmsg.StringPtr(string(proto))
	if isLeader {
		view := LeaderView{Generation: resp.Generation, Protocol: proto, LeaderID: memberID}
		for _, jm := range resp.Members {
			md, err := DecodeMetadata(jm.ProtocolMetadata)
			if err != nil {
				return Generation{}, fmt.Errorf("member: metadata of member %s: %w", jm.MemberID, err)
			}
			view.Members = append(view.Members, JoinedMember{ID: jm.MemberID, Metadata: md})
		}
		sort.Slice(view.Members, func(i, j int) bool { return view.Members[i].ID < view.Members[j].ID })
		as, err := m.cfg.Assign(ctx, view)
		if err != nil {
			return Generation{}, fmt.Errorf("member: assign: %w", err)
		}
		for _, jm := range view.Members {
			sa := kmsg.NewSyncGroupRequestGroupAssignment()
			sa.MemberID = jm.ID
			a := as[jm.ID]
			if a.Leader == "" {
				a.Leader, a.LeaderURL = memberID, m.cfg.URL
			}
			b, err := EncodeAssignment(proto.Version(), a)
			if err != nil {
				return Generation{}, fmt.Errorf("member: assignment of member %s: %w", jm.ID, err)
			}
			sa.MemberAssignment = b
			sync.GroupAssignment = append(sync.GroupAssignment, sa)
		}
	}
	syncSent := time.Now()
	sr, err := sync.RequestWith(ctx, m.cfg.Client)
	if err != nil {
		return Generation{}, fmt.Errorf("member: sync group: %w", err)
	}
	if err := kerr.ErrorForCode(sr.ErrorCode); err != nil {
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.FencedInstanceID) {
			if !errors.Is(err, kerr.IllegalGeneration) {
				m.setMemberID("")
			}
			return Generation{}, fmt.Errorf("member: sync group: %w (%w)", err, errLost)
		}
		return Generation{}, fmt.Errorf("member: sync group: %w", err)
	}
	a, err := DecodeAssignment(sr.MemberAssignment)
	if err != nil {
		return Generation{}, fmt.Errorf("member: assignment: %w", err)
	}
	// The assignment names the member whose assignor produced it; trust it
	// over the JoinGroup answer (kfake has been seen telling two members
	// they lead the same generation after a leader died).
	if a.Leader != "" && a.Leader != memberID {
		isLeader = false
	}
	m.mu.Lock()
	m.leaderID = a.Leader
	m.mu.Unlock()
	g := Generation{ID: resp.Generation, MemberID: memberID, Protocol: proto, IsLeader: isLeader, Assignment: a}
	m.mu.Lock()
	if proto.Incremental() {
		g.Connectors = applyDelta(m.owned.Connectors, a.RevokedConnectors, a.Connectors)
		g.Tasks = applyDelta(m.owned.Tasks, a.RevokedTasks, a.Tasks)
	} else {
		g.Connectors = applyDelta(nil, nil, a.Connectors)
		g.Tasks = applyDelta(nil, nil, a.Tasks)
	}
	m.owned = Assignment{Leader: a.Leader, LeaderURL: a.LeaderURL, ConfigOffset: a.ConfigOffset, Connectors: g.Connectors, Tasks: g.Tasks}
	m.ownedSet = true
	m.mu.Unlock()
	m.renew(syncSent)
	return g, nil
}

func (m *Member) setMemberID(id string) {
	m.mu.Lock()
	m.memberID = id
	m.mu.Unlock()
}

// applyDelta returns sorted (prev − revoked) ∪ added.
func applyDelta[T comparable](prev, revoked, added []T) []T {
	set := map[T]bool{}
	for _, x := range prev {
		set[x] = true
	}
	for _, x := range revoked {
		delete(set, x)
	}
	for _, x := range added {
		set[x] = true
	}
	out := make([]T, 0, len(set))
	for x := range set {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

func less[T comparable](a, b T) bool {
	switch x := any(a).(type) {
	case string:
		return x < any(b).(string)
	case TaskID:
		y := any(b).(TaskID)
		if x.Connector != y.Connector {
			return x.Connector < y.Connector
		}
		return x.Task < y.Task
	}
	return false
}

// heartbeat keeps the generation alive until a rebalance is needed, the
// member is asked to rejoin, a scheduled rebalance is due (delay > 0), the
// lease runs out, or ctx ends. Heartbeats are sent from their own
// goroutine, one at a time, so that a request the coordinator does not
// answer cannot hold up the lease.
func (m *Member) heartbeat(ctx context.Context, gen int32, delay time.Duration) error {
	t := time.NewTicker(m.cfg.HeartbeatInterval)
	defer t.Stop()
	var scheduled <-chan time.Time
	if delay > 0 {
		st := time.NewTimer(delay)
		defer st.Stop()
		scheduled = st.C
	}
	lease := time.NewTimer(max(m.Lease(), 0))
	defer lease.Stop()
	type result struct {
		sent time.Time
		err  error
	}
	results := make(chan result, 1)
	inFlight := false
	hctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		if inFlight {
			<-results
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.rejoin:
			return errors.New("rejoin requested")
		case <-scheduled:
			m.firedGen.Store(gen)
			m.log.Info("scheduled rebalance: rejoining to assign work held back for a departed member", "generation", gen, "delay", delay)
			return errors.New("scheduled rebalance")
		case <-lease.C:
			if left := m.Lease(); left > 0 {
				lease.Reset(left)
				continue
			}
			m.log.Warn("no heartbeat answered in time: treating the membership as lost and stopping all work before the coordinator can expire the session",
				"generation", gen, "session.timeout", m.cfg.SessionTimeout)
			return fmt.Errorf("heartbeat: lease expired (%w)", errLost)
		case <-t.C:
			if inFlight {
				continue
			}
			inFlight = true
			go func() {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group = m.cfg.GroupID
				req.Generation = gen
				req.MemberID = m.MemberID()
				sent := time.Now()
				rctx, rcancel := context.WithTimeout(hctx, m.cfg.SessionTimeout)
				resp, err := req.RequestWith(rctx, m.cfg.Client)
				rcancel()
				if err == nil {
					err = kerr.ErrorForCode(resp.ErrorCode)
				}
				results <- result{sent, err}
			}()
		case r := <-results:
			inFlight = false
			err := r.err
			switch {
			case err == nil:
				m.renew(r.sent)
				lease.Reset(max(m.Lease(), 0))
			case errors.Is(err, kerr.RebalanceInProgress):
				// Still a member: the request renewed the session.
				m.renew(r.sent)
				return err
			case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.FencedInstanceID):
				m.setMemberID("")
				return fmt.Errorf("heartbeat: %w (%w)", err, errLost)
			case errors.Is(err, kerr.IllegalGeneration):
				return fmt.Errorf("heartbeat: %w (%w)", err, errLost)
			case ctx.Err() != nil:
				return ctx.Err()
			default:
				m.log.Warn("heartbeat failed", "generation", gen, "err", err)
			}
		}
	}
}

// leave sends LeaveGroup so the others rebalance at once instead of after
// a session timeout.
func (m *Member) leave() {
	m.generation.Store(-1)
	id := m.MemberID()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = id
	mem := kmsg.NewLeaveGroupRequestMember()
	mem.MemberID = id
	req.Members = append(req.Members, mem)
	resp, err := req.RequestWith(ctx, m.cfg.Client)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		m.log.Warn("leave group failed", "member", id, "err", err)
	}
	m.setMemberID("")
}

func derefOr(s *string, d string) string {
	if s == nil {
		return d
	}
	return *s
}
