package s3

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSinkAcceptance runs the SDK's acceptance kit against the sink with a
// file:// store: every record given is in a file once Flush says so, and
// replays (rewinds, restarts) hold each record once.
func TestSinkAcceptance(t *testing.T) {
	sdktest.RunSink(t, sdktest.SinkDriver{
		Connector: Connector(),
		Config: func(t *testing.T) map[string]string {
			return map[string]string{"store.url": "file://" + t.TempDir(), "topics": "a,b", "flush.size": "1",
				"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "behavior.on.null.values": "ignore"}
		},
		ReadBack: func(t *testing.T, cfg map[string]string) []string {
			dir, _ := fileStoreDir(cfg["store.url"])
			st := &fileStore{root: dir}
			keys, err := st.list(context.Background(), "topics/")
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(keys)
			var out []string
			for _, k := range keys {
				b, err := st.get(context.Background(), k)
				if err != nil {
					t.Fatal(err)
				}
				for l := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
					out = append(out, l)
				}
			}
			return out
		},
		RenderRecord: func(r *sdk.SinkRecord) (string, bool) {
			if r.Value == nil {
				return "", false // behavior.on.null.values=ignore
			}
			b, err := renderJSON(nil, r.ValueSchema, r.Value, "BASE64")
			if err != nil {
				panic(err)
			}
			return string(b), true
		},
		Idempotent: true,
	})
}

func TestSpec(t *testing.T) {
	spec := Connector().Spec()
	if spec.Class != "io.confluent.connect.s3.S3SinkConnector" || !spec.Matches("S3SinkConnector") || !spec.Matches("S3Sink") {
		t.Fatalf("class %s aliases %v", spec.Class, spec.Aliases)
	}
	defaults := map[string]string{"s3.part.size": "26214400", "topics.dir": "topics", "directory.delim": "/", "file.delim": "+",
		"filename.offset.zero.pad.width": "10", "rotate.interval.ms": "-1", "rotate.schedule.interval.ms": "-1",
		"behavior.on.null.values": "fail", "schema.compatibility": "NONE", "parquet.codec": "snappy", "avro.codec": "null",
		"timestamp.extractor": "Wallclock", "timestamp.field": "timestamp", "s3.region": "us-west-2",
		"s3.path.style.access.enabled": "true", "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
		"s3.compression.type": "none", "s3.retry.backoff.ms": "200", "s3.part.retries": "3"}
	for _, k := range spec.Config {
		if want, ok := defaults[k.Name]; ok {
			if k.DefaultValue == nil || *k.DefaultValue != want {
				t.Errorf("%s default %v, want %s", k.Name, k.DefaultValue, want)
			}
			delete(defaults, k.Name)
		}
		if (k.Name == "flush.size" || k.Name == "format.class") && !k.Required {
			t.Errorf("%s must be required, as in Confluent's", k.Name)
		}
	}
	if len(defaults) != 0 {
		t.Errorf("keys missing: %v", defaults)
	}
}

func TestUnknownKeysWarned(t *testing.T) {
	cfg := map[string]string{"store.url": "file:///tmp/x", "flush.size": "3", "format.class": "JsonFormat", "topics": "a",
		"s3.sse.kms.key.id": "k", "s3.acl.canned": "private", "value.converter.schemas.enable": "false", "transforms.x.type": "y"}
	task, err := Connector().(sdk.SinkPlugin).NewSinkTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := task.(*sinkTask).unknown; !slices.Equal(got, []string{"s3.acl.canned", "s3.sse.kms.key.id"}) {
		t.Fatalf("unknown keys %v", got)
	}
}

func TestJoda(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	cases := map[string]string{
		"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH": "year=2026/month=01/day=02/hour=03",
		"yyyy-MM-dd'T'HH:mm:ss.SSS":                 "2026-01-02T03:04:05.600",
		"YY/MMM/MMMM/EEE/EEEE/D":                    "26/Jan/January/Fri/Friday/2",
		"'it''s' h a Z ZZ":                          "it's 3 AM +0000 +00:00",
	}
	for p, want := range cases {
		jp, err := parseJoda(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := jp.format(at); got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
	if _, err := parseJoda("'open"); err == nil {
		t.Error("unterminated quote accepted")
	}
	if _, err := parseJoda("YYYY/q"); err == nil {
		t.Error("unknown letter accepted")
	}
}

func FuzzJoda(f *testing.F) {
	f.Add("'year'=YYYY/'month'=MM")
	f.Add("''''a'b''c'")
	f.Fuzz(func(t *testing.T, p string) {
		jp, err := parseJoda(p)
		if err == nil {
			_ = jp.format(time.Unix(1234567890, 0).UTC())
		}
	})
}

func TestRenderJSON(t *testing.T) {
	s := schema.StructOf("x").Field("a", schema.Float64).Field("b", schema.Decimal(2)).Field("c", schema.OptionalString).
		Field("d", schema.Bytes).Field("e", schema.MapOf(schema.Int32, schema.String)).Build()
	v := schema.NewStruct(s).Set("a", 1.0).Set("b", big.NewInt(-5)).Set("d", []byte("hi")).Set("e", map[any]any{int32(1): "x"})
	got, err := renderJSON(nil, s, v, "NUMERIC")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":1.0,"b":-0.05,"c":null,"d":"aGk=","e":[[1,"x"]]}`; string(got) != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
	got, _ = renderJSON(nil, schema.Float64, 1.5e10, "BASE64")
	if string(got) != "1.5E10" {
		t.Fatalf("%s", got)
	}
}

// TestFileStoreConditional: the local store's conditional create keeps an
// existing file, and its objects appear whole (no temporary file visible).
func TestFileStoreConditional(t *testing.T) {
	dir := t.TempDir()
	st := &fileStore{root: dir}
	ctx := context.Background()
	if err := st.put(ctx, "a/b.json", strings.NewReader("one"), 3, true); err != nil {
		t.Fatal(err)
	}
	if err := st.put(ctx, "a/b.json", strings.NewReader("two"), 3, true); err != errExists {
		t.Fatalf("second conditional put: %v", err)
	}
	up, err := st.multipart(ctx, "a/c.json")
	if err != nil {
		t.Fatal(err)
	}
	up.part(ctx, strings.NewReader("x"), 1)
	up.part(ctx, strings.NewReader("y"), 1)
	if keys, _ := st.list(ctx, ""); !slices.Equal(keys, []string{"a/b.json"}) {
		t.Fatalf("visible before complete: %v", keys)
	}
	if err := up.complete(ctx, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "a/b.json"))
	c, _ := os.ReadFile(filepath.Join(dir, "a/c.json"))
	if string(b) != "one" || string(c) != "xy" {
		t.Fatalf("b=%q c=%q", b, c)
	}
}
