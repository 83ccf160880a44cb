package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tributary-dev/tributary/connectors/internal/cdcmetrics"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// heartbeatMessagePrefix is the prefix of the logical decoding messages the
// connector writes to move its slot on an idle server.
const heartbeatMessagePrefix = "tributary-heartbeat"

// Batching of streamed events.
const (
	streamBatch      = 2048
	streamFlushDelay = 5 * time.Millisecond
)

// resumePoint is where streaming resumes: events at or before it were
// delivered before (the slot may send them again).
type resumePoint struct {
	active bool
	commit uint64 // transactions committing before this LSN are skipped
	// inTx: the point is inside the transaction committing at commit,
	// after its event (lsn, n-1).
	inTx bool
	lsn  uint64
	n    int64
}

// relState is a relation the stream announced.
type relState struct {
	rel *relationInfo
	t   *table // nil when the table is not captured
}

// streamer reads the slot and turns its changes into events.
type streamer struct {
	cfg    *Config
	cat    *catalog
	logger *slog.Logger
	part   sdk.Partition
	db     *pgx.Conn      // catalog look-ups and heartbeats, owned by run
	repl   *pgconn.PgConn // the replication connection
	start  uint64
	resume resumePoint
	pg14   bool // the server has logical decoding messages in pgoutput
	// standby: the server is a standby, where no logical decoding
	// message can be written (heartbeats only ask for the position).
	standby bool
	// v2: protocol version 2 with streaming on (PostgreSQL 14 and later,
	// unless pgoutput.streaming=false): the server streams a large
	// transaction while it is in progress, and stx holds its changes
	// until it commits.
	v2        bool
	stx       *streamedTxs
	inStream  bool   // between Stream Start and Stream Stop
	streamXid uint32 // the transaction of the current stream block
	out       chan<- []sdk.SourceRecord
	// lastStatus is when the last status update went to the server.
	lastStatus time.Time

	// flushed is the LSN the worker committed offsets up to
	// (OffsetsCommitted); the stream confirms it to the server.
	flushed *atomic.Uint64
	onStart func() // called once START_REPLICATION succeeded (may be nil)

	rels       map[uint32]*relState
	inTx       bool
	xid        uint32 // of the transaction being read
	txTouches  bool   // it changed the table an incremental snapshot reads
	skipTx     bool
	tx         *txMeta // provide.transaction.metadata: the transaction being read
	pos        position
	lastCommit uint64
	curLSN     uint64
	nAtLSN     int64
	walEnd     uint64 // latest position with nothing undelivered before it, outside transactions
	hbPos      uint64 // position of the last heartbeat sent
	batch      []sdk.SourceRecord
	batchStart time.Time
	sentFlush  uint64
	tuple      []tupleColumn
	oldTuple   []tupleColumn
	beforeVals []any // scratch of change
	afterVals  []any

	m            *cdcmetrics.Metrics
	slot         *slotMetrics
	hasWALStatus bool // PostgreSQL 13 or later

	// incr is the incremental snapshot (nil: none ran since the start);
	// signals are the signals of the kafka and file channels.
	incr     *incremental
	blocking *blockingReq // a blocking snapshot to run between transactions
	signals  <-chan signalRecord
	// readSnap is the snapshot of the last chunk read; seenXids, while an
	// incremental snapshot runs (always with read.only), the committed
	// transactions the stream passed that not every snapshot sees yet.
	readSnap pgSnapshot
	seenXids map[uint32]bool
	// batchSrc is when the batch's first change was committed (zero
	// while it holds none): MilliSecondsBehindSource.
	batchSrc time.Time
	lastWarn time.Time // of the retained WAL
}

// scratch returns buf resized to n cleared elements.
func scratch(buf []any, n int) []any {
	if cap(buf) < n {
		return make([]any, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// run streams until ctx ends or an error occurs, sending batches on out.
func (s *streamer) run(ctx context.Context, out chan<- []sdk.SourceRecord) error {
	args := []string{"proto_version '1'", "publication_names '" + s.cfg.PublicationName + "'"}
	if s.pg14 {
		args = append(args, "messages 'true'")
	}
	if s.v2 {
		args[0] = "proto_version '2'"
		args = append(args, "streaming 'on'")
		s.stx = newStreamedTxs(s.cfg.StreamBufferBytes, s.cfg.StreamSpillDir)
		defer s.stx.close()
	}
	s.out = out
	if err := pglogrepl.StartReplication(ctx, s.repl, s.cfg.SlotName, pglogrepl.LSN(s.start),
		pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return fmt.Errorf("postgres: start replication from slot %s at %s: %w", s.cfg.SlotName, formatLSN(s.start), err)
	}
	if s.onStart != nil {
		s.onStart()
	}
	s.m.SetConnected(true)
	defer s.m.SetConnected(false)
	s.logger.Info("streaming changes", "slot", s.cfg.SlotName, "from", formatLSN(s.start), "publication", s.cfg.PublicationName,
		"protocol", map[bool]int{false: 1, true: 2}[s.v2], "streaming_in_progress", s.v2)
	s.rels = map[uint32]*relState{}
	s.seenXids = map[uint32]bool{}
	if s.incr.running() {
		s.logger.Info("incremental snapshot in progress: reading the chunk after the last row sent",
			"table", s.incr.current().ID, "tables", len(s.incr.queue), "after_key", s.incr.lastSent)
		if err := s.readChunk(ctx); err != nil {
			return err
		}
	}
	s.sentFlush = s.flushed.Load()
	now := time.Now()
	nextStatus := now.Add(s.cfg.StatusInterval)
	var nextHeartbeat time.Time
	if s.cfg.HeartbeatInterval > 0 {
		nextHeartbeat = now.Add(s.cfg.HeartbeatInterval)
	}
	nextWALCheck := now // the slot's metrics at once, then every slotCheckInterval
	var rc recvContext
	defer rc.stop()
	for {
		// The receive deadline: the next timer, sooner while a batch
		// waits. The context is reused until it expires.
		want := nextStatus
		if !nextHeartbeat.IsZero() && nextHeartbeat.Before(want) {
			want = nextHeartbeat
		}
		if nextWALCheck.Before(want) {
			want = nextWALCheck
		}
		if len(s.batch) > 0 && s.batchStart.Add(streamFlushDelay).Before(want) {
			want = s.batchStart.Add(streamFlushDelay)
		}
		if s.signals != nil || s.blocking != nil || s.incr != nil && s.incr.wantChunk {
			if d := time.Now().Add(signalWake); d.Before(want) {
				want = d
			}
		}
		if s.flushed.Load() != s.sentFlush {
			if d := time.Now().Add(100 * time.Millisecond); d.Before(want) {
				want = d
			}
		}
		msg, err := s.repl.ReceiveMessage(rc.get(ctx, want))
		idle := err != nil
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !pgconn.Timeout(err) && !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("postgres: replication stream: %w", err)
			}
		} else {
			switch m := msg.(type) {
			case *pgproto3.CopyData:
				if err := s.copyData(ctx, m.Data); err != nil {
					return err
				}
			case *pgproto3.ErrorResponse:
				return fmt.Errorf("postgres: replication stream: %w", pgconn.ErrorResponseToPgError(m))
			}
		}
		if err := s.pollSignals(ctx, idle); err != nil {
			return err
		}
		now := time.Now()
		if len(s.batch) >= streamBatch || len(s.batch) > 0 && !now.Before(s.batchStart.Add(streamFlushDelay)) {
			if err := s.flush(ctx, out); err != nil {
				return err
			}
		}
		if !nextHeartbeat.IsZero() && !now.Before(nextHeartbeat) {
			nextHeartbeat = now.Add(s.cfg.HeartbeatInterval)
			if err := s.heartbeat(ctx); err != nil {
				return err
			}
		}
		if !now.Before(nextWALCheck) {
			nextWALCheck = now.Add(slotCheckInterval)
			if err := s.checkSlot(ctx); err != nil {
				return err
			}
		}
		if f := s.flushed.Load(); f != s.sentFlush || !now.Before(nextStatus) {
			if err := s.sendStatus(ctx, false); err != nil {
				return err
			}
			nextStatus = now.Add(s.cfg.StatusInterval)
		}
	}
}

// signalWake is how soon the stream looks at the signal channels and, with
// read.only, at a chunk to read, when no change arrives.
const signalWake = 50 * time.Millisecond

// readOnlyChunkGap is the least time between two chunks of a read.only
// incremental snapshot while changes stream in, so that the stream keeps
// up.
const readOnlyChunkGap = 20 * time.Millisecond

// pollSignals acts on the signals of the kafka and file channels and, with
// read.only, reads a chunk when the stream is between transactions (idle:
// nothing arrived this round).
func (s *streamer) pollSignals(ctx context.Context, idle bool) error {
	for s.signals != nil {
		select {
		case r := <-s.signals:
			if err := s.handleSignal(ctx, r, 0); err != nil {
				return err
			}
			if r.ack != nil {
				r.ack()
			}
			continue
		default:
		}
		break
	}
	if s.blocking != nil && !s.inTx && !s.inStream {
		return s.runBlocking(ctx)
	}
	if in := s.incr; in != nil && in.wantChunk && !s.inTx && !s.inStream && (idle || time.Since(in.lastChunk) >= readOnlyChunkGap) {
		return s.readOnlyChunk(ctx)
	}
	return nil
}

// recvContext is the context of receives: one per deadline, reused until
// it expires or a sooner deadline is wanted (a context per message would
// cost more than decoding it).
type recvContext struct {
	ctx      context.Context
	cancel   context.CancelFunc
	deadline time.Time
}

func (r *recvContext) get(parent context.Context, want time.Time) context.Context {
	if r.ctx == nil || want.Before(r.deadline) || r.ctx.Err() != nil {
		r.stop()
		r.ctx, r.cancel = context.WithDeadline(parent, want)
		r.deadline = want
	}
	return r.ctx
}

func (r *recvContext) stop() {
	if r.cancel != nil {
		r.cancel()
	}
}

// sendStatus confirms the committed position to the server.
func (s *streamer) sendStatus(ctx context.Context, reply bool) error {
	f := s.flushed.Load()
	if f == 0 {
		f = s.start
	}
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pglogrepl.LSN(f), WALFlushPosition: pglogrepl.LSN(f), WALApplyPosition: pglogrepl.LSN(f),
		ReplyRequested: reply,
	})
	if err != nil {
		return fmt.Errorf("postgres: send status to the server: %w", err)
	}
	s.sentFlush = s.flushed.Load()
	s.lastStatus = time.Now()
	return nil
}

// flush sends the batch on out. While out is full, it keeps the server
// informed so that the walsender does not time out.
func (s *streamer) flush(ctx context.Context, out chan<- []sdk.SourceRecord) error {
	if len(s.batch) == 0 {
		return nil
	}
	t := time.NewTicker(s.cfg.StatusInterval)
	defer t.Stop()
	s.m.Queued(s.batchSrc)
	s.batchSrc = time.Time{}
	for {
		select {
		case out <- s.batch:
			// The next batch is sized like this one: while catching up,
			// a flush every streamFlushDelay carries a few dozen events,
			// and a full-size batch (about 300 KiB, zeroed) per flush
			// cost more than the events in it.
			s.batch = make([]sdk.SourceRecord, 0, min(streamBatch, max(64, len(s.batch)+len(s.batch)/4)))
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := s.sendStatus(ctx, false); err != nil {
				return err
			}
		}
	}
}

// heartbeat makes the server write WAL (the action query, or a logical
// decoding message) and emits a heartbeat record at the latest position
// with nothing undelivered before it.
func (s *streamer) heartbeat(ctx context.Context) error {
	switch {
	case s.cfg.HeartbeatQuery != "":
		if _, err := s.db.Exec(ctx, s.cfg.HeartbeatQuery); err != nil {
			s.logger.Warn("heartbeat.action.query failed", "error", err)
		}
	case s.pg14 && !s.standby:
		if _, err := s.db.Exec(ctx, "SELECT pg_logical_emit_message(false, '"+heartbeatMessagePrefix+"', '')"); err != nil {
			s.logger.Warn("heartbeat message failed", "error", err)
		}
	default:
		// Ask the server for its position.
		if err := s.sendStatus(ctx, true); err != nil {
			return err
		}
	}
	s.emitHeartbeat()
	return nil
}

// emitHeartbeat adds a heartbeat record carrying walEnd, unless a heartbeat
// already carried it.
func (s *streamer) emitHeartbeat() {
	if s.cfg.HeartbeatInterval <= 0 || s.inTx || s.walEnd <= s.hbPos {
		return
	}
	s.hbPos = s.walEnd
	now := time.Now()
	key := schema.NewStruct(s.cat.src.heartbeatKey)
	key.SetIndex(0, s.cfg.TopicPrefix)
	val := schema.NewStruct(s.cat.src.heartbeatValue)
	val.SetIndex(0, now.UnixMilli())
	s.add(sdk.SourceRecord{
		Partition: s.part,
		Offset: sdk.Offset{offLSN: int64(s.walEnd), offLSNProc: int64(s.walEnd), offLSNCommit: int64(s.walEnd),
			offTxID: s.pos.txID, offTsUsec: now.UnixMicro()},
		Topic:     s.cfg.HeartbeatPrefix + "." + s.cfg.TopicPrefix,
		KeySchema: s.cat.src.heartbeatKey, Key: key,
		ValueSchema: s.cat.src.heartbeatValue, Value: val,
		Timestamp: now,
	})
}

func (s *streamer) add(r sdk.SourceRecord) {
	if s.incr.running() && r.Offset != nil {
		s.incr.store(r.Offset)
	}
	if len(s.batch) == 0 {
		s.batchStart = time.Now()
		if s.batch == nil {
			s.batch = make([]sdk.SourceRecord, 0, 64)
		}
	}
	s.batch = append(s.batch, r)
}

// slotCheckInterval is how often the stream reads its slot's state (the
// slot metrics, the retained-WAL warning).
const slotCheckInterval = 10 * time.Second

// checkSlot reads the slot's state into the slot metrics, and warns (at
// most once a minute) when it holds more WAL than configured. A lost
// connection is returned, so that the stream fails with it and the task
// reconnects (the query connection is closed by then, and the next use of
// it would fail with pgx's "conn closed", which says nothing of why); any
// other error is logged and the stream goes on without the slot's figures.
func (s *streamer) checkSlot(ctx context.Context) error {
	st, err := readSlotState(ctx, s.db, s.cfg.SlotName, s.hasWALStatus)
	if err != nil {
		if transient(err) || s.db.IsClosed() {
			return fmt.Errorf("postgres: read the replication slot's state: %w", err)
		}
		s.logger.Warn("could not read the replication slot's state", "slot", s.cfg.SlotName, "error", err)
		return nil
	}
	s.slot.set(st)
	retained := st.retained
	if s.cfg.WALWarnBytes <= 0 || time.Since(s.lastWarn) < time.Minute {
		return nil
	}
	if retained > s.cfg.WALWarnBytes {
		s.lastWarn = time.Now()
		s.logger.Warn("the replication slot retains much WAL: the server keeps it until the connector confirms its position (is the task running, and are its offsets committed?)",
			"slot", s.cfg.SlotName, "retained_bytes", retained, "retained", formatBytes(retained), "threshold_bytes", s.cfg.WALWarnBytes)
	}
	return nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// copyData handles one message of the replication stream.
func (s *streamer) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		k, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("postgres: keepalive: %w", err)
		}
		if !s.inTx && uint64(k.ServerWALEnd) > s.walEnd {
			s.walEnd = uint64(k.ServerWALEnd)
		}
		if k.ReplyRequested {
			return s.sendStatus(ctx, false)
		}
	case pglogrepl.XLogDataByteID:
		if len(data) < 25 {
			return fmt.Errorf("postgres: XLogData of %d bytes", len(data))
		}
		walStart := binary.BigEndian.Uint64(data[1:])
		return s.message(ctx, walStart, data[25:])
	}
	return nil
}

// pgEpoch is PostgreSQL's epoch, 2000-01-01, in Unix microseconds.
const pgEpoch = 946_684_800_000_000

func pgTime(us int64) time.Time { return time.UnixMicro(us + pgEpoch).UTC() }

// message handles one pgoutput message.
func (s *streamer) message(ctx context.Context, lsn uint64, msg []byte) error {
	if len(msg) == 0 {
		return nil
	}
	if s.v2 {
		if handled, err := s.streamMessage(ctx, lsn, msg); handled {
			return err
		}
	}
	r := &msgReader{b: msg[1:]}
	switch msg[0] {
	case 'B':
		final := r.u64()
		ts := int64(r.u64())
		xid := r.u32()
		if r.err != nil {
			return r.err
		}
		s.begin(final, pgTime(ts), xid)
		s.txBegin(xid, pgTime(ts), lsn)
		return nil
	case 'C':
		r.u8()
		commit := r.u64()
		end := r.u64()
		if r.err != nil {
			return r.err
		}
		s.commit(commit, end, lsn)
		return nil
	case 'R':
		rel, err := parseRelation(msg[1:])
		if err != nil {
			return err
		}
		return s.relation(ctx, rel)
	case 'I', 'U', 'D':
		if s.skipTx {
			return nil
		}
		return s.change(ctx, msg[0], lsn, r)
	case 'T':
		if s.skipTx || s.cfg.skipped(opTruncate) {
			return nil
		}
		return s.truncate(lsn, r)
	case 'M':
		flags := r.u8()
		mlsn := r.u64()
		prefix := r.str()
		if r.err != nil {
			return r.err
		}
		if flags&1 == 0 && prefix == heartbeatMessagePrefix && !s.inTx {
			if mlsn > s.walEnd {
				s.walEnd = mlsn
			}
			s.emitHeartbeat()
		}
	}
	return nil
}

// begin starts the transaction committing at final.
func (s *streamer) begin(final uint64, ts time.Time, xid uint32) {
	s.inTx = true
	s.xid, s.txTouches = xid, false
	s.pos = position{commit: final, lastCommit: s.lastCommit, txID: int64(xid), commitTs: ts}
	s.pos.box()
	s.skipTx = false
	if s.resume.active {
		switch {
		case final < s.resume.commit:
			s.skipTx = true
		case final > s.resume.commit || !s.resume.inTx:
			s.resume.active = false
		}
	}
}

// commit ends the transaction committed at commit, whose record ends at
// end.
func (s *streamer) commit(commit, end, lsn uint64) {
	if !s.skipTx {
		s.m.Committed()
	}
	if in := s.incr; in != nil {
		in.sawTransaction(s.xid, s.txTouches)
	}
	if s.seenXids != nil && (s.cfg.ReadOnly || s.incr.running()) {
		if len(s.seenXids) > 1<<16 {
			clear(s.seenXids) // long past: every snapshot sees them
		}
		s.seenXids[s.xid] = true
	}
	s.inTx = false
	s.txEnd(end, lsn, s.pos.commitTs)
	s.lastCommit = end // Debezium's "last commit LSN" in source.sequence is the commit's end
	if end > s.walEnd {
		s.walEnd = end
	}
	if s.resume.active && commit >= s.resume.commit {
		s.resume.active = false
	}
}

// streamMessage handles the messages of protocol 2's streaming: the
// stream blocks of in-progress transactions are buffered per transaction;
// a Stream Commit replays its transaction as a protocol-1 transaction (so
// its events, positions and offsets are those protocol 1 gives), a Stream
// Abort drops it or one of its subtransactions. It reports whether msg
// was one of them.
func (s *streamer) streamMessage(ctx context.Context, lsn uint64, msg []byte) (bool, error) {
	switch msg[0] {
	case 'S', 'E', 'c', 'A':
		m, err := pglogrepl.ParseV2(msg, s.inStream)
		if err != nil {
			return true, fmt.Errorf("postgres: pgoutput stream message %q: %w", msg[0], err)
		}
		switch m := m.(type) {
		case *pglogrepl.StreamStartMessageV2:
			if s.inStream || s.inTx {
				return true, fmt.Errorf("postgres: pgoutput Stream Start of transaction %d inside a transaction", m.Xid)
			}
			s.inStream, s.streamXid = true, m.Xid
		case *pglogrepl.StreamStopMessageV2:
			s.inStream = false
		case *pglogrepl.StreamAbortMessageV2:
			s.stx.abort(m.Xid, m.SubXid)
		case *pglogrepl.StreamCommitMessageV2:
			return true, s.streamCommit(ctx, m)
		}
		return true, nil
	}
	if !s.inStream {
		return false, nil
	}
	// A change, relation, type or transactional message of the
	// in-progress transaction: its xid (a subtransaction's for changes
	// made in one) follows the kind.
	if len(msg) < 5 {
		return true, fmt.Errorf("postgres: pgoutput streamed message %q of %d bytes", msg[0], len(msg))
	}
	subxid := binary.BigEndian.Uint32(msg[1:])
	return true, s.stx.add(s.streamXid, subxid, lsn, msg[0], msg[5:])
}

// streamCommit replays a streamed transaction, sending full batches on
// as it goes (a transaction may be much larger than a batch).
func (s *streamer) streamCommit(ctx context.Context, m *pglogrepl.StreamCommitMessageV2) error {
	s.begin(uint64(m.CommitLSN), m.CommitTime.UTC(), m.Xid)
	first := true
	err := s.stx.commit(m.Xid, func(lsn uint64, msg []byte) error {
		if first {
			// BEGIN at the transaction's first change, as protocol 1's.
			s.txBegin(m.Xid, m.CommitTime.UTC(), lsn)
			first = false
		}
		if err := s.message(ctx, lsn, msg); err != nil {
			return err
		}
		if len(s.batch) < streamBatch {
			return nil
		}
		if err := s.flush(ctx, s.out); err != nil {
			return err
		}
		if time.Since(s.lastStatus) >= s.cfg.StatusInterval {
			return s.sendStatus(ctx, false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if first {
		s.txBegin(m.Xid, m.CommitTime.UTC(), uint64(m.CommitLSN))
	}
	s.commit(uint64(m.CommitLSN), uint64(m.TransactionEndLSN), uint64(m.TransactionEndLSN))
	return nil
}

// relation records a relation's definition and rebuilds its table's
// schemas when it changed (ALTER TABLE).
func (s *streamer) relation(ctx context.Context, rel *relationInfo) error {
	if old := s.rels[rel.id]; old != nil && old.rel.equal(rel) {
		return nil
	}
	st := &relState{rel: rel}
	s.rels[rel.id] = st
	if !s.cat.filters.table(rel.table.schema, rel.table.name) {
		return nil
	}
	t, err := s.cat.describe(ctx, s.db, rel.table, rel)
	if err != nil {
		if errors.Is(err, errUnknownType) {
			// A new type (an enum created since the start): reload.
			if lerr := s.cat.loadTypes(ctx, s.db); lerr != nil {
				return lerr
			}
			t, err = s.cat.describe(ctx, s.db, rel.table, rel)
		}
		if err != nil {
			return err
		}
	}
	t.identity = rel.identity
	st.t = t
	s.logger.Info("table schema read", "table", t.id.String(), "columns", len(t.columns))
	return nil
}

// decodeTuple turns a tuple into column values; toasted values become
// the placeholder.
func (s *streamer) decodeTuple(t *table, cols []tupleColumn, vals []any) error {
	if len(cols) != len(t.columns) {
		return fmt.Errorf("postgres: %s: tuple of %d columns for %d", t.id, len(cols), len(t.columns))
	}
	for i, c := range cols {
		col := t.columns[i]
		if col.conv == nil {
			continue
		}
		switch c.kind {
		case tupleText:
			v, err := col.conv.decode(c.data)
			if err != nil {
				return fmt.Errorf("postgres: %s.%s: %w", t.id, col.name, err)
			}
			vals[i] = v
		case tupleToast:
			vals[i] = col.conv.toast
		case tupleNull:
			vals[i] = col.conv.null
		default:
			return fmt.Errorf("postgres: %s.%s: column kind %q in a text-mode stream", t.id, col.name, c.kind)
		}
	}
	return nil
}

// fillRequired puts the schema default, or the type's zero value, in the
// required columns a key-only old tuple leaves empty (as Debezium does).
func fillRequired(t *table, vals []any) {
	for i, col := range t.columns {
		if vals[i] != nil || col.conv == nil || col.schema.Optional {
			continue
		}
		if col.schema.Default != nil {
			vals[i] = col.schema.Default
			continue
		}
		vals[i] = zeroValue(col.schema)
	}
}

func zeroValue(s *schema.Schema) any {
	switch s.Name {
	case schema.DecimalName:
		return new(big.Int)
	case schema.DateName, schema.TimeName, schema.TimestampName:
		return time.UnixMilli(0).UTC()
	case nameVarDecimal:
		v := schema.NewStruct(varDecimalSchema)
		v.SetIndex(0, int32(0))
		v.SetIndex(1, []byte{0})
		return v
	}
	switch s.Type {
	case schema.TypeInt8:
		return int8(0)
	case schema.TypeInt16:
		return int16(0)
	case schema.TypeInt32:
		return int32(0)
	case schema.TypeInt64:
		return int64(0)
	case schema.TypeFloat32:
		return float32(0)
	case schema.TypeFloat64:
		return float64(0)
	case schema.TypeBoolean:
		return false
	case schema.TypeString:
		return ""
	case schema.TypeBytes:
		return []byte{}
	case schema.TypeArray:
		return []any{}
	}
	return nil
}

// change handles an insert, update or delete.
func (s *streamer) change(ctx context.Context, kind byte, lsn uint64, r *msgReader) error {
	relID := r.u32()
	st := s.rels[relID]
	if st == nil {
		return fmt.Errorf("postgres: change of relation %d before its relation message", relID)
	}
	t := st.t
	var oldKind byte
	s.oldTuple = s.oldTuple[:0]
	switch kind {
	case 'I':
		if r.u8() != 'N' {
			return fmt.Errorf("postgres: insert without a new tuple")
		}
		s.tuple = r.tuple(s.tuple)
	case 'U':
		k := r.u8()
		if k == 'K' || k == 'O' {
			oldKind = k
			s.oldTuple = r.tuple(s.oldTuple)
			k = r.u8()
		}
		if k != 'N' {
			return fmt.Errorf("postgres: update without a new tuple")
		}
		s.tuple = r.tuple(s.tuple)
	case 'D':
		oldKind = r.u8()
		if oldKind != 'K' && oldKind != 'O' {
			return fmt.Errorf("postgres: delete without an old tuple (kind %q)", oldKind)
		}
		s.oldTuple = r.tuple(s.oldTuple)
	}
	if r.err != nil {
		return r.err
	}
	if t == nil {
		s.m.Filtered() // a table the publication has and the filters leave out
		return nil
	}
	if lsn != s.curLSN {
		s.curLSN, s.nAtLSN = lsn, 0
	}
	// The values are copied into the events' structs: the slices are
	// reused from change to change.
	var before, after []any
	if oldKind != 0 {
		s.beforeVals = scratch(s.beforeVals, len(t.columns))
		before = s.beforeVals
		if err := s.decodeTuple(t, s.oldTuple, before); err != nil {
			return err
		}
		fillRequired(t, before)
	}
	if kind != 'D' {
		s.afterVals = scratch(s.afterVals, len(t.columns))
		after = s.afterVals
		if err := s.decodeTuple(t, s.tuple, after); err != nil {
			return err
		}
	}
	for _, i := range t.pk {
		if after != nil && after[i] == nil || before != nil && before[i] == nil && oldKind == 'K' {
			return fmt.Errorf("postgres: %s: primary-key column %s is null in a change", t.id, t.columns[i].name)
		}
	}
	if in := s.incr; in != nil && in.table != nil && t.id == in.table.id {
		s.txTouches = true
	}
	if in := s.incr; in != nil && in.windowOpen && in.table != nil && t.id == in.table.id {
		if kind != 'D' {
			if k, ok := tupleKey(t, in.keyCols, s.tuple); ok {
				in.dedupe(t.id, k)
			}
		}
		if oldKind != 0 {
			if k, ok := tupleKey(t, in.keyCols, s.oldTuple); ok {
				in.dedupe(t.id, k)
			}
		}
	}
	var sig *signalRecord
	if sf := s.cat.filters.signal; sf.name != "" && t.id == sf && !s.delivered(lsn) {
		sig = s.signalRow(kind)
	}
	s.emitChange(t, kind, oldKind, lsn, before, after)
	if sig != nil {
		return s.handleSignal(ctx, *sig, lsn)
	}
	return nil
}

// signalRow reads a signal from a change of the signal table: an insert,
// or (incremental.snapshot.watermarking.strategy=insert_delete) the delete
// of an open watermark, which closes its window. Its first three columns
// are the id, the type and the data.
func (s *streamer) signalRow(kind byte) *signalRecord {
	text := func(tuple []tupleColumn, i int) string {
		if i < len(tuple) && tuple[i].kind == tupleText {
			return string(tuple[i].data)
		}
		return ""
	}
	switch {
	case kind == 'I':
		if len(s.tuple) < 3 {
			s.logger.Warn("signal ignored: the signal table needs the columns id, type and data", "table", s.cat.filters.signal.String())
			return nil
		}
		return &signalRecord{id: text(s.tuple, 0), typ: text(s.tuple, 1), data: text(s.tuple, 2), channel: "source"}
	case kind == 'D' && s.cfg.IncrementalWatermark == "insert_delete":
		id := text(s.oldTuple, 0)
		if !strings.HasSuffix(id, "-open") {
			return nil
		}
		return &signalRecord{id: strings.TrimSuffix(id, "-open") + "-close", typ: sigWindowClose, channel: "source"}
	}
	return nil
}

// emitChange emits the events of an insert, update or delete.
func (s *streamer) emitChange(t *table, kind, oldKind byte, lsn uint64, before, after []any) {
	now := time.Now()
	switch kind {
	case 'I':
		if s.cfg.skipped(opCreate) {
			s.m.Filtered()
		} else {
			s.emit(t, lsn, opCreate, nil, after, keyStruct(t, after), now, "INSERT", nil)
		}
	case 'U':
		if s.cfg.skipped(opUpdate) {
			s.m.Filtered()
			return
		}
		newKey := keyStruct(t, after)
		if oldKind != 0 && t.keySchema != nil {
			oldKey := keyStruct(t, before)
			if !schema.ValueEqual(oldKey, newKey) {
				// A primary-key change: delete, tombstone, create.
				s.emit(t, lsn, opDelete, before, nil, oldKey, now, "UPDATE",
					[]sdk.Header{{Key: "__debezium.newkey", Schema: t.keySchema, Value: newKey}})
				if s.cfg.TombstonesOnDelete {
					s.emitTombstone(t, lsn, oldKey, "UPDATE")
				}
				s.emit(t, lsn, opCreate, nil, after, newKey, now, "UPDATE",
					[]sdk.Header{{Key: "__debezium.oldkey", Schema: t.keySchema, Value: oldKey}})
				return
			}
		}
		s.emit(t, lsn, opUpdate, before, after, newKey, now, "UPDATE", nil)
	case 'D':
		if s.cfg.skipped(opDelete) {
			s.m.Filtered()
			return
		}
		key := keyStruct(t, before)
		s.emit(t, lsn, opDelete, before, nil, key, now, "DELETE", nil)
		if s.cfg.TombstonesOnDelete {
			s.emitTombstone(t, lsn, key, "DELETE") // a keyless table's too, as Debezium
		}
	}
}

// delivered reports whether the next event at lsn was delivered before
// the resume point (the stream reads it again after a restart).
func (s *streamer) delivered(lsn uint64) bool {
	n := s.nAtLSN
	if lsn != s.curLSN {
		n = 0
	}
	return s.resume.active && s.resume.inTx && s.pos.commit == s.resume.commit &&
		(lsn < s.resume.lsn || lsn == s.resume.lsn && n < s.resume.n)
}

// next returns the position of the next event at lsn, and whether it was
// delivered before the resume point (and is skipped).
func (s *streamer) next(lsn uint64) (position, bool) {
	pos := s.pos
	pos.lsn = lsn
	pos.n = s.nAtLSN
	s.nAtLSN++
	if s.resume.active && s.resume.inTx && pos.commit == s.resume.commit {
		if lsn < s.resume.lsn || lsn == s.resume.lsn && pos.n < s.resume.n {
			return pos, true
		}
	}
	return pos, false
}

func (s *streamer) emit(t *table, lsn uint64, op string, before, after []any, key *schema.Struct, now time.Time, msgType string, headers []sdk.Header) {
	pos, skip := s.next(lsn)
	block := s.txEvent(t, lsn)
	if skip {
		return
	}
	s.m.Event(cdcmetrics.Op(op[0]))
	if s.batchSrc.IsZero() {
		s.batchSrc = pos.commitTs
	}
	var b, a *schema.Struct
	if before != nil {
		b = valueStruct(t, before)
	}
	if after != nil {
		a = valueStruct(t, after)
	}
	var lsnBox any = int64(pos.lsn)
	src := s.cat.src.sourceStruct(s.cfg, t, &pos, lsnBox, snapFalse)
	val := s.cat.src.event(t, op, b, a, src, now)
	if block != nil {
		val.SetIndex(envTransaction, block)
	}
	rec := sdk.SourceRecord{
		Partition: s.part, Offset: streamOffset(&pos, lsnBox, msgType), Topic: t.topic,
		ValueSchema: t.envelopeSchema, Value: val,
		Headers: headers,
	}
	if key != nil {
		rec.KeySchema, rec.Key = t.keySchema, key
	}
	s.add(rec)
}

func (s *streamer) emitTombstone(t *table, lsn uint64, key *schema.Struct, msgType string) {
	pos, skip := s.next(lsn)
	if skip {
		return
	}
	rec := sdk.SourceRecord{Partition: s.part, Offset: streamOffset(&pos, int64(pos.lsn), msgType), Topic: t.topic}
	if key != nil {
		rec.KeySchema, rec.Key = t.keySchema, key
	}
	s.add(rec)
}

// truncate emits a truncate event per captured table.
func (s *streamer) truncate(lsn uint64, r *msgReader) error {
	n := int(r.u32())
	r.u8() // options
	if n > len(r.b)/4 {
		return fmt.Errorf("postgres: truncate message of %d relations in %d bytes", n, len(r.b))
	}
	ids := make([]uint32, 0, n)
	for range n {
		ids = append(ids, r.u32())
	}
	if r.err != nil {
		return r.err
	}
	if lsn != s.curLSN {
		s.curLSN, s.nAtLSN = lsn, 0
	}
	now := time.Now()
	for _, id := range ids {
		st := s.rels[id]
		if st == nil || st.t == nil {
			continue
		}
		s.emit(st.t, lsn, opTruncate, nil, nil, nil, now, "TRUNCATE", nil)
	}
	return nil
}

// formatLSN renders an LSN as PostgreSQL does ("16/B374D848").
func formatLSN(lsn uint64) string { return pglogrepl.LSN(lsn).String() }
