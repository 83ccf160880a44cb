package integration

import (
	"os"
	"path/filepath"
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
