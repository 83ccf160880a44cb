package mirror

import (
	"context"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
)

func errorsOf(t *testing.T, c sdk.Connector, config map[string]string) map[string]string {
	t.Helper()
	infos, err := c.Validate(context.Background(), config)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ci := range infos.Configs {
		if len(ci.Value.Errors) > 0 {
			out[ci.Value.Name] = strings.Join(ci.Value.Errors, "; ")
		}
	}
	return out
}

func TestConnectorsValidate(t *testing.T) {
	base := map[string]string{"source.cluster.alias": "A", "target.cluster.alias": "B"}
	for _, c := range Connectors() {
		spec := c.Spec()
		if !spec.Matches(spec.Class) || !spec.Matches(spec.Class[strings.LastIndex(spec.Class, ".")+1:]) {
			t.Errorf("%s: aliases %v", spec.Class, spec.Aliases)
		}
		if errs := errorsOf(t, c, base); len(errs) > 0 {
			t.Errorf("%s: defaults refused: %v", spec.Class, errs)
		}
		if errs := errorsOf(t, c, map[string]string{}); errs["source.cluster.alias"] == "" {
			t.Errorf("%s: no source.cluster.alias accepted", spec.Class)
		}
		bad := map[string]string{"source.cluster.alias": "A", "topics": "(?=x).*", "replication.policy.class": "com.example.P"}
		if errs := errorsOf(t, c, bad); errs["topics"] == "" || errs["replication.policy.class"] == "" {
			t.Errorf("%s: bad keys accepted: %v", spec.Class, errs)
		}
	}
	cp := CheckpointConnector()
	errs := errorsOf(t, cp, map[string]string{"source.cluster.alias": "A", "emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false"})
	if errs["emit.checkpoints.enabled"] == "" || errs["emit.offset-syncs.enabled"] == "" {
		t.Errorf("checkpoint connector without checkpoints or syncs accepted: %v", errs)
	}
}

func TestExactlyOnceSupport(t *testing.T) {
	d := SourceConnector().(sdk.ExactlyOnceDeclarer)
	for iso, want := range map[string]sdk.ExactlyOnceSupport{"": sdk.ExactlyOnceUnsupported, "read_committed": sdk.ExactlyOnceSupported} {
		got, err := d.ExactlyOnceSupport(context.Background(), map[string]string{"source.cluster.alias": "A", "source.consumer.isolation.level": iso})
		if err != nil || got != want {
			t.Errorf("isolation.level=%q: %v %v, want %v", iso, got, err, want)
		}
	}
}

func TestTransformsRefused(t *testing.T) {
	if _, err := SourceConnector().(sdk.SourcePlugin).NewSourceTask(map[string]string{"source.cluster.alias": "A", "transforms": "x"}); err == nil {
		t.Error("a task with transforms was made")
	}
}

func TestValidateOffsetShapes(t *testing.T) {
	ok := []sdk.SourceOffset{{Partition: sdk.Partition{"cluster": "A", "topic": "t", "partition": float64(1)}, Offset: sdk.Offset{"offset": float64(5)}}}
	if err := validateOffsetShapes(ok, []string{"cluster", "topic", "partition"}, "partition", false); err != nil {
		t.Error(err)
	}
	for _, bad := range []sdk.SourceOffset{
		{Partition: sdk.Partition{"topic": "t", "partition": 1}, Offset: sdk.Offset{"offset": 1}},
		{Partition: sdk.Partition{"cluster": "A", "topic": "t", "partition": "x"}, Offset: sdk.Offset{"offset": 1}},
		{Partition: sdk.Partition{"cluster": "A", "topic": "t", "partition": 1}, Offset: sdk.Offset{"offset": -1}},
	} {
		if err := validateOffsetShapes([]sdk.SourceOffset{bad}, []string{"cluster", "topic", "partition"}, "partition", false); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	cp := []sdk.SourceOffset{{Partition: sdk.Partition{"group": "g", "topic": "t", "partition": 0}, Offset: sdk.Offset{"offset": 3}}}
	if err := validateOffsetShapes(cp, []string{"group", "topic", "partition"}, "partition", true); err == nil || !strings.Contains(err.Error(), "must be 0") {
		t.Errorf("checkpoint offset 3: %v", err)
	}
}
