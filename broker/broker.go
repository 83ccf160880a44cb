package broker

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/broker/log"
	"github.com/tributary-dev/tributary/internal/dirlock"
)

// Broker is a running single-node broker.
type Broker struct {
	cfg    Config
	logger *slog.Logger
	lns    []*listener
	lock   *dirlock.Lock // LogDir/.lock, held until Close

	clusterID string
	advHost   string
	advPort   int32

	mu       sync.RWMutex
	topics   map[string]*topic
	topicIDs map[[16]byte]*topic
	pids     pidAllocator

	syncer *syncer
	groups *groups   // group coordinator and committed offsets (groups.go)
	txns   *txns     // transaction coordinator (txns.go)
	sec    *security // SCRAM credentials and ACLs (security.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	connMu sync.Mutex
	conns  map[net.Conn]struct{}

	// copyBufs are the buffers fetch data is copied through to TLS
	// connections (no sendfile there): *[]byte of 256 KiB.
	copyBufs sync.Pool
	// produceFrames are the buffers Produce request frames are read into,
	// *[]byte, reused once the request is handled (see conn.readFrame).
	produceFrames sync.Pool

	// requests counts and times requests; nil without Config.Metrics.
	requests *requestMetrics

	closeOnce sync.Once
	closeErr  error
}

// topic is a topic's metadata. Its partition list and config overrides are
// replaced, never modified, so readers need no lock.
type topic struct {
	name     string
	id       [16]byte
	internal bool
	parts    atomic.Pointer[[]*partition]
	cfgs     atomic.Pointer[map[string]string] // overrides only
	m        topicMetrics
}

func newTopic(name string, id [16]byte, configs map[string]string) *topic {
	if configs == nil {
		configs = map[string]string{}
	}
	t := &topic{name: name, id: id, internal: strings.HasPrefix(name, "__")}
	t.cfgs.Store(&configs)
	t.parts.Store(&[]*partition{})
	return t
}

// partitions returns the topic's partitions; do not modify the slice.
func (t *topic) partitions() []*partition { return *t.parts.Load() }

// configs returns the topic's config overrides; do not modify the map.
func (t *topic) configs() map[string]string { return *t.cfgs.Load() }

type partition struct {
	topic *topic
	index int32
	log   *log.Log
}

// metaFile is the broker's persisted topic metadata.
type metaFile struct {
	Version   int         `json:"version"`
	ClusterID string      `json:"cluster_id"`
	Topics    []topicMeta `json:"topics"`
}

type topicMeta struct {
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// Open locks cfg.LogDir (LogDir/.lock, as Kafka), loads the broker's state
// from it (recovering every partition log) and binds the listener. Call
// Serve to accept connections. A log directory another process holds is an
// error matching dirlock.ErrLocked, and nothing in it is touched.
func Open(cfg Config) (*Broker, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// The lock comes before anything reads or repairs the directory: two
	// brokers on one directory truncate each other's acknowledged data.
	lock, err := dirlock.Acquire(cfg.LogDir)
	if err != nil {
		return nil, fmt.Errorf("broker: log.dirs: %w", err)
	}
	b := &Broker{
		cfg:      cfg,
		logger:   cfg.Logger,
		lock:     lock,
		topics:   map[string]*topic{},
		topicIDs: map[[16]byte]*topic{},
		syncer:   newSyncer(),
		conns:    map[net.Conn]struct{}{},
	}
	b.copyBufs.New = func() any { buf := make([]byte, 256<<10); return &buf }
	fail := func(err error) (*Broker, error) {
		b.closeLogs()
		b.lock.Release()
		return nil, err
	}
	b.pids.path = filepath.Join(cfg.LogDir, "producer-id-block")
	start := time.Now()
	if err := b.loadMeta(); err != nil {
		return fail(err)
	}
	gs, err := b.openGroups()
	if err != nil {
		return fail(err)
	}
	b.groups = gs
	ts, recovered, err := b.openTxns()
	if err != nil {
		return fail(err)
	}
	b.txns = ts
	sec, err := b.openSecurity()
	if err != nil {
		return fail(err)
	}
	b.sec = sec
	closeListeners := func() {
		for _, l := range b.lns {
			l.ln.Close()
		}
	}
	for _, lc := range cfg.Listeners {
		rules, _ := parsePrincipalRules(lc.PrincipalRules) // validated
		if lc.TLS != nil {
			// Full-size TLS records from the start: fetch responses are
			// large, and throughput matters more than the first bytes' latency.
			lc.TLS = lc.TLS.Clone()
			lc.TLS.DynamicRecordSizingDisabled = true
		}
		ln, err := net.Listen("tcp", lc.Addr)
		if err != nil {
			closeListeners()
			return fail(fmt.Errorf("broker: listener %s: listen on %s: %w", lc.Name, lc.Addr, err))
		}
		l := &listener{cfg: lc, ln: ln, rules: rules}
		l.advHost, l.advPort = cfg.advertise(lc.Advertised, ln.Addr())
		b.lns = append(b.lns, l)
	}
	b.advHost, b.advPort = b.lns[0].advHost, b.lns[0].advPort
	if cfg.Metrics != nil {
		b.requests = newRequestMetrics()
		if err := cfg.Metrics.Register(brokerCollector{b}); err != nil {
			closeListeners()
			return fail(fmt.Errorf("broker: metrics: %w", err))
		}
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.syncer.run(b.ctx) }()
	go func() { defer b.wg.Done(); b.retentionLoop(b.ctx) }()
	b.wg.Add(1)
	go func() { defer b.wg.Done(); b.groups.run(b.ctx) }()
	b.wg.Add(1)
	go func() { defer b.wg.Done(); b.txns.start(b.ctx, recovered) }()
	if cfg.CleanerEnable {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.cleanerLoop(b.ctx) }()
	}
	var bound []string
	for _, l := range b.lns {
		bound = append(bound, l.cfg.Name+"://"+l.ln.Addr().String())
	}
	b.logger.Info("broker ready", "listeners", strings.Join(bound, ","), "advertised", b.Addr(), "log_dir", cfg.LogDir,
		"topics", len(b.topics), "cluster_id", b.clusterID, "startup", time.Since(start).Round(time.Millisecond))
	return b, nil
}

// Addr is the advertised host:port that clients bootstrap from (of the
// first listener).
func (b *Broker) Addr() string {
	return net.JoinHostPort(b.advHost, strconv.Itoa(int(b.advPort)))
}

// ListenerAddr is the advertised host:port of the named listener, "" if
// there is no such listener.
func (b *Broker) ListenerAddr(name string) string {
	for _, l := range b.lns {
		if strings.EqualFold(l.cfg.Name, name) {
			return net.JoinHostPort(l.advHost, strconv.Itoa(int(l.advPort)))
		}
	}
	return ""
}

// ClusterID is the persisted id of this broker's cluster.
func (b *Broker) ClusterID() string { return b.clusterID }

// Serve accepts connections on every listener until ctx is cancelled or
// Close is called.
func (b *Broker) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { b.Close() })
	defer stop()
	errs := make(chan error, len(b.lns))
	for _, l := range b.lns {
		go func() { errs <- b.serveListener(l) }()
	}
	var err error
	for range b.lns {
		if e := <-errs; e != nil && err == nil {
			err = e
			b.Close()
		}
	}
	return err
}

func (b *Broker) serveListener(l *listener) error {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if b.ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return fmt.Errorf("broker: listener %s: accept: %w", l.cfg.Name, err)
		}
		b.connMu.Lock()
		if b.ctx.Err() != nil {
			b.connMu.Unlock()
			c.Close()
			return nil
		}
		b.conns[c] = struct{}{}
		b.wg.Add(1)
		b.connMu.Unlock()
		go func() {
			defer b.wg.Done()
			b.serveConn(c, l)
			b.connMu.Lock()
			delete(b.conns, c)
			b.connMu.Unlock()
		}()
	}
}

// Close stops accepting, closes every connection, runs a last group commit
// and closes every log. It is safe to call more than once.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		b.cancel()
		for _, l := range b.lns {
			l.ln.Close()
		}
		b.connMu.Lock()
		for c := range b.conns {
			c.Close()
		}
		b.connMu.Unlock()
		b.wg.Wait()
		b.closeErr = errors.Join(b.closeLogs(), b.lock.Release())
		b.logger.Info("broker stopped")
	})
	return b.closeErr
}

func (b *Broker) closeLogs() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for _, t := range b.topics {
		for _, p := range t.partitions() {
			if err := p.log.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (b *Broker) metaPath() string { return filepath.Join(b.cfg.LogDir, "topics.json") }

func (b *Broker) loadMeta() error {
	raw, err := os.ReadFile(b.metaPath())
	var m metaFile
	switch {
	case errors.Is(err, os.ErrNotExist):
		m = metaFile{Version: 1, ClusterID: newClusterID()}
	case err != nil:
		return fmt.Errorf("broker: read metadata: %w", err)
	default:
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("broker: metadata file %s is corrupt: %w", b.metaPath(), err)
		}
		if m.Version != 1 {
			return fmt.Errorf("broker: metadata file %s has unknown version %d", b.metaPath(), m.Version)
		}
	}
	b.clusterID = m.ClusterID
	for _, tm := range m.Topics {
		id, err := parseUUID(tm.ID)
		if err != nil {
			return fmt.Errorf("broker: topic %s: %w", tm.Name, err)
		}
		t := newTopic(tm.Name, id, tm.Configs)
		b.topics[t.name] = t // before opening, so a failure closes what opened
		parts, err := b.openPartitions(t, 0, tm.Partitions)
		t.parts.Store(&parts)
		if err != nil {
			return err
		}
		b.topicIDs[t.id] = t
	}
	b.cleanLogDir()
	if errors.Is(err, os.ErrNotExist) {
		return b.saveMetaLocked()
	}
	return nil
}

// openPartitions opens (creating if needed) partitions [from, to) of t and
// returns the topic's new partition list; on error the list holds what opened.
func (b *Broker) openPartitions(t *topic, from, to int32) ([]*partition, error) {
	parts := append([]*partition(nil), t.partitions()...)
	cfg := b.logConfig(t.configs())
	for i := from; i < to; i++ {
		dir := filepath.Join(b.cfg.LogDir, fmt.Sprintf("%s-%d", t.name, i))
		l, err := log.Open(dir, cfg, b.logger.With("topic", t.name, "partition", i))
		if err != nil {
			return parts, fmt.Errorf("broker: %w", err)
		}
		parts = append(parts, &partition{topic: t, index: i, log: l})
	}
	return parts, nil
}

// addPartitions grows a topic to count partitions.
func (b *Broker) addPartitions(t *topic, count int32) error {
	defer b.topicsChanged() // after b.mu is released
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.topics[t.name] != t {
		return errors.New("topic was deleted")
	}
	old := t.partitions()
	if int(count) <= len(old) {
		return nil
	}
	parts, err := b.openPartitions(t, int32(len(old)), count)
	if err != nil {
		for _, p := range parts[len(old):] {
			p.log.Delete()
		}
		return err
	}
	t.parts.Store(&parts)
	if err := b.saveMetaLocked(); err != nil {
		t.parts.Store(&old)
		for _, p := range parts[len(old):] {
			p.log.Delete()
		}
		return err
	}
	b.logger.Info("added partitions", "topic", t.name, "partitions", count)
	return nil
}

// setTopicConfigs replaces a topic's config overrides and applies them.
func (b *Broker) setTopicConfigs(t *topic, next map[string]string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := t.configs()
	t.cfgs.Store(&next)
	if err := b.saveMetaLocked(); err != nil {
		t.cfgs.Store(&old)
		return err
	}
	cfg := b.logConfig(next)
	for _, p := range t.partitions() {
		p.log.SetConfig(cfg)
	}
	b.logger.Info("altered topic configs", "topic", t.name, "configs", next)
	return nil
}

// saveMetaLocked persists the topic list; b.mu must be held (or the broker
// not yet shared).
func (b *Broker) saveMetaLocked() error {
	m := metaFile{Version: 1, ClusterID: b.clusterID}
	for _, t := range b.topics {
		m.Topics = append(m.Topics, topicMeta{Name: t.name, ID: formatUUID(t.id), Partitions: int32(len(t.partitions())), Configs: t.configs()})
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := log.WriteFileAtomic(b.metaPath(), raw); err != nil {
		return fmt.Errorf("broker: save metadata: %w", err)
	}
	return nil
}

// topic returns a topic by name.
func (b *Broker) topic(name string) *topic {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.topics[name]
}

// partition returns a partition or nil.
func (b *Broker) partition(name string, p int32) *partition {
	t := b.topic(name)
	if t == nil {
		return nil
	}
	parts := t.partitions()
	if p < 0 || int(p) >= len(parts) {
		return nil
	}
	return parts[p]
}

var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// validateTopicName applies Kafka's topic name rules.
func validateTopicName(name string) error {
	switch {
	case name == "":
		return kafkaMessage("Topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return kafkaMessage("Topic name cannot be \".\" or \"..\"")
	case len(name) > 249:
		return kafkaMessage("Topic name is illegal, it can't be longer than 249 characters, topic name: " + name)
	case !legalTopic.MatchString(name):
		return kafkaMessage("Topic name " + name + " is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'")
	}
	return nil
}

// createTopic creates a topic; configs must be validated already.
func (b *Broker) createTopic(name string, partitions int32, configs map[string]string) (*topic, error) {
	defer b.topicsChanged() // after b.mu is released
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.topics[name]; ok {
		return nil, errTopicExists
	}
	var id [16]byte
	for {
		rand.Read(id[:])
		if _, taken := b.topicIDs[id]; !taken && id != ([16]byte{}) {
			break
		}
	}
	t := newTopic(name, id, configs)
	parts, err := b.openPartitions(t, 0, partitions)
	if err != nil {
		for _, p := range parts {
			p.log.Delete()
		}
		return nil, err
	}
	t.parts.Store(&parts)
	b.topics[name] = t
	b.topicIDs[id] = t
	if err := b.saveMetaLocked(); err != nil {
		delete(b.topics, name)
		delete(b.topicIDs, id)
		for _, p := range t.partitions() {
			p.log.Delete()
		}
		return nil, err
	}
	b.logger.Info("created topic", "topic", name, "partitions", partitions, "configs", configs)
	return t, nil
}

var errTopicExists = errors.New("topic already exists")

// deleteTopic removes a topic and its data. The partition directories are
// renamed out of the way before the lock is released, so a topic re-created
// with the same name at once starts empty; leftovers of a crash in between
// are removed at the next start (cleanLogDir).
func (b *Broker) deleteTopic(t *topic) error {
	defer b.topicsChanged() // after b.mu is released
	b.mu.Lock()
	if b.topics[t.name] != t {
		b.mu.Unlock()
		return nil
	}
	delete(b.topics, t.name)
	delete(b.topicIDs, t.id)
	if err := b.saveMetaLocked(); err != nil {
		b.topics[t.name] = t
		b.topicIDs[t.id] = t
		b.mu.Unlock()
		return err
	}
	var errs, trash []string
	for _, p := range t.partitions() {
		p.log.Close()
		dst := fmt.Sprintf("%s.%x-delete", p.log.Dir(), t.id[:6])
		if err := os.Rename(p.log.Dir(), dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err.Error())
			continue
		}
		trash = append(trash, dst)
	}
	if err := log.SyncDir(b.cfg.LogDir); err != nil {
		errs = append(errs, err.Error())
	}
	b.mu.Unlock()
	for _, d := range trash {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err.Error())
		}
	}
	b.logger.Info("deleted topic", "topic", t.name)
	if len(errs) > 0 {
		return fmt.Errorf("broker: delete topic %s: %s", t.name, strings.Join(errs, "; "))
	}
	return nil
}

var partitionDirName = regexp.MustCompile(`^(.+)-(\d+)$`)

// cleanLogDir removes what a crash can leave behind in the log directory:
// partition directories renamed for deletion, and partition directories of
// topics the metadata does not list (a crash between creating a topic's
// directories and saving the metadata; nothing in them was acknowledged).
func (b *Broker) cleanLogDir() {
	entries, err := os.ReadDir(b.cfg.LogDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		path := filepath.Join(b.cfg.LogDir, name)
		if strings.HasSuffix(name, "-delete") {
			os.RemoveAll(path)
			continue
		}
		m := partitionDirName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if t := b.topics[m[1]]; t == nil || n >= len(t.partitions()) {
			b.logger.Warn("removing a partition directory no topic owns", "dir", name)
			os.RemoveAll(path)
		}
	}
}

// retentionLoop applies retention.ms and retention.bytes periodically.
func (b *Broker) retentionLoop(ctx context.Context) {
	tick := time.NewTicker(b.cfg.RetentionCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			b.applyRetention(time.Now())
		}
	}
}

func (b *Broker) applyRetention(now time.Time) {
	b.mu.RLock()
	var logs []*log.Log
	for _, t := range b.topics {
		if !b.topicHasPolicy(t.configs(), "delete") {
			continue
		}
		for _, p := range t.partitions() {
			logs = append(logs, p.log)
		}
	}
	b.mu.RUnlock()
	for _, l := range logs {
		if _, err := l.EnforceRetention(now); err != nil && !errors.Is(err, log.ErrClosed) {
			b.logger.Warn("retention failed", "dir", l.Dir(), "err", err)
		}
	}
}

func newClusterID() string {
	var id [16]byte
	rand.Read(id[:])
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func formatUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func parseUUID(s string) ([16]byte, error) {
	var id [16]byte
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != 16 {
		return id, fmt.Errorf("bad topic id %q", s)
	}
	copy(id[:], raw)
	return id, nil
}

// pidAllocator hands out producer ids, persisting blocks of them so that an
// id is never reused after a restart.
type pidAllocator struct {
	mu   sync.Mutex
	path string
	next int64
	end  int64
}

const pidBlock = 1000

func (a *pidAllocator) allocate() (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.end {
		start := int64(0)
		if raw, err := os.ReadFile(a.path); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
				start = n
			}
		}
		if a.end > start {
			start = a.end
		}
		if err := log.WriteFileAtomic(a.path, []byte(strconv.FormatInt(start+pidBlock, 10))); err != nil {
			return -1, err
		}
		a.next, a.end = start, start+pidBlock
	}
	id := a.next
	a.next++
	return id, nil
}
