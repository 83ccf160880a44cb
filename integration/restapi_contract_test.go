package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/contract"
)

// TestRESTContractKafkaConnect plays the REST contract table
// (restapi/contract) against a real Kafka Connect 4.4 worker on a real
// Apache Kafka 4.4 broker, expecting Kafka Connect's answers: every status
// code and body shape in the table is checked against the real thing, and
// each documented deviation is checked to still be what Kafka Connect does.
func TestRESTContractKafkaConnect(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts Apache Kafka and Kafka Connect")
	}
	k := harness.ApacheKafka(t)
	c := harness.KafkaConnect(t, k.Bootstrap())
	contract.Run(t, contract.Config{
		BaseURL: c.URL(),
		Target:  contract.KafkaConnect,
		Prefix:  "kc",
		Dir:     t.TempDir(),
	})
}

// startTributaryWorker builds the tributary binary, starts `tributary
// worker` against bootstrap as a child process and returns the base URL of
// its REST API.
func startTributaryWorker(t *testing.T, bootstrap string) string {
	bin := harness.BuildTributary(t)
	w := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "worker"), harness.WorkerProps(t, bootstrap, "contract", nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log: %s", w.LogPath())
		}
	})
	return w.URL()
}

// TestRESTContractTributary plays the same table against a real Tributary
// worker on Tributary's broker, expecting Tributary's answers.
func TestRESTContractTributary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and starts a Tributary worker")
	}
	b := harness.TributaryBroker(t)
	url := startTributaryWorker(t, b.Bootstrap())
	contract.Run(t, contract.Config{
		BaseURL: url,
		Target:  contract.Tributary,
		Prefix:  "trib",
		Dir:     t.TempDir(),
	})
}

// afterCreate selects the contract cases about a client that acts on a
// connector right after its create (issue 40), which must also hold
// through a follower.
var afterCreate = []string{"right after a create"}

// TestRESTContractKafkaConnectCluster plays the cases about the answers
// right after a create through a follower of a cluster of three Kafka
// Connect 4.4 workers: its create is forwarded to the leader, and the next
// request asks the follower.
func TestRESTContractKafkaConnectCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts Apache Kafka and three Kafka Connect workers")
	}
	k := harness.ApacheKafka(t)
	var ws []*harness.Connect
	for range 3 {
		ws = append(ws, harness.KafkaConnect(t, k.Bootstrap(), harness.WithConnectGroup("contract-cluster")))
	}
	follower := kafkaConnectFollower(t, ws, 90*time.Second)
	contract.Run(t, contract.Config{
		BaseURL: follower,
		Target:  contract.KafkaConnect,
		Prefix:  "kcf",
		Dir:     t.TempDir(),
		Cases:   afterCreate,
	})
}

// kafkaConnectFollower waits until the workers agree on a leader in one
// generation (all three joined) and returns the URL of another worker.
func kafkaConnectFollower(t *testing.T, ws []*harness.Connect, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		gens, leaders, state := map[int]bool{}, map[string]bool{}, ""
		for _, w := range ws {
			gen, leader, err := w.LastJoin()
			if err != nil {
				t.Fatal(err)
			}
			gens[gen], leaders[leader] = true, true
			state += fmt.Sprintf(" %s: generation %d, leader %q;", w.URL(), gen, leader)
		}
		if len(gens) == 1 && len(leaders) == 1 && !gens[-1] {
			for _, w := range ws {
				if !leaders[w.URL()] {
					t.Logf("cluster settled:%s asking %s", state, w.URL())
					return w.URL()
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Kafka Connect workers did not settle on one leader within %v:%s", within, state)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestRESTContractTributaryCluster plays the same cases through a follower
// of a cluster of three Tributary workers.
func TestRESTContractTributaryCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and starts three Tributary workers")
	}
	bin := harness.BuildTributary(t)
	b := harness.TributaryBroker(t)
	c := newWorkerCluster(t, bin, b.Bootstrap(), "contract-cluster", 3, nil)
	c.waitSettled(0, 0, 60*time.Second)
	leader := c.leader()
	if leader < 0 {
		t.Fatal("no leader in the workers' logs")
	}
	i := slices.IndexFunc(c.alive(), func(i int) bool { return i != leader })
	t.Logf("leader: worker %d; asking worker %d", leader, c.alive()[i])
	contract.Run(t, contract.Config{
		BaseURL: c.rest(c.alive()[i]).url,
		Target:  contract.Tributary,
		Prefix:  "tribf",
		Dir:     t.TempDir(),
		Cases:   afterCreate,
	})
}

// TestRESTContractLive plays the table against an already running worker
// named by TRIBUTARY_REST_URL; TRIBUTARY_REST_TARGET=kafka expects Kafka
// Connect's answers. Handy while developing either side.
func TestRESTContractLive(t *testing.T) {
	url := os.Getenv("TRIBUTARY_REST_URL")
	if url == "" {
		t.Skip("skipping: set TRIBUTARY_REST_URL to a worker's REST base URL")
	}
	target := contract.Tributary
	if os.Getenv("TRIBUTARY_REST_TARGET") == "kafka" {
		target = contract.KafkaConnect
	}
	contract.Run(t, contract.Config{
		BaseURL:     url,
		Target:      target,
		Prefix:      "live" + time.Now().Format("150405"),
		Dir:         t.TempDir(),
		PollTimeout: 60 * time.Second,
	})
}
