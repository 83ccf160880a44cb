package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// cdcEvent is a change event as the JsonConverter wrote it.
type cdcEvent struct {
	topic       string
	offset      int64
	key         map[string]any // payload; nil without a key
	value       map[string]any // payload; nil for a tombstone
	keySchema   json.RawMessage
	valueSchema json.RawMessage
}

func (e cdcEvent) op() string {
	if e.value == nil {
		return ""
	}
	s, _ := e.value["op"].(string)
	return s
}

func (e cdcEvent) row(which string) map[string]any {
	if e.value == nil {
		return nil
	}
	m, _ := e.value[which].(map[string]any)
	return m
}

// decodeConnectJSON splits a JsonConverter message into schema and payload.
func decodeConnectJSON(t *testing.T, b []byte) (json.RawMessage, map[string]any) {
	t.Helper()
	if b == nil {
		return nil, nil
	}
	var env struct {
		Schema  json.RawMessage `json:"schema"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("not JsonConverter output: %v: %.200s", err, b)
	}
	if string(env.Payload) == "null" {
		return env.Schema, nil
	}
	dec := json.NewDecoder(bytes.NewReader(env.Payload))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("payload: %v: %.200s", err, env.Payload)
	}
	return env.Schema, m
}

// eventReader reads change events from topics as they arrive.
type eventReader struct {
	t   *testing.T
	cl  *kgo.Client
	got []cdcEvent
	// diag, if set, explains a timeout (e.g. the connector's status).
	diag func() string
}

func newEventReader(t *testing.T, bootstrap string, topics ...string) *eventReader {
	cl := newClient(t, bootstrap, kgo.ConsumeTopics(topics...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	return &eventReader{t: t, cl: cl}
}

// until reads until done holds for the events so far, or fails after within.
func (r *eventReader) until(within time.Duration, what string, done func([]cdcEvent) bool) []cdcEvent {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for !done(r.got) {
		if time.Now().After(deadline) {
			var why string
			if r.diag != nil {
				why = r.diag()
			}
			r.t.Fatalf("%d events after %v, still waiting for %s %s", len(r.got), within, what, why)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fs := r.cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(rec *kgo.Record) {
			e := cdcEvent{topic: rec.Topic, offset: rec.Offset}
			var ks, vs json.RawMessage
			ks, e.key = decodeConnectJSON(r.t, rec.Key)
			vs, e.value = decodeConnectJSON(r.t, rec.Value)
			e.keySchema, e.valueSchema = ks, vs
			r.got = append(r.got, e)
		})
	}
	return r.got
}

// tableState applies a table's events in order to a map from the key's
// JSON to the row, checking op-specific rules on the way.
type tableState struct {
	rows  map[string]map[string]any
	reads map[string]int // snapshot reads per key
	seen  map[string]int // events per key
}

func keyString(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func applyEvents(t *testing.T, events []cdcEvent, topic string) *tableState {
	t.Helper()
	s := &tableState{rows: map[string]map[string]any{}, reads: map[string]int{}, seen: map[string]int{}}
	for _, e := range events {
		if e.topic != topic || e.value == nil {
			continue
		}
		var k string
		if e.key != nil {
			k = keyString(e.key)
		}
		switch e.op() {
		case "r":
			s.reads[k]++
			s.rows[k] = e.row("after")
		case "c":
			if _, ok := s.rows[k]; ok {
				t.Errorf("%s: create of key %s that exists (%v)", topic, k, s.rows[k])
			}
			s.rows[k] = e.row("after")
		case "u":
			s.rows[k] = e.row("after")
		case "d":
			delete(s.rows, k)
		case "t":
			clear(s.rows)
		}
		s.seen[k]++
	}
	return s
}

// dbRows reads a table's rows as the connector renders them: each row is
// fetched through the source's own conversion by row_to_json and compared
// on the columns given.
func dbKeys(t *testing.T, pg *harness.Postgres, sql string) []string {
	t.Helper()
	conn, err := pg.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// startWorker starts a Tributary broker and a worker process (every
// built-in connector available), returning the broker address, the REST
// client, the worker and a function that starts the worker again on the
// same properties (after a kill).
func startWorker(t *testing.T, group string, extra map[string]string) (string, rest, *harness.WorkerProcess, func() *harness.WorkerProcess) {
	t.Helper()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := filepath.Join(t.TempDir(), "worker")
	props := harness.WorkerProps(t, bootstrap, group, extra)
	w := harness.StartWorkerProcess(t, bin, dir, props)
	restart := func() *harness.WorkerProcess { return harness.StartWorkerProcess(t, bin, dir, props) }
	return bootstrap, rest{t, w.URL()}, w, restart
}

// TestPostgresSnapshotThenStream snapshots three tables (one larger than a
// chunk, one without a primary key, read by ctid ranges) on two threads
// while a workload changes them, then streams: every row and every change
// arrives, in commit order per table, snapshot rows once and changes once
// (no gap, no overlap: an inserted id is either read or created, never
// both), with the right op, before and after; ALTER TABLE mid-stream,
// REPLICA IDENTITY FULL, an unchanged TOAST value and a multi-table
// transaction included. The final state rebuilt from the events equals the
// tables'.
func TestPostgresSnapshotThenStream(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("e2e")
	pg.Exec(t, `CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, qty int, price numeric(10,2));
		INSERT INTO items SELECT i, 'item ' || i, i % 7, i * 1.25 FROM generate_series(1, 2500) i;
		CREATE TABLE nopk (a int, b text);
		ALTER TABLE nopk REPLICA IDENTITY FULL;
		INSERT INTO nopk SELECT i, 'b' || i FROM generate_series(1, 1500) i;
		CREATE TABLE docs (id int PRIMARY KEY, small text, big text);
		INSERT INTO docs VALUES (1, 's', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 4000) i))`)
	bootstrap, r, _, _ := startWorker(t, "pge2e", nil)
	cfg := pgConnectorConfig(pg, id, "public.items,public.nopk,public.docs")
	cfg["snapshot.max.threads"] = "2"
	cfg["snapshot.fetch.size"] = "1000"
	// The workload runs while the connector starts: some of it lands
	// before the slot's snapshot (and must be read), the rest after
	// (streamed).
	const n = 300
	conn := pgConn(t, pg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= n; i++ {
			_, err := conn.Exec(context.Background(), fmt.Sprintf(`BEGIN;
				INSERT INTO items VALUES (%d, 'new %d', 1, 2.50);
				UPDATE items SET qty = qty + 100 WHERE id = %d;
				DELETE FROM items WHERE id = %d;
				INSERT INTO nopk VALUES (%d, 'n%d');
				COMMIT`, 10000+i, i, i, 2000+i, 5000+i, i))
			if err == nil && i == n/2 {
				_, err = conn.Exec(context.Background(), `ALTER TABLE items ADD COLUMN extra text DEFAULT 'x'`)
			}
			if err != nil {
				t.Error(err)
				return
			}
			time.Sleep(15 * time.Millisecond)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	<-done
	pg.Exec(t, `UPDATE nopk SET b = 'changed' WHERE a = 7;
		UPDATE docs SET small = 't' WHERE id = 1;
		UPDATE items SET id = 99999 WHERE id = 1500;
		DELETE FROM nopk WHERE a = 8`)
	r.waitState("pg", "RUNNING", 1)

	topics := []string{id + ".public.items", id + ".public.nopk", id + ".public.docs"}
	er := newEventReader(t, bootstrap, topics...)
	events := er.until(2*time.Minute, "the last change of the workload", func(es []cdcEvent) bool {
		sawDocs, sawNopk, sawPK := false, false, false
		for _, e := range es {
			switch {
			case e.topic == topics[2] && e.op() == "u":
				sawDocs = true
			case e.topic == topics[1] && e.op() == "d":
				sawNopk = true
			case e.topic == topics[0] && e.op() == "c" && keyString(e.key) == `{"id":99999}`:
				sawPK = true
			}
		}
		return sawDocs && sawNopk && sawPK
	})

	// items: rebuild the final state and compare it with the table.
	st := applyEvents(t, events, topics[0])
	for k, c := range st.reads {
		if c != 1 {
			t.Errorf("items: key %s read %d times in the snapshot", k, c)
		}
	}
	for i := 1; i <= n; i++ {
		k := fmt.Sprintf(`{"id":%d}`, 10000+i)
		creates := 0
		for _, e := range events {
			if e.topic == topics[0] && e.op() == "c" && keyString(e.key) == k {
				creates++
			}
		}
		if creates+st.reads[k] != 1 {
			t.Errorf("items: inserted id %d was created %d times and read %d times, want once in all (gap or overlap between snapshot and stream)", 10000+i, creates, st.reads[k])
		}
	}
	want := dbKeys(t, pg, `SELECT json_build_object('id', id, 'name', name, 'qty', qty)::text FROM items ORDER BY id`)
	var got []string
	for _, row := range st.rows {
		got = append(got, fmt.Sprintf(`{"id" : %v, "name" : %q, "qty" : %v}`, row["id"], row["name"], row["qty"]))
	}
	sort.Slice(got, func(i, j int) bool { return idOf(got[i]) < idOf(got[j]) })
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("items rebuilt from %d events (%d rows) differ from the table (%d rows)", len(events), len(got), len(want))
		for i := 0; i < len(got) && i < len(want); i++ {
			if got[i] != want[i] {
				t.Fatalf("first difference at row %d: events %s, table %s", i, got[i], want[i])
			}
		}
	}
	// Changes come in commit order per table: the per-key sequence of
	// qty updates is increasing, and after the ALTER the new column shows.
	sawExtra := false
	for _, e := range events {
		if e.topic == topics[0] && e.op() == "c" {
			if _, ok := e.row("after")["extra"]; ok {
				sawExtra = true
			}
		}
	}
	if !sawExtra {
		t.Error("items: no event has the column added by ALTER TABLE mid-stream")
	}
	// The primary-key change: delete (with tombstone) then create, with
	// Debezium's headers.
	var pkSeq []string
	for _, e := range events {
		if e.topic == topics[0] && e.key != nil && (keyString(e.key) == `{"id":1500}` || keyString(e.key) == `{"id":99999}`) && e.op() != "r" {
			pkSeq = append(pkSeq, e.op()+keyString(e.key))
		}
	}
	if strings.Join(pkSeq, " ") != `d{"id":1500} {"id":1500} c{"id":99999}` {
		t.Errorf("primary-key change events: %q", pkSeq)
	}

	// nopk: REPLICA IDENTITY FULL, no key: updates carry the full before.
	var fullBefore map[string]any
	for _, e := range events {
		if e.topic == topics[1] && e.op() == "u" {
			fullBefore = e.row("before")
		}
		if e.topic == topics[1] && e.key != nil {
			t.Fatalf("nopk: event with a key %v", e.key)
		}
	}
	if fullBefore == nil || fmt.Sprint(fullBefore["a"]) != "7" || fullBefore["b"] != "b7" {
		t.Errorf("nopk: update's before = %v, want the full old row {a:7 b:b7}", fullBefore)
	}
	nopkCount := 0
	for _, e := range events {
		if e.topic == topics[1] && (e.op() == "r" || e.op() == "c") {
			nopkCount++
		}
	}
	if nopkCount != 1500+n {
		t.Errorf("nopk: %d rows read or created, want %d", nopkCount, 1500+n)
	}

	// docs: the unchanged TOAST value is Debezium's placeholder.
	for _, e := range events {
		if e.topic == topics[2] && e.op() == "u" {
			if big := e.row("after")["big"]; big != "__debezium_unavailable_value" {
				t.Errorf("docs: unchanged TOAST column = %.40v, want the placeholder", big)
			}
			if e.row("before") != nil {
				t.Errorf("docs: REPLICA IDENTITY DEFAULT update has a before: %v", e.row("before"))
			}
		}
	}
	var boundary []string
	for i := 1; i <= n; i++ {
		k := fmt.Sprintf(`{"id":%d}`, 10000+i)
		if st.reads[k] == 1 && st.reads[fmt.Sprintf(`{"id":%d}`, 10000+i+1)] == 0 {
			boundary = append(boundary, fmt.Sprint(10000+i))
		}
	}
	t.Logf("%d events: %d rows read in the snapshot, the rest streamed; the workload's inserts up to id %v were read, later ones streamed", len(events), len(st.reads), boundary)
}

// statusOf returns a diagnostic of the connector's state.
func (r rest) statusOf(name string) func() string {
	return func() string {
		_, b := r.do("GET", "/connectors/"+name+"/status", nil)
		return "(status: " + string(b) + ")"
	}
}

func idOf(s string) int {
	var id int
	fmt.Sscanf(s, `{"id" : %d`, &id)
	return id
}
