package integration

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
