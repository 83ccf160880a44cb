package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/schemaregistry"
)

// TestSchemaRegistryInstances: two registry instances share one _schemas
// topic on the bundled broker and take writes at the same time. Their
// transactional writers fence each other, so the ids handed out are 1..N
// with no gap and no duplicate, and both instances answer the same.
func TestSchemaRegistryInstances(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	urls := []string{harness.SchemaRegistry(t, b.Bootstrap(), ""), harness.SchemaRegistry(t, b.Bootstrap(), "")}
	const perWriter = 40
	var mu sync.Mutex
	ids := map[int]string{} // id → subject
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := urls[w%2]
			for i := range perWriter {
				subject := fmt.Sprintf("w%d-%d", w, i)
				schema := map[string]any{"schema": fmt.Sprintf(`{"type":"record","name":"W%dN%d","fields":[]}`, w, i)}
				status, body := srCall(t, "POST", url+"/subjects/"+subject+"/versions", schema)
				var id int
				if status != 200 || func() error { _, err := fmt.Sscanf(body, `{"id":%d}`, &id); return err }() != nil {
					t.Errorf("%s: %d %s", subject, status, body)
					return
				}
				mu.Lock()
				if other, dup := ids[id]; dup {
					t.Errorf("id %d handed out to %s and %s", id, other, subject)
				}
				ids[id] = subject
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for id := 1; id <= 4*perWriter; id++ {
		if _, ok := ids[id]; !ok {
			t.Fatalf("ids are not 1..%d: %d is missing", 4*perWriter, id)
		}
	}
	// The reading instance may lag its peer's last commit by a fetch.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, a := srCall(t, "GET", urls[0]+"/subjects", nil)
		_, c := srCall(t, "GET", urls[1]+"/subjects", nil)
		if a == c && strings.Count(a, `"w`) == 4*perWriter {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instances disagree: %d and %d subjects", strings.Count(a, `"w`), strings.Count(c, `"w`))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, subject := range ids {
		_, body := srCall(t, "GET", fmt.Sprintf("%s/schemas/ids/%d/subjects", urls[(id)%2], id), nil)
		if body != `["`+subject+`"]` {
			t.Fatalf("id %d: %s, want [%q]", id, body, subject)
		}
	}
}

// TestSchemaRegistryReadsConfluentTopic: a _schemas topic as Confluent
// Schema Registry writes it (records produced here byte for byte in its
// format, control records of nobody's transactions) is read by the
// registry into the same ids, versions, configs and deletes.
func TestSchemaRegistryReadsConfluentTopic(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	const topic = "_schemas_from_confluent"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(ctx, t, b.Bootstrap(), topic, 1, map[string]*string{"cleanup.policy": new("compact")})
	cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic(topic))
	records := [][2]string{
		{`{"keytype":"NOOP","magic":0}`, ``},
		{`{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}`, `{"subject":"orders-value","version":1,"id":7,"schemaType":"AVRO","schema":"{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}","deleted":false}`},
		{`{"keytype":"SCHEMA","subject":"orders-value","version":2,"magic":1}`, `{"subject":"orders-value","version":2,"id":9,"schema":"{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null}]}","deleted":false}`},
		{`{"keytype":"SCHEMA","subject":"gone-value","version":1,"magic":1}`, `{"subject":"gone-value","version":1,"id":8,"schema":"\"string\"","deleted":false}`},
		{`{"keytype":"DELETE_SUBJECT","subject":"gone-value","magic":0}`, `{"subject":"gone-value","version":1}`},
		{`{"keytype":"CONFIG","subject":"orders-value","magic":0}`, `{"compatibilityLevel":"FULL"}`},
	}
	for _, r := range records {
		rec := &kgo.Record{Key: []byte(r[0])}
		if r[1] != "" {
			rec.Value = []byte(r[1])
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	url := harness.SchemaRegistry(t, b.Bootstrap(), topic)
	for path, want := range map[string]string{
		"/subjects":                         `["orders-value"]`,
		"/subjects?deleted=true":            `["gone-value","orders-value"]`,
		"/subjects/orders-value/versions":   `[1,2]`,
		"/config/orders-value":              `{"compatibilityLevel":"FULL"}`,
		"/schemas/ids/8":                    `{"schema":"\"string\""}`,
		"/subjects/orders-value/versions/2": `{"subject":"orders-value","version":2,"id":9,"schema":"{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null}]}"}`,
	} {
		if status, got := srCall(t, "GET", url+path, nil); status != 200 || got != want {
			t.Errorf("GET %s: %d %s, want %s", path, status, got, want)
		}
	}
	// FULL holds: a new version without a default for a new field fails,
	// and the next id follows Confluent's largest (9).
	status, body := srCall(t, "POST", url+"/subjects/orders-value/versions", map[string]any{"schema": `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"qty","type":"int"}]}`})
	if status != 409 {
		t.Errorf("incompatible under FULL: %d %s", status, body)
	}
	if status, body := srCall(t, "POST", url+"/subjects/new-value/versions", map[string]any{"schema": `"bytes"`}); status != 200 || body != `{"id":10}` {
		t.Errorf("next id: %d %s, want 10", status, body)
	}
	// What the registry wrote is in Confluent's key format.
	cons := newClient(t, b.Bootstrap(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var keys []string
	for len(keys) < len(records)+1 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading back %s: %v (keys so far %v)", topic, ctx.Err(), keys)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				keys = append(keys, string(r.Key))
			}
		})
	}
	sort.Strings(keys)
	if !containsString(keys, `{"keytype":"SCHEMA","subject":"new-value","version":1,"magic":1}`) {
		t.Errorf("the registry's SCHEMA key is not in Confluent's format: %v", keys)
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkSchemaRegistry measures registrations (each a transaction on
// _schemas, acks=all, read back before the answer) and reads by id, on
// the bundled broker: go test -run XXX -bench BenchmarkSchemaRegistry ./integration/
func BenchmarkSchemaRegistry(b *testing.B) {
	br := harness.TributaryBroker(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := schemaregistry.New(ctx, schemaregistry.Config{Brokers: []string{br.Bootstrap()}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())
	reg := srv.Registry()
	b.Run("op=register", func(b *testing.B) {
		for i := range b.N {
			s := schemaregistry.SchemaRequest{Schema: fmt.Sprintf(`{"type":"record","name":"B%d","fields":[{"name":"f","type":"long"}]}`, i)}
			if _, err := reg.Register(ctx, fmt.Sprintf("bench-%d", i), s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "registrations/s")
	})
	h := httptest.NewServer(schemaregistry.Handler(reg, nil))
	defer h.Close()
	b.Run("op=get-by-id-http", func(b *testing.B) {
		for i := range b.N {
			resp, err := http.Get(fmt.Sprintf("%s/schemas/ids/%d", h.URL, 1+i%10))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	})
}
