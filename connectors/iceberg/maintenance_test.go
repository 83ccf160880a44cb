package iceberg

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/tributary-dev/tributary/sdk"
)

// TestMaintenance: after commits of upserts and deletes (a data file and
// an equality delete file each), compaction rewrites the data files with
// their deletes applied into one and drops the equality deletes no file
// needs any more; snapshot expiry keeps the current snapshot, whose
// summary still holds the offsets a restarted task resumes from. The
// table reads the same before and after.
func TestMaintenance(t *testing.T) {
	dir := t.TempDir()
	cfg := lakeConfig(dir, "iceberg.tables.maintenance.compact-interval-ms", "1",
		"iceberg.tables.maintenance.expire-snapshots-older-than-ms", "1")
	st, _ := openTask(t, cfg, 0)
	ctx := context.Background()
	tp := sdk.TopicPartition{Topic: "db.public.t", Partition: 0}
	if err := st.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	// No maintenance while the commits are made (its last run set an hour
	// ahead), then one run (its last run long ago).
	st.tables["db.t"].lastMaintenance = time.Now().Add(time.Hour)
	off := int64(0)
	want := map[int32]string{}
	for round := range 6 {
		var recs []sdk.SinkRecord
		for id := int32(1); id <= 20; id++ {
			op := "u"
			if round == 0 {
				op = "c"
			}
			v := fmt.Sprintf("r%d-%d", round, id)
			if round > 0 && id%7 == int32(round) {
				op, v = "d", ""
			}
			recs = append(recs, event(0, off, op, id, v))
			off++
			if op == "d" {
				delete(want, id)
			} else {
				want[id] = v
			}
		}
		if err := st.Put(ctx, recs); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		if _, err := st.Flush(ctx, map[sdk.TopicPartition]int64{tp: off}); err != nil {
			t.Fatal(err)
		}
	}
	files := func() (data, eq, snaps int) {
		ex, _ := parseExtra(cfg)
		cat, release, err := openCatalog(ctx, "iceberg", ex.catalog)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier("db", "t"))
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, task := range tasks {
			data++
			for _, d := range task.EqualityDeleteFiles {
				if !seen[d.FilePath()] && d.ContentType() == iceberg.EntryContentEqDeletes {
					seen[d.FilePath()] = true
					eq++
				}
			}
		}
		return data, eq, len(tbl.Metadata().Snapshots())
	}
	d0, e0, s0 := files()
	if got, _ := readTable(t, cfg); !maps.Equal(got, want) {
		t.Fatalf("before maintenance: %v, want %v", got, want)
	}
	st.tables["db.t"].lastMaintenance = time.Time{}
	if _, err := st.Flush(ctx, map[sdk.TopicPartition]int64{tp: off}); err != nil {
		t.Fatal(err)
	}
	d1, e1, s1 := files()
	got, props := readTable(t, cfg)
	if !maps.Equal(got, want) {
		t.Errorf("after maintenance: %v, want %v", got, want)
	}
	if d1 != 1 || e1 != 0 || s1 != 1 {
		t.Errorf("data files %d → %d, equality delete files %d → %d, snapshots %d → %d; want 1, 0, 1", d0, d1, e0, e1, s0, s1)
	}
	if props["kafka.connect.offsets.db.public.t.connect-lake"] != fmt.Sprintf(`{"0":%d}`, off) || props[maintenanceProp] != "compaction" {
		t.Errorf("summary after maintenance %v", props)
	}
	// A restarted task resumes from the compacted snapshot's offsets.
	st2, tc2 := openTask(t, cfg, 1)
	if err := st2.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	if tc2.rewinds[tp] != off {
		t.Errorf("resumed at %v, want %d", tc2.rewinds, off)
	}
	t.Logf("data files %d → %d, equality delete files %d → %d, snapshots %d → %d", d0, d1, e0, e1, s0, s1)
}

// TestRowGroupLimit: data files and compactions are written in row groups
// of write.parquet.row-group-limit rows (here 8, as a table property), so
// that readers can scan a compacted file in parallel; without the
// property, of defaultRowGroupRows.
func TestRowGroupLimit(t *testing.T) {
	dir := t.TempDir()
	cfg := lakeConfig(dir, "iceberg.tables.maintenance.compact-interval-ms", "1",
		"iceberg.tables.auto-create-props.write.parquet.row-group-limit", "8")
	st, _ := openTask(t, cfg, 0)
	ctx := context.Background()
	tp := sdk.TopicPartition{Topic: "db.public.t", Partition: 0}
	if err := st.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	st.tables["db.t"].lastMaintenance = time.Now().Add(time.Hour)
	off := int64(0)
	for range 5 { // five files of 20 rows: the planner's minimum input
		var recs []sdk.SinkRecord
		for range 20 {
			recs = append(recs, event(0, off, "c", int32(off), fmt.Sprint("r", off)))
			off++
		}
		if err := st.Put(ctx, recs); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		if _, err := st.Flush(ctx, map[sdk.TopicPartition]int64{tp: off}); err != nil {
			t.Fatal(err)
		}
	}
	groups := func() map[int64]int { // rows in the file -> row groups
		out := map[int64]int{}
		var matches []string
		filepath.WalkDir(filepath.Join(dir, "warehouse"), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".parquet") {
				matches = append(matches, p)
			}
			return nil
		})
		for _, m := range matches {
			r, err := file.OpenParquetFile(m, false)
			if err != nil {
				t.Fatal(err)
			}
			if r.NumRows() > 0 && r.MetaData().Schema.NumColumns() > 1 { // data files, not equality deletes
				out[r.NumRows()] = r.NumRowGroups()
			}
			r.Close()
		}
		return out
	}
	if g := groups(); len(g) != 1 || g[20] != 3 {
		t.Errorf("data files (rows: row groups) %v, want 20 rows in 3 row groups of at most 8", g)
	}
	st.tables["db.t"].lastMaintenance = time.Time{}
	if _, err := st.Flush(ctx, map[sdk.TopicPartition]int64{tp: off}); err != nil {
		t.Fatal(err)
	}
	if g := groups(); g[100] != 13 {
		t.Errorf("after compaction, files (rows: row groups) %v, want one of 100 rows in 13 row groups", g)
	}
	if n := st.tables["db.t"].rowGroupLimit(); n != 8 {
		t.Errorf("row group limit %d with the table's property 8", n)
	}
	// Without the property: defaultRowGroupRows.
	st2, _ := openTask(t, lakeConfig(t.TempDir()), 0)
	if err := st2.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	if err := st2.Put(ctx, []sdk.SinkRecord{event(0, 0, "c", 1, "a")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := st2.Flush(ctx, map[sdk.TopicPartition]int64{tp: 1}); err != nil {
		t.Fatal(err)
	}
	if n := st2.tables["db.t"].rowGroupLimit(); n != defaultRowGroupRows {
		t.Errorf("row group limit %d without the property, want %d", n, defaultRowGroupRows)
	}
}
