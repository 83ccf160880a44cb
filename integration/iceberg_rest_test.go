package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestIcebergRESTCatalog runs the Postgres → Iceberg pipeline with the
// sink talking to a REST catalog: Apache Iceberg's own REST request
// handling (CatalogHandlers, as in Iceberg's REST fixture server) over a
// JdbcCatalog, served by testdata/IcebergRESTServer.java. The table, read
// by Iceberg's Java library and pyiceberg from the catalog's database,
// equals SELECT *.
func TestIcebergRESTCatalog(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw, a REST catalog and a worker")
	}
	harness.Python(t, "pyiceberg", "sqlalchemy", "pyarrow")
	pg := harness.StartPostgresT(t)
	lake := newIcebergLake(t)
	rc := harness.StartIcebergREST(t, "testdata/IcebergRESTServer.java", map[string]string{
		"catalog-name": lake.catalog, "uri": "jdbc:sqlite:" + lake.db, "warehouse": "s3://" + lake.bucket + "/warehouse",
		"io-impl": "org.apache.iceberg.aws.s3.S3FileIO", "s3.endpoint": lake.s3.URL, "s3.path-style-access": "true",
		"s3.access-key-id": lake.s3.AccessKey, "s3.secret-access-key": lake.s3.SecretKey, "client.region": lake.s3.Region})
	pg.Exec(t, icebergOrdersDDL)
	conn := pgConn(t, pg)
	ctx := context.Background()
	var b pgx.Batch
	for id := int64(1); id <= 100; id++ {
		icebergRow(&b, id, 1)
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	bootstrap, r, _, _ := startWorker(t, "icerest", map[string]string{"offset.flush.interval.ms": "500"})
	id := pgID("icerest")
	topic := id + ".public.orders"
	r.must("POST", "/connectors", map[string]any{"name": "src", "config": icebergSource(pg, id)}, 201)
	r.waitState("src", "RUNNING", 1)
	sink := icebergSink(t, lake, topic, "shop.orders")
	maps.DeleteFunc(sink, func(k, _ string) bool { return k == "iceberg.catalog.uri" || k == "iceberg.catalog.warehouse" })
	maps.Copy(sink, map[string]string{"iceberg.catalog.type": "rest", "iceberg.catalog.uri": rc.URL})
	r.must("POST", "/connectors", map[string]any{"name": "lake", "config": sink}, 201)
	r.waitState("lake", "RUNNING", 1)
	status := func() string { return r.statusOf("src")() + "\n" + r.statusOf("lake")() }
	lake.waitTableCaughtUp(t, bootstrap, topic, "shop.orders", "connect-lake", 90*time.Second, status)
	for round := range 3 {
		var b pgx.Batch
		for k := int64(0); k < 20; k++ {
			id := 1 + (int64(round)*37+k*11)%100
			icebergUpdate(&b, id, int64(round)+2)
		}
		b.Queue(`DELETE FROM orders WHERE id = $1`, 50+round)
		icebergRow(&b, int64(1000+round), 1)
		if err := conn.SendBatch(ctx, &b).Close(); err != nil {
			t.Fatal(err)
		}
		lake.waitTableCaughtUp(t, bootstrap, topic, "shop.orders", "connect-lake", 90*time.Second, status)
	}
	want := pgRows(t, conn, "SELECT * FROM orders")
	lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", want, "id", 90*time.Second, status)
	java := lake.readJava(t, "shop.orders")
	py := lake.readPy(t, "shop.orders")
	for _, got := range []*icebergTable{java, py} {
		if diffs := sameRows(want, got.Rows, "id"); len(diffs) > 0 {
			t.Errorf("%s reads %d rows, the source has %d; differences:\n%v", got.ReadBy, len(got.Rows), len(want), diffs)
		}
	}
	if py.EqualityDeleteFiles == 0 {
		t.Errorf("no equality delete file was committed through the REST catalog")
	}
	t.Logf("through the REST catalog: %d rows equal SELECT * in Java and pyiceberg, %d snapshots, %s", len(want), java.Snapshots,
		fmt.Sprint(py.EqualityDeleteFiles, " equality delete files"))
}

// TestIcebergPostgresCatalog runs the Postgres → Iceberg pipeline with the
// SQL catalog in PostgreSQL (its own database and user, the password given
// as iceberg.catalog.jdbc.password): the table, read by Iceberg's Java
// library through JdbcCatalog on the same database, equals SELECT *, and
// the catalog's password appears nowhere in the worker's log.
func TestIcebergPostgresCatalog(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw and a worker")
	}
	harness.RequireIcebergJars(t)
	pg := harness.StartPostgresT(t)
	lake := newIcebergLake(t)
	const password = "catalog-pw-7c1e93"
	pg.Exec(t, `CREATE USER iceberg_cat PASSWORD '`+password+`'`)
	pg.Exec(t, `CREATE DATABASE iceberg_catalog OWNER iceberg_cat`)
	pg.Exec(t, icebergOrdersDDL)
	conn := pgConn(t, pg)
	ctx := context.Background()
	var b pgx.Batch
	for id := int64(1); id <= 100; id++ {
		icebergRow(&b, id, 1)
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	bootstrap, r, w, _ := startWorker(t, "icepgcat", map[string]string{"offset.flush.interval.ms": "500"})
	id := pgID("icepgcat")
	topic := id + ".public.orders"
	r.must("POST", "/connectors", map[string]any{"name": "src", "config": icebergSource(pg, id)}, 201)
	r.waitState("src", "RUNNING", 1)
	sink := icebergSink(t, lake, topic, "shop.orders")
	maps.Copy(sink, map[string]string{
		"iceberg.catalog.uri":       fmt.Sprintf("jdbc:postgresql://%s:%d/iceberg_catalog", pg.Host, pg.Port),
		"iceberg.catalog.jdbc.user": "iceberg_cat", "iceberg.catalog.jdbc.password": password,
	})
	r.must("POST", "/connectors", map[string]any{"name": "lake", "config": sink}, 201)
	r.waitState("lake", "RUNNING", 1)
	status := func() string { return r.statusOf("src")() + "\n" + r.statusOf("lake")() }

	adm := kadm.NewClient(newClient(t, bootstrap))
	// caughtUp waits until the sink's group has committed the topic's end:
	// the worker commits only what the sink reports in the table.
	caughtUp := func() {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			ends, err1 := adm.ListEndOffsets(ctx, topic)
			offs, err2 := adm.FetchOffsets(ctx, "connect-lake")
			end, ok1 := ends.Lookup(topic, 0)
			at, ok2 := offs.Lookup(topic, 0)
			if err1 == nil && err2 == nil && ok1 && ok2 && end.Offset > 0 && at.At >= end.Offset {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sink's group is at %v of %v after 90s\n%s", offs, ends, status())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	caughtUp()
	for round := range 3 {
		var b pgx.Batch
		for k := int64(0); k < 20; k++ {
			icebergUpdate(&b, 1+(int64(round)*37+k*11)%100, int64(round)+2)
		}
		b.Queue(`DELETE FROM orders WHERE id = $1`, 50+round)
		icebergRow(&b, int64(1000+round), 1)
		if err := conn.SendBatch(ctx, &b).Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // the source's changes reach the topic
		caughtUp()
	}
	want := pgRows(t, conn, "SELECT * FROM orders")
	out := harness.RunIcebergJava(t, "testdata/IcebergRead.java", "table=shop.orders", "catalog-name="+lake.catalog,
		fmt.Sprintf("uri=jdbc:postgresql://%s:%d/iceberg_catalog", pg.Host, pg.Port), "jdbc.user=iceberg_cat", "jdbc.password="+password,
		"warehouse=s3://"+lake.bucket+"/warehouse",
		"io-impl=org.apache.iceberg.aws.s3.S3FileIO", "s3.endpoint="+lake.s3.URL, "s3.path-style-access=true",
		"s3.access-key-id="+lake.s3.AccessKey, "s3.secret-access-key="+lake.s3.SecretKey, "client.region="+lake.s3.Region)
	var java icebergTable
	if err := json.Unmarshal(out, &java); err != nil {
		t.Fatalf("IcebergRead output: %v\n%s", err, out)
	}
	if diffs := sameRows(want, java.Rows, "id"); len(diffs) > 0 {
		t.Errorf("Iceberg's Java library reads %d rows through the PostgreSQL catalog, the source has %d; differences:\n%v", len(java.Rows), len(want), diffs)
	}
	if n := pgScalar(t, pg, `SELECT count(*) FROM pg_database WHERE datname = 'iceberg_catalog'`); n != "1" {
		t.Fatalf("catalog database: %s", n)
	}
	logb, err := os.ReadFile(w.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(logb), password) {
		t.Errorf("the worker's log shows the catalog's password")
	}
	t.Logf("through the PostgreSQL catalog: %d rows equal SELECT * in Iceberg's Java library, %d snapshots", len(want), java.Snapshots)
}
