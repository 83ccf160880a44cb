package worker

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/worker/store"
)

// Until the worker has read its internal topics, the REST calls that read
// them answer 503 "still starting" instead of panicking on a nil backend,
// and writes do too (the herder loop is not running yet).
func TestAPIWhileStarting(t *testing.T) {
	d := newDriver(Config{TopicTracking: true, TopicTrackingReset: true}, slog.New(slog.DiscardHandler), nil, "w1", nil)
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindUnavailable || !strings.Contains(e.Message, "still starting") {
			t.Errorf("%s: %v, want the 503 of a worker still starting", what, err)
		}
	}
	_, err := d.Connectors(ctx)
	check("Connectors", err)
	_, err = d.ConnectorInfo(ctx, "c")
	check("ConnectorInfo", err)
	_, err = d.ConnectorStatus(ctx, "c")
	check("ConnectorStatus", err)
	_, err = d.TaskStatus(ctx, "c", 0)
	check("TaskStatus", err)
	_, err = d.ConnectorTopics(ctx, "c")
	check("ConnectorTopics", err)
	check("ResetConnectorTopics", d.ResetConnectorTopics(ctx, "c"))
	_, err = d.Offsets(ctx, "c")
	check("Offsets", err)
	check("DeleteConnector", d.DeleteConnector(ctx, "c"))
	check("PauseConnector", d.PauseConnector(ctx, "c"))
	check("RestartTask", d.RestartTask(ctx, "c", 0))
	_, err = d.LeaderURL(ctx)
	check("LeaderURL", err)
	check("Health", d.Health(ctx))
}

// stoppingSink records BeginStop.
type stoppingSink struct {
	plugins.SinkTask
	began bool
}

func (s *stoppingSink) BeginStop() { s.began = true }

// The worker's wrapper of sink tasks passes on the runner's BeginStop (a
// prompt stop of a task whose Put retries) and EndingSink.
func TestTrackedSinkForwards(t *testing.T) {
	inner := &stoppingSink{}
	var task plugins.SinkTask = trackedSink{SinkTask: inner}
	s, ok := task.(plugins.StoppingSink)
	if !ok {
		t.Fatal("trackedSink is not a StoppingSink")
	}
	s.BeginStop()
	if !inner.began {
		t.Error("BeginStop not forwarded")
	}
	if _, ok := task.(plugins.EndingSink); !ok {
		t.Error("trackedSink is not an EndingSink")
	}
}

// Internal requests are checked as Kafka Connect's DistributedHerder does:
// 400 without a signature or with another algorithm, 503 before a key was
// read, 403 for a wrong one.
func TestVerifySignature(t *testing.T) {
	key := &store.SessionKey{Key: []byte("0123456789abcdef0123456789abcdef"), Algorithm: "HmacSHA256"}
	body := []byte(`[{"task.class":"T"}]`)
	good := &Signature{Algorithm: "HmacSHA256", Value: sign(key.Key, body), Body: body}
	for _, tc := range []struct {
		name string
		sig  *Signature
		key  *store.SessionKey
		kind Kind
		msg  string
	}{
		{"valid", good, key, 0, ""},
		{"missing", nil, key, KindBadRequest, "Internal request missing required signature"},
		{"algorithm", &Signature{Algorithm: "HmacSHA1", Value: good.Value, Body: body}, key, KindBadRequest, "does not support the 'HmacSHA1' key signing algorithm"},
		{"not-base64", &Signature{Algorithm: "HmacSHA256", Value: "%%%", Body: body}, key, KindBadRequest, "base64"},
		{"no-key-yet", good, nil, KindUnavailable, "has not been able to read a session key"},
		{"other-body", &Signature{Algorithm: "HmacSHA256", Value: good.Value, Body: []byte(`[]`)}, key, KindForbidden, "Internal request contained invalid signature."},
		{"other-key", good, &store.SessionKey{Key: []byte("another key")}, KindForbidden, "invalid signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifySignature(tc.sig, tc.key)
			if tc.kind == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("%v, want %d %q", err, tc.kind, tc.msg)
			}
		})
	}
	// The signature is Kafka's: base64 of HmacSHA256 over the raw body.
	if got := sign([]byte("key"), []byte("The quick brown fox jumps over the lazy dog")); got != "97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=" {
		t.Fatalf("sign: %s", got)
	}
}
