package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-dev/tributary/integration/harness"
)

// validateErrors PUTs config to the validate endpoint and returns the
// errors by key.
func (r rest) validateErrors(config map[string]string) (int, map[string][]string) {
	r.t.Helper()
	body := r.must("PUT", "/connector-plugins/PostgresConnector/config/validate", config, 200)
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &infos); err != nil {
		r.t.Fatalf("validate response: %v: %s", err, body)
	}
	out := map[string][]string{}
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return infos.ErrorCount, out
}

// TestPostgresValidate sends bad Postgres configurations to the REST
// validate endpoint of a worker: each problem comes back on its key with
// an explanation, and validation creates nothing (no slot, no
// publication).
func TestPostgresValidate(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	replica := harness.StartPostgresT(t, harness.WithPostgresSetting("wal_level", "replica"))
	pg.Exec(t, `CREATE TABLE t (id int PRIMARY KEY, v text);
		CREATE TABLE nokey (v text);
		CREATE ROLE plain LOGIN PASSWORD 'pw';
		GRANT SELECT ON t TO plain`)
	pg.Exec(t, `SELECT pg_create_logical_replication_slot('other', 'test_decoding')`)
	_, r, _, _ := startWorker(t, "pgvalidate", nil)

	base := func() map[string]string {
		c := pgConnectorConfig(pg, "v", "public.t")
		c["publication.autocreate.mode"] = "all_tables"
		c["name"] = "v"
		return c
	}
	if n, errs := r.validateErrors(base()); n != 0 {
		t.Fatalf("a valid configuration has %d errors: %v", n, errs)
	}
	for _, c := range []struct {
		name   string
		change func(map[string]string)
		key    string
		says   string
	}{
		{"wrong password", func(c map[string]string) { c["database.password"] = "nope" }, "database.password", "password authentication failed"},
		{"no such database", func(c map[string]string) { c["database.dbname"] = "nodb" }, "database.dbname", "does not exist"},
		{"nothing listening", func(c map[string]string) { c["database.port"] = fmt.Sprint(harness.FreePort(t)) }, "database.hostname", "cannot connect"},
		{"no replication privilege", func(c map[string]string) { c["database.user"], c["database.password"] = "plain", "pw" }, "database.user", "REPLICATION"},
		{"publication for all tables needs a superuser", func(c map[string]string) { c["database.user"], c["database.password"] = "plain", "pw" }, "publication.autocreate.mode", "superuser"},
		{"wal_level not logical", func(c map[string]string) { c["database.port"] = fmt.Sprint(replica.Port) }, "database.hostname", "wal_level"},
		{"missing table", func(c map[string]string) { c["table.include.list"] = "public.t,public.missing" }, "table.include.list", "public.missing does not exist"},
		{"no primary key", func(c map[string]string) { c["table.include.list"] = "public.nokey" }, "table.include.list", "no primary key"},
		{"slot of another plugin", func(c map[string]string) { c["slot.name"] = "other" }, "slot.name", "test_decoding"},
		{"publication must exist", func(c map[string]string) { c["publication.autocreate.mode"] = "disabled" }, "publication.name", "does not exist"},
		{"bad regular expression", func(c map[string]string) { c["column.exclude.list"] = "(" }, "column.exclude.list", "invalid regular expression"},
	} {
		cfg := base()
		c.change(cfg)
		n, errs := r.validateErrors(cfg)
		got := strings.Join(errs[c.key], " | ")
		if n == 0 || !strings.Contains(got, c.says) {
			t.Errorf("%s: errors %v, want one on %s saying %q", c.name, errs, c.key, c.says)
			continue
		}
		t.Logf("%s: %s: %s", c.name, c.key, got)
	}
	// A failed validation created nothing.
	if slots := pgScalar(t, pg, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots"); slots != "other" {
		t.Errorf("slots after validation: %q, want only the test's own", slots)
	}
	if pubs := pgScalar(t, pg, "SELECT count(*)::text FROM pg_publication"); pubs != "0" {
		t.Errorf("%s publications after validation, want none", pubs)
	}
	// And a connector that cannot start says why.
	cfg := base()
	cfg["database.port"] = fmt.Sprint(replica.Port)
	r.must("POST", "/connectors", map[string]any{"name": "bad", "config": cfg}, 400)
}

// TestPostgresHeartbeat checks that heartbeats keep the slot moving: while
// only tables outside the publication change (a filtered database), and
// while nothing changes at all, the slot's confirmed_flush_lsn advances, and
// heartbeat records reach __debezium-heartbeat.<prefix> in Debezium's shape.
func TestPostgresHeartbeat(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("hb")
	pg.Exec(t, `CREATE TABLE quiet (id int PRIMARY KEY); CREATE TABLE noise (id serial PRIMARY KEY, v text)`)
	bootstrap, r, _, _ := startWorker(t, "pghb", map[string]string{"offset.flush.interval.ms": "200"})
	cfg := pgConnectorConfig(pg, id, "public.quiet")
	cfg["heartbeat.interval.ms"] = "300"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	slot := "slot_" + id
	waitPast := func(what string, target uint64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := slotFlushLSN(t, pg, slot)
			if got >= target {
				t.Logf("%s: the slot confirmed %s (target %s)", what, pglogrepl.LSN(got), pglogrepl.LSN(target))
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the slot's confirmed_flush_lsn is %s after 30s, not past %s", what, pglogrepl.LSN(got), pglogrepl.LSN(target))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	current := func() uint64 {
		l, err := pglogrepl.ParseLSN(pgScalar(t, pg, "SELECT pg_current_wal_lsn()::text"))
		if err != nil {
			t.Fatal(err)
		}
		return uint64(l)
	}
	// A busy table outside the publication.
	pg.Exec(t, `INSERT INTO noise (v) SELECT repeat('x', 200) FROM generate_series(1, 20000)`)
	waitPast("changes outside the publication only", current())
	// Nothing at all.
	waitPast("an idle server", current())

	er := newEventReader(t, bootstrap, "__debezium-heartbeat."+id)
	hb := er.until(30*time.Second, "heartbeat records", func(es []cdcEvent) bool { return len(es) >= 2 })
	key, _ := json.Marshal(hb[0].key)
	if string(key) != fmt.Sprintf(`{"serverName":%q}`, id) || hb[0].value["ts_ms"] == nil {
		t.Errorf("heartbeat record: key %s value %v", key, hb[0].value)
	}
	var ks struct{ Name string }
	json.Unmarshal(hb[0].keySchema, &ks)
	if ks.Name != "io.debezium.connector.common.ServerNameKey" {
		t.Errorf("heartbeat key schema %s", hb[0].keySchema)
	}
}
