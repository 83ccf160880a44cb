package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/integration/harness"
)

// pgConn opens a superuser connection, closed in t.Cleanup.
func pgConn(t testing.TB, pg *harness.Postgres) *pgx.Conn {
	t.Helper()
	conn, err := pg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pgSeq names the objects of each Postgres test uniquely.
var pgSeq atomic.Int64

// pgConnectorConfig returns a Debezium-style configuration of the Postgres
// source for pg, capturing tables (schema.table, comma-separated) through a
// filtered publication and a slot of its own, named after id.
func pgConnectorConfig(pg *harness.Postgres, id, tables string) map[string]string {
	return map[string]string{
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"plugin.name":                 "pgoutput", // Debezium's default is decoderbufs
		"database.hostname":           pg.Host,
		"database.port":               strconv.Itoa(pg.Port),
		"database.user":               pg.User,
		"database.password":           pg.Password,
		"database.dbname":             pg.Database,
		"database.sslmode":            "disable",
		"topic.prefix":                id,
		"table.include.list":          tables,
		"slot.name":                   "slot_" + id,
		"publication.name":            "pub_" + id,
		"publication.autocreate.mode": "filtered",
	}
}

// pgID returns a fresh lower-case identifier for a test's objects.
func pgID(prefix string) string { return fmt.Sprintf("%s%d", prefix, pgSeq.Add(1)) }

// pgScalar runs a query returning one value, as text.
func pgScalar(t testing.TB, pg *harness.Postgres, sql string) string {
	t.Helper()
	conn, err := pg.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var s *string
	if err := conn.QueryRow(t.Context(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if s == nil {
		return ""
	}
	return *s
}

// ledgerLoad writes to a table ledger (id bigint PRIMARY KEY, v text) the
// crash tests' workload: transactions of 1 to 9 rows with consecutive ids
// from 0, one every 15 ms, until stopped. A transaction whose connection
// fails is retried on a new one (ON CONFLICT DO NOTHING: it may have
// committed before the failure), so the rows written are always ids 0 to
// n-1 without a gap.
type ledgerLoad struct {
	mu    sync.Mutex
	total int
	stop  chan struct{}
	done  chan struct{}
}

// startLedgerLoad starts the workload on its own connection to pg; the
// test calls stop to end it (a cleanup stops it too).
func startLedgerLoad(t *testing.T, pg *harness.Postgres) *ledgerLoad {
	t.Helper()
	l := &ledgerLoad{stop: make(chan struct{}), done: make(chan struct{})}
	conn := pgConn(t, pg)
	go func() {
		defer close(l.done)
		for tx := 0; ; tx++ {
			select {
			case <-l.stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			l.mu.Lock()
			from, k := l.total, tx%9+1
			l.mu.Unlock()
			sql := fmt.Sprintf(`INSERT INTO ledger SELECT i, 'v' || i FROM generate_series(%d, %d) i ON CONFLICT DO NOTHING`, from, from+k-1)
			for try := 0; ; try++ {
				_, err := conn.Exec(context.Background(), sql)
				if err == nil {
					break
				}
				if try == 20 {
					t.Errorf("the workload's transaction failed 20 times, the last: %v", err)
					return
				}
				t.Logf("the workload's transaction failed (%v); retrying on a new connection", err)
				conn.Close(context.Background())
				time.Sleep(500 * time.Millisecond)
				if c, err := pg.Connect(context.Background()); err == nil {
					conn = c
					t.Cleanup(func() { c.Close(context.Background()) })
				}
			}
			l.mu.Lock()
			l.total += k
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { l.end() })
	return l
}

// end stops the workload and returns how many rows it wrote (ids 0 to n-1).
func (l *ledgerLoad) end() int {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}
