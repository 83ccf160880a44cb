package worker

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestCheckConnectorName(t *testing.T) {
	const unaddressable = `String may not contain '/', '\' or '%', nor be '.' or '..': no URL could name the connector (/connectors/{name})`
	for _, tc := range []struct {
		name, want string
	}{
		{"orders", ""},
		{"  ", "String may not be empty"},
		{strings.Repeat("é", MaxConnectorNameBytes/2), ""},
		{strings.Repeat("n", MaxConnectorNameBytes+1), "String may not be longer than 1024 bytes (UTF-8), but is 1025 bytes long"},
		{strings.Repeat("n", 40000), "String may not be longer than 1024 bytes (UTF-8), but is 40000 bytes long"},
		{"a b;c?d#é+&=@", ""},
		{"victim/x", unaddressable},
		{"pct%41", unaddressable},
		{`back\slash`, unaddressable},
		{".", unaddressable},
		{"..", unaddressable},
		{"...", ""},
		{"a\xffb", "String must be valid UTF-8"},
		{"nl\nx", "String may not contain control sequences but had the following ASCII chars: 10"},
		{"tab\tx", "String may not contain control sequences but had the following ASCII chars: 9"},
		{"nul\x00x\x01\x7f\u0085", "String may not contain control sequences but had the following ASCII chars: 0, 1, 127, 133"},
		{"\u00a0nbsp", ""},
	} {
		if got := CheckConnectorName(tc.name); got != tc.want {
			t.Errorf("CheckConnectorName(%.20q…) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// problemStatuses records the statuses the herder writes.
type problemStatuses struct {
	fakeStatuses
}

func (f *problemStatuses) Tasks(string) []TaskState { return nil }
func (f *problemStatuses) Names() []string          { return nil }

// A connector no worker can run (here: a stored name longer than the group
// protocol carries) is never started; the leader reports it FAILED with the
// reason, and the rest of the snapshot is reconciled as usual.
func TestProblemConnectorFailed(t *testing.T) {
	long := strings.Repeat("L", maxCarriedNameBytes+1)
	problem := unassignableName(long)
	if problem == "" || unassignableName(strings.Repeat("L", maxCarriedNameBytes)) != "" {
		t.Fatalf("unassignableName: %q", problem)
	}
	h := newHerder(Config{}, slog.New(slog.DiscardHandler), "w1")
	st := &problemStatuses{fakeStatuses{conn: map[string]ConnectorState{}}}
	h.statuses = st
	h.configs = &fakeConfigs{snap: map[string]ConnectorSnapshot{
		long: {Config: map[string]string{"connector.class": "FileStreamSource"}, Target: TargetStarted, Problem: problem},
	}}
	h.setAssign(assignment{leader: true, connectors: map[string]bool{long: true}}) // even if assigned, it is not started
	h.ready.Store(true)
	h.reconcile(context.Background()) // h.pl is nil: starting anything would panic
	cs, ok := st.Connector(long)
	if !ok || cs.State != StateFailed || cs.Trace != problem {
		t.Fatalf("status %+v, want FAILED with %q", cs, problem)
	}
	if len(h.running) != 0 || len(h.tasks) != 0 {
		t.Fatal("the connector was started")
	}
}
