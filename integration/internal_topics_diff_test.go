package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestInternalTopicsDiff runs the same connector lifecycle — create a
// FileStreamSource and a FileStreamSink, pause, resume, stop and resume the
// source, delete both — against a real Kafka Connect 4.4 worker and against
// a Tributary worker, both on Tributary's broker (Kafka Connect running on
// it is itself a compatibility proof), then reads the three internal topics
// of each worker from the beginning and compares them:
//
//   - config topic: the same records (keys byte-identical, values equal as
//     JSON) in the same order;
//   - offsets topic: the same keys, byte for byte, in the same partitions,
//     with the same final offsets;
//   - status topic: the same keys in the same partitions, each with the same
//     sequence of (normalised) values.
//
// The connectors have the same names, files and topic in both runs, so the
// records must match; the runs are sequential (Kafka Connect is stopped
// before Tributary starts) and each waits for every state change, so the
// order of records is deterministic.
func TestInternalTopicsDiff(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts Kafka Connect and a Tributary worker")
	}
	b := harness.TributaryBroker(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	out := filepath.Join(dir, "out.txt")
	const lines = 50
	appendLines(t, in, 0, lines)

	// Kafka Connect, with the internal-topic partition counts and offset
	// flush interval of the Tributary worker (the harness defaults to 1
	// partition and Kafka to a 60 s flush).
	kc := harness.KafkaConnect(t, b.Bootstrap(),
		harness.WithWorkerProperty("offset.storage.partitions", "25"),
		harness.WithWorkerProperty("status.storage.partitions", "5"),
		harness.WithWorkerProperty("offset.flush.interval.ms", "1000"))
	diffSequence(t, rest{t: t, url: kc.URL()}, in, out, lines)
	kcTopics := readInternalTopics(t, b.Bootstrap(), kc.GroupID())
	if err := kc.Close(); err != nil {
		t.Fatalf("stop Kafka Connect: %v", err)
	}

	bin := harness.BuildTributary(t)
	w := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "worker"), harness.WorkerProps(t, b.Bootstrap(), "diff-trib", nil))
	diffSequence(t, rest{t: t, url: w.URL()}, in, out, 2*lines)
	trTopics := readInternalTopics(t, b.Bootstrap(), "diff-trib")
	w.Stop()

	if testing.Verbose() || os.Getenv("TRIBUTARY_DIFF_DUMP") != "" {
		for _, x := range []struct {
			who string
			it  internalTopics
		}{{"kafka-connect", kcTopics}, {"tributary", trTopics}} {
			for _, kind := range []string{"configs", "offsets", "status"} {
				for _, r := range x.it[kind] {
					t.Logf("%s %s p%d %s = %s", x.who, kind, r.partition, r.key, r.value)
				}
			}
		}
	}

	compareConfigTopic(t, kcTopics["configs"], trTopics["configs"])
	compareOffsetsTopic(t, kcTopics["offsets"], trTopics["offsets"])
	compareStatusTopic(t, kcTopics["status"], trTopics["status"])
}

// diffSequence is the lifecycle both workers go through. wantOut is the
// number of lines the sink file must reach (the file is shared by the two
// runs; the second run's sink resumes the first one's consumer group, so it
// only copies what the second source adds).
func diffSequence(t *testing.T, r rest, in, out string, wantOut int) {
	t.Helper()
	fi, err := os.Stat(in)
	if err != nil {
		t.Fatal(err)
	}
	r.must(http.MethodPost, "/connectors", map[string]any{"name": "diff-src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "diff-lines", "tasks.max": "1",
	}}, 201)
	r.waitState("diff-src", "RUNNING", 1)
	// The source's offset is committed once every line is produced.
	waitFor(t, "the source offset", func() bool {
		_, body := r.do(http.MethodGet, "/connectors/diff-src/offsets", nil)
		return bytes.Contains(body, fmt.Appendf(nil, `"position":%d`, fi.Size()))
	})
	r.must(http.MethodPut, "/connectors/diff-snk/config", map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "file": out, "topics": "diff-lines", "tasks.max": "1",
	}, 201)
	r.waitState("diff-snk", "RUNNING", 1)
	waitLines(t, out, wantOut, 60*time.Second)

	r.must(http.MethodPut, "/connectors/diff-src/pause", nil, 202)
	r.waitState("diff-src", "PAUSED", 1)
	r.must(http.MethodPut, "/connectors/diff-src/resume", nil, 202)
	r.waitState("diff-src", "RUNNING", 1)
	r.must(http.MethodPut, "/connectors/diff-src/stop", nil, 204)
	r.waitState("diff-src", "STOPPED", 0)
	r.must(http.MethodPut, "/connectors/diff-src/resume", nil, 202)
	r.waitState("diff-src", "RUNNING", 1)

	for _, name := range []string{"diff-snk", "diff-src"} {
		r.must(http.MethodDelete, "/connectors/"+name, nil, 204)
		waitFor(t, name+" deleted", func() bool {
			code, _ := r.do(http.MethodGet, "/connectors/"+name+"/status", nil)
			return code == 404
		})
	}
	// Let the worker finish what deletion triggers (status tombstones are
	// written after the rebalance that follows it).
	time.Sleep(3 * time.Second)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// topicRecord is one internal-topic record; value nil is a tombstone.
type topicRecord struct {
	partition int32
	offset    int64
	key       string
	value     []byte
}

// internalTopics maps configs, offsets and status to their records, in
// partition then offset order.
type internalTopics map[string][]topicRecord

// readInternalTopics reads the <group>-configs, -offsets and -status topics
// (the names both the harness's Kafka Connect and WorkerProps use) from the
// beginning to their current end.
func readInternalTopics(t *testing.T, bootstrap, group string) internalTopics {
	t.Helper()
	out := internalTopics{}
	for _, kind := range []string{"configs", "offsets", "status"} {
		out[kind] = readTopic(t, bootstrap, group+"-"+kind)
	}
	return out
}

func readTopic(t *testing.T, bootstrap, topic string) []topicRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("list end offsets of %s: %v %v", topic, err, ends.Error())
	}
	parts := map[string]map[int32]kgo.Offset{topic: {}}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		parts[topic][o.Partition] = kgo.NewOffset().AtStart()
		if o.Offset > 0 {
			remaining[o.Partition] = o.Offset
		}
	})
	cons, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumePartitions(parts))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var recs []topicRecord
	for len(remaining) > 0 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %s: %v (still to read: %v)", topic, err, remaining)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("read %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, topicRecord{partition: r.Partition, offset: r.Offset, key: string(r.Key), value: r.Value})
			if r.Offset+1 >= remaining[r.Partition] {
				delete(remaining, r.Partition)
			}
		})
	}
	return recs
}

// jsonEqual compares two record values as JSON (nil is a tombstone).
func jsonEqual(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func show(v []byte) string {
	if v == nil {
		return "<tombstone>"
	}
	return string(v)
}

// compareConfigTopic: the same records in the same order. The one
// normalisation: session-key records are dropped — Kafka Connect's leader
// writes a fresh random key (KIP-507) with its creation time, which no
// other worker can reproduce; whether one is written at all is checked.
func compareConfigTopic(t *testing.T, kc, tr []topicRecord) {
	t.Helper()
	strip := func(rs []topicRecord) (out []topicRecord, sessionKeys int) {
		for _, r := range rs {
			if r.key == "session-key" {
				sessionKeys++
				continue
			}
			out = append(out, r)
		}
		return out, sessionKeys
	}
	kc, kcKeys := strip(kc)
	tr, trKeys := strip(tr)
	if (kcKeys > 0) != (trKeys > 0) {
		// Known deviation: Tributary's leader does not write a KIP-507
		// session key yet (it signs no inter-worker requests; the
		// multi-worker issue adds them).
		t.Logf("known deviation: config topic: Kafka Connect wrote %d session-key records, Tributary %d", kcKeys, trKeys)
	}
	n := max(len(kc), len(tr))
	for i := range n {
		switch {
		case i >= len(kc):
			t.Errorf("config topic record %d: Tributary has an extra %s = %s", i, tr[i].key, show(tr[i].value))
		case i >= len(tr):
			t.Errorf("config topic record %d: Tributary lacks %s = %s", i, kc[i].key, show(kc[i].value))
		case kc[i].key != tr[i].key || !jsonEqual(kc[i].value, tr[i].value):
			t.Errorf("config topic record %d:\n  Kafka Connect: %s = %s\n  Tributary:     %s = %s", i, kc[i].key, show(kc[i].value), tr[i].key, show(tr[i].value))
		}
	}
}

// compareOffsetsTopic: the same keys, byte for byte, in the same
// partitions, and the same last value per key. How many intermediate
// offsets each worker commits depends on how its flushes fall between
// polls, so only the final offset of each source partition is compared.
func compareOffsetsTopic(t *testing.T, kc, tr []topicRecord) {
	t.Helper()
	last := func(rs []topicRecord) map[string]topicRecord {
		m := map[string]topicRecord{}
		for _, r := range rs {
			m[r.key] = r
		}
		return m
	}
	km, tm := last(kc), last(tr)
	if len(km) == 0 {
		t.Errorf("offsets topic: Kafka Connect wrote no offsets")
	}
	for k, kr := range km {
		tr, ok := tm[k]
		switch {
		case !ok:
			t.Errorf("offsets topic: Tributary has no record with key %s (Kafka Connect: p%d %s)", k, kr.partition, show(kr.value))
		case tr.partition != kr.partition:
			t.Errorf("offsets topic: key %s in partition %d, Kafka Connect's in %d", k, tr.partition, kr.partition)
		case !jsonEqual(tr.value, kr.value):
			t.Errorf("offsets topic: key %s: last value %s, Kafka Connect's %s", k, show(tr.value), show(kr.value))
		}
	}
	for k, r := range tm {
		if _, ok := km[k]; !ok {
			t.Errorf("offsets topic: Tributary wrote key %s = %s that Kafka Connect did not", k, show(r.value))
		}
	}
}

// normStatus normalises a status-topic value for comparison:
//   - worker_id is the worker's advertised host:port, which differs between
//     any two workers; it must be a non-empty string;
//   - generation is the group generation, which depends on how many
//     rebalances each worker's group has had; it must be a number;
//   - trace is a Java stack trace in Kafka Connect; only whether there is
//     one is compared;
//   - discoverTimestamp (topic records) is the wall-clock time a topic was
//     first seen; it must be a number;
//   - version (KIP-891) is the plugin's own version: Kafka's FileStream jar
//     says 4.4.0, Tributary's Go FileStream connectors their own version;
//     only whether there is one is compared, and not at all for UNASSIGNED
//     connector statuses, where Kafka Connect writes it or null depending
//     on whether the connector object is already gone when its shutdown
//     status is written (a race inside Kafka Connect).
func normStatus(v []byte) string {
	if v == nil {
		return "<tombstone>"
	}
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil {
		return "<not JSON: " + string(v) + ">"
	}
	if w, ok := m["worker_id"].(string); ok && w != "" {
		m["worker_id"] = "<worker>"
	}
	if _, ok := m["generation"].(float64); ok {
		m["generation"] = "<generation>"
	}
	if tr, ok := m["trace"].(string); ok && tr != "" {
		m["trace"] = "<trace>"
	}
	if v, ok := m["version"].(string); ok && v != "" {
		m["version"] = "<version>"
	}
	if m["state"] == "UNASSIGNED" && m["version"] == "<version>" {
		m["version"] = nil
	}
	if topic, ok := m["topic"].(map[string]any); ok {
		if _, ok := topic["discoverTimestamp"].(float64); ok {
			topic["discoverTimestamp"] = "<time>"
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// compareStatusTopic: every key in the same partition with the same
// sequence of normalised values. Records of different keys are not
// ordered against each other (they are in different partitions).
func compareStatusTopic(t *testing.T, kc, tr []topicRecord) {
	t.Helper()
	type hist struct {
		partition int32
		values    []string
	}
	group := func(rs []topicRecord) (map[string]*hist, []string) {
		m := map[string]*hist{}
		var keys []string
		for _, r := range rs {
			h := m[r.key]
			if h == nil {
				h = &hist{partition: r.partition}
				m[r.key] = h
				keys = append(keys, r.key)
			}
			// Consecutive identical values are collapsed: Kafka Connect
			// writes some records twice from two code paths (a deleted
			// task's tombstone by the worker and again by the leader after
			// the rebalance; a topic record by every send racing on its
			// cache), which changes nothing for a reader.
			if v := normStatus(r.value); len(h.values) == 0 || h.values[len(h.values)-1] != v {
				h.values = append(h.values, v)
			}
		}
		return m, keys
	}
	km, kkeys := group(kc)
	tm, tkeys := group(tr)
	for _, k := range kkeys {
		kh, th := km[k], tm[k]
		switch {
		case th == nil:
			t.Errorf("status topic: Tributary wrote nothing for %s; Kafka Connect wrote:\n    %s", k, strings.Join(kh.values, "\n    "))
		case th.partition != kh.partition:
			t.Errorf("status topic: %s in partition %d, Kafka Connect's in %d", k, th.partition, kh.partition)
		case !reflect.DeepEqual(th.values, kh.values):
			t.Errorf("status topic: %s:\n  Kafka Connect:\n    %s\n  Tributary:\n    %s", k, strings.Join(kh.values, "\n    "), strings.Join(th.values, "\n    "))
		}
	}
	for _, k := range tkeys {
		if km[k] == nil {
			t.Errorf("status topic: Tributary wrote %s that Kafka Connect did not:\n    %s", k, strings.Join(tm[k].values, "\n    "))
		}
	}
}
