package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
)

// The failover test runs PostgreSQL 17 (the image integration/container
// builds from Debian trixie's packages, tributary-test/postgres:17) as a
// primary and a physical standby in Docker containers, through the docker
// command.

const pg17Image = "tributary-test/postgres:17"

// docker runs the docker command, failing the test on an error.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// requirePG17Image skips without a Docker engine or the PostgreSQL 17 image.
func requirePG17Image(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("docker", "image", "inspect", pg17Image).CombinedOutput(); err != nil {
		t.Skipf("needs a Docker engine and the image %s (built by the tests of integration/container): %v %s", pg17Image, err, out)
	}
}

// pgContainer is a PostgreSQL 17 server in a container.
type pgContainer struct {
	name string
	port string // on 127.0.0.1
}

func (c pgContainer) dsn() string {
	return fmt.Sprintf("postgres://postgres:pw@127.0.0.1:%s/postgres?sslmode=disable", c.port)
}

// exec runs SQL in the container with psql.
func (c pgContainer) psql(t *testing.T, sql string) string {
	t.Helper()
	return docker(t, "exec", "-u", "postgres", c.name, "psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql)
}

// waitReady waits until the server answers on its published port.
func (c pgContainer) waitReady(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		conn, err := pgx.Connect(t.Context(), c.dsn())
		if err == nil {
			conn.Close(t.Context())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL in %s not ready: %v\n%s", c.name, err, docker(t, "logs", "--tail", "50", c.name))
		}
	}
}

// pg17Pair starts a PostgreSQL 17 primary (wal_level=logical, with the
// extra server arguments primaryArgs) and a physical standby of it in
// containers on a network of their own: the standby is a base backup of
// the primary over the physical slot standby1 (-R writes primary_conninfo
// with the dbname that slot synchronisation needs), with
// hot_standby_feedback=on, wal_level=logical (a standby does not inherit
// the primary's command line) and the postgresql.conf lines standbyConf.
func pg17Pair(t *testing.T, id string, primaryArgs []string, standbyConf string) (primary, standby pgContainer) {
	t.Helper()
	// Docker's names are the engine's, which outlives this process: the
	// pid keeps them apart from those a killed earlier run left behind.
	names := fmt.Sprintf("%s-%d", id, os.Getpid())
	network := "tribnet-" + names
	docker(t, "network", "create", network)
	t.Cleanup(func() { _ = exec.Command("docker", "network", "rm", network).Run() })
	run := func(name string, args ...string) pgContainer {
		all := append([]string{"run", "-d", "--name", name, "--network", network, "-p", "127.0.0.1::5432", "-e", "POSTGRES_PASSWORD=pw"}, args...)
		docker(t, all...)
		t.Cleanup(func() {
			if t.Failed() {
				out, _ := exec.Command("docker", "logs", "--tail", "40", name).CombinedOutput()
				t.Logf("%s log:\n%s", name, out)
			}
			_ = exec.Command("docker", "rm", "-f", "-v", name).Run()
		})
		port := docker(t, "port", name, "5432/tcp")
		return pgContainer{name: name, port: port[strings.LastIndex(port, ":")+1:]}
	}
	args := append([]string{pg17Image, "postgres", "-c", "wal_level=logical", "-c", "max_wal_senders=10",
		"-c", "max_replication_slots=10", "-c", "wal_sender_timeout=10s"}, primaryArgs...)
	primary = run(names+"-p", args...)
	primary.waitReady(t)
	primary.psql(t, `SELECT pg_create_physical_replication_slot('standby1')`)
	docker(t, "exec", "-u", "postgres", primary.name, "sh", "-c",
		`echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf" && psql -XAtq -c "SELECT pg_reload_conf()"`)
	standbyScript := `set -e
mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
exec setpriv --reuid=postgres --regid=postgres --init-groups sh -c '
PATH=/usr/lib/postgresql/17/bin:$PATH
PGPASSWORD=pw pg_basebackup -d "host=` + primary.name + ` user=postgres password=pw dbname=postgres" -D "$PGDATA" -R -S standby1 -X stream
cat >> "$PGDATA/postgresql.auto.conf" <<EOF
hot_standby_feedback = on
` + standbyConf + `
EOF
exec postgres -c listen_addresses="*" -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10'`
	standby = run(names+"-s", "--entrypoint", "sh", pg17Image, "-c", standbyScript)
	standby.waitReady(t)
	return primary, standby
}

// TestPostgresFailoverSlot: a PostgreSQL 17 primary with a failover slot
// (slot.failover=true) and a physical standby syncing it
// (sync_replication_slots=on, synchronous replication so that a commit the
// client saw is on the standby); a steady stream of inserts; the primary is
// killed and the standby promoted. The connector, given both servers in
// database.hostname, goes on from the synchronised slot on the new primary:
// every committed row arrives, and the slot there is at or behind the
// committed offsets.
func TestPostgresFailoverSlot(t *testing.T) {
	t.Parallel()
	requirePG17Image(t)
	id := pgID("failover")
	primary, standby := pg17Pair(t, id, []string{"-c", "synchronized_standby_slots=standby1"}, "sync_replication_slots = on")
	primary.psql(t, `CREATE TABLE ledger (id bigint PRIMARY KEY, v text NOT NULL); INSERT INTO ledger SELECT i, 'v' || i FROM generate_series(1, 100) i`)
	// Synchronous from now on: a commit the client saw is on the standby.
	primary.psql(t, `ALTER SYSTEM SET synchronous_standby_names = '*'`)
	primary.psql(t, `SELECT pg_reload_conf()`)

	bootstrap, r, w, _ := startWorker(t, "pgfailover", map[string]string{"offset.flush.interval.ms": "300"})
	cfg := map[string]string{
		"connector.class":                     "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname":                   "127.0.0.1:" + primary.port + ",127.0.0.1:" + standby.port,
		"database.user":                       "postgres",
		"database.password":                   "pw",
		"database.dbname":                     "postgres",
		"database.sslmode":                    "disable",
		"topic.prefix":                        id,
		"table.include.list":                  "public.ledger",
		"slot.name":                           "slot_" + id,
		"slot.failover":                       "true",
		"publication.name":                    "pub_" + id,
		"publication.autocreate.mode":         "filtered",
		"retriable.restart.connector.wait.ms": "2000",
	}
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	er := newEventReader(t, bootstrap, id+".public.ledger")
	er.diag = func() string { return harnessTail(w.LogPath()) }
	er.until(time.Minute, "the snapshot", func(es []cdcEvent) bool { return len(es) >= 100 })
	if f := primary.psql(t, fmt.Sprintf(`SELECT failover FROM pg_replication_slots WHERE slot_name = 'slot_%s'`, id)); f != "t" {
		t.Fatalf("the slot is not a failover slot on the primary: %q", f)
	}

	// The workload: one insert a transaction, against whichever server is
	// the primary; committed ids are those whose COMMIT returned.
	var mu sync.Mutex
	committed := map[int]bool{}
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		for i := 1000; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if conn == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres:pw@127.0.0.1:%s,127.0.0.1:%s/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2", primary.port, standby.port))
				cancel()
				if err != nil {
					time.Sleep(200 * time.Millisecond)
					i--
					continue
				}
				conn = c
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := conn.Exec(ctx, "INSERT INTO ledger VALUES ($1, 'x')", i)
			cancel()
			if err != nil {
				conn.Close(context.Background())
				conn = nil
				continue // not committed as far as the client knows (it may be: it would arrive, and be counted)
			}
			mu.Lock()
			committed[i] = true
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()

	// The slot is synchronised to the standby before the failover.
	slot := "slot_" + id
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if s := standby.psql(t, fmt.Sprintf(`SELECT synced AND NOT temporary FROM pg_replication_slots WHERE slot_name = '%s'`, slot)); s == "t" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not synchronise the failover slot: %s", standby.psql(t, "SELECT slot_name, synced, temporary, confirmed_flush_lsn FROM pg_replication_slots"))
		}
	}
	er.until(time.Minute, "changes before the failover", func(es []cdcEvent) bool { return len(es) >= 300 })
	ow := newOffsetWatcher(t, bootstrap, "pgfailover-offsets", "pg", id)

	docker(t, "kill", primary.name)
	t.Logf("primary killed after %d events", len(er.got))
	standby.psql(t, "SELECT pg_promote()")
	t.Logf("standby promoted")
	n0 := len(er.got)
	er.until(2*time.Minute, "changes after the failover", func(es []cdcEvent) bool { return len(es) >= n0+300 })
	close(stop)
	<-loadDone
	mu.Lock()
	ids := make([]int, 0, len(committed))
	for i := range committed {
		ids = append(ids, i)
	}
	mu.Unlock()
	seen := map[string]bool{}
	done := 0
	er.until(2*time.Minute, fmt.Sprintf("all %d committed rows", len(ids)), func(es []cdcEvent) bool {
		for _, e := range es[done:] {
			if e.op() == "c" || e.op() == "r" {
				seen[keyString(e.key)] = true
			}
		}
		done = len(es)
		for _, i := range ids {
			if !seen[fmt.Sprintf(`{"id":%d}`, i)] {
				return false
			}
		}
		return true
	})
	if s, _ := r.status("pg"); len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
		t.Fatalf("the task is not running after the failover: %+v", s)
	}
	ow.catchUp()
	committedLSN := ow.committedLSN()
	flush := standby.psql(t, fmt.Sprintf(`SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '%s'`, slot))
	fl, err := pglogrepl.ParseLSN(flush)
	if err != nil {
		t.Fatalf("slot on the new primary: %q: %v", flush, err)
	}
	if uint64(fl) > committedLSN {
		t.Errorf("the slot on the new primary confirmed %s, past the committed offsets (%s)", fl, pglogrepl.LSN(committedLSN))
	}
	t.Logf("failover: %d committed rows all arrived (%d events); slot on the new primary at %s, committed offsets at %s",
		len(ids), len(er.got), fl, pglogrepl.LSN(committedLSN))
}
