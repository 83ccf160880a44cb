package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/integration/harness"
)

// avroConverters are the README's Avro variant of the lake's converter
// settings (docs/lake/postgres-source-avro.json) for the registry at url.
func avroConverters(url string) map[string]string {
	return map[string]string{
		"key.converter":                       "io.confluent.connect.avro.AvroConverter",
		"key.converter.schema.registry.url":   url,
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": url,
	}
}

// TestPostgresAvroToS3Lake: the lake pipeline of the README with Avro and
// a schema registry instead of JsonConverter: Postgres → Debezium envelope
// → AvroConverter topic → S3 sink (AvroConverter) → Parquet with typed
// columns; a column added mid-stream registers a new schema version and
// starts files with the new column; a kill -9 of the worker loses nothing.
func TestPostgresAvroToS3Lake(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw and a worker, and kills the worker")
	}
	registry := harness.SchemaRegistryURL(t)
	pg := harness.StartPostgresT(t)
	s := harness.VersityGW(t, "lake") // the bucket readLake reads
	pg.Exec(t, `CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2) NOT NULL,
		placed date NOT NULL, created timestamp NOT NULL, qty integer NOT NULL)`)
	conn := pgConn(t, pg)
	ctx := context.Background()
	insert := func(from, to int, withNote bool) {
		t.Helper()
		var b pgx.Batch
		for id := from; id <= to; id++ {
			m := lakeRowAt(int64(id), 1)
			if withNote {
				b.Queue(`INSERT INTO orders (id, customer, amount, placed, created, qty, note) VALUES ($1, $2, $3::numeric, $4::date, $5, $6, $7)`,
					id, m.customer, m.amount, m.placed, m.created, 1, fmt.Sprintf("note %d", id))
			} else {
				b.Queue(`INSERT INTO orders (id, customer, amount, placed, created, qty) VALUES ($1, $2, $3::numeric, $4::date, $5, $6)`,
					id, m.customer, m.amount, m.placed, m.created, 1)
			}
		}
		if err := conn.SendBatch(ctx, &b).Close(); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, 40, false)

	prefix := "avroshop" + strconv.Itoa(os.Getpid()%10000) + strconv.FormatInt(time.Now().UnixNano()%100000, 10)
	topic := prefix + ".public.orders"
	bootstrap, r, w, restart := startWorker(t, "avrolake", map[string]string{
		"offset.flush.interval.ms": "500", "consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000"})
	srcName, src := lakeConnector(t, "postgres-source-avro.json")
	maps.Copy(src, map[string]string{"database.hostname": pg.Host, "database.port": strconv.Itoa(pg.Port),
		"database.user": pg.User, "database.password": pg.Password, "database.dbname": pg.Database,
		"topic.prefix": prefix, "slot.name": "slot_" + prefix})
	maps.Copy(src, avroConverters(registry))
	sinkName, sink := lakeConnector(t, "s3-sink-avro.json")
	delete(sink, "store.url")
	maps.Copy(sink, s.SinkConfig("lake"))
	maps.Copy(sink, avroConverters(registry))
	maps.Copy(sink, map[string]string{"topics.regex": strings.ReplaceAll(prefix, ".", `\.`) + `\.public\..*`,
		"flush.size": "20", "rotate.schedule.interval.ms": "2000"})
	srcName, sinkName = srcName+"-"+prefix, sinkName+"-"+prefix
	r.must("POST", "/connectors", map[string]any{"name": srcName, "config": src}, 201)
	r.waitState(srcName, "RUNNING", 1)

	adm := kadm.NewClient(newClient(t, bootstrap))
	waitEnd := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; {
			ends, err := adm.ListEndOffsets(ctx, topic)
			if o, ok := ends.Lookup(topic, 0); err == nil && ok && o.Offset >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d events are not in %s after 60s: %v %v", n, topic, ends, r.statusOf(srcName)())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitEnd(40)
	// Avro in Confluent's wire format, a few dozen bytes an event.
	recs := consumeN(t, bootstrap, topic, 40)
	total := 0
	for _, rec := range recs {
		if len(rec.Value) < 5 || rec.Value[0] != 0 || len(rec.Key) < 5 || rec.Key[0] != 0 {
			t.Fatalf("record at offset %d is not in Confluent's wire format: key %x value %x", rec.Offset, rec.Key, rec.Value)
		}
		total += len(rec.Value)
	}
	t.Logf("snapshot events: %d bytes per value on average", total/len(recs))

	r.must("POST", "/connectors", map[string]any{"name": sinkName, "config": sink}, 201)
	r.waitState(sinkName, "RUNNING", 1)
	objPrefix := "topics/" + topic + "/"
	for deadline := time.Now().Add(60 * time.Second); len(listKeys(t, s, "lake", objPrefix)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no object in the lake after 60s: %s", r.statusOf(sinkName)())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// A compatible change mid-stream: a new nullable column, a new schema
	// version under the value subject.
	pg.Exec(t, `ALTER TABLE orders ADD COLUMN note text`)
	insert(41, 70, true)
	waitEnd(70)
	t.Log("kill -9 of the worker")
	w.Kill()
	w = restart()
	r = rest{t, w.URL()}
	insert(71, 100, true)

	var files []lakeFile
	ids := map[float64]int{}
	for deadline := time.Now().Add(120 * time.Second); ; {
		files = readLake(t, s, objPrefix)
		clear(ids)
		for _, f := range files {
			for _, row := range f.Rows {
				id, _ := row["id"].(float64)
				ids[id]++
			}
		}
		if len(ids) >= 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 100 rows in the lake after 120s\nsource: %s\nsink: %s\n%s", len(ids), r.statusOf(srcName)(),
				r.statusOf(sinkName)(), harnessTail(w.LogPath()))
		}
		time.Sleep(time.Second)
	}
	for id := 1; id <= 100; id++ {
		if ids[float64(id)] == 0 {
			t.Errorf("row %d lost", id)
		}
	}

	// Typed columns from the Avro schemas; the note column from the
	// second version on.
	base := map[string]string{"id": "int64", "customer": "string", "amount": "decimal128(10, 2)", "placed": "date32[day]",
		"created": "timestamp[ms, tz=UTC]", "qty": "int32", "__op": "string", "__source_ts_ms": "int64", "__deleted": "string"}
	withNote := maps.Clone(base)
	withNote["note"] = "string"
	old, nu := 0, 0
	for _, f := range files {
		switch {
		case maps.Equal(f.Types, base):
			old++
			for _, row := range f.Rows {
				if id := row["id"].(float64); id > 70 {
					t.Errorf("%s: row %v written after the change lacks the note column", f.Path, id)
				}
			}
		case maps.Equal(f.Types, withNote):
			nu++
			for _, row := range f.Rows {
				id := row["id"].(float64)
				if id > 40 && row["note"] != fmt.Sprintf("note %d", int(id)) {
					t.Errorf("%s: row %v has note %v", f.Path, id, row["note"])
				}
			}
		default:
			t.Errorf("%s: column types %v, want %v or %v", f.Path, f.Types, base, withNote)
		}
		for _, row := range f.Rows {
			id := int64(row["id"].(float64))
			m := lakeRowAt(id, 1)
			if fmt.Sprint(row["customer"]) != m.customer || fmt.Sprint(row["amount"]) != fmt.Sprint(map[string]any{"decimal": m.amount}) {
				t.Errorf("%s: row %d is %v, want customer %s amount %s", f.Path, id, row, m.customer, m.amount)
			}
		}
	}
	if old == 0 || nu == 0 {
		t.Errorf("%d files of the first schema and %d of the second, want both", old, nu)
	}

	// Two versions of the value schema in the registry.
	resp, err := http.Get(registry + "/subjects/" + topic + "-value/versions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var versions []int
	if err := json.NewDecoder(resp.Body).Decode(&versions); err != nil || len(versions) != 2 {
		t.Errorf("versions of %s-value: %v (%v), want 2", topic, versions, err)
	}
	t.Logf("%d rows in %d Parquet objects (%d of the first schema version, %d of the second) after a kill -9", len(ids), len(files), old, nu)
}

// TestPostgresAvroToIceberg: the README's Iceberg pipeline with Avro and
// the bundled schema registry instead of JsonConverter: Postgres →
// Debezium envelope → AvroConverter topic → Iceberg sink (AvroConverter,
// upsert mode) → a table whose columns are typed from the Avro schemas.
// Mid-stream the source table gains a column (a new schema version under
// the value subject), which the sink adds to the table. pyiceberg and
// DuckDB's iceberg extension, each on its own, read SELECT * of the source,
// row for row and type for type.
func TestPostgresAvroToIceberg(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw, a registry and a worker")
	}
	harness.Python(t, "pyiceberg", "sqlalchemy", "pyarrow")
	registry := harness.SchemaRegistryURL(t)
	pg := harness.StartPostgresT(t)
	lake := newIcebergLake(t)
	pg.Exec(t, icebergOrdersDDL)
	conn := pgConn(t, pg)
	ctx := context.Background()
	send := func(b *pgx.Batch) {
		t.Helper()
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
	}
	var b pgx.Batch
	for id := int64(1); id <= 100; id++ {
		icebergRow(&b, id, 1)
	}
	send(&b)

	bootstrap, r, _, _ := startWorker(t, "iceavro", map[string]string{"offset.flush.interval.ms": "500"})
	id := pgID("iceavro") // an Avro name: the topic prefix names the schemas
	topic := id + ".public.orders"
	src := icebergSource(pg, id)
	maps.Copy(src, avroConverters(registry))
	sink := icebergSink(t, lake, topic, "shop.orders")
	maps.Copy(sink, avroConverters(registry))
	r.must("POST", "/connectors", map[string]any{"name": "src", "config": src}, 201)
	r.waitState("src", "RUNNING", 1)
	r.must("POST", "/connectors", map[string]any{"name": "lake", "config": sink}, 201)
	r.waitState("lake", "RUNNING", 1)
	status := func() string { return r.statusOf("src")() + "\n" + r.statusOf("lake")() }

	// The topic holds Avro in Confluent's wire format.
	for _, rec := range consumeN(t, bootstrap, topic, 100) {
		if len(rec.Value) < 5 || rec.Value[0] != 0 || len(rec.Key) < 5 || rec.Key[0] != 0 {
			t.Fatalf("record at offset %d is not in Confluent's wire format: key %x value %x", rec.Offset, rec.Key, rec.Value)
		}
	}
	it := lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", pgRows(t, conn, "SELECT * FROM orders"), "id", 90*time.Second, status)
	if got := it.types(); !maps.Equal(got, icebergOrdersTypes) {
		t.Errorf("column types %v\nwant %v", got, icebergOrdersTypes)
	}

	// A compatible change mid-stream: a new nullable column; updates,
	// deletes and inserts before and after it.
	b = pgx.Batch{}
	for id := int64(1); id <= 20; id++ {
		icebergUpdate(&b, id, 2)
	}
	b.Queue(`DELETE FROM orders WHERE id BETWEEN 21 AND 25`)
	send(&b)
	pg.Exec(t, `ALTER TABLE orders ADD COLUMN region text`)
	// A new connection: the old one's prepared statements describe rows
	// without the column.
	conn = pgConn(t, pg)
	b = pgx.Batch{}
	for id := int64(101); id <= 150; id++ {
		icebergRow(&b, id, 1)
	}
	b.Queue(`UPDATE orders SET region = 'eu-' || (id % 3) WHERE id % 2 = 0`)
	b.Queue(`DELETE FROM orders WHERE id BETWEEN 140 AND 145`)
	for id := int64(30); id <= 40; id++ {
		icebergUpdate(&b, id, 3)
	}
	send(&b)

	want := pgRows(t, conn, "SELECT * FROM orders")
	it = lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", want, "id", 120*time.Second, status)
	wantTypes := maps.Clone(icebergOrdersTypes)
	wantTypes["region"] = "string optional"
	duck := lake.readDuck(t, "shop.orders")
	for _, got := range []*icebergTable{it, duck} {
		if diffs := sameRows(want, got.Rows, "id"); len(diffs) > 0 {
			t.Errorf("%s reads %d rows, the source has %d; differences:\n%v", got.ReadBy, len(got.Rows), len(want), diffs)
		}
	}
	if types := it.types(); !maps.Equal(types, wantTypes) {
		t.Errorf("%s: column types %v\nwant %v", it.ReadBy, types, wantTypes)
	}
	if fmt.Sprint(it.Identifier) != "[id]" {
		t.Errorf("%s: identifier fields %v, want [id]", it.ReadBy, it.Identifier)
	}

	// Two versions of the value schema in the registry: before and after
	// the new column.
	resp, err := http.Get(registry + "/subjects/" + topic + "-value/versions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var versions []int
	if err := json.NewDecoder(resp.Body).Decode(&versions); err != nil || len(versions) != 2 {
		t.Errorf("versions of %s-value: %v (%v), want 2", topic, versions, err)
	}
	t.Logf("%d rows; %d data files, %d equality delete files; pyiceberg (%s) and %s agree with SELECT *",
		len(want), it.DataFiles, it.EqualityDeleteFiles, it.ReadBy, duck.ReadBy)
}
