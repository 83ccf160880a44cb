package store

import (
	"errors"
	"strings"
	"testing"
)

// Issue 23, case 4: the config topic is created taking records of
// ConfigTopicMaxMessageBytes, so that any config the REST API accepts (1
// MiB) is stored, and with it its task configs, one a record (the
// producer's batches never exceed the topic's limit). A record over the
// limit is a *RecordTooLargeError and nothing is written.
func TestConfigRecordSizes(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		s, err := OpenConfigStore(ctx, opts(brokers, "connect-configs"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.l.maxRecordBytes != ConfigTopicMaxMessageBytes {
			t.Fatalf("config topic takes %d bytes, want %d", s.l.maxRecordBytes, ConfigTopicMaxMessageBytes)
		}
		big := map[string]string{"connector.class": "FileStreamSource", "pad": strings.Repeat("x", 1400<<10)}
		if err := s.PutConnectorConfig(ctx, "big", big, ""); err != nil {
			t.Fatalf("a 1.4 MiB config: %v", err)
		}
		// Three task configs of 1.4 MiB: more than one batch may hold.
		if err := s.PutTaskConfigs(ctx, "big", []map[string]string{big, big, big}); err != nil {
			t.Fatalf("three 1.4 MiB task configs: %v", err)
		}
		if got := len(s.Snapshot().Tasks["big"]); got != 3 {
			t.Fatalf("%d task configs stored, want 3", got)
		}
		huge := map[string]string{"connector.class": "FileStreamSource", "pad": strings.Repeat("x", 3<<20)}
		err = s.PutConnectorConfig(ctx, "huge", huge, "")
		var tl *RecordTooLargeError
		if !errors.As(err, &tl) || tl.Limit != ConfigTopicMaxMessageBytes || tl.Bytes <= 3<<20 || tl.Topic != "connect-configs" {
			t.Fatalf("a 3 MiB config: %v, want a RecordTooLargeError", err)
		}
		if _, ok := s.Snapshot().Connectors["huge"]; ok {
			t.Fatal("the refused config was stored")
		}
	})
}

// Issue 23, case 5: once a connector's config changes, its committed task
// configs are stale (generated from the old config) until task configs of
// the new config are committed, even equal ones; task configs generated
// from a config replaced in the meantime are not written.
func TestTaskConfigsStale(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		s, err := OpenConfigStore(ctx, opts(brokers, "connect-configs"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		v1 := map[string]string{"connector.class": "FileStreamSource", "name": "c"}
		if err := s.PutConnectorConfig(ctx, "c", v1, ""); err != nil {
			t.Fatal(err)
		}
		snap := s.Snapshot()
		if !snap.TasksStale["c"] {
			t.Fatal("a new connector's (missing) task configs are not stale")
		}
		tasks := []map[string]string{{"task.class": "FileStreamSourceTask"}}
		if err := s.PutTaskConfigsFor(ctx, "c", tasks, v1); err != nil {
			t.Fatal(err)
		}
		if s.Snapshot().TasksStale["c"] {
			t.Fatal("committed task configs are stale")
		}
		v2 := map[string]string{"connector.class": "Datagen", "name": "c"}
		if err := s.PutConnectorConfig(ctx, "c", v2, ""); err != nil {
			t.Fatal(err)
		}
		snap = s.Snapshot()
		if !snap.TasksStale["c"] || len(snap.Tasks["c"]) != 1 {
			t.Fatalf("after a new config: stale %v, tasks %v", snap.TasksStale, snap.Tasks["c"])
		}
		if err := s.PutTaskConfigsFor(ctx, "c", tasks, v1); !errors.Is(err, ErrStaleTaskConfigs) {
			t.Fatalf("task configs of the replaced config: %v, want ErrStaleTaskConfigs", err)
		}
		if err := s.PutTaskConfigsFor(ctx, "c", tasks, v2); err != nil {
			t.Fatal(err)
		}
		if s.Snapshot().TasksStale["c"] {
			t.Fatal("equal task configs committed again for the new config are still stale")
		}
		// The same config written again changes nothing the tasks see.
		if err := s.PutConnectorConfig(ctx, "c", v2, ""); err != nil {
			t.Fatal(err)
		}
		if s.Snapshot().TasksStale["c"] {
			t.Fatal("an equal config made the task configs stale")
		}
	})
}
