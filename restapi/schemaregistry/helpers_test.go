package schemaregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// memLog is a Log in memory: records are applied as they are written.
type memLog struct {
	apply   func(Record) error
	records []Record
}

func (m *memLog) Write(_ context.Context, decide func() ([]Record, error)) error {
	recs, err := decide()
	if err != nil {
		return err
	}
	for _, r := range recs {
		m.records = append(m.records, r)
		if err := m.apply(r); err != nil {
			return err
		}
	}
	return nil
}

func (m *memLog) Sync(context.Context) error { return nil }

// newMemRegistry returns a registry over a memLog and the log.
func newMemRegistry() (*Registry, *memLog) {
	reg := NewRegistry(nil)
	ml := &memLog{apply: reg.Apply}
	reg.SetLog(ml)
	return reg, ml
}

// kfakeBrokers starts franz-go's kfake (an independent Kafka
// implementation) and returns its address.
func kfakeBrokers(t *testing.T) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// startServer runs a Server on brokers behind httptest.
func startServer(t *testing.T, brokers []string) (*Server, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := New(ctx, Config{Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.http.Handler)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close(context.Background())
	})
	return srv, hs.URL
}

type exchange struct {
	status int
	body   string
}

// call sends a request with Confluent's content type and returns the
// status and the body.
func call(t *testing.T, method, url string, body any) exchange {
	t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = bytes.NewBufferString(s)
		} else {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return exchange{resp.StatusCode, string(b)}
}
