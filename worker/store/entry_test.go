package store

import (
	"log/slog"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ConnectorEntry answers what Snapshot holds for one connector, as copies.
func TestConnectorEntryMatchesSnapshot(t *testing.T) {
	cs := newConfigStore(slog.New(slog.DiscardHandler), func(ConfigEvent) {})
	for i, kv := range [][2]string{
		{"connector-a", `{"properties":{"connector.class":"X","k":"v"}}`},
		{"task-a-0", `{"properties":{"t":"0"}}`},
		{"task-a-1", `{"properties":{"t":"1"}}`},
		{"commit-a", `{"tasks":2}`},
		{"target-state-a", `{"state":"PAUSED","state.v2":"PAUSED"}`},
		{"connector-b", `{"properties":{"connector.class":"Y"}}`},
	} {
		cs.apply(&kgo.Record{Topic: "t", Key: []byte(kv[0]), Value: []byte(kv[1]), Offset: int64(i)})
	}
	snap := cs.Snapshot()
	for _, name := range []string{"a", "b"} {
		cfg, tasks, target, ok := cs.ConnectorEntry(name)
		if !ok || !reflect.DeepEqual(cfg, snap.Connectors[name]) || !reflect.DeepEqual(tasks, snap.Tasks[name]) || target != snap.TargetStates[name] {
			t.Errorf("%s: %v %v %q %v; snapshot %v %v %q", name, cfg, tasks, target, ok, snap.Connectors[name], snap.Tasks[name], snap.TargetStates[name])
		}
	}
	cfg, tasks, _, _ := cs.ConnectorEntry("a")
	cfg["k"], tasks[0]["t"] = "changed", "changed"
	if again, againTasks, _, _ := cs.ConnectorEntry("a"); again["k"] != "v" || againTasks[0]["t"] != "0" {
		t.Errorf("the entry is not a copy: %v %v", again, againTasks)
	}
	if _, _, _, ok := cs.ConnectorEntry("c"); ok {
		t.Error("an unknown connector has an entry")
	}
}
