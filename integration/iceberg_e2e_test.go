package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/integration/harness"
)

// icebergOrdersDDL is the source table of the Iceberg tests: a column of
// each kind a lake table holds.
const icebergOrdersDDL = `CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2) NOT NULL,
	placed date NOT NULL, created timestamp NOT NULL, seen timestamptz, qty integer NOT NULL, rush boolean,
	score double precision, note text)`

// icebergOrdersTypes is the table the sink creates from the Debezium
// change events of orders (time.precision.mode adaptive), as the readers
// name the types.
var icebergOrdersTypes = map[string]string{
	"id": "long required", "customer": "string required", "amount": "decimal(10, 2) required",
	"placed": "date required", "created": "timestamp required", "seen": "timestamptz optional",
	"qty": "int required", "rush": "boolean optional", "score": "double optional", "note": "string optional",
}

// icebergRow queues an insert of order id at version v: every column is a
// function of both.
func icebergRow(b *pgx.Batch, id, v int64) {
	var seen, note any
	if v%4 != 0 {
		seen = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(id*1_000_003+v*7) * time.Microsecond)
	}
	if v%3 != 0 {
		note = fmt.Sprintf("note %d v%d ü", id, v)
	}
	b.Queue(`INSERT INTO orders VALUES ($1, $2, $3::numeric, $4::date, $5, $6, $7, $8, $9, $10)`,
		id, fmt.Sprintf("customer-%d", id%17), fmt.Sprintf("%d.%02d", id*3+v, (id*7+v)%100),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int((id+v)%300)).Format("2006-01-02"),
		time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(id)*time.Hour+time.Duration(v)*1234567*time.Microsecond),
		seen, v, v%2 == 0, float64(id)/8+float64(v), note)
}

func icebergUpdate(b *pgx.Batch, id, v int64) {
	b.Queue(`UPDATE orders SET amount = $2::numeric, qty = $3, note = $4, seen = now(), rush = NOT coalesce(rush, false), score = $5 WHERE id = $1`,
		id, fmt.Sprintf("%d.%02d", id*3+v, (id*7+v)%100), v, fmt.Sprintf("updated %d v%d", id, v), float64(v)/3)
}

// icebergSource is the Postgres source of the Iceberg tests: Debezium's
// defaults (adaptive time precision: microsecond timestamps), truncates
// emitted.
func icebergSource(pg *harness.Postgres, id string) map[string]string {
	cfg := pgConnectorConfig(pg, id, "public.orders")
	cfg["skipped.operations"] = "none"
	cfg["key.converter"] = "org.apache.kafka.connect.json.JsonConverter"
	cfg["value.converter"] = "org.apache.kafka.connect.json.JsonConverter"
	return cfg
}

// icebergREADMEQuery is the README's DuckDB query of the Iceberg table
// ($METADATA: its current metadata file).
const icebergREADMEQuery = `select id, customer, amount, placed, qty
  from iceberg_scan('$METADATA') order by id`

// icebergSink is the README's Iceberg sink (docs/lake/iceberg-sink.json:
// upsert mode, the Debezium envelopes read directly) on topic and table,
// with the test's catalog and warehouse.
func icebergSink(t *testing.T, l *icebergLake, topic, table string) map[string]string {
	_, cfg := lakeConnector(t, "iceberg-sink.json")
	for _, k := range []string{"iceberg.catalog.type", "iceberg.catalog.uri", "iceberg.catalog.warehouse"} {
		delete(cfg, k)
	}
	cfg["topics"] = topic
	cfg["iceberg.tables"] = table
	cfg["iceberg.control.commit.interval-ms"] = "1000"
	maps.Copy(cfg, l.sinkConfig())
	return cfg
}

// TestPostgresToIceberg streams a PostgreSQL table into an Iceberg table
// through real worker processes: the Postgres source snapshots it and
// streams inserts, updates (key changes included), deletes and a truncate;
// the Iceberg sink applies the Debezium envelopes as upserts and deletes
// to a table on versitygw with a SQL catalog on SQLite. The table read by
// three independent readers, Apache Iceberg's Java library (iceberg-data's
// generic reader), DuckDB's iceberg extension (both apply the equality
// deletes) and pyiceberg, equals SELECT * FROM the source, row for row and type for type; its
// snapshots carry the topic's offsets.
func TestPostgresToIceberg(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw and a worker")
	}
	harness.Python(t, "pyiceberg", "sqlalchemy", "pyarrow")
	harness.RequireIcebergJars(t)
	pg := harness.StartPostgresT(t)
	lake := newIcebergLake(t)
	pg.Exec(t, icebergOrdersDDL)
	conn := pgConn(t, pg)
	ctx := context.Background()
	var b pgx.Batch
	for id := int64(1); id <= 300; id++ {
		icebergRow(&b, id, 1)
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}

	bootstrap, r, _, _ := startWorker(t, "ice", map[string]string{"offset.flush.interval.ms": "500"})
	id := pgID("ice")
	topic := id + ".public.orders"
	r.must("POST", "/connectors", map[string]any{"name": "src", "config": icebergSource(pg, id)}, 201)
	r.waitState("src", "RUNNING", 1)
	r.must("POST", "/connectors", map[string]any{"name": "lake", "config": icebergSink(t, lake, topic, "shop.orders")}, 201)
	r.waitState("lake", "RUNNING", 1)

	// The snapshot, read by pyiceberg as a plain scan where it can.
	status := func() string { return r.statusOf("src")() + "\n" + r.statusOf("lake")() }
	it := lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", pgRows(t, conn, "SELECT * FROM orders"), "id", 90*time.Second, status)
	if got := it.types(); !maps.Equal(got, icebergOrdersTypes) {
		t.Errorf("column types %v\nwant %v", got, icebergOrdersTypes)
	}

	// The stream: inserts, updates, key changes, deletes; a truncate; more.
	rng := rand.New(rand.NewPCG(31, 7))
	live := map[int64]int64{}
	for id := int64(1); id <= 300; id++ {
		live[id] = 1
	}
	next := int64(301)
	workload := func(txs int) {
		for range txs {
			var b pgx.Batch
			touched := map[int64]bool{}
			for range 4 {
				ids := make([]int64, 0, len(live))
				for id := range live {
					if !touched[id] {
						ids = append(ids, id)
					}
				}
				if len(ids) == 0 {
					icebergRow(&b, next, 1)
					live[next] = 1
					next++
					continue
				}
				id := ids[rng.IntN(len(ids))]
				touched[id] = true
				switch k := rng.IntN(10); {
				case k < 3:
					icebergRow(&b, next, 1)
					live[next], touched[next] = 1, true
					next++
				case k < 7:
					live[id]++
					icebergUpdate(&b, id, live[id])
				case k < 8: // a key change: Debezium's delete of the old key, create of the new
					b.Queue(`UPDATE orders SET id = $2 WHERE id = $1`, id, next)
					live[next], touched[next] = live[id], true
					delete(live, id)
					next++
				default:
					b.Queue(`DELETE FROM orders WHERE id = $1`, id)
					delete(live, id)
				}
			}
			if err := conn.SendBatch(ctx, &b).Close(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	workload(150)
	pg.Exec(t, `TRUNCATE orders`)
	clear(live)
	b = pgx.Batch{}
	for id := next; id < next+50; id++ {
		icebergRow(&b, id, 1)
		live[id] = 1
	}
	next += 50
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	// After the truncate, rounds of changes each in commits of their own,
	// so that equality deletes apply to rows of earlier commits; pyiceberg
	// checks each round.
	for range 4 {
		lake.waitTableCaughtUp(t, bootstrap, topic, "shop.orders", "connect-lake", 120*time.Second, status)
		workload(25)
		it = lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", pgRows(t, conn, "SELECT * FROM orders"), "id", 120*time.Second, status)
	}
	want := pgRows(t, conn, "SELECT * FROM orders")
	java := lake.readJava(t, "shop.orders")
	duck := lake.readDuck(t, "shop.orders")
	if diffs := sameRows(want, duck.Rows, "id"); len(diffs) > 0 {
		t.Errorf("%s reads %d rows, the source has %d; differences:\n%v", duck.ReadBy, len(duck.Rows), len(want), diffs)
	}
	// The README's query gives the table's rows.
	q := strings.ReplaceAll(icebergREADMEQuery, "iceberg_scan('$METADATA')", "$TABLE")
	res, err := exec.Command(harness.DuckDBIcebergPython(t), "testdata/duckdb_iceberg.py", lake.duckConfig(), "shop.orders", q).Output()
	if err != nil {
		t.Fatalf("the README's query: %v", err)
	}
	var readme struct{ Rows [][]any }
	if err := json.Unmarshal(res, &readme); err != nil {
		t.Fatal(err)
	}
	var pgState []string
	for _, r := range pgRows(t, conn, "SELECT id, customer, amount, placed, qty FROM orders ORDER BY id") {
		pgState = append(pgState, fmt.Sprint(r["id"], r["customer"], r["amount"], r["placed"], r["qty"]))
	}
	var duckState []string
	for _, r := range readme.Rows {
		duckState = append(duckState, fmt.Sprint(r...))
	}
	if !slices.Equal(pgState, duckState) {
		t.Errorf("the README's DuckDB query gives %v\nwant %v", duckState, pgState)
	}
	for _, got := range []*icebergTable{java, it} {
		if diffs := sameRows(want, got.Rows, "id"); len(diffs) > 0 {
			t.Errorf("%s reads %d rows, the source has %d; differences:\n%v", got.ReadBy, len(got.Rows), len(want), diffs)
		}
		if types := got.types(); !maps.Equal(types, icebergOrdersTypes) {
			t.Errorf("%s: column types %v\nwant %v", got.ReadBy, types, icebergOrdersTypes)
		}
		if fmt.Sprint(got.Identifier) != "[id]" {
			t.Errorf("%s: identifier fields %v, want [id]", got.ReadBy, got.Identifier)
		}
	}
	if it.EqualityDeleteFiles == 0 || java.EqualityDeleteFiles == 0 {
		t.Errorf("the table has no equality delete files: the test did not exercise them")
	}
	if got := java.Summary["kafka.connect.task-id"]; got != "lake-0" {
		t.Errorf("summary task id %q", got)
	}
	t.Logf("%d rows; %d snapshots, %d data files, %d equality delete files; Java, %s and pyiceberg (%s) agree with SELECT *",
		len(want), java.Snapshots, java.DataFiles, it.EqualityDeleteFiles, duck.ReadBy, it.ReadBy)
}
