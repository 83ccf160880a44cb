package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mongoClient connects to uri, disconnected in t.Cleanup.
func mongoClient(t testing.TB, uri string) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

// mgSeq names each MongoDB test's databases and topic prefixes uniquely.
var mgSeq atomic.Int64

func mgID(prefix string) string { return fmt.Sprintf("%s%d", prefix, mgSeq.Add(1)) }

// mongoPollConfig is the source's configuration for capture.mode=poll on
// uri, capturing the databases matched by dbs (a regular expression).
func mongoPollConfig(uri, prefix, dbs string) map[string]string {
	return map[string]string{
		"connector.class":           "io.debezium.connector.mongodb.MongoDbConnector",
		"mongodb.connection.string": uri,
		"topic.prefix":              prefix,
		"capture.mode":              "poll",
		"database.include.list":     dbs,
		"poll.interval.ms":          "100",
	}
}

// mgEvent is a change event as the JsonConverter (schemas.enable=true)
// wrote it.
type mgEvent struct {
	topic string
	key   string // payload.id
	value map[string]any
	tomb  bool
}

func (e mgEvent) op() string             { s, _ := e.value["op"].(string); return s }
func (e mgEvent) after() string          { s, _ := e.value["after"].(string); return s }
func (e mgEvent) source() map[string]any { m, _ := e.value["source"].(map[string]any); return m }

// mgConsumer reads change events of topics (matched by a regular
// expression) from the start.
type mgConsumer struct {
	t  *testing.T
	cl *kgo.Client
}

func newMgConsumer(t *testing.T, bootstrap, topicRegex string) *mgConsumer {
	cl := newClient(t, bootstrap, kgo.ConsumeRegex(), kgo.ConsumeTopics(topicRegex),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(500*time.Millisecond))
	return &mgConsumer{t: t, cl: cl}
}

// until reads events until done says enough or within passes.
func (c *mgConsumer) until(within time.Duration, done func([]mgEvent) bool) []mgEvent {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var out []mgEvent
	for !done(out) {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("%d change events after %v, not enough", len(out), within)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var k struct {
				Payload struct{ ID string } `json:"payload"`
			}
			if err := json.Unmarshal(r.Key, &k); err != nil {
				c.t.Fatalf("key %s: %v", r.Key, err)
			}
			e := mgEvent{topic: r.Topic, key: k.Payload.ID, tomb: r.Value == nil}
			if r.Value != nil {
				var v struct{ Payload map[string]any }
				if err := json.Unmarshal(r.Value, &v); err != nil {
					c.t.Fatalf("value %s: %v", r.Value, err)
				}
				e.value = v.Payload
			}
			out = append(out, e)
		})
	}
	return out
}

// dumpOnFailure logs the connectors' status and the end of the worker's
// log if the test fails.
func dumpOnFailure(t *testing.T, r rest, logPath func() string, names ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, n := range names {
			_, out := r.do("GET", "/connectors/"+n+"/status", nil)
			t.Logf("status of %s: %s", n, out)
		}
		t.Logf("worker log:\n%s", harnessTail(logPath()))
	})
}
