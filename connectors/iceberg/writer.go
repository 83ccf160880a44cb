package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// rowsPerBatch is how many rows go into one Arrow record batch handed to
// iceberg-go's Parquet writer.
const rowsPerBatch = 8192

// tableWriter is one destination table of a task: the changes taken for
// it since its last commit, and the Kafka position the table holds.
type tableWriter struct {
	name      string // as configured: namespace.table
	ident     table.Identifier
	cat       catalog.Catalog
	tbl       *table.Table // nil until loaded or created
	cfg       *Config
	ex        extra
	in        input
	group     string
	task      string
	idColumns []string
	log       *slog.Logger
	batch     *batch
	// base is, per partition this task consumes, the table's offset its
	// changes start from (the compare-and-set of commits); floor the
	// offset below which records are already in the table (or taken).
	base  offsets
	floor map[sdk.TopicPartition]int64
	// rowSchema is the Connect schema of the last row taken (a table is
	// created from it).
	rowSchema *schema.Schema
	stats     *commitStats
	// lastMaintenance is when maintain last ran (the task's clock).
	lastMaintenance time.Time
}

// commitStats counts what a task's commits wrote (logged with each).
type commitStats struct {
	Commits, DataFiles, DeleteFiles, Rows, Deletes int64
}

func newTableWriter(name string, cat catalog.Catalog, cfg *Config, ex extra, in input, group, task string, log *slog.Logger) (*tableWriter, error) {
	ident, err := parseIdent(name)
	if err != nil {
		return nil, err
	}
	return &tableWriter{name: name, ident: ident, cat: cat, cfg: cfg, ex: ex, in: in, group: group, task: task,
		idColumns: cfg.idColumns(ex, name), log: log.With("table", name), batch: newBatch(cfg.UpsertMode, in.keyed),
		base: offsets{}, floor: map[sdk.TopicPartition]int64{}, stats: &commitStats{}, lastMaintenance: time.Now()}, nil
}

// load reads the table if it exists (tbl stays nil otherwise).
func (w *tableWriter) load(ctx context.Context) error {
	tbl, err := w.cat.LoadTable(ctx, w.ident)
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("iceberg: load table %s: %w", w.name, err)
	}
	w.tbl = tbl
	return nil
}

// tableOffsets returns the offsets of the writer's group the table holds:
// those of the latest snapshot that has any (a snapshot another writer
// made, e.g. a compaction by another engine, carries none).
func tableOffsets(tbl *table.Table, group string) (offsets, error) {
	if tbl == nil {
		return offsets{}, nil
	}
	meta := tbl.Metadata()
	for s := tbl.CurrentSnapshot(); s != nil; {
		if s.Summary != nil {
			o, found, err := parseOffsets(s.Summary.Properties, group)
			if err != nil {
				return nil, fmt.Errorf("%w (snapshot %d)", err, s.SnapshotID)
			}
			if found {
				return o, nil
			}
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	return offsets{}, nil
}

// assign learns where the table stands for newly assigned partitions:
// their base, their floor, and where to rewind them (the table's offset).
func (w *tableWriter) assign(ctx context.Context, tps []sdk.TopicPartition) (map[sdk.TopicPartition]int64, error) {
	if err := w.load(ctx); err != nil {
		return nil, err
	}
	to, err := tableOffsets(w.tbl, w.group)
	if err != nil {
		return nil, err
	}
	rewind := map[sdk.TopicPartition]int64{}
	for _, tp := range tps {
		delete(w.base, tp)
		delete(w.floor, tp)
		if off, ok := to[tp]; ok {
			w.base[tp], w.floor[tp], rewind[tp] = off, off, off
		}
	}
	return rewind, nil
}

// revoke forgets partitions. Their changes not yet committed are dropped
// (their next owner consumes them from the table's offsets); a batch that
// held some is dropped whole, and revoke returns where to consume its
// other partitions again.
func (w *tableWriter) revoke(tps []sdk.TopicPartition) map[sdk.TopicPartition]int64 {
	var rewind map[sdk.TopicPartition]int64
	if slices.ContainsFunc(tps, func(tp sdk.TopicPartition) bool { _, ok := w.batch.next[tp]; return ok }) {
		rewind = map[sdk.TopicPartition]int64{}
		for tp, first := range w.batch.first {
			rewind[tp], w.floor[tp] = first, first
		}
		w.batch = newBatch(w.cfg.UpsertMode, w.in.keyed)
	}
	for _, tp := range tps {
		delete(w.base, tp)
		delete(w.floor, tp)
		delete(rewind, tp)
	}
	return rewind
}

// take adds a record's change. It returns false for a record already in
// the table (below the partition's floor).
func (w *tableWriter) take(rec *sdk.SinkRecord, op Op, row *schema.Struct) (bool, error) {
	tp := rec.TopicPartition()
	if f, ok := w.floor[tp]; ok && rec.Offset < f {
		return false, nil
	}
	c := Change{TP: tp, Offset: rec.Offset, Time: rec.Timestamp, Op: op, Row: row}
	if row != nil && op != OpDelete {
		w.rowSchema = row.Schema()
	}
	if w.in.keyed && op != OpTruncate {
		if len(w.idColumns) == 0 {
			ks, ok := rec.Key.(*schema.Struct)
			if !ok {
				return false, fmt.Errorf("iceberg: table %s: upserts need id columns (iceberg.tables.default-id-columns or iceberg.table.%s.id-columns) or struct record keys", w.name, w.name)
			}
			for _, f := range ks.Schema().Fields {
				w.idColumns = append(w.idColumns, f.Name)
			}
		}
		key, err := keyOf(row, w.idColumns)
		if err != nil {
			return false, fmt.Errorf("iceberg: record %s@%d for table %s: %w", tp, rec.Offset, w.name, err)
		}
		c.Key = key
	}
	if _, ok := w.base[tp]; !ok {
		if _, seen := w.floor[tp]; !seen {
			// The first record of a partition the table holds no offset
			// of: its position comes from the consumer group.
			w.floor[tp] = rec.Offset
		}
	}
	w.batch.add(c)
	w.floor[tp] = rec.Offset + 1
	return true, nil
}

// pending returns, per partition with changes not yet committed, the
// offset of the first.
func (w *tableWriter) pending() map[sdk.TopicPartition]int64 { return w.batch.first }

// create makes the table from the schema of the rows taken.
func (w *tableWriter) create(ctx context.Context) error {
	if !w.cfg.AutoCreate {
		return fmt.Errorf("iceberg: table %s does not exist, and iceberg.tables.auto-create-enabled is false", w.name)
	}
	if w.rowSchema == nil {
		return fmt.Errorf("iceberg: table %s does not exist, and no row has told its schema yet", w.name)
	}
	var ids []string
	if w.in.keyed {
		ids = w.idColumns
	} else {
		ids = w.cfg.idColumns(w.ex, w.name)
	}
	sc, err := tableSchema(w.rowSchema, w.in.dropped(), ids, w.cfg.ForceOptional)
	if err != nil {
		return err
	}
	spec, err := partitionSpec(sc, w.cfg.partitionBy(w.ex, w.name), ids, w.in.keyed)
	if err != nil {
		return fmt.Errorf("iceberg: table %s: %w", w.name, err)
	}
	props := iceberg.Properties{"format-version": "2"}
	maps.Copy(props, w.ex.createProps)
	maps.Copy(props, w.ex.writeProps)
	ns := catalog.NamespaceFromIdent(w.ident)
	if err := w.cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("iceberg: create namespace %v: %w", ns, err)
	}
	tbl, err := w.cat.CreateTable(ctx, w.ident, sc, catalog.WithPartitionSpec(spec), catalog.WithProperties(props))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return w.load(ctx) // another task made it meanwhile
	}
	if err != nil {
		return fmt.Errorf("iceberg: create table %s: %w", w.name, err)
	}
	w.log.Info("created table", "schema", tbl.Schema().String(), "identifier_fields", ids, "partition_spec", spec.String())
	w.tbl = tbl
	return nil
}

// evolve adds to the table the top-level columns of the batch's rows it
// lacks (iceberg.tables.evolve-schema-enabled), as optional columns.
func (w *tableWriter) evolve(ctx context.Context, rows []*schema.Struct) error {
	seen := map[*schema.Schema]bool{}
	var add []schema.Field
	names := map[string]bool{}
	for _, r := range rows {
		s := r.Schema()
		if seen[s] {
			continue
		}
		seen[s] = true
		cols, err := newColumns(w.tbl.Schema(), s, w.in.dropped())
		if err != nil {
			return err
		}
		for _, c := range cols {
			if !names[c.Name] {
				names[c.Name] = true
				add = append(add, c)
			}
		}
	}
	if len(add) == 0 {
		return nil
	}
	if !w.cfg.EvolveSchema {
		return nil // the new columns are not written (Apache's sink does the same)
	}
	txn := w.tbl.NewTransaction()
	us := txn.UpdateSchema(true, false)
	for _, f := range add {
		ids := 0
		t, err := icebergType(f.Schema, &ids)
		if err != nil {
			return fmt.Errorf("iceberg: table %s: new column %s: %w", w.name, f.Name, err)
		}
		us.AddColumn([]string{f.Name}, t, "", false, nil)
	}
	if err := us.Commit(); err != nil {
		return fmt.Errorf("iceberg: table %s: add columns: %w", w.name, err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		return fmt.Errorf("iceberg: table %s: commit new columns: %w", w.name, err)
	}
	w.tbl = tbl
	w.log.Info("added columns", "columns", slices.Collect(maps.Keys(names)), "schema_id", tbl.Schema().ID)
	return nil
}

// records yields rows as Arrow record batches of as.
func records(as *arrow.Schema, rows []*schema.Struct) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var b *rowBuilder
		var cur *schema.Schema
		defer func() {
			if b != nil {
				b.release()
			}
		}()
		flush := func() bool {
			if b == nil || b.rows == 0 {
				return true
			}
			return yield(b.batch(), nil)
		}
		for _, r := range rows {
			if r.Schema() != cur || b == nil || b.rows >= rowsPerBatch {
				if !flush() {
					return
				}
				if r.Schema() != cur || b == nil {
					if b != nil {
						b.release()
					}
					var err error
					if b, err = newRowBuilder(memory.DefaultAllocator, as, r.Schema()); err != nil {
						yield(nil, err)
						return
					}
					cur = r.Schema()
				}
			}
			if err := b.add(r); err != nil {
				yield(nil, err)
				return
			}
		}
		flush()
	}
}

// isConflict tells a commit refused because the table moved since it was
// read: nothing was applied, and the commit may be rebuilt on the table as
// it is now. Catalogs report it as table.ErrCommitFailed (REST's 409) or,
// for the SQL catalog, as a failed requirement, which iceberg-go checks
// before it writes anything.
func isConflict(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed:")
}

// errStale is returned (wrapped) by commit when another task committed
// partitions of this batch first: the batch is dropped, and the caller
// rewinds the partitions to where the table stands.
var errStale = errors.New("iceberg: stale batch")

// commit writes the batch to the table in one snapshot (a row delta: data
// files, equality deletes, and the offsets in its summary). It retries
// against concurrent commits of other tasks until the commit timeout, each
// time checking that the table's offsets are still where this batch's
// changes start. On a stale batch it returns the rewinds and errStale.
func (w *tableWriter) commit(ctx context.Context) (map[sdk.TopicPartition]int64, error) {
	if w.batch.empty() {
		return nil, nil
	}
	start := time.Now()
	deadline := start.Add(time.Duration(w.cfg.CommitTimeoutMs) * time.Millisecond)
	for attempt := 0; ; attempt++ {
		if w.tbl == nil || attempt > 0 {
			if err := w.load(ctx); err != nil {
				return nil, err
			}
			if w.tbl == nil {
				if err := w.create(ctx); err != nil {
					return nil, err
				}
			}
		}
		to, err := tableOffsets(w.tbl, w.group)
		if err != nil {
			return nil, err
		}
		if err := checkBase(to, w.base, w.batch.next); err != nil {
			return w.dropStale(to, err), fmt.Errorf("%w: %w", errStale, err)
		}
		committed, err := w.commitOnce(ctx, to)
		if err == nil {
			if committed {
				w.log.Info("committed", "records", w.batch.records, "ms", time.Since(start).Milliseconds(), "attempts", attempt+1,
					"snapshot", w.tbl.CurrentSnapshot().SnapshotID)
				// Only a snapshot moves the table's offsets: a batch
				// with nothing to write leaves them (and base) as they
				// are, and its records are skipped again after a restart.
				for tp, off := range w.batch.next {
					w.base[tp] = off
				}
			}
			w.batch = newBatch(w.cfg.UpsertMode, w.in.keyed)
			return nil, nil
		}
		if !isConflict(err) || time.Now().After(deadline) {
			// Any other failure may leave the commit's outcome unknown
			// (the catalog may have applied it). The table is read again
			// before the next attempt, whose offsets check tells: if the
			// commit was applied, the table's offsets are past base, and
			// the batch is dropped as stale instead of applied twice.
			w.tbl = nil
			return nil, fmt.Errorf("iceberg: commit to %s: %w", w.name, err)
		}
		w.log.Debug("commit conflict; retrying", "err", err, "attempt", attempt+1)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(10*(attempt+1)) * time.Millisecond):
		}
	}
}

// dropStale drops the batch after another task committed its partitions,
// and returns where to consume them again.
func (w *tableWriter) dropStale(to offsets, cause error) map[sdk.TopicPartition]int64 {
	rewind := map[sdk.TopicPartition]int64{}
	for tp, first := range w.batch.first {
		if off, ok := to[tp]; ok {
			rewind[tp], w.base[tp], w.floor[tp] = off, off, off
		} else {
			delete(w.base, tp)
			rewind[tp], w.floor[tp] = first, first
		}
	}
	w.log.Warn("dropping changes another task committed first", "cause", cause.Error(), "records", w.batch.records)
	w.batch = newBatch(w.cfg.UpsertMode, w.in.keyed)
	return rewind
}

// commitOnce builds and commits the batch's snapshot on the table as
// loaded; to is the table's offsets. committed is false when the batch
// had nothing to write.
func (w *tableWriter) commitOnce(ctx context.Context, to offsets) (committed bool, err error) {
	p := w.batch.plan(w.tbl.CurrentSnapshot() == nil)
	if len(p.rows) > 0 {
		if err := w.evolve(ctx, p.rows); err != nil {
			return false, err
		}
	}
	props := iceberg.Properties{
		commitIDProp: uuid.NewString(),
		taskIDProp:   w.task,
	}
	if !p.validThrough.IsZero() {
		props[validThroughProp] = strconv.FormatInt(p.validThrough.UnixMilli(), 10)
	}
	maps.Copy(props, to.merged(p.next).summary(w.group))

	txn := w.tbl.NewTransaction()
	if err := txn.AssertRefSnapshotID(""); err != nil {
		return false, err
	}
	var data, dels []iceberg.DataFile
	if len(p.rows) > 0 {
		as, err := table.SchemaToArrowSchema(w.tbl.Schema(), nil, true, false)
		if err != nil {
			return false, fmt.Errorf("iceberg: arrow schema: %w", err)
		}
		for df, err := range table.WriteRecords(ctx, w.tbl, as, records(as, p.rows), table.WithParquetRowGroupLimit(w.rowGroupLimit())) {
			if err != nil {
				return false, fmt.Errorf("iceberg: write data files of %s: %w", w.name, err)
			}
			data = append(data, df)
		}
	}
	if len(p.deletes) > 0 {
		sc := w.tbl.Schema()
		var ids []int
		var fields []iceberg.NestedField
		for _, col := range w.idColumns {
			f, ok := sc.FindFieldByName(col)
			if !ok {
				return false, fmt.Errorf("iceberg: table %s has no id column %q", w.name, col)
			}
			ids = append(ids, f.ID)
			fields = append(fields, f)
		}
		as, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, fields...), nil, true, false)
		if err != nil {
			return false, fmt.Errorf("iceberg: arrow schema of deletes: %w", err)
		}
		dels, err = txn.WriteEqualityDeletes(ctx, ids, records(as, p.deletes))
		if err != nil {
			return false, fmt.Errorf("iceberg: write equality deletes of %s: %w", w.name, err)
		}
	}
	if p.truncate && w.tbl.CurrentSnapshot() != nil {
		if err := txn.Delete(ctx, iceberg.AlwaysTrue{}, props); err != nil {
			return false, fmt.Errorf("iceberg: truncate %s: %w", w.name, err)
		}
	}
	if len(data) > 0 || len(dels) > 0 {
		if err := txn.NewRowDelta(props).AddRows(data...).AddDeletes(dels...).Commit(ctx); err != nil {
			return false, err
		}
	} else if !p.truncate || w.tbl.CurrentSnapshot() == nil {
		// Nothing to write (deletes of rows no commit wrote, skipped
		// records): the offsets advance with the next commit.
		return false, nil
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		return false, err
	}
	w.tbl = tbl
	w.stats.Commits++
	w.stats.DataFiles += int64(len(data))
	w.stats.DeleteFiles += int64(len(dels))
	w.stats.Rows += int64(len(p.rows))
	w.stats.Deletes += int64(len(p.deletes))
	return true, nil
}

// defaultRowGroupRows is the rows per Parquet row group the sink writes
// (data files and compactions) when the table's
// write.parquet.row-group-limit is not set. iceberg-go's own default, 1 Mi
// rows, puts a compacted file of a typical CDC table in one row group,
// which readers such as DuckDB and Trino scan with a single thread; 128 Ki
// rows is close to DuckDB's own 122,880 and, for rows up to 1 KiB, within
// Iceberg Java's 128 MiB (write.parquet.row-group-size-bytes).
const defaultRowGroupRows = 128 << 10

// rowGroupLimit is write.parquet.row-group-limit from
// iceberg.tables.write-props.*, else from the table's properties, else
// defaultRowGroupRows.
func (w *tableWriter) rowGroupLimit() int {
	vs := []string{w.ex.writeProps[table.ParquetRowGroupLimitKey]}
	if w.tbl != nil {
		vs = append(vs, w.tbl.Properties()[table.ParquetRowGroupLimitKey])
	}
	for _, v := range vs {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return defaultRowGroupRows
}
