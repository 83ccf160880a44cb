package harness

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestPostgres starts a server, checks that it takes logical replication
// (wal_level, a pgoutput slot) and password authentication, and that Close
// removes its directory.
func TestPostgres(t *testing.T) {
	pg := StartPostgresT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var level, version string
	if err := conn.QueryRow(ctx, "SELECT current_setting('wal_level'), current_setting('server_version_num')").Scan(&level, &version); err != nil {
		t.Fatal(err)
	}
	if level != "logical" || version[:2] != "15" {
		t.Fatalf("wal_level %s, version %s; want logical, 15", level, version)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_create_logical_replication_slot('harness', 'pgoutput')"); err != nil {
		t.Fatalf("create a pgoutput slot: %v", err)
	}
	if c, err := pg.ConnectAs(ctx, "postgres", "wrong", "postgres"); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password was accepted")
	}
	dir := pg.dir
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there after Close: %v", dir, err)
	}
}

func TestPostgresSetting(t *testing.T) {
	pg := StartPostgresT(t, WithPostgresSetting("wal_level", "replica"))
	ctx := context.Background()
	conn, err := pg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var level string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil || level != "replica" {
		t.Fatalf("wal_level %q, %v", level, err)
	}
}
