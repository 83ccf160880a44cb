package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/sdk"
)

// Incremental snapshots, with Debezium's watermark algorithm. The stream's
// goroutine owns the state (incremental) and does all the work, so a chunk
// is read between two changes of the stream:
//
//  1. readChunk writes an open row into the signal table, reads the next
//     chunk of incremental.snapshot.chunk.size rows of the current table
//     in primary-key order (after the last key sent, up to the table's
//     maximum key at the table's start) into the window, and writes a
//     close row.
//  2. The stream sees the open row: the window opens. Any change of the
//     table it sees while the window is open removes the row with its key
//     from the window: the change is newer than (or as new as) what the
//     chunk read.
//  3. The stream sees the close row: the rows left in the window go out as
//     read events (op r, source.snapshot=incremental) at that place in the
//     stream, and the next chunk is read.
//
// Every record's offset carries the state (Debezium's keys): the tables
// left, the key of the last snapshot row sent and the table's maximum key,
// so a task that restarts reads the chunk after the last row it had sent.
// Watermark rows of earlier chunks that the stream reads again after a
// restart are ignored (their chunk id is not the current one).
//
// Debezium's algorithm has a narrow race that this one closes: a
// transaction whose commit record precedes the open row but which was still
// in progress for the chunk's snapshot (a backend descheduled between
// writing its commit record and leaving the proc array) would have its
// change missing from the chunk and streamed before the window. The chunk
// is read in a transaction that also reads pg_current_snapshot(); when a
// transaction the stream has already passed, or one it reads before the
// window opens, was in progress for that snapshot, the chunk is read again
// instead of sent. (Seen once in a 200k-row test under load before the
// first half of the check existed.)
//
// With read.only=true nothing is written: the chunk and its snapshot are
// read when the stream is between transactions; it goes out at once unless
// a transaction the stream has already passed is not visible to the
// snapshot (then it is read again). Changes the stream has not reached yet
// either are in the chunk and come after it, or are not and come after it
// too, so no row ends on a stale read.

// Offset keys of the incremental snapshot (Debezium's).
const (
	offIncrCollections = "incremental_snapshot_collections"
	offIncrPrimaryKey  = "incremental_snapshot_primary_key"
	offIncrMaximumKey  = "incremental_snapshot_maximum_key"
	offIncrCorrelation = "incremental_snapshot_correlation_id"
)

// snapIncremental is source.snapshot of incremental snapshot events.
const snapIncremental = "incremental"

// incrCollection is a table queued for the incremental snapshot, as
// Debezium stores it in the offsets.
type incrCollection struct {
	ID            string  `json:"incremental_snapshot_collections_id"`
	Condition     *string `json:"incremental_snapshot_collections_additional_condition"`
	SurrogateKey  *string `json:"incremental_snapshot_collections_surrogate_key"`
	CorrelationID *string `json:"incremental_snapshot_collections_correlation_id"`
}

func (c incrCollection) condition() string {
	if c.Condition == nil {
		return ""
	}
	return *c.Condition
}

func (c incrCollection) surrogateKey() string {
	if c.SurrogateKey == nil {
		return ""
	}
	return *c.SurrogateKey
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// windowRow is a row of the open chunk.
type windowRow struct {
	key      string   // the table key's text, for de-duplication
	chunkKey []string // the chunk key's text (the primary key, or the surrogate key)
	vals     []any
	removed  bool
}

// incremental is the state of the incremental snapshot.
type incremental struct {
	queue         []incrCollection // the current table first
	lastSent      []string         // chunk key of the last row sent; nil at a table's start
	chunkEnd      []string         // chunk key the next chunk starts after
	maxKey        []string         // the current table's maximum chunk key at its start
	correlationID string
	paused        bool

	chunkID    string // the chunk whose window is awaited; "" none
	windowOpen bool
	pending    bool // a chunk is read and its window not closed
	// xip: transactions in progress for the chunk's snapshot; tainted:
	// one of them committed before the window opened.
	xip     map[uint32]bool
	tainted bool
	window  []windowRow
	index   map[string]int
	// table is the current table's description and keyCols its chunk
	// key's columns (nil until the first chunk of the table).
	table   *table
	keyCols []int

	collJSON string // the queue as stored, cached
	// wantChunk (read.only): a chunk is to be read once the stream is
	// between transactions.
	wantChunk bool
	lastChunk time.Time
}

func (in *incremental) running() bool { return in != nil && len(in.queue) > 0 }

// current returns the table being snapshotted.
func (in *incremental) current() *incrCollection {
	if len(in.queue) == 0 {
		return nil
	}
	return &in.queue[0]
}

// add queues tables, skipping those queued already; it returns the added.
func (in *incremental) add(ids []string, conds []condition, surrogate, correlation string) []string {
	var added []string
	for _, id := range ids {
		if slices.ContainsFunc(in.queue, func(c incrCollection) bool { return c.ID == id }) {
			continue
		}
		c := incrCollection{ID: id, SurrogateKey: optional(surrogate), CorrelationID: optional(correlation)}
		for _, cd := range conds {
			if cd.pattern.MatchString(id) {
				c.Condition = optional(cd.filter)
				break
			}
		}
		in.queue = append(in.queue, c)
		added = append(added, id)
	}
	in.correlationID = correlation
	in.collJSON = ""
	return added
}

// next moves to the next table.
func (in *incremental) next() {
	if len(in.queue) > 0 {
		in.queue = in.queue[1:]
	}
	in.lastSent, in.chunkEnd, in.maxKey, in.table, in.keyCols = nil, nil, nil, nil, nil
	in.clearWindow()
	in.collJSON = ""
	if len(in.queue) == 0 {
		// Done: the next snapshot starts unpaused (Debezium's stays
		// paused until a resume-snapshot, which it ignores while no
		// snapshot runs).
		in.correlationID, in.paused = "", false
	}
}

func (in *incremental) clearWindow() {
	in.window = in.window[:0]
	clear(in.index)
}

// stop removes the tables matching patterns (all for none) from the
// snapshot; it returns those removed. Stopping the current table drops its
// open chunk.
func (in *incremental) stop(patterns []string) []string {
	if len(patterns) == 0 {
		patterns = []string{".*"}
	}
	var res []*regexp.Regexp
	for _, p := range patterns {
		if re, err := regexp.Compile("^(?:" + p + ")$"); err == nil {
			res = append(res, re)
		}
	}
	match := func(id string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(id) })
	}
	var stopped []string
	stopCurrent := false
	kept := in.queue[:0:0]
	for i, c := range in.queue {
		switch {
		case !match(c.ID):
			kept = append(kept, c)
		case i == 0:
			stopCurrent = true
			kept = append(kept, c)
		default:
			stopped = append(stopped, c.ID)
		}
	}
	in.queue = kept
	in.collJSON = ""
	if stopCurrent {
		stopped = append(stopped, in.queue[0].ID)
		in.next()
		in.chunkID, in.pending, in.windowOpen = "", false, false
	}
	return stopped
}

// startChunk begins a new chunk with a fresh id.
func (in *incremental) startChunk() {
	in.chunkID = newUUID()
	in.windowOpen, in.pending, in.tainted = false, true, false
	in.xip = nil
	in.clearWindow()
}

// openWindow opens the window of chunk id (a signal id "<chunk>-open"); an
// id of another chunk is ignored.
func (in *incremental) openWindow(id string) bool {
	if in.chunkID == "" || !strings.HasPrefix(id, in.chunkID) || !in.pending {
		return false
	}
	in.windowOpen = true
	return true
}

// closeWindow closes the window of chunk id; it reports whether it was the
// current chunk's.
func (in *incremental) closeWindow(id string) bool {
	if in.chunkID == "" || !strings.HasPrefix(id, in.chunkID) || !in.pending {
		return false
	}
	in.windowOpen, in.pending = false, false
	return true
}

// put adds a row read by the chunk to the window.
func (in *incremental) put(r windowRow) {
	if in.index == nil {
		in.index = map[string]int{}
	}
	if i, ok := in.index[r.key]; ok {
		in.window[i] = r
		return
	}
	in.index[r.key] = len(in.window)
	in.window = append(in.window, r)
}

// dedupe removes the row with key from the open window of table id: the
// stream has a change of it at least as new.
func (in *incremental) dedupe(id tableID, key string) {
	if !in.windowOpen || len(in.window) == 0 || len(in.queue) == 0 || in.queue[0].ID != id.String() {
		return
	}
	if i, ok := in.index[key]; ok {
		in.window[i].removed = true
		delete(in.index, key)
	}
}

// sawTransaction records a transaction the stream read before the window
// opened: one in progress for the chunk's snapshot that changed the
// chunk's table (touched) taints the chunk.
func (in *incremental) sawTransaction(xid uint32, touched bool) {
	if touched && in.pending && !in.windowOpen && in.xip[xid] {
		in.tainted = true
	}
}

// store adds the state to a record's offset while a snapshot runs.
func (in *incremental) store(o sdk.Offset) {
	if !in.running() {
		return
	}
	if in.collJSON == "" {
		b, _ := json.Marshal(in.queue)
		in.collJSON = string(b)
	}
	o[offIncrCollections] = in.collJSON
	if in.lastSent != nil {
		o[offIncrPrimaryKey] = encodeKey(in.lastSent)
	}
	if in.maxKey != nil {
		o[offIncrMaximumKey] = encodeKey(in.maxKey)
	}
	if in.correlationID != "" {
		o[offIncrCorrelation] = in.correlationID
	}
}

// encodeKey renders a chunk key as stored: a JSON array of the columns'
// text. (Debezium stores a Java-serialized array in hex.)
func encodeKey(k []string) string {
	b, _ := json.Marshal(k)
	return string(b)
}

// loadIncremental reads the state from a stored offset; nil when no
// snapshot runs. A key it cannot read (a Debezium offset's) restarts the
// table from its first row, which warn says.
func loadIncremental(o sdk.Offset) (in *incremental, warn string, err error) {
	s, _ := o[offIncrCollections].(string)
	if s == "" {
		return nil, "", nil
	}
	in = &incremental{}
	if err := json.Unmarshal([]byte(s), &in.queue); err != nil {
		return nil, "", fmt.Errorf("postgres: stored offset's %s %q: %w", offIncrCollections, truncate(s, 200), err)
	}
	if len(in.queue) == 0 {
		return nil, "", nil
	}
	in.collJSON = s
	in.correlationID, _ = o[offIncrCorrelation].(string)
	for _, k := range []struct {
		key string
		dst *[]string
	}{{offIncrPrimaryKey, &in.lastSent}, {offIncrMaximumKey, &in.maxKey}} {
		v, _ := o[k.key].(string)
		if v == "" {
			continue
		}
		if err := json.Unmarshal([]byte(v), k.dst); err != nil {
			warn = "the stored position of the incremental snapshot (" + k.key + ") is not Tributary's: table " + in.queue[0].ID + " is snapshotted again from its first row"
			in.lastSent, in.maxKey = nil, nil
			break
		}
	}
	in.chunkEnd = in.lastSent
	return in, warn, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// expandCollections turns the data-collections of a signal (regular
// expressions, whole-name and case-sensitive as Debezium's) into the
// captured tables they match; an expression matching none is kept as it
// is (as Debezium does), and found missing when its turn comes.
func expandCollections(patterns []string, tables []tableID) []string {
	var out []string
	for _, p := range patterns {
		re, err := regexp.Compile("^(?:" + p + ")$")
		n := len(out)
		if err == nil {
			for _, t := range tables {
				if id := t.String(); re.MatchString(id) && !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		}
		if len(out) == n && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// signalMetadata is the data of a watermark row, as Debezium writes it.
func signalMetadata(open, close time.Time, correlation, table string) string {
	var parts []string
	add := func(k, v string) {
		b, _ := json.Marshal(v)
		parts = append(parts, strconv.Quote(k)+": "+string(b))
	}
	if !open.IsZero() {
		add("openWindowTimestamp", open.UTC().Format(time.RFC3339Nano))
	}
	if !close.IsZero() {
		add("closeWindowTimestamp", close.UTC().Format(time.RFC3339Nano))
	}
	if correlation != "" {
		add("correlationId", correlation)
	}
	if table != "" {
		add("dataCollectionId", table)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// handleSignal acts on a signal at the stream's position lsn (0 for a
// signal of the kafka or file channel).
func (s *streamer) handleSignal(ctx context.Context, r signalRecord, lsn uint64) error {
	sig, err := parseSignal(r)
	if err != nil {
		s.logger.Warn("signal ignored", "channel", r.channel, "id", r.id, "type", r.typ, "error", err)
		return nil
	}
	in := s.incr
	switch sig.typ {
	case sigLog:
		s.logger.Info(sig.message, "signal", sig.id, "channel", r.channel)
	case sigWindowOpen:
		if in != nil && in.openWindow(sig.id) {
			s.logger.Debug("incremental snapshot window opened", "chunk", in.chunkID)
		}
	case sigWindowClose:
		if in == nil || !in.closeWindow(sig.id) {
			return nil
		}
		if in.tainted {
			s.logger.Info("a transaction in progress for the chunk's snapshot committed before its window: reading the chunk again", "table", in.current().ID)
			in.chunkEnd = in.lastSent
			in.clearWindow()
			paused := in.paused
			in.paused = false // the chunk was asked for before any pause
			err := s.readChunk(ctx)
			in.paused = paused
			return err
		}
		s.sendWindow(lsn)
		return s.readChunk(ctx)
	case sigExecuteSnapshot:
		if sig.snapshotType == snapshotBlocking {
			return s.blockingSnapshot(ctx, sig)
		}
		if s.cfg.SignalTable == "" && !s.cfg.ReadOnly {
			s.logger.Warn("signal ignored: an incremental snapshot needs signal.data.collection (its watermarks go there) or read.only=true",
				"signal", sig.id, "channel", r.channel)
			return nil
		}
		tables, err := s.cat.publishedTables(ctx, s.db)
		if err != nil {
			return err
		}
		ids := expandCollections(sig.collections, tables)
		if in == nil {
			in = &incremental{}
			s.incr = in
		}
		wasRunning := in.running()
		added := in.add(ids, sig.conditions, sig.surrogateKey, sig.id)
		s.logger.Info("incremental snapshot requested", "signal", sig.id, "channel", r.channel,
			"data_collections", sig.collections, "tables", added, "chunk_size", s.cfg.IncrementalChunkSize)
		if !wasRunning && in.running() {
			s.m.SnapshotStarted(added)
			return s.readChunk(ctx)
		}
	case sigStopSnapshot:
		if sig.snapshotType != snapshotIncremental {
			s.logger.Warn("signal ignored: only incremental snapshots can be stopped", "signal", sig.id)
			return nil
		}
		if !in.running() {
			s.logger.Warn("stop-snapshot ignored: no incremental snapshot runs", "signal", sig.id)
			return nil
		}
		hadCurrent := in.current().ID
		stopped := in.stop(sig.collections)
		s.logger.Info("tables removed from the incremental snapshot", "signal", sig.id, "tables", stopped)
		if !in.running() {
			s.m.SnapshotAborted()
			s.logger.Info("incremental snapshot stopped")
			return nil
		}
		if in.current().ID != hadCurrent && !in.paused {
			return s.readChunk(ctx)
		}
	case sigPauseSnapshot:
		if in.running() && !in.paused {
			in.paused = true
			s.logger.Info("incremental snapshot paused", "signal", sig.id)
		}
	case sigResumeSnapshot:
		if in.running() && in.paused {
			in.paused = false
			s.logger.Info("incremental snapshot resumed", "signal", sig.id)
			if !in.pending {
				return s.readChunk(ctx)
			}
		}
	}
	return nil
}

// readChunk reads the next chunk between two watermarks (read.only: asks
// for it to be read between two transactions).
func (s *streamer) readChunk(ctx context.Context) error {
	in := s.incr
	if !in.running() || in.paused || in.pending {
		return nil
	}
	if s.cfg.ReadOnly {
		in.wantChunk = true
		return nil
	}
	in.startChunk()
	cur := in.current()
	if err := s.writeWatermark(ctx, in.chunkID+"-open", sigWindowOpen, signalMetadata(time.Now(), time.Time{}, deref(cur.CorrelationID), cur.ID)); err != nil {
		return err
	}
	open := time.Now()
	if err := s.fillWindow(ctx); err != nil {
		return err
	}
	if s.cfg.IncrementalWatermark == "insert_delete" {
		return s.deleteWatermark(ctx, in.chunkID+"-open")
	}
	return s.writeWatermark(ctx, in.chunkID+"-close", sigWindowClose, signalMetadata(open, time.Now(), deref(cur.CorrelationID), cur.ID))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// fillWindow reads chunks into the window until one has rows or no table
// is left, moving past tables that are done, empty or cannot be read.
func (s *streamer) fillWindow(ctx context.Context) error {
	in := s.incr
	for in.running() {
		t, err := s.incrTable(ctx)
		if err != nil {
			if transient(err) {
				return err
			}
			s.logger.Warn("incremental snapshot of the table skipped", "table", in.current().ID, "error", err)
			in.next()
			continue
		}
		if in.maxKey == nil {
			max, err := s.maxKey(ctx, t)
			if err != nil {
				if transient(err) {
					return err
				}
				s.logger.Warn("incremental snapshot of the table skipped", "table", t.id.String(), "error", err)
				in.next()
				continue
			}
			if max == nil {
				s.logger.Info("incremental snapshot of the table done: it is empty", "table", t.id.String())
				s.tableDone()
				continue
			}
			in.maxKey = max
			s.logger.Info("incremental snapshot of the table started", "table", t.id.String(), "maximum_key", max)
		}
		n, err := s.readChunkRows(ctx, t)
		if err != nil {
			if transient(err) {
				return err
			}
			s.logger.Warn("incremental snapshot of the table skipped", "table", t.id.String(), "error", err)
			in.next()
			continue
		}
		if n == 0 {
			s.logger.Info("incremental snapshot of the table done", "table", t.id.String())
			s.tableDone()
			continue
		}
		return nil
	}
	s.logger.Info("incremental snapshot completed")
	s.m.SnapshotCompleted()
	return nil
}

func (s *streamer) tableDone() {
	s.m.SnapshotTableDone()
	s.incr.next()
}

// incrTable returns the current table's description and chunk key.
func (s *streamer) incrTable(ctx context.Context) (*table, error) {
	in := s.incr
	cur := in.current()
	id, err := parseTableID(cur.ID)
	if err != nil {
		return nil, fmt.Errorf("data collection %q: %w", cur.ID, err)
	}
	if !s.cat.filters.table(id.schema, id.name) {
		return nil, fmt.Errorf("table %s is not captured (table.include.list, schema.include.list and their exclude lists)", id)
	}
	// The stream's own description, when it has one, so that snapshot
	// and change events share their schemas.
	var t *table
	for _, st := range s.rels {
		if st.t != nil && st.t.id == id {
			t = st.t
		}
	}
	if t == nil && in.table != nil && in.table.id == id {
		t = in.table
	}
	if t == nil {
		if t, err = s.cat.describe(ctx, s.db, id, nil); err != nil {
			return nil, err
		}
	}
	if in.table != t {
		in.table = t
		in.keyCols = nil
		if sk := cur.surrogateKey(); sk != "" {
			i := slices.IndexFunc(t.columns, func(c *column) bool { return c.name == sk })
			if i < 0 {
				return nil, fmt.Errorf("surrogate key %q is not a column of %s", sk, id)
			}
			in.keyCols = []int{i}
		} else {
			in.keyCols = t.pk
		}
		if len(in.keyCols) == 0 {
			return nil, fmt.Errorf("table %s has no primary key (give a surrogate-key in the signal)", id)
		}
	}
	return t, nil
}

// keyCondition renders (k1, k2) op ('v1'::type1, 'v2'::type2).
func keyCondition(t *table, cols []int, op string, key []string) string {
	names := make([]string, len(cols))
	lits := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgx.Identifier{t.columns[c].name}.Sanitize()
		lits[i] = "'" + strings.ReplaceAll(key[i], "'", "''") + "'::" + t.columns[c].typeName
	}
	return "(" + strings.Join(names, ", ") + ") " + op + " (" + strings.Join(lits, ", ") + ")"
}

func keyOrder(t *table, cols []int, desc bool) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgx.Identifier{t.columns[c].name}.Sanitize()
		if desc {
			names[i] += " DESC"
		}
	}
	return strings.Join(names, ", ")
}

// maxKey reads the largest chunk key of the table (nil: no row).
func (s *streamer) maxKey(ctx context.Context, t *table) ([]string, error) {
	in := s.incr
	names := make([]string, len(in.keyCols))
	for i, c := range in.keyCols {
		// Aliased: ORDER BY would take the output column of the same
		// name, the text, and order by it.
		names[i] = pgx.Identifier{t.columns[c].name}.Sanitize() + "::text AS k" + strconv.Itoa(i)
	}
	where := ""
	if c := in.current().condition(); c != "" {
		where = " WHERE (" + c + ")"
	}
	sql := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT 1", strings.Join(names, ", "), t.id.quoted(), where, keyOrder(t, in.keyCols, true))
	rows, err := s.db.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("postgres: maximum key of %s: %w", t.id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	vals := make([]*string, len(names))
	dst := make([]any, len(names))
	for i := range vals {
		dst[i] = &vals[i]
	}
	if err := rows.Scan(dst...); err != nil {
		return nil, fmt.Errorf("postgres: maximum key of %s: %w", t.id, err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			return nil, fmt.Errorf("postgres: %s: the chunk key column %s is null", t.id, t.columns[in.keyCols[i]].name)
		}
		out[i] = *v
	}
	return out, nil
}

// readChunkRows reads the next chunk into the window (in a transaction that
// also reads its snapshot), and returns its rows.
func (s *streamer) readChunkRows(ctx context.Context, t *table) (int, error) {
	in := s.incr
	var cols []int
	var names []string
	for i, c := range t.columns {
		if c.conv != nil {
			cols = append(cols, i)
			names = append(names, pgx.Identifier{c.name}.Sanitize())
		}
	}
	where := []string{keyCondition(t, in.keyCols, "<=", in.maxKey)}
	if in.chunkEnd != nil {
		where = append([]string{keyCondition(t, in.keyCols, ">", in.chunkEnd)}, where...)
	}
	if c := in.current().condition(); c != "" {
		where = append(where, "("+c+")")
	}
	sql := fmt.Sprintf("COPY (SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d) TO STDOUT", strings.Join(names, ", "), t.id.quoted(),
		strings.Join(where, " AND "), keyOrder(t, in.keyCols, false), s.cfg.IncrementalChunkSize)
	tx, err := s.db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, fmt.Errorf("postgres: incremental snapshot of %s: %w", t.id, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var snap string
	if err := tx.QueryRow(ctx, "SELECT pg_current_snapshot()::text").Scan(&snap); err != nil {
		return 0, fmt.Errorf("postgres: incremental snapshot of %s: snapshot: %w", t.id, err)
	}
	ps, err := parsePgSnapshot(snap)
	if err != nil {
		return 0, err
	}
	in.xip = ps.xipSet()
	if !ps.seesAll(s.seenXids) {
		// A transaction the stream has already passed (its commit
		// record written) was still in progress for this snapshot: its
		// change was streamed before the chunk, and is not in it.
		in.tainted = true
	}
	cr := &chunkReader{t: t, cols: cols, in: in}
	if _, err := tx.Conn().PgConn().CopyTo(ctx, cr, sql); err != nil {
		return 0, fmt.Errorf("postgres: incremental snapshot of %s: %w", t.id, err)
	}
	if cr.err != nil {
		return 0, cr.err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("postgres: incremental snapshot of %s: %w", t.id, err)
	}
	if cr.rows > 0 {
		in.chunkEnd = cr.last
	}
	s.readSnap = ps
	return cr.rows, nil
}

// chunkReader turns the COPY rows of a chunk into window rows.
type chunkReader struct {
	t      *table
	cols   []int
	in     *incremental
	fields [][]byte
	buf    []byte
	rows   int
	last   []string
	err    error
}

func (r *chunkReader) Write(p []byte) (int, error) {
	var err error
	r.fields, r.buf, err = splitCopyRow(p, r.fields, r.buf)
	if err == nil && len(r.fields) != len(r.cols) {
		err = fmt.Errorf("postgres: incremental snapshot of %s: row has %d fields, want %d", r.t.id, len(r.fields), len(r.cols))
	}
	if err != nil {
		r.err = err
		return 0, err
	}
	vals := make([]any, len(r.t.columns))
	text := make([]string, len(r.t.columns))
	for i, c := range r.cols {
		f := r.fields[i]
		if f == nil {
			vals[c] = r.t.columns[c].conv.null
			continue
		}
		text[c] = string(f)
		conv := r.t.columns[c].conv
		dec := conv.decode
		if conv.snapshot != nil {
			dec = conv.snapshot
		}
		v, err := dec(f)
		if err != nil {
			r.err = fmt.Errorf("postgres: incremental snapshot of %s: column %s: %w", r.t.id, r.t.columns[c].name, err)
			return 0, r.err
		}
		vals[c] = v
	}
	chunkKey := make([]string, len(r.in.keyCols))
	for i, c := range r.in.keyCols {
		chunkKey[i] = text[c]
	}
	r.in.put(windowRow{key: dedupeKey(r.t, r.in.keyCols, func(c int) string { return text[c] }), chunkKey: chunkKey, vals: vals})
	r.rows++
	r.last = chunkKey
	return len(p), nil
}

// dedupeKey is the text identifying a row for de-duplication: its message
// key's columns, as Debezium's window is keyed (the chunk key's when it has
// none).
func dedupeKey(t *table, keyCols []int, text func(int) string) string {
	cols := t.key
	if len(cols) == 0 {
		cols = keyCols
	}
	var b strings.Builder
	for _, c := range cols {
		b.WriteString(text(c))
		b.WriteByte(0)
	}
	return b.String()
}

// tupleKey returns the de-duplication key of a streamed tuple, false when a
// key column is not in it as text.
func tupleKey(t *table, keyCols []int, tuple []tupleColumn) (string, bool) {
	cols := t.key
	if len(cols) == 0 {
		cols = keyCols
	}
	var b strings.Builder
	for _, c := range cols {
		if c >= len(tuple) || tuple[c].kind != tupleText {
			return "", false
		}
		b.Write(tuple[c].data)
		b.WriteByte(0)
	}
	return b.String(), true
}

// sendWindow emits the rows left in the window as read events at the
// stream's position lsn.
func (s *streamer) sendWindow(lsn uint64) {
	in := s.incr
	t := in.table
	if t == nil || len(in.window) == 0 {
		return
	}
	now := time.Now()
	n := 0
	for _, r := range in.window {
		if r.removed {
			continue
		}
		in.lastSent = r.chunkKey
		s.emitIncremental(t, lsn, r.vals, now)
		n++
	}
	s.logger.Debug("incremental snapshot chunk sent", "table", t.id.String(), "rows", n, "deduplicated", len(in.window)-n)
	in.clearWindow()
}

// emitIncremental adds the read event of an incremental snapshot row.
func (s *streamer) emitIncremental(t *table, lsn uint64, vals []any, now time.Time) {
	var pos position
	var off sdk.Offset
	var lsnBox any
	if s.inTx {
		var skip bool
		pos, skip = s.next(lsn)
		if skip {
			return
		}
		pos.commitTs = now
		pos.box()
		lsnBox = int64(pos.lsn)
		off = streamOffset(&pos, lsnBox, "INSERT")
	} else {
		// Between transactions (read.only): at the latest position with
		// nothing undelivered before it, as heartbeats are.
		pos = position{lsn: s.walEnd, commit: s.walEnd, lastCommit: s.lastCommit, txID: s.pos.txID, commitTs: now}
		pos.box()
		lsnBox = int64(s.walEnd)
		off = sdk.Offset{offLSN: lsnBox, offLSNProc: lsnBox, offLSNCommit: lsnBox, offTxID: s.pos.txID, offTsUsec: now.UnixMicro()}
	}
	s.m.Event('r')
	src := s.cat.src.sourceStruct(s.cfg, t, &pos, lsnBox, snapIncremental)
	// Debezium leaves txId, lsn and xmin out of incremental snapshot
	// events, and its sequence then holds the last commit twice.
	src.SetIndex(srcTxID, nil)
	src.SetIndex(srcLSN, nil)
	last := "null"
	if s.lastCommit != 0 {
		last = `"` + strconv.FormatUint(s.lastCommit, 10) + `"`
	}
	src.SetIndex(srcSequence, "["+last+","+last+"]")
	rec := sdk.SourceRecord{
		Partition: s.part, Offset: off, Topic: t.topic,
		ValueSchema: t.envelopeSchema, Value: s.cat.src.event(t, opRead, nil, valueStruct(t, vals), src, now),
	}
	if t.keySchema != nil {
		rec.KeySchema, rec.Key = t.keySchema, keyStruct(t, vals)
	}
	s.add(rec)
}

// writeWatermark inserts a watermark row into the signal table.
func (s *streamer) writeWatermark(ctx context.Context, id, typ, data string) error {
	sql := "INSERT INTO " + s.cat.filters.signal.quoted() + " VALUES ($1, $2, $3)"
	if _, err := s.db.Exec(ctx, sql, id, typ, data); err != nil {
		return fmt.Errorf("postgres: incremental snapshot watermark into %s: %w", s.cat.filters.signal, err)
	}
	return nil
}

// deleteWatermark deletes the open row (insert_delete closes a window so).
func (s *streamer) deleteWatermark(ctx context.Context, id string) error {
	t := s.cat.filters.signal.quoted()
	if _, err := s.db.Exec(ctx, "DELETE FROM "+t+" WHERE id = $1", id); err != nil {
		return fmt.Errorf("postgres: incremental snapshot watermark delete from %s: %w", s.cat.filters.signal, err)
	}
	return nil
}

// readOnlyChunk (read.only) reads the next chunk with its snapshot while the
// stream is between transactions, and sends it at once unless a
// transaction the stream has passed is not visible to it.
func (s *streamer) readOnlyChunk(ctx context.Context) error {
	in := s.incr
	in.wantChunk = false
	for attempt := 0; in.running() && !in.paused; attempt++ {
		in.startChunk()
		if err := s.fillWindow(ctx); err != nil {
			return err
		}
		in.lastChunk = time.Now()
		if !in.running() {
			break
		}
		if s.readSnap.seesAll(s.seenXids) || attempt >= 100 {
			if attempt >= 100 {
				s.logger.Warn("the chunk's snapshot kept missing a transaction the stream had passed: sending it anyway", "table", in.current().ID)
			}
			in.pending = false
			s.sendWindow(s.walEnd)
			in.wantChunk = in.running() && !in.paused
			return nil
		}
		in.chunkEnd = in.lastSent
		in.clearWindow()
	}
	in.pending = false
	return nil
}

// pgSnapshot is a transaction snapshot (pg_current_snapshot), with
// PostgreSQL's 32-bit transaction ids (as the stream has them).
type pgSnapshot struct {
	xmin, xmax uint32
	xip        []uint32
}

// parsePgSnapshot parses "xmin:xmax:xip1,xip2".
func parsePgSnapshot(s string) (pgSnapshot, error) {
	var ps pgSnapshot
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return ps, fmt.Errorf("postgres: snapshot %q is not xmin:xmax:xip", s)
	}
	xid := func(v string) (uint32, error) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("postgres: snapshot %q: %w", s, err)
		}
		return uint32(n), nil // the epoch dropped
	}
	var err error
	if ps.xmin, err = xid(parts[0]); err != nil {
		return ps, err
	}
	if ps.xmax, err = xid(parts[1]); err != nil {
		return ps, err
	}
	if parts[2] != "" {
		for _, v := range strings.Split(parts[2], ",") {
			x, err := xid(v)
			if err != nil {
				return ps, err
			}
			ps.xip = append(ps.xip, x)
		}
	}
	return ps, nil
}

func (ps pgSnapshot) xipSet() map[uint32]bool {
	m := make(map[uint32]bool, len(ps.xip))
	for _, x := range ps.xip {
		m[x] = true
	}
	return m
}

// xidBefore compares transaction ids modulo 2^32, as PostgreSQL does.
func xidBefore(a, b uint32) bool { return int32(a-b) < 0 }

// visible reports whether a committed transaction xid is visible to the
// snapshot.
func (ps pgSnapshot) visible(xid uint32) bool {
	if xidBefore(xid, ps.xmin) {
		return true
	}
	if !xidBefore(xid, ps.xmax) {
		return false
	}
	return !slices.Contains(ps.xip, xid)
}

// seesAll reports whether every transaction in seen (committed ones the
// stream has passed) is visible to the snapshot, and forgets those that
// every later snapshot sees.
func (ps pgSnapshot) seesAll(seen map[uint32]bool) bool {
	ok := true
	for x := range seen {
		if !ps.visible(x) {
			ok = false
		} else if xidBefore(x, ps.xmin) {
			delete(seen, x)
		}
	}
	return ok
}

// blockingReq is a blocking snapshot asked for by a signal, run once the
// stream is between transactions.
type blockingReq struct {
	id     string
	tables []tableID
	conds  map[tableID]string
}

// blockingSnapshot queues a blocking snapshot of the signal's tables: the
// stream stops, the tables are read as an initial snapshot is (read
// events, source.snapshot true, first and last), and the stream goes on.
func (s *streamer) blockingSnapshot(ctx context.Context, sig signal) error {
	tables, err := s.cat.publishedTables(ctx, s.db)
	if err != nil {
		return err
	}
	req := &blockingReq{id: sig.id, conds: map[tableID]string{}}
	for _, name := range expandCollections(sig.collections, tables) {
		id, err := parseTableID(name)
		if err != nil || !slices.Contains(tables, id) {
			s.logger.Warn("blocking snapshot: table left out: it is not captured (not in the publication, or filtered out)", "signal", sig.id, "table", name)
			continue
		}
		req.tables = append(req.tables, id)
		for _, c := range sig.conditions {
			if c.pattern.MatchString(name) {
				req.conds[id] = c.filter
				break
			}
		}
	}
	if len(req.tables) == 0 {
		s.logger.Warn("blocking snapshot ignored: no captured table matches", "signal", sig.id, "data_collections", sig.collections)
		return nil
	}
	s.logger.Info("blocking snapshot requested", "signal", sig.id, "tables", len(req.tables))
	s.blocking = req
	return nil
}

// runBlocking runs the queued blocking snapshot: the batch so far goes out
// first, the snapshot's records follow with the stream's position as their
// offset (a restart during it goes on streaming; the snapshot is not taken
// again), and the server hears from the stream meanwhile.
func (s *streamer) runBlocking(ctx context.Context) error {
	req := s.blocking
	s.blocking = nil
	if err := s.flush(ctx, s.out); err != nil {
		return err
	}
	var tables []*table
	for _, id := range req.tables {
		t, err := s.cat.describe(ctx, s.db, id, nil)
		if err != nil {
			if transient(err) {
				return err
			}
			s.logger.Warn("blocking snapshot: table left out", "table", id.String(), "error", err)
			continue
		}
		tables = append(tables, t)
	}
	tx, err := s.db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres: blocking snapshot: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var name string
	if err := tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&name); err != nil {
		return fmt.Errorf("postgres: blocking snapshot: export: %w", err)
	}
	pos := s.walEnd
	txID := s.pos.txID
	s.incr.store(sdk.Offset{}) // fills its cache: the readers below only read it
	snap := &snapshotter{cfg: s.cfg, cat: s.cat, logger: s.logger, part: s.part, name: name, lsn: pos, tables: tables, m: s.m,
		conds: req.conds, offset: func(ts time.Time) sdk.Offset {
			o := sdk.Offset{offLSN: int64(pos), offLSNProc: int64(pos), offLSNCommit: int64(pos), offTxID: txID, offTsUsec: ts.UnixMicro()}
			s.incr.store(o) // an incremental snapshot that runs too keeps its place
			return o
		}}
	// The walsender is not read while the snapshot runs: the status
	// goes to the server from here, so that it does not time out.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(s.cfg.StatusInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if err := s.sendStatus(ctx, false); err != nil {
					s.logger.Warn("blocking snapshot: status to the server failed", "error", err)
				}
			}
		}
	}()
	start := time.Now()
	err = snap.run(ctx, s.out)
	close(done)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("postgres: blocking snapshot: %w", err)
	}
	s.logger.Info("blocking snapshot completed", "signal", req.id, "tables", len(tables), "rows", snap.rows.Load(),
		"duration", time.Since(start).Round(time.Millisecond).String())
	return tx.Commit(ctx)
}
