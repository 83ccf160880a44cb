package kafkarest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fuzzProxy is a proxy over franz-go's in-memory kfake with topic fz (two
// partitions), and an admin client to look at it.
func fuzzProxy(t testing.TB) (*Proxy, *kadm.Client) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "fz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p, err := New(Config{Seeds: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return p, kadm.NewClient(cl)
}

func endOffsets(t testing.TB, adm *kadm.Client) int64 {
	ends, err := adm.ListEndOffsets(context.Background(), "fz")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// FuzzProduceHandlers posts fuzzed bodies to the v2 and v3 produce
// endpoints: a body that is refused (4xx) produces nothing, and nothing
// ends in a 5xx or a panic.
func FuzzProduceHandlers(f *testing.F) {
	f.Add(uint8(0), []byte(`{"records":[{"key":"k","value":{"a":1}},{"value":2,"partition":1}]}`))
	f.Add(uint8(1), []byte(`{"records":[{"value":"YQ=="},{"value":"!"}]}`))
	f.Add(uint8(2), []byte(`{"records":[{"value":1,"partition":5}]}`))
	f.Add(uint8(3), []byte(`{"partition_id":1,"value":{"type":"JSON","data":{"a":1}}}`))
	f.Add(uint8(3), []byte(`{"value":{"type":"BINARY","data":"!"}}`))
	p, adm := fuzzProxy(f)
	h := p.Handler()
	id := ""
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		if id == "" {
			m, err := p.clusterMeta(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			id = m.Cluster
		}
		var req *http.Request
		switch kind % 4 {
		case 0:
			req = httptest.NewRequest("POST", "/topics/fz", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.json.v2+json")
		case 1:
			req = httptest.NewRequest("POST", "/topics/fz", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.binary.v2+json")
		case 2:
			req = httptest.NewRequest("POST", "/topics/fz/partitions/1", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.json.v2+json")
		default:
			req = httptest.NewRequest("POST", "/v3/clusters/"+id+"/topics/fz/records", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		before := endOffsets(t, adm)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if after := endOffsets(t, adm); after != before {
				t.Fatalf("refused with %d %s, yet %d records were produced", rec.Code, rec.Body, after-before)
			}
		}
	})
}
