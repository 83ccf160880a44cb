package postgres

import (
	"strings"
	"testing"
)

// Signals in Debezium's formats parse; malformed ones are refused with the
// reason.
func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		name, typ, data string
		want            string // "" ok, else a part of the error
		check           func(t *testing.T, s signal)
	}{
		{name: "execute incremental", typ: sigExecuteSnapshot,
			data: `{"data-collections": ["public.a", "public\\.b.*"], "type": "INCREMENTAL", "additional-conditions": [{"data-collection": "public.a", "filter": "color='blue'"}]}`,
			check: func(t *testing.T, s signal) {
				if s.snapshotType != snapshotIncremental || len(s.collections) != 2 || s.collections[1] != `public\.b.*` {
					t.Errorf("got %+v", s)
				}
				if len(s.conditions) != 1 || !s.conditions[0].pattern.MatchString("PUBLIC.A") || s.conditions[0].filter != "color='blue'" {
					t.Errorf("conditions %+v", s.conditions)
				}
			}},
		{name: "execute default type", typ: sigExecuteSnapshot, data: `{"data-collections": ["public.a"]}`,
			check: func(t *testing.T, s signal) {
				if s.snapshotType != snapshotIncremental {
					t.Errorf("type %q", s.snapshotType)
				}
			}},
		{name: "execute blocking", typ: sigExecuteSnapshot, data: `{"data-collections": ["public.a"], "type": "blocking"}`,
			check: func(t *testing.T, s signal) {
				if s.snapshotType != snapshotBlocking {
					t.Errorf("type %q", s.snapshotType)
				}
			}},
		{name: "surrogate key", typ: sigExecuteSnapshot, data: `{"data-collections": ["public.a"], "surrogate-key": "seq"}`,
			check: func(t *testing.T, s signal) {
				if s.surrogateKey != "seq" {
					t.Errorf("surrogate %q", s.surrogateKey)
				}
			}},
		{name: "stop all", typ: sigStopSnapshot, data: `{"type": "incremental"}`},
		{name: "pause without data", typ: sigPauseSnapshot, data: ``},
		{name: "resume", typ: sigResumeSnapshot, data: `{}`},
		{name: "log", typ: sigLog, data: `{"message": "hello"}`,
			check: func(t *testing.T, s signal) {
				if s.message != "hello" {
					t.Errorf("message %q", s.message)
				}
			}},
		{name: "execute without collections", typ: sigExecuteSnapshot, data: `{"type": "incremental"}`, want: "data-collections is missing"},
		{name: "execute empty collections", typ: sigExecuteSnapshot, data: `{"data-collections": []}`, want: "data-collections is missing"},
		{name: "collections not strings", typ: sigExecuteSnapshot, data: `{"data-collections": [1, 2]}`, want: "array of strings"},
		{name: "collections not an array", typ: sigExecuteSnapshot, data: `{"data-collections": "public.a"}`, want: "array of strings"},
		{name: "bad regex", typ: sigExecuteSnapshot, data: `{"data-collections": ["public.(a"]}`, want: "not a regular expression"},
		{name: "unknown snapshot type", typ: sigExecuteSnapshot, data: `{"data-collections": ["public.a"], "type": "partial"}`, want: `"partial" is neither`},
		{name: "condition without filter", typ: sigExecuteSnapshot, data: `{"data-collections": ["public.a"], "additional-conditions": [{"data-collection": "public.a"}]}`, want: "has no filter"},
		{name: "data not JSON", typ: sigExecuteSnapshot, data: `{"data-collections": [`, want: "not a JSON object"},
		{name: "log without message", typ: sigLog, data: `{}`, want: "without a message"},
		{name: "unknown type", typ: "explode", data: `{}`, want: `type "explode" is not a signal`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSignal(signalRecord{id: "x", typ: tc.typ, data: tc.data})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if tc.check != nil && err == nil {
				tc.check(t, s)
			}
		})
	}
}

// The kafka and file channels carry {"id", "type", "data"}; the data is
// kept as JSON text.
func TestDecodeSignalJSON(t *testing.T) {
	r, err := decodeSignalJSON([]byte(`{"type":"execute-snapshot","data": {"data-collections": ["public.a"], "type": "INCREMENTAL"}}`), "kafka-7")
	if err != nil {
		t.Fatal(err)
	}
	if r.id != "kafka-7" || r.typ != sigExecuteSnapshot || !strings.Contains(r.data, `"data-collections"`) {
		t.Errorf("got %+v", r)
	}
	r, err = decodeSignalJSON([]byte(`{"id":"s1","type":"log","data":{"message":"m"}}`), "file-1")
	if err != nil || r.id != "s1" {
		t.Errorf("got %+v, %v", r, err)
	}
	for _, bad := range []string{`not json`, `{"id":"s"}`, `[1,2]`} {
		if _, err := decodeSignalJSON([]byte(bad), "x"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestParseTableID(t *testing.T) {
	for in, want := range map[string]tableID{
		"public.debezium_signal": {"public", "debezium_signal"},
		`public."My.Table"`:      {"public", "My.Table"},
		` s . t `:                {"s", "t"},
	} {
		got, err := parseTableID(in)
		if err != nil || got != want {
			t.Errorf("%q: got %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"t", "a.b.c", `public."x`, ".t", "s."} {
		if _, err := parseTableID(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// database.hostname may list several servers: the connection string names
// them all and asks for the one that accepts writes.
func TestConnStringHosts(t *testing.T) {
	c := Config{Hostname: "10.0.0.1:5433, db2", Port: 5432, User: "u", DBName: "d", SSLMode: "disable", SlotName: "s"}
	got := c.connString(true)
	for _, want := range []string{"@10.0.0.1:5433,db2:5432/d", "target_session_attrs=read-write", "replication=database"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	c.Hostname = "db1"
	if got := c.connString(false); !strings.Contains(got, "@db1:5432/d") || strings.Contains(got, "target_session_attrs") {
		t.Errorf("one host: %s", got)
	}
}
