package integration

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/integration/harness"
)

// lakeConnector reads one of the README's connector files (docs/lake).
func lakeConnector(t testing.TB, file string) (string, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "lake", file))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c.Name, c.Config
}

// TestLakeREADMEShowsTheTestedFiles checks that the README's "Postgres to
// an S3 data lake" section shows docs/lake's connector files verbatim, so
// what TestPostgresToS3Lake runs is what a reader copies.
func TestLakeREADMEShowsTheTestedFiles(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"postgres-source.json", "s3-sink.json", "iceberg-sink.json", "postgres-source-avro.json", "s3-sink-avro.json"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", "lake", f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), string(b)) {
			t.Errorf("README.md does not show docs/lake/%s as it is", f)
		}
	}
	if !strings.Contains(string(readme), icebergREADMEQuery) {
		t.Errorf("README.md does not show the Iceberg table's query as TestIcebergREADMEQuery runs it:\n%s", icebergREADMEQuery)
	}
	if !strings.Contains(string(readme), lakeLatestQuery) {
		t.Errorf("README.md does not show the latest-row query as TestPostgresToS3Lake runs it:\n%s", lakeLatestQuery)
	}
}

// lakeLatestQuery is the README's DuckDB query of the table's current
// state, over the lake at lakeREADMEPath.
const (
	lakeREADMEPath  = "/tmp/lake/topics/shop.public.orders"
	lakeLatestQuery = `select id, customer, amount, placed, qty
  from read_parquet('/tmp/lake/topics/shop.public.orders/**/*.parquet')
  qualify row_number() over (partition by id order by __source_ts_ms desc) = 1 and __deleted = 'false'`
)

// lakeRow is a row of the test's orders table at a version: every column
// is a function of the id and the version (qty), so that a row read back
// from the lake can be checked whole.
type lakeRow struct {
	id, qty  int64
	customer string
	amount   string // numeric(10,2)
	placed   string // date, ISO
	created  time.Time
	note     *string
}

func lakeRowAt(id, qty int64) lakeRow {
	r := lakeRow{id: id, qty: qty, customer: fmt.Sprintf("customer-%d", id%17),
		amount:  fmt.Sprintf("%d.%02d", id*3+qty, (id*7+qty)%100),
		placed:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int((id+qty)%300)).Format("2006-01-02"),
		created: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(id)*time.Hour + time.Duration(qty)*1500*time.Millisecond)}
	if qty%3 != 0 {
		n := fmt.Sprintf("note %d v%d", id, qty)
		r.note = &n
	}
	return r
}

func (r lakeRow) insert(b *pgx.Batch) {
	b.Queue(`INSERT INTO orders (id, customer, amount, placed, created, qty, note) VALUES ($1, $2, $3::numeric, $4::date, $5, $6, $7)`,
		r.id, r.customer, r.amount, r.placed, r.created, r.qty, r.note)
}

func (r lakeRow) update(b *pgx.Batch) {
	b.Queue(`UPDATE orders SET amount = $2::numeric, placed = $3::date, created = $4, qty = $5, note = $6 WHERE id = $1`,
		r.id, r.amount, r.placed, r.created, r.qty, r.note)
}

// lakeEvent names a change event by what identifies it in the workload:
// each id is inserted once, each update raises qty by one, a deleted id is
// never used again.
type lakeEvent struct {
	id, qty int64
	op      string // r, c, u, d
}

// TestPostgresToS3Lake runs the README's headline pipeline through a real
// worker process: the Postgres source streams a table of a real
// PostgreSQL (snapshot, then inserts, updates and deletes),
// ExtractNewRecordState in the S3 sink flattens the change events into
// rows (add.fields=op,source.ts_ms; deletes rewritten as rows with
// __deleted), and the S3 sink writes them as Parquet with the
// TimeBasedPartitioner to versitygw. The worker is killed (-9) in the
// middle and restarted. After the workload settles, the objects read with
// pyarrow hold every change event with every column as written, typed as
// the schema says (a delivery repeated after the kill is allowed, a lost
// one is not), the latest row of each id is the table's, and DuckDB reads
// the lake as one table.
func TestPostgresToS3Lake(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw and a worker, and kills the worker")
	}
	pg := harness.StartPostgresT(t)
	s := harness.VersityGW(t, "lake")
	pg.Exec(t, `CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2) NOT NULL,
		placed date NOT NULL, created timestamp NOT NULL, qty integer NOT NULL, note text)`)
	// Deleted rows reach the lake with all their columns.
	pg.Exec(t, `ALTER TABLE orders REPLICA IDENTITY FULL`)
	conn := pgConn(t, pg)
	ctx := context.Background()

	// The model: live rows by id, and every event the lake must hold.
	live := map[int64]int64{} // id → qty
	want := map[lakeEvent]bool{}
	var b pgx.Batch
	for id := int64(1); id <= 100; id++ {
		lakeRowAt(id, 1).insert(&b)
		live[id] = 1
		want[lakeEvent{id, 1, "r"}] = true
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}

	bootstrap, r, w, restart := startWorker(t, "lake", map[string]string{
		"offset.flush.interval.ms": "500", "consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000"})
	srcName, src := lakeConnector(t, "postgres-source.json")
	maps.Copy(src, map[string]string{"database.hostname": pg.Host, "database.port": strconv.Itoa(pg.Port),
		"database.user": pg.User, "database.password": pg.Password, "database.dbname": pg.Database})
	sinkName, sink := lakeConnector(t, "s3-sink.json")
	delete(sink, "store.url")
	maps.Copy(sink, s.SinkConfig("lake"))
	// Small files, rotated often, so that the kill lands between uploads.
	maps.Copy(sink, map[string]string{"flush.size": "50", "rotate.schedule.interval.ms": "2000"})
	start := time.Now()
	r.must("POST", "/connectors", map[string]any{"name": srcName, "config": src}, 201)
	r.waitState(srcName, "RUNNING", 1)

	// Stream only once the snapshot is in the topic, so that its rows are
	// the model's version 1.
	topic := "shop.public.orders"
	adm := kadm.NewClient(newClient(t, bootstrap))
	for deadline := time.Now().Add(60 * time.Second); ; {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if o, ok := ends.Lookup(topic, 0); err == nil && ok && o.Offset >= 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot's 100 events are not in %s after 60s: %v %v", topic, ends, r.statusOf(srcName)())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The sink once the topic exists: a topics.regex consumer sees a topic
	// created after it started only at its next metadata refresh
	// (metadata.max.age.ms, 5 minutes by default, as Kafka's consumer).
	r.must("POST", "/connectors", map[string]any{"name": sinkName, "config": sink}, 201)
	r.waitState(sinkName, "RUNNING", 1)

	// The workload: 200 transactions (a batch is one) of 3 changes (2 inserts : 2 updates :
	// 1 delete), one every 60 ms, while the worker is killed and restarted.
	const txs = 200
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(19, 4))
		next := int64(101)
		for tx := range txs {
			var b pgx.Batch
			// No row changes twice in one transaction: its changes would
			// share __source_ts_ms, which the README's latest-row query
			// orders by.
			touched := map[int64]bool{}
			for k := range 3 {
				var ids []int64
				for _, id := range slices.Sorted(maps.Keys(live)) {
					if !touched[id] {
						ids = append(ids, id)
					}
				}
				switch op := (tx*3 + k) % 5; {
				case op < 2 || len(ids) == 0:
					lakeRowAt(next, 1).insert(&b)
					live[next] = 1
					touched[next] = true
					want[lakeEvent{next, 1, "c"}] = true
					next++
				case op < 4:
					id := ids[rng.IntN(len(ids))]
					touched[id] = true
					live[id]++
					lakeRowAt(id, live[id]).update(&b)
					want[lakeEvent{id, live[id], "u"}] = true
				default:
					id := ids[rng.IntN(len(ids))]
					touched[id] = true
					b.Queue(`DELETE FROM orders WHERE id = $1`, id)
					want[lakeEvent{id, live[id], "d"}] = true
					delete(live, id)
				}
			}
			if err := conn.SendBatch(ctx, &b).Close(); err != nil {
				t.Errorf("transaction %d: %v", tx, err)
				return
			}
			done.Add(1)
			time.Sleep(60 * time.Millisecond)
		}
	}()

	// kill -9 once the workload is under way and some objects are up.
	prefix := "topics/" + topic + "/"
	for deadline := time.Now().Add(60 * time.Second); done.Load() < txs*2/5 || len(listKeys(t, s, "lake", prefix)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no object in the lake after 60s (%d transactions done) %s", done.Load(), r.statusOf(sinkName)())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("kill -9 of the worker after %d of %d transactions, %d objects up", done.Load(), txs, len(listKeys(t, s, "lake", prefix)))
	w.Kill()
	w = restart()
	r = rest{t, w.URL()}
	wg.Wait()
	if t.Failed() {
		return
	}
	end := time.Now()

	// Wait until the lake holds every event, then check it whole.
	var files []lakeFile
	var got map[lakeEvent]int
	for deadline := time.Now().Add(120 * time.Second); ; {
		files = readLake(t, s, prefix)
		got = map[lakeEvent]int{}
		for _, f := range files {
			for _, row := range f.Rows {
				got[lakeEventOf(t, row)]++
			}
		}
		if len(got) >= len(want) {
			break
		}
		if time.Now().After(deadline) {
			var missing []lakeEvent
			for e := range want {
				if got[e] == 0 {
					missing = append(missing, e)
				}
			}
			t.Fatalf("%d of %d change events in the lake after 120s (%d missing)\n%s\nsource: %s\nsink: %s\n%s",
				len(got), len(want), len(missing), lakeDiagnosis(t, bootstrap, topic, missing, files),
				r.statusOf(srcName)(), r.statusOf(sinkName)(), harnessTail(w.LogPath()))
		}
		time.Sleep(2 * time.Second)
	}

	// Every event, nothing else; repeats only as at-least-once allows.
	repeats := 0
	for e, n := range got {
		if !want[e] {
			t.Errorf("the lake holds an event the workload did not make: %+v", e)
		}
		repeats += n - 1
	}
	for e := range want {
		if got[e] == 0 {
			t.Errorf("event lost: %+v", e)
		}
	}

	// Paths of the TimeBasedPartitioner, by the records' hour (UTC).
	pathRE := regexp.MustCompile(`^year=(\d{4})/month=(\d{2})/day=(\d{2})/hour=(\d{2})/shop\.public\.orders\+0\+\d{10}\.snappy\.parquet$`)
	for _, f := range files {
		m := pathRE.FindStringSubmatch(f.Path)
		if m == nil {
			t.Errorf("object %s%s is not where TimeBasedPartitioner puts it", prefix, f.Path)
			continue
		}
		hour, err := time.Parse("2006010215", m[1]+m[2]+m[3]+m[4])
		if err != nil || hour.Before(start.UTC().Truncate(time.Hour)) || hour.After(end.UTC()) {
			t.Errorf("object %s: hour %v is outside the test's run (%v to %v)", f.Path, hour, start.UTC(), end.UTC())
		}
	}

	// Column types as the Connect schema gives them, in every file.
	wantTypes := map[string]string{"id": "int64", "customer": "string", "amount": "decimal128(10, 2)", "placed": "date32[day]",
		"created": "timestamp[ms, tz=UTC]", "qty": "int32", "note": "string", "__op": "string", "__source_ts_ms": "int64", "__deleted": "string"}
	wantNullable := map[string]bool{"id": false, "customer": false, "amount": false, "placed": false, "created": false, "qty": false,
		"note": true, "__op": true, "__source_ts_ms": true, "__deleted": true}
	for _, f := range files {
		if !maps.Equal(f.Types, wantTypes) {
			t.Errorf("%s: column types %v, want %v", f.Path, f.Types, wantTypes)
		}
		if !maps.Equal(f.Nullable, wantNullable) {
			t.Errorf("%s: nullability %v, want %v", f.Path, f.Nullable, wantNullable)
		}
	}

	// Every row whole: its columns are the model's at its version.
	latest := map[int64]lakeEvent{}
	lo, hi := start.Add(-time.Minute).UnixMilli(), time.Now().UnixMilli()
	for _, f := range files {
		for _, row := range f.Rows {
			e := lakeEventOf(t, row)
			m := lakeRowAt(e.id, e.qty)
			wantRow := map[string]any{"id": float64(e.id), "customer": m.customer, "amount": map[string]any{"decimal": m.amount},
				"placed":  map[string]any{"date": m.placed},
				"created": map[string]any{"timestamp": pyISO(m.created)}, "qty": float64(e.qty), "note": nil,
				"__op": e.op, "__deleted": strconv.FormatBool(e.op == "d")}
			if m.note != nil {
				wantRow["note"] = *m.note
			}
			ts, _ := row["__source_ts_ms"].(float64)
			if int64(ts) < lo || int64(ts) > hi {
				t.Errorf("%s: __source_ts_ms %v is outside the test's run", f.Path, row["__source_ts_ms"])
			}
			delete(row, "__source_ts_ms")
			if !maps.EqualFunc(row, wantRow, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
				t.Errorf("%s: row %v, want %v", f.Path, row, wantRow)
			}
			if l, ok := latest[e.id]; !ok || e.qty > l.qty || (e.qty == l.qty && e.op == "d") {
				latest[e.id] = e
			}
		}
	}

	// The lake's latest row of each id is the table's.
	table := map[int64]int64{}
	rows, err := conn.Query(ctx, `SELECT id, qty FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, qty int64
		if err := rows.Scan(&id, &qty); err != nil {
			t.Fatal(err)
		}
		table[id] = qty
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	lake := map[int64]int64{}
	for id, e := range latest {
		if e.op != "d" {
			lake[id] = e.qty
		}
	}
	if !maps.Equal(lake, table) || !maps.Equal(table, live) {
		t.Errorf("latest rows in the lake (%d ids) differ from the table (%d ids, model %d)", len(lake), len(table), len(live))
	}

	// DuckDB reads the lake as one table; the README's latest-row query
	// gives the table.
	dir := downloadLake(t, s, prefix)
	res := runS3Read(t, "duckdb", dir, strings.ReplaceAll(lakeLatestQuery, lakeREADMEPath, "$PATH")+" order by id")
	var state []string
	for _, row := range res["rows"].([]any) {
		state = append(state, fmt.Sprint(row.([]any)[0], "/", row.([]any)[4]))
	}
	var tableState []string
	for _, id := range slices.Sorted(maps.Keys(table)) {
		tableState = append(tableState, fmt.Sprint(id, "/", table[id]))
	}
	if !slices.Equal(state, tableState) {
		t.Errorf("the README's latest-row query gives %d rows (id/qty) %v\nwant the table's %d: %v", len(state), state, len(tableState), tableState)
	}
	q := `select count(*), count(distinct id), sum(case when __deleted = 'true' then 1 else 0 end) from read_parquet('$PATH/**/*.parquet')`
	res = runS3Read(t, "duckdb", dir, q)
	total := 0
	deletes := 0
	for e, n := range got {
		total += n
		if e.op == "d" {
			deletes += n
		}
	}
	if fmt.Sprint(res["rows"]) != fmt.Sprint([]any{[]any{float64(total), float64(len(latest)), float64(deletes)}}) {
		t.Errorf("DuckDB over the lake: %v, want [[%d %d %d]]", res["rows"], total, len(latest), deletes)
	}
	t.Logf("%d change events (%d snapshot reads) in %d Parquet objects after a kill -9, %d delivered twice; %d rows live",
		len(want), 100, len(files), repeats, len(table))
}

// pyISO formats a UTC time as Python's datetime.isoformat does.
func pyISO(t time.Time) string {
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// lakeFile is one Parquet object as pyarrow reads it.
type lakeFile struct {
	Path     string            `json:"path"`
	Types    map[string]string `json:"types"`
	Nullable map[string]bool   `json:"nullable"`
	Rows     []map[string]any  `json:"rows"`
}

// lakeDiagnosis tells where each missing event was lost: at the offset of
// the topic that holds it (the sink lost it), or nowhere in the topic (the
// source did); with the lake's objects, named by their first offset.
func lakeDiagnosis(t *testing.T, bootstrap, topic string, missing []lakeEvent, files []lakeFile) string {
	er := newEventReader(t, bootstrap, topic)
	last, n := time.Now(), 0
	er.until(time.Minute, "the whole topic", func(es []cdcEvent) bool {
		if len(es) > n {
			last, n = time.Now(), len(es)
		}
		return time.Since(last) > 3*time.Second
	})
	at := map[lakeEvent][]int64{}
	for _, e := range er.got {
		row := e.row("after")
		if e.op() == "d" {
			row = e.row("before")
		}
		id, _ := row["id"].(float64)
		qty, _ := row["qty"].(float64)
		ev := lakeEvent{int64(id), int64(qty), e.op()}
		at[ev] = append(at[ev], e.offset)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the topic holds %d events; missing from the lake:\n", len(er.got))
	slices.SortFunc(missing, func(x, y lakeEvent) int { return cmp.Compare(x.id, y.id) })
	for _, e := range missing {
		if offs := at[e]; len(offs) > 0 {
			fmt.Fprintf(&b, "  %+v at topic offsets %v: lost by the sink\n", e, offs)
		} else {
			fmt.Fprintf(&b, "  %+v not in the topic: lost by the source\n", e)
		}
	}
	fmt.Fprintf(&b, "the lake's %d objects:", len(files))
	for _, f := range files {
		fmt.Fprintf(&b, " %s (%d rows)", path.Base(f.Path), len(f.Rows))
	}
	return b.String()
}

func lakeEventOf(t *testing.T, row map[string]any) lakeEvent {
	t.Helper()
	id, _ := row["id"].(float64)
	qty, _ := row["qty"].(float64)
	op, _ := row["__op"].(string)
	return lakeEvent{int64(id), int64(qty), op}
}

// downloadLake copies the objects under prefix into a new directory,
// keeping their paths below prefix.
func downloadLake(t *testing.T, s *harness.S3, prefix string) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range listKeys(t, s, "lake", prefix) {
		f := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(k, prefix)))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, getObject(t, s, "lake", k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readLake reads every Parquet object under prefix with pyarrow.
func readLake(t *testing.T, s *harness.S3, prefix string) []lakeFile {
	t.Helper()
	out := runS3Read(t, "parquet-dir", downloadLake(t, s, prefix))
	b, _ := json.Marshal(out["files"])
	var files []lakeFile
	if err := json.Unmarshal(b, &files); err != nil {
		t.Fatal(err)
	}
	return files
}
