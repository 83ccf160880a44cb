package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestDevDemoIceberg runs `tributary dev --demo` and reads its Iceberg
// table, demo.records in the embedded catalog (SQLite, local warehouse),
// as the README shows: with DuckDB's iceberg extension, and with
// pyiceberg's SqlCatalog. The table holds one row per key: the latest
// record of that key among the records its snapshot's offsets cover.
func TestDevDemoIceberg(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: runs tributary dev --demo")
	}
	duckPy := harness.DuckDBIcebergPython(t)
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	dev := harness.StartDevProcess(t, bin, dir, harness.FreePort(t), harness.FreePort(t), "--demo")
	db := filepath.Join(dir, "iceberg", "catalog.db")
	tableOffset := func() int64 {
		out, err := runPython(duckPy, `import sqlite3, sys, json
db = sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True, timeout=30)
loc = db.execute("select metadata_location from iceberg_tables where table_namespace='demo' and table_name='records'").fetchone()[0]
m = json.load(open(loc.removeprefix("file://")))
cur = [s for s in m["snapshots"] if s["snapshot-id"] == m.get("current-snapshot-id")]
print(cur[0]["summary"].get("kafka.connect.offsets.demo.connect-demo-iceberg", "{}") if cur else "{}")`, db)
		if err != nil {
			t.Fatal(err)
		}
		var offs map[string]int64
		json.Unmarshal(out, &offs)
		return offs["0"]
	}
	for deadline := time.Now().Add(90 * time.Second); ; {
		if ok, _ := sqliteHasTable(db, "demo.records"); ok && tableOffset() >= 1000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Iceberg table with 1000 records of the demo after 90s\n%s", harnessTail(dev.LogPath()))
		}
		time.Sleep(time.Second)
	}
	dev.Kill() // the table as committed: later commits would move it
	offset := tableOffset()

	// As the README reads it: DuckDB's iceberg_scan of the current
	// metadata, and pyiceberg's SqlCatalog.
	out, err := runPython(duckPy, `import sqlite3, sys, json, os, glob, duckdb
db = sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True)
loc = db.execute("select metadata_location from iceberg_tables where table_namespace='demo' and table_name='records'").fetchone()[0]
con = duckdb.connect()
site = os.path.dirname(os.path.dirname(duckdb.__file__))
for name in ("avro", "iceberg"):
    con.execute("LOAD '%s'" % glob.glob(os.path.join(site, "duckdb_extension_" + name, "extensions", "*", name + ".duckdb_extension"))[0])
print(json.dumps(con.execute("select key, id from iceberg_scan('%s') order by key" % loc).fetchall()))`, db)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	// The latest record per key among the first offset records of demo,
	// read from the topic by dev started again (without the demo's
	// connectors running long enough to commit: the table is read first).
	latest := map[string]float64{}
	{
		fresh := harness.StartDevProcess(t, bin, dir, harness.FreePort(t), harness.FreePort(t))
		c := newClient(t, fresh.Bootstrap(), kgo.ConsumeTopics("demo"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for n := int64(0); n < offset; {
			fs := c.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("read %d of %d demo records: %v", n, offset, ctx.Err())
			}
			for _, r := range fs.Records() {
				if r.Offset >= offset {
					continue
				}
				var v struct {
					Payload struct {
						ID  float64 `json:"id"`
						Key string  `json:"key"`
					} `json:"payload"`
				}
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Fatalf("demo record %d: %v", r.Offset, err)
				}
				latest[v.Payload.Key] = v.Payload.ID
				n++
			}
		}
		fresh.Kill()
	}

	got := map[string]float64{}
	for _, r := range rows {
		k := fmt.Sprint(r[0])
		if _, dup := got[k]; dup {
			t.Errorf("key %s twice", k)
		}
		got[k] = r[1].(float64)
	}
	if fmt.Sprint(got) != fmt.Sprint(latest) {
		t.Errorf("DuckDB reads %d keys %v\nwant the latest of each of the %d keys in the first %d records: %v", len(got), got, len(latest), offset, latest)
	}
	py := harness.Python(t, "pyiceberg", "sqlalchemy")
	pyOut, err := exec.Command(py, "-c", `import sys
from pyiceberg.catalog.sql import SqlCatalog
cat = SqlCatalog("iceberg", uri="sqlite:///"+sys.argv[1], warehouse="file://"+sys.argv[2])
t = cat.load_table("demo.records")
print(len(t.schema().fields), t.current_snapshot().summary["kafka.connect.task-id"])`, db, filepath.Join(dir, "iceberg", "warehouse")).CombinedOutput()
	if err != nil || string(pyOut) != "5 demo-iceberg-0\n" {
		t.Errorf("pyiceberg: %v %s", err, pyOut)
	}
	t.Logf("demo.records after %d records: %d keys, the latest record of each (DuckDB); pyiceberg loads it", offset, len(got))
}
