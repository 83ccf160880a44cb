package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/tributary-dev/tributary/connectors/internal/cdcmetrics"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// snapshotter reads the captured tables inside the slot's exported
// snapshot, in parallel over cfg.SnapshotThreads connections, each table in
// chunks of cfg.SnapshotFetchSize rows, and sends the read events in
// batches on out. Memory stays bounded: a worker holds one chunk's row at a
// time plus the batches in flight on bounded channels.
type snapshotter struct {
	cfg    *Config
	cat    *catalog
	logger *slog.Logger
	part   sdk.Partition
	name   string // exported snapshot
	lsn    uint64 // the slot's consistent point
	tables []*table

	rows     atomic.Int64
	doneTabs atomic.Int64
	m        *cdcmetrics.Metrics
	// conds are additional conditions per table, of a blocking snapshot's
	// signal: a SELECT statement that replaces the table (Debezium's form,
	// as snapshot.select.statement.overrides) or a WHERE condition.
	conds map[tableID]string
	// offset, when set, gives the records' offset instead of the initial
	// snapshot's (a blocking snapshot's records carry the stream's
	// position), and no record is marked as the snapshot's last.
	offset func(ts time.Time) sdk.Offset
}

// offsetAt is the offset of a record read at ts.
func (s *snapshotter) offsetAt(txID int64, ts time.Time) sdk.Offset {
	if s.offset != nil {
		return s.offset(ts)
	}
	return snapshotOffset(s.lsn, txID, ts, false)
}

// snapshotBatch is the size of the snapshot pipeline's batches. Small
// batches keep few events alive between the reading connection and the
// SDK (which gathers polls into its own batches): the plugin's collector
// then has less to mark, and the process stays small.
const snapshotBatch = 256

// run reads every table and sends the events on out, the last one marked
// as the snapshot's last. It returns once everything is sent.
func (s *snapshotter) run(ctx context.Context, out chan<- []sdk.SourceRecord) error {
	start := time.Now()
	s.logger.Info("snapshot started", "tables", len(s.tables), "threads", s.cfg.SnapshotThreads,
		"chunk_rows", s.cfg.SnapshotFetchSize, "snapshot", s.name, "lsn", formatLSN(s.lsn))
	g, gctx := errgroup.WithContext(ctx)
	queue := make(chan *table, len(s.tables))
	for _, t := range s.tables {
		queue <- t
	}
	close(queue)
	// Workers send batches to the merger, which marks the first and last
	// events of the whole snapshot and forwards the batches.
	merged := make(chan []sdk.SourceRecord, int(s.cfg.SnapshotThreads)+1)
	var wg sync.WaitGroup
	// failed is set before a failing worker is counted done: merged is
	// closed once all are, and the errgroup cancels gctx only after the
	// worker's function has returned, so gctx alone could still look
	// fine to the merger, which would then mark the last event of a
	// snapshot that did not complete.
	var failed atomic.Pointer[error]
	for range min(int(s.cfg.SnapshotThreads), max(1, len(s.tables))) {
		wg.Add(1)
		g.Go(func() error {
			err := s.worker(gctx, queue, merged)
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
			wg.Done()
			return err
		})
	}
	go func() { wg.Wait(); close(merged) }()
	g.Go(func() error {
		return s.merge(gctx, merged, out, func() error {
			if p := failed.Load(); p != nil {
				return *p
			}
			return nil
		})
	})
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			d := time.Since(start)
			// Durations are logged as text: the plugin's log reaches the
			// worker's as JSON, where a time.Duration is nanoseconds.
			s.logger.Info("snapshot completed", "tables", len(s.tables), "rows", s.rows.Load(),
				"duration", d.Round(time.Millisecond).String(), "rows_per_s", int64(float64(s.rows.Load())/max(d.Seconds(), 1e-3)))
			return nil
		case <-progress.C:
			d := time.Since(start)
			s.logger.Info("snapshot in progress", "tables_done", s.doneTabs.Load(), "tables", len(s.tables),
				"rows", s.rows.Load(), "rows_per_s", int64(float64(s.rows.Load())/d.Seconds()))
		}
	}
}

// merge forwards batches, holding the latest event back so that the very
// last one can be marked; the very first is marked too. Once in is
// closed, failed returns a reader's error, if one failed: then nothing is
// marked last (the stored offsets must say the snapshot is incomplete,
// so that a restart takes it again) and merge returns that error.
func (s *snapshotter) merge(ctx context.Context, in <-chan []sdk.SourceRecord, out chan<- []sdk.SourceRecord, failed func() error) error {
	var held *sdk.SourceRecord
	first := true
	send := func(b []sdk.SourceRecord) error {
		s.m.Queued(time.Time{})
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for b := range in {
		if len(b) == 0 {
			continue
		}
		if first {
			setSnapshotMarker(&b[0], snapFirst)
			first = false
		}
		fwd := make([]sdk.SourceRecord, 0, len(b)+1)
		if held != nil {
			fwd = append(fwd, *held)
		}
		fwd = append(fwd, b[:len(b)-1]...)
		last := b[len(b)-1]
		held = &last
		if len(fwd) > 0 {
			if err := send(fwd); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := failed(); err != nil {
		return err
	}
	if held == nil {
		return nil
	}
	setSnapshotMarker(held, snapLast)
	if s.offset == nil {
		held.Offset = maps.Clone(held.Offset) // shared with the table's other rows
		held.Offset[offLastSnapshot] = true
	}
	return send([]sdk.SourceRecord{*held})
}

// setSnapshotMarker gives a read event a source struct of its own (a
// table's rows share one) with the marker.
func setSnapshotMarker(r *sdk.SourceRecord, marker string) {
	v := r.Value.(*schema.Struct)
	shared := v.GetIndex(envSource).(*schema.Struct)
	src := schema.NewStruct(shared.Schema())
	for i := range shared.Schema().Fields {
		src.SetIndex(i, shared.GetIndex(i))
	}
	src.SetIndex(srcSnapshot, marker)
	v.SetIndex(envSource, src)
}

// worker reads tables from queue until it is empty.
func (s *snapshotter) worker(ctx context.Context, queue <-chan *table, out chan<- []sdk.SourceRecord) error {
	conn, err := pgx.Connect(ctx, s.cfg.connString(false))
	if err != nil {
		return fmt.Errorf("postgres: snapshot connection: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("postgres: snapshot transaction: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+s.name+"'"); err != nil {
		return fmt.Errorf("postgres: import snapshot %s: %w", s.name, err)
	}
	// Chunks are read in key order with a LIMIT: without statistics (a
	// table loaded just before) the planner may sort the whole table for
	// each chunk instead of walking the primary key's index.
	if _, err := conn.Exec(ctx, "SET LOCAL enable_sort = off"); err != nil {
		return fmt.Errorf("postgres: snapshot settings: %w", err)
	}
	// The source's time of every read event is, as Debezium's, the
	// database's CURRENT_TIMESTAMP in the snapshot's transaction.
	var xmin int64
	var ts time.Time
	if err := conn.QueryRow(ctx, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, CURRENT_TIMESTAMP").Scan(&xmin, &ts); err != nil {
		return fmt.Errorf("postgres: snapshot xmin and time: %w", err)
	}
	for t := range queue {
		if err := s.readTable(ctx, conn, t, xmin, ts, out); err != nil {
			return err
		}
		s.doneTabs.Add(1)
		s.m.SnapshotTableDone()
	}
	_, _ = conn.Exec(ctx, "COMMIT")
	return nil
}

// readTable reads one table in chunks; txID and ts are the source's
// transaction id and time of its events.
func (s *snapshotter) readTable(ctx context.Context, conn *pgx.Conn, t *table, txID int64, ts time.Time, out chan<- []sdk.SourceRecord) error {
	start := time.Now()
	var cols []int
	var names []string
	for i, c := range t.columns {
		if c.conv != nil {
			cols = append(cols, i)
			names = append(names, pgx.Identifier{c.name}.Sanitize())
		}
	}
	selectList := strings.Join(names, ", ")
	if selectList == "" {
		selectList = "NULL"
	}
	r := newRowReader(ctx, s, t, cols, txID, ts, out, s.m.TableRows("postgres", s.cfg.TopicPrefix, t.id.String()))
	var n int64
	var err error
	if len(t.pk) > 0 {
		n, err = s.readByKey(ctx, conn, t, selectList, r)
	} else {
		n, err = s.readByCtid(ctx, conn, t, selectList, r)
	}
	if err != nil {
		return err
	}
	if err := r.finish(); err != nil {
		return err
	}
	s.logger.Info("snapshot of table done", "table", t.id.String(), "rows", n, "duration", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// readByKey reads the table in primary-key order, chunk after chunk, each
// chunk starting after the last key of the one before.
func (s *snapshotter) readByKey(ctx context.Context, conn *pgx.Conn, t *table, selectList string, r *rowReader) (int64, error) {
	var keyCols, keyTypes []string
	for _, i := range t.pk {
		keyCols = append(keyCols, pgx.Identifier{t.columns[i].name}.Sanitize())
		keyTypes = append(keyTypes, t.columns[i].typeName)
	}
	order := strings.Join(keyCols, ", ")
	var total int64
	var after []string // text of the last key read
	for {
		var conds []string
		if after != nil {
			lits := make([]string, len(after))
			for i, a := range after {
				lits[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'::" + keyTypes[i]
			}
			conds = append(conds, "("+order+") > ("+strings.Join(lits, ", ")+")")
		}
		from, cond, _ := s.source(t)
		if cond != "" {
			conds = append(conds, "("+cond+")")
		}
		where := ""
		if len(conds) > 0 {
			where = " WHERE " + strings.Join(conds, " AND ")
		}
		sql := fmt.Sprintf("COPY (SELECT %s FROM %s%s ORDER BY %s LIMIT %d) TO STDOUT", selectList, from, where, order, s.cfg.SnapshotFetchSize)
		r.rows = 0
		if _, err := conn.PgConn().CopyTo(ctx, r, sql); err != nil {
			return total, fmt.Errorf("postgres: snapshot of %s: %w", t.id, err)
		}
		if r.err != nil {
			return total, r.err
		}
		total += r.rows
		if r.rows < int64(s.cfg.SnapshotFetchSize) {
			return total, nil
		}
		after = r.lastKey()
	}
}

// source returns what a table's rows are read from (the table, or the
// signal's SELECT statement as a derived table, then replaced is true)
// and the condition they must meet, if any.
func (s *snapshotter) source(t *table) (from, cond string, replaced bool) {
	c := strings.TrimRight(strings.TrimSpace(s.conds[t.id]), "; \t\n")
	if isSelectStatement(c) {
		return "(" + c + ") AS snapshot_select", "", true
	}
	return t.id.quoted(), c, false
}

// isSelectStatement reports whether an additional condition is a whole
// SELECT statement (Debezium's form for blocking snapshots) rather than a
// WHERE condition.
func isSelectStatement(c string) bool {
	f := strings.Fields(c)
	return len(f) > 0 && (strings.EqualFold(f[0], "SELECT") || strings.EqualFold(f[0], "WITH"))
}

// readByCtid reads a table without a primary key in ranges of pages (or,
// when a SELECT statement replaces the table, in one statement).
func (s *snapshotter) readByCtid(ctx context.Context, conn *pgx.Conn, t *table, selectList string, r *rowReader) (int64, error) {
	if from, _, replaced := s.source(t); replaced {
		sql := fmt.Sprintf("COPY (SELECT %s FROM %s) TO STDOUT", selectList, from)
		r.rows = 0
		if _, err := conn.PgConn().CopyTo(ctx, r, sql); err != nil {
			return 0, fmt.Errorf("postgres: snapshot of %s: %w", t.id, err)
		}
		return r.rows, r.err
	}
	var pages, relpages int64
	var reltuples float64
	err := conn.QueryRow(ctx, `SELECT pg_relation_size(c.oid) / current_setting('block_size')::int, c.relpages, c.reltuples
		FROM pg_class c WHERE c.oid = $1`, t.oid).Scan(&pages, &relpages, &reltuples)
	if err != nil {
		return 0, fmt.Errorf("postgres: snapshot of %s: size: %w", t.id, err)
	}
	step := int64(100)
	if relpages > 0 && reltuples > 0 {
		step = max(1, int64(float64(s.cfg.SnapshotFetchSize)/(reltuples/float64(relpages))))
	}
	var total int64
	for from := int64(0); ; from += step {
		cond := fmt.Sprintf("ctid >= '(%d,0)'::tid AND ctid < '(%d,0)'::tid", from, from+step)
		if from+step >= pages { // the last range is open: pages added meanwhile hold no rows of the snapshot, but reading them is cheap
			cond = fmt.Sprintf("ctid >= '(%d,0)'::tid", from)
		}
		if _, c, _ := s.source(t); c != "" {
			cond += " AND (" + c + ")"
		}
		sql := fmt.Sprintf("COPY (SELECT %s FROM %s WHERE %s) TO STDOUT", selectList, t.id.quoted(), cond)
		r.rows = 0
		if _, err := conn.PgConn().CopyTo(ctx, r, sql); err != nil {
			return total, fmt.Errorf("postgres: snapshot of %s: %w", t.id, err)
		}
		if r.err != nil {
			return total, r.err
		}
		total += r.rows
		if from+step >= pages {
			return total, nil
		}
	}
}

// rowReader receives COPY rows (one per Write) and turns them into read
// events. Rows cost the plugin little beyond their values: the events'
// structs come from blocks (slabs), their strings from shared blocks, and
// the source struct and offset are the table's, shared.
type rowReader struct {
	ctx    context.Context
	s      *snapshotter
	t      *table
	cols   []int
	txID   int64
	srcTs  time.Time // the source's time of every event
	out    chan<- []sdk.SourceRecord
	vals   []any
	fields [][]byte
	buf    []byte

	// The source struct and offset are shared by the table's events
	// (read-only; a marked event gets its own), the event's ts_ms by the
	// events read in the same millisecond.
	pos                position
	lsnBox             any
	src                *schema.Struct
	off                sdk.Offset
	ms                 int64 // the millisecond tsMs boxes (0: none yet)
	tsMs               any
	values, keys, envs slab
	strs               strings.Builder
	// batch ends with the table's latest event (held back to be marked
	// the table's last).
	batch []sdk.SourceRecord
	count int64 // events of this table so far
	rows  int64 // rows of the current chunk
	// keyText holds the text of the latest row's key columns, one after
	// the other, keyEnds where each ends; keyFields are their fields.
	keyText   []byte
	keyEnds   []int
	keyFields []int
	err       error
	// scanned is the table's RowsScanned.
	scanned *sdk.Gauge
}

// newRowReader returns the reader of table t's columns cols.
func newRowReader(ctx context.Context, s *snapshotter, t *table, cols []int, txID int64, ts time.Time, out chan<- []sdk.SourceRecord, scanned *sdk.Gauge) *rowReader {
	r := &rowReader{s: s, t: t, cols: cols, txID: txID, srcTs: ts, out: out, ctx: ctx, vals: make([]any, len(t.columns)), scanned: scanned,
		values: slab{schema: t.valueSchema}, keys: slab{schema: t.keySchema}, envs: slab{schema: t.envelopeSchema}}
	for _, k := range t.pk {
		for i, c := range cols {
			if c == k {
				r.keyFields = append(r.keyFields, i)
			}
		}
	}
	return r
}

// slab hands out empty structs of one schema from blocks allocated
// together (schema.NewStructs): the events of a batch live and die
// together, so two allocations per block replace two per struct.
type slab struct {
	schema *schema.Schema
	free   []schema.Struct
}

func (a *slab) next() *schema.Struct {
	if len(a.free) == 0 {
		a.free = schema.NewStructs(a.schema, snapshotBatch)
	}
	v := &a.free[0]
	a.free = a.free[1:]
	return v
}

// textBlock is the size of the blocks the strings of the rows are carved
// from; a longer value gets its own string.
const textBlock = 16 << 10

// text returns b as a string carved from the current block of strings (a
// block is never written again where a string was carved, and it lives as
// long as one of its strings).
func (r *rowReader) text(b []byte) string {
	if len(b) > textBlock/8 {
		return string(b)
	}
	if r.strs.Cap()-r.strs.Len() < len(b) {
		r.strs = strings.Builder{}
		r.strs.Grow(textBlock)
	}
	n := r.strs.Len()
	r.strs.Write(b)
	return r.strs.String()[n:]
}

func (r *rowReader) Write(p []byte) (int, error) {
	var err error
	r.fields, r.buf, err = splitCopyRow(p, r.fields, r.buf)
	if err == nil && len(r.fields) != len(r.cols) && len(r.cols) > 0 {
		err = fmt.Errorf("postgres: snapshot of %s: row has %d fields, want %d", r.t.id, len(r.fields), len(r.cols))
	}
	if err != nil {
		r.err = err
		return 0, err
	}
	clear(r.vals)
	for i, c := range r.cols {
		f := r.fields[i]
		conv := r.t.columns[c].conv
		switch {
		case f == nil:
			r.vals[c] = conv.null
		case conv.text:
			r.vals[c] = r.text(f)
		default:
			dec := conv.decode
			if conv.snapshot != nil {
				dec = conv.snapshot
			}
			v, err := dec(f)
			if err != nil {
				r.err = fmt.Errorf("postgres: snapshot of %s: column %s: %w", r.t.id, r.t.columns[c].name, err)
				return 0, r.err
			}
			r.vals[c] = v
		}
	}
	r.keyText, r.keyEnds = r.keyText[:0], r.keyEnds[:0]
	for _, i := range r.keyFields {
		r.keyText = append(r.keyText, r.fields[i]...)
		r.keyEnds = append(r.keyEnds, len(r.keyText))
	}
	r.rows++
	r.s.rows.Add(1)
	r.s.m.SnapshotRow(r.scanned)
	if err := r.emit(); err != nil {
		r.err = err
		return 0, err
	}
	return len(p), nil
}

// lastKey returns the text of the latest row's key columns.
func (r *rowReader) lastKey() []string {
	key := make([]string, len(r.keyEnds))
	from := 0
	for i, end := range r.keyEnds {
		key[i] = string(r.keyText[from:end])
		from = end
	}
	return key
}

func (r *rowReader) emit() error {
	s, t := r.s, r.t
	r.count++
	if r.pos.boxed == nil {
		// The source's time and the offset's are the snapshot's (as
		// Debezium's): the table's events share them.
		r.pos = position{lsn: s.lsn, txID: r.txID, commitTs: r.srcTs}
		r.pos.box()
		r.lsnBox = int64(s.lsn)
		r.src = s.cat.src.sourceStruct(s.cfg, t, &r.pos, r.lsnBox, snapTrue)
		r.off = s.offsetAt(r.txID, r.srcTs)
	}
	// The event's time is the read's (Debezium's clock).
	now := time.Now()
	us := now.UnixMicro()
	if ms := floorDiv(us, 1000); ms != r.ms {
		r.ms, r.tsMs = ms, ms
	}
	src := r.src
	if r.count == 1 {
		src = s.cat.src.sourceStruct(s.cfg, t, &r.pos, r.lsnBox, snapFirstTable)
	}
	after := fillStruct(r.values.next(), t.valueCols, r.vals)
	rec := sdk.SourceRecord{
		Partition: s.part, Offset: r.off, Topic: t.topic,
		ValueSchema: t.envelopeSchema, Value: fillEvent(r.envs.next(), opRead, nil, after, src, r.tsMs, us, now.UnixNano()),
	}
	if t.keySchema != nil {
		rec.KeySchema, rec.Key = t.keySchema, fillStruct(r.keys.next(), t.key, r.vals)
	}
	if len(r.batch) == snapshotBatch {
		// Send all but the latest event.
		held := r.batch[snapshotBatch-1]
		r.batch = r.batch[:snapshotBatch-1]
		if err := r.flush(); err != nil {
			return err
		}
		r.batch = append(r.batch, held)
	}
	r.batch = append(r.batch, rec)
	return nil
}

// flush sends the batch and starts another.
func (r *rowReader) flush() error {
	if len(r.batch) == 0 {
		return nil
	}
	select {
	case r.out <- r.batch:
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
	r.batch = make([]sdk.SourceRecord, 0, snapshotBatch)
	return nil
}

// finish marks the table's last event and sends what is left.
func (r *rowReader) finish() error {
	if r.count > 1 && len(r.batch) > 0 {
		setSnapshotMarker(&r.batch[len(r.batch)-1], snapLastTable)
	}
	return r.flush()
}
