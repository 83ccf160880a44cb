package main

import (
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/internal/properties"
)

// kafkaMM2Example is config/connect-mirror-maker.properties of Kafka 4.x,
// the example its documentation starts from.
const kafkaMM2Example = `# Sample MirrorMaker 2.0 top-level configuration file
clusters = A, B
A.bootstrap.servers = A_host1:9092, A_host2:9092, A_host3:9092
B.bootstrap.servers = B_host1:9092, B_host2:9092, B_host3:9092
A->B.enabled = true
A->B.topics = .*
B->A.enabled = true
B->A.topics = .*
replication.factor=1
checkpoints.topic.replication.factor=1
heartbeats.topic.replication.factor=1
offset-syncs.topic.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
config.storage.replication.factor=1
`

func TestMM2Flows(t *testing.T) {
	p, err := properties.Parse(strings.NewReader(kafkaMM2Example))
	if err != nil {
		t.Fatal(err)
	}
	flows, err := mm2Flows(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 2 {
		t.Fatalf("%d flows, want 2", len(flows))
	}
	var ab mm2Flow
	for _, f := range flows {
		if f.Source == "A" && f.Target == "B" {
			ab = f
		}
	}
	w := ab.Worker
	for k, v := range map[string]string{"bootstrap.servers": "B_host1:9092, B_host2:9092, B_host3:9092", "group.id": "A-mm2",
		"config.storage.topic": "mm2-configs.A.internal", "offset.storage.topic": "mm2-offsets.A.internal",
		"status.storage.topic": "mm2-status.A.internal", "config.storage.replication.factor": "1"} {
		if w[k] != v {
			t.Errorf("worker %s = %q, want %q", k, w[k], v)
		}
	}
	src := ab.Connectors["MirrorSourceConnector"]
	for k, v := range map[string]string{"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias": "A", "target.cluster.alias": "B", "topics": ".*", "replication.factor": "1",
		"source.cluster.bootstrap.servers": "A_host1:9092, A_host2:9092, A_host3:9092",
		"target.cluster.bootstrap.servers": "B_host1:9092, B_host2:9092, B_host3:9092"} {
		if src[k] != v {
			t.Errorf("connector %s = %q, want %q", k, src[k], v)
		}
	}
	for k := range src {
		if strings.HasPrefix(k, "A->") || strings.HasPrefix(k, "B.") || k == "clusters" {
			t.Errorf("connector config holds %s", k)
		}
	}
	if only, _ := mm2Flows(p, []string{"A"}); len(only) != 1 || only[0].Target != "A" {
		t.Errorf("--clusters A: %+v", only)
	}
	for _, bad := range []string{"", "clusters=A,B\nA.bootstrap.servers=a\nB.bootstrap.servers=b\n", "clusters=A,B\nA.bootstrap.servers=a\nA->B.enabled=true\n"} {
		p, _ := properties.Parse(strings.NewReader(bad))
		if _, err := mm2Flows(p, nil); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
