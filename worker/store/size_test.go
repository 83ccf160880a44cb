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
