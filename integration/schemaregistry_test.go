package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// waitRegistry waits until the schema registry at url answers GET /.
func waitRegistry(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("schema registry at %s not answering after 60s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// srCall sends one request to a schema registry and returns the status and
// the body.
func srCall(t *testing.T, method, url string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSchemaRegistryConfluentPython: Confluent's own Python client
// (SchemaRegistryClient, the Avro and JSON Schema serializers) against
// tributary dev's schema registry and broker: it registers, looks up,
// checks compatibility (Avro, JSON Schema, Protobuf), produces records and
// consumes them back through the registry, and deletes.
func TestSchemaRegistryConfluentPython(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs tributary dev")
	}
	py := harness.Python(t, "confluent_kafka.schema_registry.avro", "confluent_kafka.schema_registry.json_schema", "confluent_kafka.schema_registry.protobuf")
	bin := harness.BuildTributary(t)
	regPort := harness.FreePort(t)
	dev := harness.StartDevProcess(t, bin, filepath.Join(t.TempDir(), "data"), harness.FreePort(t), harness.FreePort(t),
		"--registry-port", strconv.Itoa(regPort))
	url := "http://127.0.0.1:" + strconv.Itoa(regPort)
	waitRegistry(t, url)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "schema_registry_client.py"), url, dev.Bootstrap(), "users")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("schema_registry_client.py: %v\n%s", err, stderr.String())
	}
	var res map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("decode %q: %v", stdout.String(), err)
	}
	js := func(k string) string {
		b, _ := json.Marshal(res[k])
		return string(b)
	}
	want := map[string]string{
		"v1":                     `{"id":1,"version":1}`,
		"v1_compatible_v2":       `true`,
		"v1_compatible_bad":      `false`,
		"v2_id":                  `2`,
		"v2_again_id":            `2`,
		"v2_other_subject_id":    `2`,
		"lookup_v1":              `{"id":1,"version":1}`,
		"versions":               `[1,2]`,
		"schema_by_id":           `"User"`,
		"subjects":               `["other-users-value","users-value"]`,
		"lookup_missing":         `{"error_code":40403,"http_status":404,"message":"Schema not found"}`,
		"missing_subject":        `{"error_code":40401,"http_status":404,"message":"Subject 'no-such-subject' not found."}`,
		"set_none":               `{"compatibility":"NONE"}`,
		"get_subject_level":      `"NONE"`,
		"get_global_level":       `"BACKWARD"`,
		"register_bad_none":      `3`,
		"full_transitive_v2":     `true`,
		"references":             `[{"name":"ex.Address","subject":"address","version":1}]`,
		"referenced_delete":      `{"error_code":42206,"http_status":422,"message":"One or more references exist to the schema {subject=address,version=1}."}`,
		"json_received":          `[{"id":0,"item":"thing-0"},{"id":1,"item":"thing-1"},{"id":2,"item":"thing-2"}]`,
		"json_type":              `"JSON"`,
		"json_compatible_narrow": `false`,
		"proto_compatible_v2":    `true`,
		"proto_compatible_bad":   `false`,
		"proto_type":             `"PROTOBUF"`,
		"soft_delete":            `[1]`,
		"hard_delete":            `[1]`,
		"subjects_after":         `["address","events-value","person","users-json-value","users-value"]`,
	}
	for k, w := range want {
		if got := js(k); got != w {
			t.Errorf("%s: %s, want %s", k, got, w)
		}
	}
	if got, w := js("avro_received"), js("avro_sent"); got != w {
		t.Errorf("Avro records consumed through the registry: %s, want %s", got, w)
	}
	if rb, ok := res["register_bad"].(map[string]any); !ok || rb["http_status"] != float64(409) || rb["error_code"] != float64(409) ||
		!strings.Contains(fmt.Sprint(rb["message"]), `incompatible with an earlier schema for subject "users-value"`) {
		t.Errorf("registering an incompatible schema: %v, want a 409", res["register_bad"])
	}
	if ip, ok := res["invalid_proto"].(map[string]any); !ok || ip["error_code"] != float64(42201) {
		t.Errorf("registering an invalid .proto: %v, want 42201", res["invalid_proto"])
	}
	if hd, ok := res["hard_delete_first"].(map[string]any); !ok || hd["error_code"] != float64(40405) {
		t.Errorf("permanent delete before a soft one: %v, want 40405", res["hard_delete_first"])
	}
}

// TestSchemaRegistryKill9: tributary broker with its schema registry is
// killed with SIGKILL while clients register schemas; after a restart on
// the same data every registration that was answered is there with its
// id, and new schemas get ids never handed out before.
func TestSchemaRegistryKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs tributary broker")
	}
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "broker")
	port, regPort := harness.FreePort(t), harness.FreePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(regPort)
	start := func() *harness.BrokerProcess {
		p := harness.StartBrokerProcess(t, bin, dir, port, "schema.registry.listeners="+url)
		waitRegistry(t, url)
		return p
	}
	schema := func(i int) map[string]any {
		return map[string]any{"schema": fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":"long"}]}`, i)}
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked := map[int]int{} // schema number → id answered
	seen := map[int]bool{} // every id ever answered
	next := 0
	for round := range 3 {
		p := start()
		// Everything answered before the crashes is still there.
		for i, id := range acked {
			status, body := srCall(t, "POST", fmt.Sprintf("%s/subjects/s-%d", url, i), schema(i))
			if status != 200 || !strings.Contains(body, fmt.Sprintf(`"id":%d,`, id)) {
				t.Fatalf("round %d: schema %d (id %d) after restart: %d %s", round, i, id, status, body)
			}
		}
		// Concurrent registrations, killed at a random moment.
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					b, _ := json.Marshal(schema(i))
					resp, err := http.Post(fmt.Sprintf("%s/subjects/s-%d/versions", url, i), "application/vnd.schemaregistry.v1+json", bytes.NewReader(b))
					if err != nil {
						return // killed
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						continue // the broker going away mid-write is a 500
					}
					var r struct{ ID int }
					if err := json.Unmarshal(body, &r); err != nil {
						t.Errorf("writer %d: %s", w, body)
						return
					}
					mu.Lock()
					if seen[r.ID] {
						t.Errorf("id %d handed out twice", r.ID)
					}
					seen[r.ID] = true
					acked[i] = r.ID
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		p.Kill()
		close(stop)
		wg.Wait()
		t.Logf("round %d: %d schemas registered so far", round, len(acked))
	}
	start()
	maxID := 0
	for id := range seen {
		maxID = max(maxID, id)
	}
	// A new schema gets an id above every one answered before.
	status, body := srCall(t, "POST", url+"/subjects/after/versions", schema(1_000_000))
	var r struct{ ID int }
	if status != 200 || json.Unmarshal([]byte(body), &r) != nil || r.ID <= maxID {
		t.Fatalf("new schema after the crashes: %d %s; want an id above %d", status, body, maxID)
	}
	if len(acked) < 10 {
		t.Fatalf("only %d schemas registered across the rounds: the test checked little", len(acked))
	}
	for i, id := range acked {
		status, body := srCall(t, "GET", fmt.Sprintf("%s/schemas/ids/%d", url, id), nil)
		if status != 200 || !strings.Contains(body, fmt.Sprintf(`\"name\":\"R%d\"`, i)) {
			t.Fatalf("schema id %d: %d %s", id, status, body)
		}
	}
}
