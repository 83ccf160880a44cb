package worker

import (
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/worker/store"
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

// A stored name longer than the group protocol carries is a Problem of its
// connector (the driver gives it to the herder core, which never runs it
// and has the leader report it FAILED: TestTraceProblemConnectors).
func TestProblemConnectorName(t *testing.T) {
	long := strings.Repeat("L", maxCarriedNameBytes+1)
	problem := unassignableName(long)
	if problem == "" || unassignableName(strings.Repeat("L", maxCarriedNameBytes)) != "" {
		t.Fatalf("unassignableName: %q", problem)
	}
	snap := store.ConfigSnapshot{Connectors: map[string]map[string]string{long: {"connector.class": "FileStreamSource"}}}
	if got := connectorProblem(long, snap); got != problem {
		t.Fatalf("connectorProblem = %q, want %q", got, problem)
	}
}
