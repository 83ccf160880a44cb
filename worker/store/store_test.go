package store

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/sdk"
)

func opts(brokers []string, topic string) Options {
	return Options{Brokers: brokers, Topic: topic, ReplicationFactor: -1}
}

func TestConfigStore(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		var mu sync.Mutex
		var events []ConfigEvent
		a, err := OpenConfigStore(ctx, opts(brokers, "connect-configs"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := OpenConfigStore(ctx, opts(brokers, "connect-configs"), func(ev ConfigEvent) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()

		cfg := map[string]string{"connector.class": "FileStreamSource", "name": "src", "file": "/tmp/in"}
		if err := a.PutConnectorConfig(ctx, "src", cfg, ""); err != nil {
			t.Fatal(err)
		}
		snap := a.Snapshot()
		if !reflect.DeepEqual(snap.Connectors["src"], cfg) || snap.TargetStates["src"] != TargetStarted {
			t.Fatalf("writer does not see its write: %+v", snap)
		}
		tasks := []map[string]string{{"task.class": "T", "n": "0"}, {"task.class": "T", "n": "1"}}
		if err := a.PutTaskConfigs(ctx, "src", tasks); err != nil {
			t.Fatal(err)
		}
		if err := a.PutTargetState(ctx, "src", TargetPaused); err != nil {
			t.Fatal(err)
		}
		if err := a.PutConnectorConfig(ctx, "other", map[string]string{"connector.class": "X"}, TargetStopped); err != nil {
			t.Fatal(err)
		}
		if err := a.PutRestartRequest(ctx, RestartRequest{Connector: "src", IncludeTasks: true}); err != nil {
			t.Fatal(err)
		}
		want := a.Snapshot()
		if !reflect.DeepEqual(want.Tasks["src"], tasks) || want.TaskCounts["src"] != 2 ||
			want.TargetStates["src"] != TargetPaused || want.TargetStates["other"] != TargetStopped {
			t.Fatalf("snapshot: %+v", want)
		}
		// The second instance tails the first's writes.
		eventually(t, "tailing store catches up", func() bool { return b.Offset() == want.Offset })
		if got := b.Snapshot(); !reflect.DeepEqual(got, want) {
			t.Fatalf("tailing store:\n got %+v\nwant %+v", got, want)
		}
		mu.Lock()
		var kinds []ConfigEventKind
		for _, ev := range events {
			kinds = append(kinds, ev.Kind)
		}
		last := events[len(events)-1]
		mu.Unlock()
		wantKinds := []ConfigEventKind{ConnectorConfigUpdated, TaskConfigsCommitted, TargetStateChanged, TargetStateChanged, ConnectorConfigUpdated, RestartRequested}
		if !reflect.DeepEqual(kinds, wantKinds) {
			t.Fatalf("events %v, want %v", kinds, wantKinds)
		}
		if last.Restart != (RestartRequest{Connector: "src", IncludeTasks: true}) || last.Offset != want.Offset {
			t.Fatalf("restart event %+v", last)
		}

		// A new instance reads the same state back (restart).
		c, err := OpenConfigStore(ctx, opts(brokers, "connect-configs"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Snapshot(); !reflect.DeepEqual(got, want) {
			t.Fatalf("reopened store:\n got %+v\nwant %+v", got, want)
		}
		c.Close()
		c.Close() // idempotent

		// Stop: zero tasks; delete: tombstones.
		if err := a.PutTaskConfigs(ctx, "src", nil); err != nil {
			t.Fatal(err)
		}
		if s := a.Snapshot(); len(s.Tasks["src"]) != 0 || s.TaskCounts["src"] != 0 {
			t.Fatalf("after zero-task commit: %+v", s)
		}
		if err := a.DeleteConnector(ctx, "src"); err != nil {
			t.Fatal(err)
		}
		s := a.Snapshot()
		if _, ok := s.Connectors["src"]; ok {
			t.Fatal("deleted connector still present")
		}
		if _, ok := s.TargetStates["src"]; ok {
			t.Fatal("deleted connector still has a target state")
		}
	})
}

// TestConfigStoreRecords checks the raw records against Kafka Connect's
// formats by reading the topic with a plain consumer.
func TestConfigStoreRecords(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		s, err := OpenConfigStore(ctx, opts(brokers, "cfg"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		must(t, s.PutConnectorConfig(ctx, "c", map[string]string{"name": "c", "connector.class": "X"}, TargetPaused))
		must(t, s.PutTaskConfigs(ctx, "c", []map[string]string{{"k": "v"}}))
		must(t, s.DeleteConnector(ctx, "c"))
		got := readAll(t, brokers, "cfg", 7)
		want := []string{
			`target-state-c={"state":"PAUSED","state.v2":"PAUSED"}`,
			`connector-c={"properties":{"connector.class":"X","name":"c"}}`,
			`task-c-0={"properties":{"k":"v"}}`,
			`commit-c={"tasks":1}`,
			`connector-c=<null>`,
			`target-state-c=<null>`,
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("records:\n got %q\nwant %q", got, want)
		}
	})
}

// TestConfigStoreInconsistentCommit: a commit without all its task
// records does not apply (as in Kafka) and marks the connector.
func TestConfigStoreInconsistentCommit(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		s, err := OpenConfigStore(ctx, opts(brokers, "cfg"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		must(t, s.PutTaskConfigs(ctx, "c", []map[string]string{{"k": "0"}}))
		must(t, s.write(ctx, s.record("task-c-1", encodeProps(map[string]string{"k": "1"})), s.record("commit-c", EncodeTaskCommit(3))))
		snap := s.Snapshot()
		if !snap.Inconsistent["c"] || len(snap.Tasks["c"]) != 1 || snap.TaskCounts["c"] != 3 {
			t.Fatalf("%+v", snap)
		}
	})
}

func TestConfigTopicRefused(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		adm := admin(t, brokers)
		if _, err := adm.CreateTopic(ctx, 2, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "two"); err != nil {
			t.Fatal(err)
		}
		if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, "deleting"); err != nil {
			t.Fatal(err)
		}
		_, err := OpenConfigStore(ctx, opts(brokers, "two"), nil)
		if err == nil || !strings.Contains(err.Error(), "has 2 partitions") {
			t.Fatalf("two-partition config topic: %v", err)
		}
		_, err = OpenConfigStore(ctx, opts(brokers, "deleting"), nil)
		if err == nil || !strings.Contains(err.Error(), "cleanup.policy") {
			t.Fatalf("non-compacted config topic: %v", err)
		}
		_, err = OpenStatusStore(ctx, opts(brokers, "deleting"))
		if err == nil || !strings.Contains(err.Error(), "cleanup.policy") {
			t.Fatalf("non-compacted status topic: %v", err)
		}
		o := opts(brokers, "new")
		o.Partitions = 3
		if _, err := OpenConfigStore(ctx, o, nil); err == nil {
			t.Fatal("config store accepted 3 partitions")
		}
	})
}

func TestTopicsCreatedCompacted(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		o, err := OpenOffsetStore(ctx, opts(brokers, "offs"))
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
		st, err := OpenStatusStore(ctx, opts(brokers, "stat"))
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		adm := admin(t, brokers)
		tds, err := adm.ListTopics(ctx, "offs", "stat")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tds["offs"].Partitions); n != 25 {
			t.Errorf("offsets topic has %d partitions", n)
		}
		if n := len(tds["stat"].Partitions); n != 5 {
			t.Errorf("status topic has %d partitions", n)
		}
		rcs, err := adm.DescribeTopicConfigs(ctx, "offs", "stat")
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range rcs {
			for _, c := range rc.Configs {
				if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
					t.Errorf("%s: cleanup.policy=%s", rc.Name, c.MaybeValue())
				}
			}
		}
	})
}

func TestOffsetStore(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		a, err := OpenOffsetStore(ctx, opts(brokers, "connect-offsets"))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := OpenOffsetStore(ctx, opts(brokers, "connect-offsets"))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		p1 := sdk.Partition{"filename": "/tmp/in.txt"}
		p2 := sdk.Partition{"db": "shop", "schema": "public", "table": "orders"}
		must(t, a.WriteOffsets(ctx, "file-src", []sdk.SourceOffset{
			{Partition: p1, Offset: sdk.Offset{"position": int64(30)}},
			{Partition: p2, Offset: sdk.Offset{"lsn": int64(9007199254740993)}},
		}))
		must(t, a.WriteOffsets(ctx, "file-src", []sdk.SourceOffset{{Partition: p1, Offset: sdk.Offset{"position": int64(42)}}}))
		must(t, a.WriteOffsets(ctx, "other", []sdk.SourceOffset{{Partition: p1, Offset: sdk.Offset{"position": int64(1)}}}))
		for _, s := range []*OffsetStore{a, b} {
			got, err := s.Reader("file-src").Offsets(ctx, []sdk.Partition{p1, p2, {"filename": "none"}})
			if err != nil {
				t.Fatal(err)
			}
			want := []sdk.Offset{{"position": int64(42)}, {"lsn": int64(9007199254740993)}, nil}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("offsets %v, want %v", got, want)
			}
		}
		all, err := b.ConnectorOffsets(ctx, "file-src")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || !reflect.DeepEqual(all[0].Partition, p2) {
			t.Fatalf("connector offsets %v", all)
		}
		// Records land where the Java partitioner puts them.
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("connect-offsets"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < 4 {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				n++
				if string(r.Key) == `["file-src",{"filename":"/tmp/in.txt"}]` && r.Partition != 14 {
					t.Errorf("key %s in partition %d, Java's is 14", r.Key, r.Partition)
				}
				if string(r.Key) == `["pg",{"db":"shop","schema":"public","table":"orders"}]` && r.Partition != 18 {
					t.Errorf("key %s in partition %d", r.Key, r.Partition)
				}
			})
		}
		cl.Close()
		// Restart reads back; reset tombstones everything.
		c, err := OpenOffsetStore(ctx, opts(brokers, "connect-offsets"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := c.ConnectorOffsets(ctx, "file-src"); !reflect.DeepEqual(got, all) {
			t.Fatalf("reopened: %v want %v", got, all)
		}
		must(t, c.ResetOffsets(ctx, "file-src"))
		c.Close()
		if got, _ := a.ConnectorOffsets(ctx, "file-src"); len(got) != 0 {
			t.Fatalf("after reset: %v", got)
		}
		if got, _ := a.ConnectorOffsets(ctx, "other"); len(got) != 1 {
			t.Fatalf("reset touched another connector: %v", got)
		}
		if err := a.WriteOffsets(ctx, "x", []sdk.SourceOffset{{Partition: sdk.Partition{"a": []int{1}}, Offset: sdk.Offset{}}}); err == nil {
			t.Fatal("nested partition value accepted")
		}
	})
}

// TestOffsetStoreJavaKeyOrder: a key written by a Java worker with a
// different field order is found, and tombstoned with its own bytes.
func TestOffsetStoreJavaKeyOrder(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		s, err := OpenOffsetStore(ctx, opts(brokers, "offs"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		key := []byte(`["pg",{"table":"orders","db":"shop"}]`)
		must(t, s.l.send(ctx, &kgo.Record{Key: key, Value: []byte(`{"lsn":5}`), Partition: KeyPartition(key, 25)}))
		p := sdk.Partition{"db": "shop", "table": "orders"}
		got, err := s.Offsets(ctx, "pg", []sdk.Partition{p})
		if err != nil || got[0]["lsn"] != int64(5) {
			t.Fatalf("%v %v", got, err)
		}
		must(t, s.ResetOffsets(ctx, "pg"))
		var tomb *kgo.Record
		cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("offs"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		defer cl.Close()
		for tomb == nil {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if r.Value == nil {
					tomb = r
				}
			})
		}
		if string(tomb.Key) != string(key) {
			t.Fatalf("tombstone key %s, want %s", tomb.Key, key)
		}
	})
}

func TestStatusStore(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		a, err := OpenStatusStore(ctx, opts(brokers, "connect-status"))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := OpenStatusStore(ctx, opts(brokers, "connect-status"))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		w1 := Status{State: StateRunning, WorkerID: "w1:8083", Generation: 5}
		ok, err := a.PutConnectorSafe(ctx, "c", w1)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		// Another worker with an older generation may not overwrite it.
		must(t, b.Refresh(ctx))
		ok, err = b.PutConnectorSafe(ctx, "c", Status{State: StateFailed, WorkerID: "w2:8083", Generation: 4, Trace: "boom"})
		if err != nil || ok {
			t.Fatalf("stale write allowed: %v %v", ok, err)
		}
		// Same generation or newer may; so may the same worker.
		ok, err = b.PutConnectorSafe(ctx, "c", Status{State: StateUnassigned, WorkerID: "w2:8083", Generation: 5})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		must(t, a.Refresh(ctx))
		fail := Status{State: StateFailed, WorkerID: "w1:8083", Generation: 3, Trace: "java.lang.RuntimeException: x\n\tat y", Version: "1.0"}
		if _, err := a.PutConnectorSafe(ctx, "c", fail); err != nil {
			t.Fatal(err)
		}
		if st, _ := a.Connector("c"); st.State != StateUnassigned {
			t.Fatalf("older generation of another worker overwrote: %+v", st)
		}
		must(t, a.PutTask(ctx, TaskID{"c-1", 0}, fail))
		ok, err = a.PutTaskSafe(ctx, TaskID{"c-1", 1}, w1)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		must(t, a.Refresh(ctx))
		if got := a.Tasks("c-1"); !reflect.DeepEqual(got, map[int]Status{0: fail, 1: w1}) {
			t.Fatalf("tasks %+v", got)
		}
		c, err := OpenStatusStore(ctx, opts(brokers, "connect-status"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if !reflect.DeepEqual(c.Snapshot(), a.Snapshot()) {
			t.Fatalf("reopened %+v\nwant %+v", c.Snapshot(), a.Snapshot())
		}
		must(t, c.DeleteTask(ctx, TaskID{"c-1", 0}))
		must(t, c.DeleteConnector(ctx, "c"))
		must(t, a.Refresh(ctx))
		if _, ok := a.Connector("c"); ok {
			t.Fatal("tombstoned status still there")
		}
		if _, ok := a.Task(TaskID{"c-1", 0}); ok {
			t.Fatal("tombstoned task status still there")
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func admin(t *testing.T, brokers []string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// readAll reads n-1 records... until it has want records; keys and values
// as "key=value".
func readAll(t *testing.T, brokers []string, topic string, max int) []string {
	t.Helper()
	ctx := testCtx(t)
	adm := admin(t, brokers)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []string
	for int64(len(out)) < total && len(out) < max {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if r.Value == nil {
				v = "<null>"
			}
			out = append(out, string(r.Key)+"="+v)
		})
	}
	return out
}

func TestStatusStoreTopics(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		s, err := OpenStatusStore(ctx, opts(brokers, "status-topics"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, topic := range []string{"b", "a", "b"} {
			if err := s.PutTopic(ctx, topic, "conn", 0, 1700000000000); err != nil {
				t.Fatal(err)
			}
		}
		if got := s.Topics("conn"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
			t.Fatalf("topics %v", got)
		}
		if got := string(EncodeTopicStatus("a", "conn", 3, 5)); got != `{"topic":{"name":"a","connector":"conn","task":3,"discoverTimestamp":5}}` {
			t.Fatalf("encoding %s", got)
		}
		// A second store reads them back; a reset tombstones them.
		s2, err := OpenStatusStore(ctx, opts(brokers, "status-topics"))
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if got := s2.Topics("conn"); len(got) != 2 {
			t.Fatalf("second store sees %v", got)
		}
		if err := s2.ResetTopics(ctx, "conn"); err != nil {
			t.Fatal(err)
		}
		if err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got := s.Topics("conn"); len(got) != 0 {
			t.Fatalf("after reset: %v", got)
		}
	})
}

// TestConfigStoreLoggerLevels: a cluster log level is Kafka Connect's
// logger-cluster-<namespace> record (KIP-976); a store that is open when it
// is written reports it, a malformed one is ignored, and a store opened
// later does not replay old levels (as Kafka Connect's workers do not).
func TestConfigStoreLoggerLevels(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		var mu sync.Mutex
		var events []ConfigEvent
		listen := func(ev ConfigEvent) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
		a, err := OpenConfigStore(ctx, opts(brokers, "cfg"), listen)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		must(t, a.write(ctx, a.record("logger-cluster-bad", []byte(`{"lvl":"DEBUG"}`))))
		must(t, a.PutLoggerLevel(ctx, "org.apache.kafka.connect.file", "DEBUG"))
		mu.Lock()
		got := append([]ConfigEvent(nil), events...)
		mu.Unlock()
		if len(got) != 1 || got[0].Kind != LoggerLevelSet || got[0].Logger != "org.apache.kafka.connect.file" || got[0].Level != "DEBUG" {
			t.Fatalf("events %+v, want one LoggerLevelSet of org.apache.kafka.connect.file to DEBUG", got)
		}
		if recs := readAll(t, brokers, "cfg", 2); !reflect.DeepEqual(recs, []string{
			`logger-cluster-bad={"lvl":"DEBUG"}`,
			`logger-cluster-org.apache.kafka.connect.file={"level":"DEBUG"}`,
		}) {
			t.Fatalf("records %q", recs)
		}

		var late []ConfigEvent
		b, err := OpenConfigStore(ctx, opts(brokers, "cfg"), func(ev ConfigEvent) { late = append(late, ev) })
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if len(late) != 0 {
			t.Fatalf("a store opened later replayed %+v", late)
		}
	})
}
