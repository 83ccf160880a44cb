package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-dev/tributary/connectors/internal/cdcmetrics"
	"github.com/tributary-dev/tributary/sdk"
)

// task is the connector's only task: it owns the slot.
type task struct {
	cfg     Config
	logger  *slog.Logger
	part    sdk.Partition
	filters *filters
	cat     *catalog
	db      *pgx.Conn
	repl    *pgconn.PgConn

	out     chan []sdk.SourceRecord
	pending []sdk.SourceRecord
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	err     error
	flushed atomic.Uint64

	pg14 bool
	// standby: the server is a standby (in recovery), where nothing can
	// be written (standby.go).
	standby bool
	pg13    bool // the slot has wal_status and safe_wal_size
	pg17    bool // failover slots
	// life is the task's lifecycle (lifecycle.go), guarded by mu: the
	// producer and Poll feed it events through fire.
	life lifecycle
	pctx context.Context
	// lastPolled is the offset of the last record Poll handed out: a
	// stream restarted after a lost connection resumes after it.
	lastPolled sdk.Offset

	// incr is the incremental snapshot the stored offset says runs (nil:
	// none); signals carries the signals of the kafka and file channels,
	// whose readers chans waits for.
	incr    *incremental
	signals chan signalRecord
	// rules are the column transformations (nil: none).
	rules *columnRules
	chans sync.WaitGroup

	// m is Debezium's snapshot and streaming metrics, slot the
	// replication slot's (nil until Open).
	m    *cdcmetrics.Metrics
	slot *slotMetrics
}

// outBatches is the capacity, in batches, of the queue between the
// snapshot or stream and Poll.
const outBatches = 4

func newTask(c Config) *task {
	return &task{cfg: c, part: sdk.Partition{"server": c.TopicPrefix}, life: lifecycle{maxRetries: int(c.MaxRetries)}}
}

// fire feeds ev to the lifecycle and returns the action it asks for.
func (t *task) fire(ev lifeEvent) lifeAction {
	t.mu.Lock()
	defer t.mu.Unlock()
	var a lifeAction
	t.life, a = t.life.step(ev)
	return a
}

// lifeState returns the lifecycle's current state.
func (t *task) lifeState() lifecycle {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.life
}

// offsetState is what the stored offset says.
type offsetState int

const (
	offsetNone offsetState = iota
	offsetSnapshotIncomplete
	offsetStreaming
)

func (s offsetState) String() string {
	switch s {
	case offsetNone:
		return "none"
	case offsetSnapshotIncomplete:
		return "snapshot incomplete"
	default:
		return "streaming"
	}
}

// readOffset interprets the stored offset.
func readOffset(o sdk.Offset) (offsetState, resumePoint, error) {
	if o == nil {
		return offsetNone, resumePoint{}, nil
	}
	lsn, ok := o.Int64(offLSN)
	if !ok {
		return 0, resumePoint{}, fmt.Errorf("postgres: stored offset %v has no integer %s", o, offLSN)
	}
	if inSnapshot(o) {
		last, _ := o[offLastSnapshot].(bool)
		done, _ := o[offSnapshotDone].(bool)
		if !last && !done {
			return offsetSnapshotIncomplete, resumePoint{}, nil
		}
		return offsetStreaming, resumePoint{active: true, commit: uint64(lsn)}, nil
	}
	commit, hasCommit := o.Int64(offLSNCommit)
	if _, change := o.String(offMessageType); change && hasCommit {
		n, ok := o.Int64(offEventsAtLSN)
		if !ok {
			n = 1
		}
		return offsetStreaming, resumePoint{active: true, commit: uint64(commit), inTx: true, lsn: uint64(lsn), n: n}, nil
	}
	if hasCommit {
		lsn = commit
	}
	return offsetStreaming, resumePoint{active: true, commit: uint64(lsn)}, nil
}

// inSnapshot reports whether o is a snapshot record's offset: Debezium
// writes "snapshot" as true (older releases) or as the kind of snapshot
// ("INITIAL").
func inSnapshot(o sdk.Offset) bool {
	switch v := o[offSnapshot].(type) {
	case bool:
		return v
	case string:
		return v != "" && v != "false"
	}
	return false
}

// flushLSN is the LSN the slot may confirm once offset o is committed.
func flushLSN(o sdk.Offset) (uint64, bool) {
	if inSnapshot(o) {
		return 0, false
	}
	if c, ok := o.Int64(offLSNCommit); ok {
		return uint64(c), true
	}
	if l, ok := o.Int64(offLSN); ok {
		return uint64(l), true
	}
	return 0, false
}

// slotInfo describes an existing replication slot.
type slotInfo struct {
	exists   bool
	plugin   string
	database string
	active   bool
	flushed  uint64
}

func readSlot(ctx context.Context, db *pgx.Conn, name string) (slotInfo, error) {
	var s slotInfo
	var plugin, database *string
	var flushed *string
	err := db.QueryRow(ctx, `SELECT plugin, database, active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, name).
		Scan(&plugin, &database, &s.active, &flushed)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("postgres: read slot %s: %w", name, err)
	}
	s.exists = true
	if plugin != nil {
		s.plugin = *plugin
	}
	if database != nil {
		s.database = *database
	}
	if flushed != nil {
		l, err := pglogrepl.ParseLSN(*flushed)
		if err == nil {
			s.flushed = uint64(l)
		}
	}
	return s, nil
}

func (t *task) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	t.logger = tc.Logger()
	if t.logger == nil {
		t.logger = slog.Default()
	}
	f, err := newFilters(&t.cfg)
	if err != nil {
		return err
	}
	t.filters = f
	t.cat = newCatalog(&t.cfg, f, t.logger)
	t.cat.rules = t.rules
	t.m, t.slot = registerMetrics(sdk.MetricsOf(tc), t.cfg.TopicPrefix, t.cfg.SlotName)
	if t.db, err = pgx.Connect(ctx, t.cfg.connString(false)); err != nil {
		return fmt.Errorf("postgres: connect to %s:%d/%s: %w", t.cfg.Hostname, t.cfg.Port, t.cfg.DBName, err)
	}
	var version int
	var walLevel string
	var feedback bool
	if err := t.db.QueryRow(ctx, standbyQuery).Scan(&version, &walLevel, &t.standby, &feedback); err != nil {
		return fmt.Errorf("postgres: read server settings: %w", err)
	}
	if walLevel != "logical" {
		return fmt.Errorf("postgres: the server's wal_level is %s; change data capture needs wal_level=logical (ALTER SYSTEM SET wal_level = logical, then restart the server)", walLevel)
	}
	if t.standby {
		if err := standbyError(standbyProblems(&t.cfg, version, feedback)); err != nil {
			return err
		}
		t.logger.Info("the server is a standby: logical decoding on the standby, the publication comes from the primary")
	}
	if err := t.cat.loadTypes(ctx, t.db); err != nil {
		return err
	}
	if err := t.ensurePublication(ctx); err != nil {
		return err
	}
	off, err := tc.Offset(ctx, t.part)
	if err != nil {
		return fmt.Errorf("postgres: read stored offset: %w", err)
	}
	state, resume, err := readOffset(off)
	if err != nil {
		return err
	}
	incr, warn, err := loadIncremental(off)
	if err != nil {
		return err
	}
	if warn != "" {
		t.logger.Warn(warn)
	}
	t.incr = incr
	if err := t.checkSignalTable(ctx); err != nil {
		return err
	}
	slot, err := readSlot(ctx, t.db, t.cfg.SlotName)
	if err != nil {
		return err
	}
	t.logger.Info("starting from the stored offset", "state", state.String(), "offset", off,
		"slot_exists", slot.exists, "slot_confirmed", formatLSN(slot.flushed))
	if slot.exists && slot.plugin != "pgoutput" {
		return fmt.Errorf("postgres: replication slot %s exists with plugin %s; use another slot.name, or drop it (SELECT pg_drop_replication_slot('%s'))", t.cfg.SlotName, slot.plugin, t.cfg.SlotName)
	}
	if slot.exists && slot.database != t.cfg.DBName {
		return fmt.Errorf("postgres: replication slot %s belongs to database %s, not %s; use another slot.name", t.cfg.SlotName, slot.database, t.cfg.DBName)
	}

	mode := t.cfg.snapshotMode()
	snapshot, stream := false, true
	switch state {
	case offsetNone:
		snapshot = mode != "no_data"
	case offsetSnapshotIncomplete:
		snapshot = mode != "no_data"
		if snapshot {
			t.logger.Info("the last snapshot did not complete: it starts again", "snapshot.mode", t.cfg.SnapshotMode)
		}
	case offsetStreaming:
		switch mode {
		case "always":
			snapshot = true
		case "initial_only":
			stream = false
		case "when_needed":
			if !slot.exists || slot.flushed > resume.commit {
				t.logger.Warn("the slot no longer holds the changes after the stored offset: taking a new snapshot",
					"slot", t.cfg.SlotName, "slot_exists", slot.exists, "offset_lsn", formatLSN(resume.commit))
				snapshot = true
			}
		default:
			if !slot.exists {
				return fmt.Errorf("postgres: replication slot %s is gone: the changes since the stored offset (LSN %s) cannot be read any more; "+
					"to take a new snapshot set snapshot.mode=when_needed (or delete the connector's offsets)", t.cfg.SlotName, formatLSN(resume.commit))
			}
			if slot.flushed > resume.commit && resume.commit != 0 {
				t.logger.Warn("the slot's confirmed position is past the stored offset: changes in between are not read again",
					"slot", t.cfg.SlotName, "slot_lsn", formatLSN(slot.flushed), "offset_lsn", formatLSN(resume.commit))
			}
		}
	}
	if mode == "initial_only" && !snapshot {
		stream = false
	}
	if mode == "initial_only" && snapshot {
		stream = false
	}

	t.out = make(chan []sdk.SourceRecord, outBatches)
	t.done = make(chan struct{})
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.cancel, t.pctx = cancel, pctx
	t.startSignalChannels(pctx)
	if !snapshot && !stream {
		t.logger.Info("snapshot.mode=initial_only and the snapshot is complete: nothing to do")
		close(t.out)
		close(t.done)
		return nil
	}
	if t.repl, err = pgconn.Connect(ctx, t.cfg.connString(true)); err != nil {
		return fmt.Errorf("postgres: replication connection: %w", err)
	}
	t.pg17 = version >= 170000
	pg14 := version >= 140000
	t.pg14, t.pg13 = pg14, version >= 130000
	if snapshot {
		return t.startSnapshot(ctx, slot, stream)
	}
	t.m.SnapshotSkipped()
	if slot.exists && t.cfg.SlotFailover {
		if err := t.enableFailover(ctx); err != nil {
			return err
		}
	}
	start := uint64(0)
	if !slot.exists {
		res, err := t.createSlot(ctx, false, false)
		if err != nil {
			return fmt.Errorf("postgres: create replication slot %s: %w", t.cfg.SlotName, err)
		}
		t.logger.Info("replication slot created", "slot", t.cfg.SlotName, "consistent_point", res.ConsistentPoint)
	} else if state == offsetStreaming && resume.commit > slot.flushed {
		start = resume.commit // skips what the server knows to precede the offset
	}
	strm := t.newStreamer(start, resume, pg14)
	t.fire(evStreamStarting{})
	t.startProduce(pctx, strm.run)
	return nil
}

// createSlot creates the replication slot, exporting a snapshot or not;
// with slot.failover (PostgreSQL 17) a permanent slot is created as a
// failover slot, which standbys with sync_replication_slots=on keep in
// step, so that it survives a promotion.
func (t *task) createSlot(ctx context.Context, export, temporary bool) (pglogrepl.CreateReplicationSlotResult, error) {
	if !t.cfg.SlotFailover || temporary {
		action := "NOEXPORT_SNAPSHOT"
		if export {
			action = "EXPORT_SNAPSHOT"
		}
		return pglogrepl.CreateReplicationSlot(ctx, t.repl, t.cfg.SlotName, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{SnapshotAction: action, Mode: pglogrepl.LogicalReplication, Temporary: temporary})
	}
	if !t.pg17 {
		return pglogrepl.CreateReplicationSlotResult{}, fmt.Errorf("postgres: slot.failover needs PostgreSQL 17 or later (failover slots)")
	}
	snap := "'nothing'"
	if export {
		snap = "'export'"
	}
	sql := fmt.Sprintf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput (SNAPSHOT %s, FAILOVER true)", pgx.Identifier{t.cfg.SlotName}.Sanitize(), snap)
	return pglogrepl.ParseCreateReplicationSlot(t.repl.Exec(ctx, sql))
}

// enableFailover makes an existing slot a failover slot (slot.failover).
func (t *task) enableFailover(ctx context.Context) error {
	if !t.pg17 {
		return fmt.Errorf("postgres: slot.failover needs PostgreSQL 17 or later (failover slots)")
	}
	var failover bool
	if err := t.db.QueryRow(ctx, "SELECT failover FROM pg_replication_slots WHERE slot_name = $1", t.cfg.SlotName).Scan(&failover); err != nil {
		return fmt.Errorf("postgres: read slot %s: %w", t.cfg.SlotName, err)
	}
	if failover {
		return nil
	}
	if _, err := t.repl.Exec(ctx, "ALTER_REPLICATION_SLOT "+pgx.Identifier{t.cfg.SlotName}.Sanitize()+" (FAILOVER true)").ReadAll(); err != nil {
		return fmt.Errorf("postgres: make slot %s a failover slot: %w", t.cfg.SlotName, err)
	}
	t.logger.Info("replication slot made a failover slot", "slot", t.cfg.SlotName)
	return nil
}

// startSnapshot takes a consistent snapshot from a new slot (an existing
// one, slot, is dropped first) and, when stream, streams from the slot
// after it.
func (t *task) startSnapshot(ctx context.Context, slot slotInfo, stream bool) error {
	if slot.exists {
		if slot.active {
			return fmt.Errorf("postgres: replication slot %s %w", t.cfg.SlotName, errSlotInUse)
		}
		t.logger.Info("dropping the replication slot to take a consistent snapshot from a new one", "slot", t.cfg.SlotName)
		if _, err := t.db.Exec(ctx, "SELECT pg_drop_replication_slot($1)", t.cfg.SlotName); err != nil {
			return fmt.Errorf("postgres: drop slot %s: %w", t.cfg.SlotName, err)
		}
	}
	res, err := t.createSlot(ctx, true, !stream)
	if err != nil {
		return fmt.Errorf("postgres: create replication slot %s: %w", t.cfg.SlotName, err)
	}
	cp, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return fmt.Errorf("postgres: slot consistent point %q: %w", res.ConsistentPoint, err)
	}
	t.logger.Info("replication slot created", "slot", t.cfg.SlotName, "consistent_point", res.ConsistentPoint, "snapshot", res.SnapshotName)
	ids, err := t.tables(ctx)
	if err != nil {
		return err
	}
	var tables []*table
	for _, id := range ids {
		tb, err := t.cat.describe(ctx, t.db, id, nil)
		if errors.Is(err, errNoTable) {
			continue
		}
		if err != nil {
			return err
		}
		tables = append(tables, tb)
	}
	snap := &snapshotter{cfg: &t.cfg, cat: t.cat, logger: t.logger, part: t.part, name: res.SnapshotName, lsn: uint64(cp), tables: tables, m: t.m}
	names := make([]string, len(tables))
	for i, tb := range tables {
		names[i] = tb.id.String()
	}
	t.m.SnapshotStarted(names)
	strm := t.newStreamer(uint64(cp), resumePoint{}, t.pg14)
	t.newChannels()
	t.fire(evSnapshotStarted{Follow: stream})
	t.startProduce(t.pctx, func(ctx context.Context, out chan<- []sdk.SourceRecord) error {
		if err := snap.run(ctx, out); err != nil {
			t.m.SnapshotAborted()
			return err
		}
		if snap.rows.Load() == 0 {
			// Record that the snapshot is complete.
			now := time.Now()
			t.m.Queued(time.Time{})
			select {
			case out <- []sdk.SourceRecord{{Partition: t.part, Offset: sdk.Offset{offLSN: int64(cp), offLSNProc: int64(cp), offTsUsec: now.UnixMicro()}}}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		t.m.SnapshotCompleted()
		t.fire(evSnapshotDone{})
		if !stream {
			t.logger.Info("snapshot.mode=initial_only: the snapshot is complete, no changes are streamed")
			return nil
		}
		return strm.run(ctx, out)
	})
	return nil
}

func (t *task) newStreamer(start uint64, resume resumePoint, pg14 bool) *streamer {
	s := &streamer{cfg: &t.cfg, cat: t.cat, logger: t.logger, part: t.part, db: t.db, repl: t.repl,
		start: start, resume: resume, pg14: pg14, standby: t.standby, v2: pg14 && t.cfg.Streaming, flushed: &t.flushed, onStart: func() { t.fire(evStreamStarted{}) },
		m: t.m, slot: t.slot, hasWALStatus: t.pg13}
	s.walEnd = start
	s.hbPos = start
	s.incr, t.incr = t.incr, nil
	if t.signals != nil {
		s.signals = t.signals
	}
	return s
}

// startSignalChannels starts the readers of the kafka and file signal
// channels, which run until ctx ends.
func (t *task) startSignalChannels(ctx context.Context) {
	var runs []func(context.Context, chan<- signalRecord)
	for _, ch := range t.cfg.SignalChannels {
		switch strings.TrimSpace(ch) {
		case "kafka":
			topic := t.cfg.SignalKafkaTopic
			if topic == "" {
				topic = t.cfg.TopicPrefix + "-signal"
			}
			k := &kafkaChannel{bootstrap: strings.Split(t.cfg.SignalKafkaBootstrap, ","), topic: topic,
				group: t.cfg.SignalKafkaGroup, key: t.cfg.TopicPrefix, logger: t.logger}
			runs = append(runs, k.run)
		case "file":
			f := &fileChannel{path: t.cfg.SignalFile, interval: t.cfg.SignalPollInterval, logger: t.logger}
			runs = append(runs, f.run)
		}
	}
	if len(runs) == 0 {
		return
	}
	t.signals = make(chan signalRecord, 16)
	for _, run := range runs {
		t.chans.Add(1)
		go func() {
			defer t.chans.Done()
			run(ctx, t.signals)
		}()
	}
}

// checkSignalTable warns when the signal table is not in the publication:
// its signals and watermarks would never reach the stream.
func (t *task) checkSignalTable(ctx context.Context) error {
	sig := t.filters.signal
	if sig.name == "" || !slices.Contains(t.cfg.SignalChannels, "source") && t.cfg.ReadOnly {
		return nil
	}
	var in bool
	err := t.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)",
		t.cfg.PublicationName, sig.schema, sig.name).Scan(&in)
	if err != nil {
		return fmt.Errorf("postgres: read publication %s: %w", t.cfg.PublicationName, err)
	}
	if !in {
		t.logger.Warn("the signal table is not in the publication: its signals and incremental snapshot watermarks cannot reach the connector (ALTER PUBLICATION ... ADD TABLE)",
			"signal.data.collection", sig.String(), "publication", t.cfg.PublicationName)
	}
	return nil
}

// startProduce runs produce in a goroutine with the current channels.
func (t *task) startProduce(ctx context.Context, fn func(context.Context, chan<- []sdk.SourceRecord) error) {
	out, done := t.out, t.done
	go t.produceOn(ctx, out, done, fn)
}

// produceOn runs fn (the snapshot and stream), which sends on out, and
// records how it ended; out and then done are closed at the end.
func (t *task) produceOn(ctx context.Context, out chan []sdk.SourceRecord, done chan struct{}, fn func(context.Context, chan<- []sdk.SourceRecord) error) {
	defer close(done)
	defer close(out)
	if err := fn(ctx, out); err != nil && ctx.Err() == nil {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
	}
}

// tables returns the tables to snapshot.
func (t *task) tables(ctx context.Context) ([]tableID, error) {
	ids, err := t.cat.publishedTables(ctx, t.db)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ids, func(a, b tableID) int {
		return cmp.Compare(t.filters.rank(a.schema, a.name), t.filters.rank(b.schema, b.name))
	})
	return ids, nil
}

// ensurePublication creates or updates the publication as
// publication.autocreate.mode says.
func (t *task) ensurePublication(ctx context.Context) error {
	var exists bool
	if err := t.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", t.cfg.PublicationName).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: read publication %s: %w", t.cfg.PublicationName, err)
	}
	name := pgx.Identifier{t.cfg.PublicationName}.Sanitize()
	with := ""
	if t.cfg.PublishViaRoot {
		with = " WITH (publish_via_partition_root = true)"
	}
	switch t.cfg.PublicationAutocreate {
	case "disabled":
		if !exists {
			return fmt.Errorf("postgres: publication %s does not exist and publication.autocreate.mode=disabled: create it (CREATE PUBLICATION %s FOR TABLE ...)", t.cfg.PublicationName, name)
		}
	case "all_tables":
		if !exists {
			t.logger.Info("creating publication for all tables", "publication", t.cfg.PublicationName)
			if _, err := t.db.Exec(ctx, "CREATE PUBLICATION "+name+" FOR ALL TABLES"+with); err != nil {
				return fmt.Errorf("postgres: create publication %s: %w", t.cfg.PublicationName, err)
			}
		}
	case "no_tables":
		if !exists {
			if _, err := t.db.Exec(ctx, "CREATE PUBLICATION "+name+with); err != nil {
				return fmt.Errorf("postgres: create publication %s: %w", t.cfg.PublicationName, err)
			}
		}
	case "filtered":
		ids, err := t.cat.filteredTables(ctx, t.db)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return fmt.Errorf("postgres: no table matches the filters, so publication %s would be empty", t.cfg.PublicationName)
		}
		list := make([]string, len(ids))
		for i, id := range ids {
			list[i] = id.quoted()
		}
		stmt := "CREATE PUBLICATION " + name + " FOR TABLE " + strings.Join(list, ", ") + with
		if exists {
			stmt = "ALTER PUBLICATION " + name + " SET TABLE " + strings.Join(list, ", ")
		}
		if _, err := t.db.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("postgres: publication %s for the filtered tables: %w", t.cfg.PublicationName, err)
		}
	}
	if t.cfg.PublishViaRoot && exists && t.cfg.PublicationAutocreate != "disabled" {
		var viaRoot bool
		if err := t.db.QueryRow(ctx, "SELECT pubviaroot FROM pg_publication WHERE pubname = $1", t.cfg.PublicationName).Scan(&viaRoot); err != nil {
			return fmt.Errorf("postgres: read publication %s: %w", t.cfg.PublicationName, err)
		}
		if !viaRoot {
			t.logger.Info("setting publish_via_partition_root on the publication", "publication", t.cfg.PublicationName)
			if _, err := t.db.Exec(ctx, "ALTER PUBLICATION "+name+" SET (publish_via_partition_root = true)"); err != nil {
				return fmt.Errorf("postgres: publication %s: publish_via_partition_root: %w", t.cfg.PublicationName, err)
			}
		}
	}
	return nil
}

func (t *task) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	if len(t.pending) == 0 {
		select {
		case b, ok := <-t.out:
			if !ok {
				t.mu.Lock()
				err := t.err
				t.mu.Unlock()
				if err != nil && ctx.Err() != nil {
					return nil, err
				}
				// Until a reconnection succeeds t.err stays, so that the
				// next Poll decides again.
				switch t.fire(evProducerEnded{Err: err}) {
				case actResumeStream:
					restarts := t.lifeState().restarts
					t.logger.Warn("replication stream lost: reconnecting", "error", err, "attempt", restarts)
					if rerr := t.restartStream(ctx); rerr != nil {
						return nil, sdk.Retriable(fmt.Errorf("postgres: reconnect after %w: %w", err, rerr))
					}
					return nil, nil
				case actRetakeSnapshot:
					restarts := t.lifeState().restarts
					t.logger.Warn("the snapshot lost its connection to the server: taking it again from a new slot",
						"error", err, "attempt", restarts)
					if rerr := t.restartSnapshot(ctx); rerr != nil {
						return nil, sdk.Retriable(fmt.Errorf("postgres: take the snapshot again after %w: %w", err, rerr))
					}
					return nil, nil
				case actFail:
					return nil, err
				}
				<-ctx.Done() // initial_only: done
				return nil, nil
			}
			t.pending = b
			t.m.Delivered()
		case <-ctx.Done():
			return nil, nil
		}
	}
	n := min(max, len(t.pending))
	recs := t.pending[:n:n]
	t.pending = t.pending[n:]
	if n > 0 {
		t.lastPolled = recs[n-1].Offset
		t.fire(evDelivered{})
	}
	return recs, nil
}

// recovery is what a task does after its producer ended with an error.
type recovery int

const (
	failTask       recovery = iota
	resumeStream            // reconnect, resume after the last record handed out
	retakeSnapshot          // reconnect, take the snapshot again from a new slot
)

// recoveryFor decides, for a producer that ended with err, within
// errors.max.retries. Only a lost connection is retried, as Debezium's task
// restarts only on a retriable error: an error that would come back (a
// change that cannot be decoded, a missing table) fails the task with it
// rather than reconnect forever. snapshotPending, a snapshot not yet out
// whole, is taken again (the exported snapshot its readers shared died
// with the connection; streaming after it would skip its rows); once the
// snapshot is out or changes flowed (streamed), or during reconnection
// (restarts > 0), the stream is resumed.
func recoveryFor(snapshotPending, streamed bool, restarts int, err error) recovery {
	switch {
	case !transient(err):
		return failTask
	case snapshotPending:
		return retakeSnapshot
	case streamed || restarts > 0:
		return resumeStream
	}
	return failTask
}

// reconnect waits the back-off of the lifecycle's restarts and for the old
// producer to end, then opens new connections to the server.
func (t *task) reconnect(ctx context.Context) error {
	backoff := min(time.Duration(t.lifeState().restarts)*500*time.Millisecond, max(t.cfg.RetryWait, 500*time.Millisecond))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(backoff):
	}
	<-t.done // the old producer has ended
	t.pending = nil
	if t.repl != nil {
		t.repl.Close(ctx)
		t.repl = nil
	}
	if t.db != nil {
		t.db.Close(ctx)
		t.db = nil
	}
	db, err := pgx.Connect(ctx, t.cfg.connString(false))
	if err != nil {
		return err
	}
	repl, err := pgconn.Connect(ctx, t.cfg.connString(true))
	if err != nil {
		db.Close(ctx)
		return err
	}
	t.db, t.repl = db, repl
	return nil
}

// restartStream reconnects and starts a new stream that resumes after the
// last record Poll handed out (what was read beyond it is read again).
func (t *task) restartStream(ctx context.Context) error {
	_, resume, err := readOffset(t.lastPolled)
	if err != nil {
		return err
	}
	incr, _, err := loadIncremental(t.lastPolled)
	if err != nil {
		return err
	}
	if err := t.reconnect(ctx); err != nil {
		return err
	}
	t.incr = incr
	t.newChannels()
	t.fire(evStreamStarting{})
	strm := t.newStreamer(0, resume, t.pg14)
	t.startProduce(t.pctx, strm.run)
	return nil
}

// restartSnapshot reconnects and takes the snapshot again from a new
// slot. The records of the failed one that went out carry offsets of an
// incomplete snapshot, so a restart of the task takes it again too.
func (t *task) restartSnapshot(ctx context.Context) error {
	if err := t.reconnect(ctx); err != nil {
		return err
	}
	slot, err := readSlot(ctx, t.db, t.cfg.SlotName)
	if err != nil {
		return err
	}
	return t.startSnapshot(ctx, slot, t.lifeState().follow)
}

// newChannels gives the next producer its channels and clears the error
// of the last one.
func (t *task) newChannels() {
	t.mu.Lock()
	t.err = nil
	t.mu.Unlock()
	t.out = make(chan []sdk.SourceRecord, outBatches)
	t.done = make(chan struct{})
	t.m.Requeued() // what the last producer queued is dropped
}

// errSlotInUse: the replication slot is held by another connection.
var errSlotInUse = errors.New("is in use by another connection")

// transient reports whether err says that the server or the connection to
// it went away (a crash, a restart, a failover, a network cut), so that
// connecting again can succeed: a connection failure, an I/O error, SQLSTATE
// class 08, 57P01-57P03 (shutdown, crash, not accepting connections yet),
// an exported snapshot gone with its connection, or the slot still held
// by the walsender of a connection that was cut.
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03":
			return true
		case pgErr.Code == "22023" && strings.Contains(pgErr.Message, "snapshot"): // invalid snapshot identifier
			return true
		case pgErr.Code == "55006" && strings.Contains(pgErr.Message, "replication slot"): // active for PID n
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.Is(err, errSlotInUse) || errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// OffsetsCommitted implements sdk.OffsetsCommitter: the slot may confirm
// the position of the latest committed offset.
func (t *task) OffsetsCommitted(_ context.Context, offsets []sdk.SourceOffset) error {
	for _, so := range offsets {
		if so.Partition["server"] != t.cfg.TopicPrefix {
			continue
		}
		if l, ok := flushLSN(so.Offset); ok {
			for {
				cur := t.flushed.Load()
				if l <= cur || t.flushed.CompareAndSwap(cur, l) {
					break
				}
			}
		}
	}
	return nil
}

func (t *task) Close(ctx context.Context) error {
	if t.cancel != nil {
		t.cancel()
		select {
		case <-t.done:
		case <-ctx.Done():
		}
		t.chans.Wait()
	}
	var errs []error
	if t.repl != nil {
		t.repl.Close(ctx)
	}
	if t.db != nil {
		if t.cfg.SlotDropOnStop {
			errs = append(errs, t.dropSlot(ctx))
		}
		t.db.Close(ctx)
	}
	return errors.Join(errs...)
}

// dropSlot drops the slot once the walsender has let it go.
func (t *task) dropSlot(ctx context.Context) error {
	for i := 0; ; i++ {
		_, err := t.db.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", t.cfg.SlotName)
		if err == nil {
			t.logger.Info("replication slot dropped (slot.drop.on.stop)", "slot", t.cfg.SlotName)
			return nil
		}
		var pgErr *pgconn.PgError
		if i >= 50 || !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use
			return fmt.Errorf("postgres: drop slot %s: %w", t.cfg.SlotName, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: drop slot %s: %w", t.cfg.SlotName, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
