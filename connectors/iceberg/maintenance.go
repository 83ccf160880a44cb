package iceberg

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"
)

// maintenanceProp marks the snapshots maintenance makes (beside the
// offsets they carry forward unchanged).
const maintenanceProp = "tributary.maintenance"

// maintain runs the table maintenance a CDC table needs, when configured
// (both are off by default): every iceberg.tables.maintenance.compact-
// interval-ms it rewrites the small data files, with the equality deletes
// that apply to them, into merged files (iceberg-go's bin-pack planner,
// which also takes any data file with five or more delete files) and drops
// the equality delete files no remaining data file needs; then it expires
// the snapshots older than iceberg.tables.maintenance.expire-snapshots-
// older-than-ms, keeping the current one. Each step is one commit that
// asserts the snapshot it was planned on: a concurrent commit makes it
// give up until the next interval, and the rewrite carries the table's
// offsets forward so that resuming reads them from its snapshot.
func (w *tableWriter) maintain(ctx context.Context, now time.Time) error {
	if w.cfg.CompactEvery <= 0 || w.tbl == nil || now.Sub(w.lastMaintenance) < time.Duration(w.cfg.CompactEvery)*time.Millisecond {
		return nil
	}
	w.lastMaintenance = now
	if err := w.load(ctx); err != nil {
		return err
	}
	if w.tbl == nil || w.tbl.CurrentSnapshot() == nil {
		return nil
	}
	start := time.Now()
	res, err := w.compact(ctx)
	if err != nil {
		if isConflict(err) {
			w.log.Info("compaction gave way to a concurrent commit; next time", "err", err)
			return nil
		}
		w.tbl = nil
		return fmt.Errorf("iceberg: compact %s: %w", w.name, err)
	}
	if res != nil {
		w.log.Info("compacted", "data_files_removed", res.RemovedDataFiles, "data_files_added", res.AddedDataFiles,
			"equality_delete_files_removed", res.RemovedEqualityDeleteFiles, "bytes_before", res.BytesBefore,
			"bytes_after", res.BytesAfter, "ms", time.Since(start).Milliseconds())
	}
	if w.cfg.ExpireOlderThan > 0 {
		txn := w.tbl.NewTransaction()
		if err := txn.AssertRefSnapshotID(""); err != nil {
			return err
		}
		if err := txn.ExpireSnapshots(table.WithOlderThan(time.Duration(w.cfg.ExpireOlderThan)*time.Millisecond), table.WithRetainLast(1)); err != nil {
			return fmt.Errorf("iceberg: expire snapshots of %s: %w", w.name, err)
		}
		before := len(w.tbl.Metadata().Snapshots())
		tbl, err := txn.Commit(ctx)
		if err != nil {
			if isConflict(err) {
				return nil
			}
			w.tbl = nil
			return fmt.Errorf("iceberg: expire snapshots of %s: %w", w.name, err)
		}
		w.tbl = tbl
		if n := before - len(tbl.Metadata().Snapshots()); n > 0 {
			w.log.Info("expired snapshots", "snapshots", n)
		}
	}
	return nil
}

// compact rewrites what iceberg-go's planner picks, in one commit; nil when
// there is nothing to do.
func (w *tableWriter) compact(ctx context.Context) (*table.RewriteResult, error) {
	plan, err := compaction.Analyze(ctx, w.tbl, compaction.DefaultConfig())
	if err != nil {
		return nil, err
	}
	if len(plan.Groups) == 0 {
		w.log.Info("nothing to compact", "table", w.name, "files", plan.TotalInputFiles, "bytes", plan.TotalInputBytes)
		return nil, nil
	}
	groups := make([]table.CompactionTaskGroup, len(plan.Groups))
	rewritten := map[string]struct{}{}
	for i, g := range plan.Groups {
		groups[i] = table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
		for _, t := range g.Tasks {
			rewritten[t.File.FilePath()] = struct{}{}
		}
	}
	fs, err := w.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	dead, err := compaction.CollectDeadEqualityDeletesWithSpecs(ctx, fs, w.tbl.Metadata(), w.tbl.CurrentSnapshot(), rewritten)
	if err != nil {
		return nil, err
	}
	to, err := tableOffsets(w.tbl, w.group)
	if err != nil {
		return nil, err
	}
	props := iceberg.Properties{commitIDProp: uuid.NewString(), taskIDProp: w.task, maintenanceProp: "compaction"}
	maps.Copy(props, to.summary(w.group))
	txn := w.tbl.NewTransaction()
	if err := txn.AssertRefSnapshotID(""); err != nil {
		return nil, err
	}
	res, err := txn.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{SnapshotProps: props, ExtraDeleteFilesToRemove: dead,
		GroupOptions: []table.CompactionGroupOption{table.WithCompactionParquetRowGroupLimit(w.rowGroupLimit())}})
	if err != nil {
		return nil, err
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		return nil, err
	}
	w.tbl = tbl
	return res, nil
}
