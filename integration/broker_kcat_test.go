package integration

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/integration/harness"
)

// kcat runs the kcat binary with stdin and returns its standard output.
func kcat(ctx context.Context, t *testing.T, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func requireKcat(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("skipping: kcat not installed (apt-get install -y kcat)")
	}
}

// TestBrokerKcat drives Tributary's broker with kcat (librdkafka): metadata,
// produce without and with each compression, consume from the beginning and
// from an offset, keys preserved. librdkafka consumes with read_committed.
func TestBrokerKcat(t *testing.T) {
	t.Parallel()
	requireKcat(t)
	b := harness.TributaryBroker(t)
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	createTopic(ctx, t, bs, "kcat-meta", 3, nil)
	lz4OK := advertises(ctx, t, bs, 10, 0) // FindCoordinator v0
	t.Run("metadata", func(t *testing.T) {
		out := kcat(ctx, t, "", "-b", bs, "-L")
		for _, want := range []string{
			"1 brokers:",
			"broker 1 at " + bs,
			`topic "kcat-meta" with 3 partitions:`,
			"partition 0, leader 1, replicas: 1, isrs: 1",
			"partition 2, leader 1, replicas: 1, isrs: 1",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("kcat -L output lacks %q:\n%s", want, out)
			}
		}
		out = kcat(ctx, t, "", "-b", bs, "-L", "-t", "kcat-meta")
		if !strings.Contains(out, `topic "kcat-meta" with 3 partitions:`) {
			t.Errorf("kcat -L -t kcat-meta output:\n%s", out)
		}
	})

	const n = 200
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run("codec="+codec, func(t *testing.T) {
			topic := "kcat-" + codec
			createTopic(ctx, t, bs, topic, 1, nil)
			var in strings.Builder
			var want []string
			for i := range n {
				// Compressible values: librdkafka sends a batch uncompressed
				// when compression would not make it smaller.
				line := fmt.Sprintf("key-%03d:value-%03d-%s", i, i, strings.Repeat("abc", 30))
				in.WriteString(line + "\n")
				want = append(want, line)
			}
			args := []string{"-b", bs, "-P", "-t", topic, "-K:", "-X", "linger.ms=50"}
			if codec != "none" {
				args = append(args, "-z", codec)
			}
			kcat(ctx, t, in.String(), args...)

			// The stored batches carry the codec librdkafka used.
			recs := consumeRecords(ctx, t, bs, topic, n)
			codecs := map[string]int{}
			for i, r := range recs {
				codecs[codecName(r.Attrs.CompressionType())]++
				if got := string(r.Key) + ":" + string(r.Value); got != want[i] || r.Offset != int64(i) {
					t.Fatalf("record %d: offset %d %q, want %q", i, r.Offset, got, want[i])
				}
			}
			wantCodec := codec
			if codec == "lz4" && !lz4OK {
				// librdkafka 2.0's LZ4 feature depends on FindCoordinator v0
				// being advertised; without it librdkafka silently sends
				// uncompressed batches.
				t.Logf("known: broker does not advertise FindCoordinator v0, so librdkafka disables LZ4")
				wantCodec = "none"
			}
			if len(codecs) != 1 || codecs[wantCodec] != n {
				t.Errorf("stored batch codecs %v, want all %d %s", codecs, n, wantCodec)
			}

			// Consume everything from the beginning (read_committed by default).
			out := kcat(ctx, t, "", "-b", bs, "-C", "-t", topic, "-o", "beginning", "-e", "-K:")
			if got := lines([]byte(out)); !slices.Equal(got, want) {
				t.Fatalf("kcat -C -o beginning: %d lines, first %q; want %d, first %q", len(got), head(got), n, head(want))
			}
			// Consume from an offset, printing offsets and keys.
			out = kcat(ctx, t, "", "-b", bs, "-C", "-t", topic, "-p", "0", "-o", "150", "-e", "-f", "%o|%k|%s\n")
			got := lines([]byte(out))
			if len(got) != n-150 {
				t.Fatalf("kcat -o 150: %d lines, want %d", len(got), n-150)
			}
			for i, l := range got {
				o := 150 + i
				kv := strings.SplitN(want[o], ":", 2)
				if w := fmt.Sprintf("%d|%s|%s", o, kv[0], kv[1]); l != w {
					t.Fatalf("kcat -o 150 line %d = %q, want %q", i, l, w)
				}
			}
			// A negative offset counts from the end; isolation level both ways.
			out = kcat(ctx, t, "", "-b", bs, "-C", "-t", topic, "-p", "0", "-o", "-5", "-e", "-K:",
				"-X", "isolation.level=read_uncommitted")
			if got := lines([]byte(out)); !slices.Equal(got, want[n-5:]) {
				t.Fatalf("kcat -o -5: %q, want %q", got, want[n-5:])
			}
		})
	}

	// kcat reads what franz-go wrote across partitions, with keys.
	t.Run("franz-go-to-kcat", func(t *testing.T) {
		topic := "kcat-from-kgo"
		createTopic(ctx, t, bs, topic, 3, nil)
		cl := newClient(t, bs, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
		var recs []*kgo.Record
		var want []string
		for i := range 300 {
			k, v := fmt.Sprintf("k%03d", i), fmt.Sprintf("v%03d", i)
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(k), Value: []byte(v)})
			want = append(want, k+":"+v)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		out := kcat(ctx, t, "", "-b", bs, "-C", "-t", topic, "-o", "beginning", "-e", "-K:")
		got := lines([]byte(out))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("kcat read %d records, first %q; want %d", len(got), head(got), len(want))
		}
	})
}

// advertises reports whether the broker at bootstrap supports version v of
// API key.
func advertises(ctx context.Context, t *testing.T, bootstrap string, key, v int16) bool {
	t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, newClient(t, bootstrap))
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			return k.MinVersion <= v && v <= k.MaxVersion
		}
	}
	return false
}

func codecName(c uint8) string {
	switch c {
	case 0:
		return "none"
	case 1:
		return "gzip"
	case 2:
		return "snappy"
	case 3:
		return "lz4"
	case 4:
		return "zstd"
	}
	return fmt.Sprint(c)
}
