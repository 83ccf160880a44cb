package iceberg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/tributary-dev/tributary/sdk"
)

// taskMemory is what a task may hold beyond the plugin's default soft
// memory limit: the changes of up to iceberg.control.commit.max-records
// records and the Parquet files being written.
const taskMemory = 512 << 20

// sinkTask is the Iceberg sink task: it routes each record to its tables,
// keeps per table the changes since the last commit, and commits each
// table every iceberg.control.commit.interval-ms.
type sinkTask struct {
	cfg     Config
	raw     map[string]string
	unknown []string
	ex      extra
	in      input
	tc      sdk.SinkTaskContext
	log     *slog.Logger
	cat     catalog.Catalog
	release func()
	group   string
	taskID  string
	tables  map[string]*tableWriter
	// assigned are the partitions the task consumes.
	assigned   map[sdk.TopicPartition]bool
	lastCommit time.Time
	raised     int64
}

func (t *sinkTask) Open(ctx context.Context, tc sdk.SinkTaskContext) error {
	t.tc, t.log = tc, tc.Logger()
	if len(t.unknown) > 0 {
		t.log.Warn("iceberg sink: configuration keys this connector does not use are ignored", "keys", strings.Join(t.unknown, ","))
	}
	ex, errs := parseExtra(t.raw)
	errs = append(errs, t.cfg.validate(ex)...)
	if len(errs) > 0 {
		return fmt.Errorf("iceberg sink: invalid configuration: %w", errors.Join(fieldErrors(errs)...))
	}
	t.ex = ex
	t.in = input{cdcField: t.cfg.CDCField, keyed: t.cfg.UpsertMode || t.cfg.CDCField != ""}
	info := tc.Info()
	t.group = t.cfg.GroupID
	if t.group == "" {
		t.group = "connect-" + info.Connector
	}
	t.taskID = fmt.Sprintf("%s-%d", info.Connector, info.Task)
	cat, release, err := openCatalog(ctx, t.cfg.CatalogName, ex.catalog)
	if err != nil {
		return err
	}
	t.cat, t.release = cat, release
	t.tables = map[string]*tableWriter{}
	t.assigned = map[sdk.TopicPartition]bool{}
	t.lastCommit = time.Now()
	for _, name := range t.cfg.Tables {
		if _, err := t.writer(name); err != nil {
			return err
		}
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.raised = taskMemory
		debug.SetMemoryLimit(lim + t.raised)
	}
	return nil
}

func fieldErrors(errs []sdk.FieldError) []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}

// writer returns the writer of a table, made on first use.
func (t *sinkTask) writer(name string) (*tableWriter, error) {
	if w := t.tables[name]; w != nil {
		return w, nil
	}
	w, err := newTableWriter(name, t.cat, &t.cfg, t.ex, t.in, t.group, t.taskID, t.log)
	if err != nil {
		return nil, err
	}
	t.tables[name] = w
	return w, nil
}

// Assigned reads, for each table, the offsets it holds of the new
// partitions, and rewinds each partition to the lowest of them: the
// table's offsets, not only the consumer group's, say where to resume.
func (t *sinkTask) Assigned(ctx context.Context, tps []sdk.TopicPartition) error {
	rewind := map[sdk.TopicPartition]int64{}
	for _, name := range slices.Sorted(maps.Keys(t.tables)) {
		rw, err := t.tables[name].assign(ctx, tps)
		if err != nil {
			return err
		}
		for tp, off := range rw {
			if cur, ok := rewind[tp]; !ok || off < cur {
				rewind[tp] = off
			}
		}
	}
	for _, tp := range tps {
		t.assigned[tp] = true
	}
	if len(rewind) > 0 {
		t.log.Info("resuming from the tables' offsets", "offsets", fmt.Sprint(rewind))
		t.tc.Rewind(rewind)
	}
	return nil
}

// Revoked commits what the task holds of the partitions (so that their
// next owner continues from there), then forgets them.
func (t *sinkTask) Revoked(ctx context.Context, tps []sdk.TopicPartition) error {
	for _, name := range slices.Sorted(maps.Keys(t.tables)) {
		w := t.tables[name]
		if !slices.ContainsFunc(tps, func(tp sdk.TopicPartition) bool { _, ok := w.pending()[tp]; return ok }) {
			continue
		}
		if err := t.commitTable(ctx, w); err != nil {
			return err
		}
	}
	rewind := map[sdk.TopicPartition]int64{}
	for _, w := range t.tables {
		// A batch still holding changes of revoked partitions (its commit
		// failed) is dropped whole: its other partitions are consumed
		// again from where they start.
		for tp, first := range w.revoke(tps) {
			if cur, ok := rewind[tp]; !ok || first < cur {
				rewind[tp] = first
			}
		}
	}
	for _, tp := range tps {
		delete(t.assigned, tp)
	}
	if len(rewind) > 0 {
		t.tc.Rewind(rewind)
	}
	return nil
}

// routes returns the tables a record goes to (Apache's routing): the
// route field's value as the table name (dynamic routing), the tables
// whose route-regex matches it, or every configured table.
func (t *sinkTask) routes(rec *sdk.SinkRecord) []string {
	if t.cfg.RouteField == "" {
		return t.cfg.Tables
	}
	v, ok := valueAt(rec.Value, t.cfg.RouteField)
	s, isString := v.(string)
	if !ok || !isString {
		return nil
	}
	if t.cfg.DynamicEnabled {
		return []string{strings.ToLower(s)}
	}
	var out []string
	for _, name := range t.cfg.Tables {
		if tc := t.ex.tables[name]; tc != nil && tc.routeRegex != nil && tc.routeRegex.MatchString(s) {
			out = append(out, name)
		}
	}
	return out
}

func (t *sinkTask) Put(ctx context.Context, records []sdk.SinkRecord) error {
	for i := range records {
		rec := &records[i]
		op, row, skip, err := t.in.change(rec)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		for _, name := range t.routes(rec) {
			w, err := t.writer(name)
			if err != nil {
				return err
			}
			if _, err := w.take(rec, op, row); err != nil {
				return err
			}
			if int64(w.batch.records) >= t.cfg.CommitMaxRecords {
				if err := t.commitTable(ctx, w); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// commitTable commits one table; a stale batch (another task committed
// its partitions first) is dropped and its partitions rewound.
func (t *sinkTask) commitTable(ctx context.Context, w *tableWriter) error {
	rewind, err := w.commit(ctx)
	if errors.Is(err, errStale) {
		for tp := range rewind {
			if !t.assigned[tp] {
				delete(rewind, tp)
			}
		}
		if len(rewind) > 0 {
			t.tc.Rewind(rewind)
		}
		return nil
	}
	return err
}

// Flush commits every table once the commit interval has passed, and
// reports as durable, per partition, the offset of its first change not
// yet committed (or everything given, when none is pending).
func (t *sinkTask) Flush(ctx context.Context, given map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if time.Since(t.lastCommit) >= time.Duration(t.cfg.CommitIntervalMs)*time.Millisecond {
		t.lastCommit = time.Now()
		for _, name := range slices.Sorted(maps.Keys(t.tables)) {
			if err := t.commitTable(ctx, t.tables[name]); err != nil {
				return nil, err
			}
		}
		// Maintenance (off by default) is task 0's: one task rewrites a
		// table at a time, and its commits assert the snapshot they were
		// planned on, so a concurrent commit of another task wins.
		if t.tc.Info().Task == 0 {
			now := time.Now()
			for _, name := range slices.Sorted(maps.Keys(t.tables)) {
				if err := t.tables[name].maintain(ctx, now); err != nil {
					return nil, err
				}
			}
		}
	}
	out := make(map[sdk.TopicPartition]int64, len(given))
	for tp, off := range given {
		for _, w := range t.tables {
			if first, ok := w.pending()[tp]; ok && first < off {
				off = first
			}
		}
		out[tp] = off
	}
	return out, nil
}

// Close drops what is not committed: the next owner of the partitions
// consumes it again from the tables' offsets.
func (t *sinkTask) Close(context.Context) error {
	if t.raised > 0 {
		debug.SetMemoryLimit(debug.SetMemoryLimit(-1) - t.raised)
		t.raised = 0
	}
	if t.release != nil {
		t.release()
		t.release, t.cat = nil, nil
	}
	return nil
}
