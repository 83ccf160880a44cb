package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// pgDiffSchema is the schema of the differential test: every type the
// issue names, a composite key, REPLICA IDENTITY FULL, TOAST and defaults.
const pgDiffSchema = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE alltypes (
	id serial PRIMARY KEY,
	c_bool boolean, c_int2 smallint, c_int4 integer NOT NULL DEFAULT 42, c_int8 bigint,
	c_float4 real, c_float8 double precision,
	c_num numeric(12,3), c_numv numeric, c_num0 numeric(8,0),
	c_text text DEFAULT 'hello', c_varchar varchar(20), c_char char(5),
	c_date date, c_time time, c_time3 time(3), c_timetz timetz,
	c_ts timestamp, c_ts3 timestamp(3), c_tstz timestamptz,
	c_interval interval,
	c_json json, c_jsonb jsonb, c_uuid uuid, c_bytea bytea,
	c_int_arr int[], c_text_arr text[], c_bigint_arr bigint[],
	c_mood mood, c_inet inet, c_cidr cidr, c_macaddr macaddr, c_xml xml,
	c_bit bit(1), c_oid oid
);
CREATE TABLE composite (a int, b text, v int NOT NULL, PRIMARY KEY (b, a));
CREATE TABLE fullrow (x int, y text);
ALTER TABLE fullrow REPLICA IDENTITY FULL;
CREATE TABLE docs (id int PRIMARY KEY, small text, big text);
`

// pgDiffRows are inserted before the connectors start (the snapshot) and
// again, with other ids, after (the stream).
func pgDiffRows(base int) string {
	return fmt.Sprintf(`
INSERT INTO alltypes (id, c_bool, c_int2, c_int4, c_int8, c_float4, c_float8, c_num, c_numv, c_num0, c_text, c_varchar, c_char,
	c_date, c_time, c_time3, c_timetz, c_ts, c_ts3, c_tstz, c_interval, c_json, c_jsonb, c_uuid, c_bytea,
	c_int_arr, c_text_arr, c_bigint_arr, c_mood, c_inet, c_cidr, c_macaddr, c_xml, c_bit, c_oid) VALUES
(%[1]d, true, -32768, 2147483647, -9223372036854775808, 3.25, -1.5e300, 123456789.125, -0.000123, 99999999, 'it''s "quoted" \ back', 'varchar', 'ab',
	'2024-02-29', '13:14:15.123456', '23:59:59.999', '10:11:12.5+02:30', '2024-05-06 07:08:09.123456', '1999-12-31 23:59:59.5', '2024-05-06 07:08:09.1+02',
	'1 year 2 mons 3 days 04:05:06.789', '{"a": [1, 2]}', '{"b": {"c": null}}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00ff10',
	'{1,2,NULL,-4}', '{"a b","c\"d",NULL,""}', '{9223372036854775807}', 'happy', '192.168.1.0/24', '10.0.0.0/8', '08:00:2b:01:02:03', '<a>x</a>', B'1', 4294967295),
(%[2]d, false, 0, 0, 0, 'NaN', 'Infinity', 0, 0, -5, '', '', 'abcde',
	'0044-03-15 BC', '00:00:00', '00:00:00', '00:00:00+00', '1970-01-01 00:00:00', '1900-01-01 00:00:00.001', '0001-01-01 00:00:00+00',
	'-1 days -02:00:00', '[]', '[]', '00000000-0000-0000-0000-000000000000', '',
	'{}', '{}', '{}', 'sad', '::1', '::/0', '00:00:00:00:00:00', '<r/>', B'0', 0),
(%[3]d, NULL, NULL, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO composite VALUES (%[1]d, 'x', 1), (%[2]d, 'y', 2);
INSERT INTO fullrow VALUES (%[1]d, 'one'), (%[2]d, NULL);
INSERT INTO docs VALUES (%[1]d, 's', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 3000) i));
`, base+1, base+2, base+3)
}

// pgDiffChanges are the changes made while both connectors stream.
const pgDiffChanges = `
UPDATE alltypes SET c_text = 'changed', c_num = -1.5, c_int_arr = '{7}' WHERE id = 1;
UPDATE alltypes SET c_tstz = '2030-01-01 00:00:00+00', c_interval = '10 minutes' WHERE id = 2;
DELETE FROM alltypes WHERE id = 3;
UPDATE alltypes SET id = 50 WHERE id = 101;
UPDATE composite SET v = 10 WHERE a = 1;
DELETE FROM composite WHERE a = 2;
UPDATE fullrow SET y = 'uno' WHERE x = 1;
DELETE FROM fullrow WHERE x = 2;
UPDATE docs SET small = 't' WHERE id = 1;
BEGIN;
INSERT INTO composite VALUES (200, 'z', 3);
UPDATE alltypes SET c_bool = false WHERE id = 2;
COMMIT;
`

// TestPostgresDebeziumDiff runs Debezium 3.6.1's PostgreSQL connector on
// Kafka Connect 4.4 and Tributary's on a Tributary worker side by side,
// each with its own slot on the same database and its own broker, over the
// same snapshot and the same changes, and requires their change events to
// be equal as JsonConverter JSON, key and value, schema and payload, apart
// from processing times (ts_ms, ts_us, ts_ns) and, in snapshot events, the
// snapshot transaction's id and position.
func TestPostgresDebeziumDiff(t *testing.T) {
	t.Parallel()
	harness.RequireDebezium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, pgDiffSchema)
	pg.Exec(t, pgDiffRows(0))

	dbzBroker := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, dbzBroker)
	ourBootstrap, ours, _, _ := startWorker(t, "pgdiff", nil)

	tables := "public.alltypes,public.composite,public.fullrow,public.docs"
	cfg := func(slot string) map[string]string {
		c := pgConnectorConfig(pg, "cdc", tables)
		c["slot.name"] = slot
		c["publication.name"] = slot + "_pub"
		c["plugin.name"] = "pgoutput"
		c["tasks.max"] = "1"
		return c
	}
	dbz := rest{t, kc.URL()}
	dbz.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("dbz")}, 201)
	ours.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("trib")}, 201)

	topics := []string{"cdc.public.alltypes", "cdc.public.composite", "cdc.public.fullrow", "cdc.public.docs"}
	const snapshotEvents = 3 + 2 + 2 + 1
	dbzEvents := newEventReader(t, dbzBroker, topics...)
	ourEvents := newEventReader(t, ourBootstrap, topics...)
	dbzEvents.diag, ourEvents.diag = dbz.statusOf("pg"), ours.statusOf("pg")
	dbzEvents.until(3*time.Minute, "Debezium's snapshot", func(es []cdcEvent) bool { return len(es) >= snapshotEvents })
	ourEvents.until(time.Minute, "Tributary's snapshot", func(es []cdcEvent) bool { return len(es) >= snapshotEvents })

	pg.Exec(t, pgDiffRows(100))
	pg.Exec(t, pgDiffChanges)
	// 8 creates; alltypes: 2 updates, a delete and its tombstone, a key
	// change (delete, tombstone, create), an update; composite: an update,
	// a delete and its tombstone, a create; fullrow: an update, a delete
	// and its (keyless) tombstone; docs: an update.
	const total = snapshotEvents + 8 + 8 + 4 + 3 + 1
	dbzEvents.until(2*time.Minute, "Debezium's changes", func(es []cdcEvent) bool { return len(es) >= total })
	ourEvents.until(time.Minute, "Tributary's changes", func(es []cdcEvent) bool { return len(es) >= total })
	time.Sleep(2 * time.Second) // anything extra would show
	dbzEvents.until(time.Second, "", func([]cdcEvent) bool { return true })
	ourEvents.until(time.Second, "", func([]cdcEvent) bool { return true })

	byTopic := func(es []cdcEvent) map[string][]cdcEvent {
		m := map[string][]cdcEvent{}
		for _, e := range es {
			m[e.topic] = append(m[e.topic], e)
		}
		return m
	}
	want, got := byTopic(dbzEvents.got), byTopic(ourEvents.got)
	var report strings.Builder
	diffs := 0
	for _, topic := range topics {
		w, g := want[topic], got[topic]
		if len(w) != len(g) {
			diffs++
			fmt.Fprintf(&report, "%s: Debezium %d events, Tributary %d\n", topic, len(w), len(g))
		}
		for i := range min(len(w), len(g)) {
			for _, part := range []string{"key schema", "key", "value schema", "value"} {
				a, b := eventPart(w[i], part), eventPart(g[i], part)
				if a != b {
					diffs++
					fmt.Fprintf(&report, "%s event %d (%s) %s:\n  Debezium:  %s\n  Tributary: %s\n", topic, i, w[i].op(), part, a, b)
				}
			}
		}
	}
	if dir := os.Getenv("TRIBUTARY_PG_DIFF_DIR"); dir != "" {
		for name, es := range map[string][]cdcEvent{"debezium": dbzEvents.got, "tributary": ourEvents.got} {
			var b bytes.Buffer
			for _, e := range es {
				fmt.Fprintf(&b, "%s\n%s\n%s\n%s\n%s\n\n", e.topic, eventPart(e, "key schema"), eventPart(e, "key"), eventPart(e, "value schema"), eventPart(e, "value"))
			}
			os.WriteFile(filepath.Join(dir, name+".txt"), b.Bytes(), 0o644)
		}
	}
	// The times themselves differ, their shape must not: a snapshot's
	// source time is the snapshot transaction's, the same for every read,
	// and no later than the reads' own times.
	if a, b := snapshotTimes(dbzEvents.got), snapshotTimes(ourEvents.got); a != b {
		diffs++
		fmt.Fprintf(&report, "snapshot times:\n  Debezium:  %s\n  Tributary: %s\n", a, b)
	}
	if diffs > 0 {
		t.Fatalf("%d differences between Debezium and Tributary:\n%s", diffs, report.String())
	}
	t.Logf("%d events equal to Debezium's across %d topics; snapshot times: %s", len(ourEvents.got), len(topics), snapshotTimes(ourEvents.got))
}

// snapshotTimes describes the times of the snapshot's read events: how
// many distinct source times they have, and whether each event's own time
// (ts_us) is at or after its source's.
func snapshotTimes(es []cdcEvent) string {
	us := func(m map[string]any) int64 {
		n, _ := m["ts_us"].(json.Number)
		v, _ := n.Int64()
		return v
	}
	sources := map[int64]bool{}
	reads, ordered := 0, 0
	for _, e := range es {
		if e.op() != "r" {
			continue
		}
		reads++
		src, _ := e.value["source"].(map[string]any)
		st, et := us(src), us(e.value)
		sources[st] = true
		if st > 0 && et >= st {
			ordered++
		}
	}
	return fmt.Sprintf("%d reads, %d distinct source ts_us, %d with ts_us >= source ts_us", reads, len(sources), ordered)
}

// eventPart renders one part of an event as canonical JSON, with the fields
// that must differ blanked.
func eventPart(e cdcEvent, part string) string {
	var v any
	switch part {
	case "key schema":
		v = rawJSON(e.keySchema)
	case "value schema":
		v = rawJSON(e.valueSchema)
	case "key":
		v = e.key
	case "value":
		if e.value == nil {
			return "null"
		}
		m := map[string]any{}
		for k, x := range e.value {
			m[k] = x
		}
		for _, k := range []string{"ts_ms", "ts_us", "ts_ns"} {
			if _, ok := m[k]; ok {
				m[k] = "<time>"
			}
		}
		if src, ok := m["source"].(map[string]any); ok {
			s := map[string]any{}
			for k, x := range src {
				s[k] = x
			}
			for _, k := range []string{"ts_ms", "ts_us", "ts_ns"} {
				s[k] = "<time>"
			}
			if m["op"] == "r" {
				for _, k := range []string{"txId", "lsn", "xmin", "sequence"} {
					if s[k] != nil {
						s[k] = "<snapshot>"
					}
				}
			}
			m["source"] = s
		}
		v = m
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func rawJSON(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	return v
}

// sameEventsAsDebezium fails t unless, on each of topics, Tributary's events
// (ours) equal Debezium's (dbz) one by one in key schema, key, value schema
// and value (eventPart); it reports the first 20 differences and returns
// Tributary's events by topic.
func sameEventsAsDebezium(t *testing.T, topics []string, dbz, ours []cdcEvent) map[string][]cdcEvent {
	t.Helper()
	byTopic := func(es []cdcEvent) map[string][]cdcEvent {
		m := map[string][]cdcEvent{}
		for _, e := range es {
			m[e.topic] = append(m[e.topic], e)
		}
		return m
	}
	want, got := byTopic(dbz), byTopic(ours)
	var report strings.Builder
	diffs := 0
	for _, topic := range topics {
		w, g := want[topic], got[topic]
		if len(w) != len(g) {
			diffs++
			fmt.Fprintf(&report, "%s: Debezium %d events, Tributary %d\n", topic, len(w), len(g))
		}
		for i := range min(len(w), len(g)) {
			for _, part := range []string{"key schema", "key", "value schema", "value"} {
				if a, b := eventPart(w[i], part), eventPart(g[i], part); a != b {
					diffs++
					if diffs <= 20 {
						fmt.Fprintf(&report, "%s event %d (%s) %s:\n  Debezium:  %s\n  Tributary: %s\n", topic, i, w[i].op(), part, a, b)
					}
				}
			}
		}
	}
	if diffs > 0 {
		t.Fatalf("%d differences between Debezium and Tributary:\n%s", diffs, report.String())
	}
	return got
}
