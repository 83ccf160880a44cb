package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

func s3Config(s *harness.S3, bucket string, kv ...string) map[string]string {
	cfg := s.SinkConfig(bucket)
	cfg["topics"] = "orders"
	cfg["flush.size"] = "3"
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

func jsonNorm(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	json.Unmarshal(b, &x)
	b, _ = json.Marshal(x)
	return string(b)
}

// expectedRow is what an independent reader returns for richValue(i),
// after testdata/s3read.py's plain(): avro differs in its map rendering.
func expectedRow(i int64, avro bool) map[string]any {
	var note any
	if i%4 != 0 {
		note = "n"
	}
	var zip any
	if i%2 == 0 {
		zip = 69000 + i
	}
	amount := new(big.Int).SetInt64(12345 + i).String()
	var attrs any = []any{[]any{"k", i}}
	if avro {
		attrs = map[string]any{"k": i}
	}
	return map[string]any{
		"id": i, "name": "order-" + strings.Repeat("x", int(i%5)), "score": float64(i) + 0.5, "ratio": float64(float32(i) / 4),
		"small": i % 100, "medium": i * 3, "count": i * 7, "active": i%3 == 0, "note": note,
		"raw":    map[string]any{"bytes": base64.StdEncoding.EncodeToString([]byte{byte(i), 0, 255})},
		"amount": map[string]any{"decimal": amount[:len(amount)-2] + "." + amount[len(amount)-2:]},
		"day":    map[string]any{"date": time.Date(2026, 3, 4+int(i%20), 0, 0, 0, 0, time.UTC).Format("2006-01-02")},
		"at":     map[string]any{"time": "13:14:15.016000"},
		"ts":     map[string]any{"timestamp": baseTime.Add(time.Duration(i)*time.Second).Format("2006-01-02T15:04:05.000000") + "+00:00"},
		"tags":   []any{"a", "b" + strings.Repeat("c", int(i%3))},
		"attrs":  attrs,
		"addr":   map[string]any{"city": "Lyon", "zip": zip},
	}
}

// TestS3SinkRoundTrip writes the same records in each format to versitygw
// and reads them back with readers from other projects (pyarrow for
// Parquet, fastavro for Avro, encoding/json and gzip for JSON), field by
// field and type by type; keys follow Confluent's layout.
func TestS3SinkRoundTrip(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	cases := []struct {
		name, ext string
		kv        []string
	}{
		{"parquet-snappy", ".snappy.parquet", []string{"format.class", "io.confluent.connect.s3.format.parquet.ParquetFormat"}},
		{"parquet-zstd", ".zstd.parquet", []string{"format.class", "ParquetFormat", "parquet.codec", "zstd"}},
		{"parquet-gzip", ".gz.parquet", []string{"format.class", "ParquetFormat", "parquet.codec", "gzip"}},
		{"avro", ".avro", []string{"format.class", "io.confluent.connect.s3.format.avro.AvroFormat"}},
		{"avro-snappy", ".avro", []string{"format.class", "AvroFormat", "avro.codec", "snappy"}},
		{"json", ".json", []string{"format.class", "io.confluent.connect.s3.format.json.JsonFormat"}},
		{"json-gzip", ".json.gz", []string{"format.class", "JsonFormat", "s3.compression.type", "gzip"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := "rt-" + c.name
			r := openS3Sink(t, s3Config(s, "lake", append(c.kv, "topics.dir", dir)...), tp)
			for i := int64(0); i < 7; i++ {
				r.put(richRecord("orders", 0, i))
			}
			if got := r.flush(); got[tp] != 6 {
				t.Fatalf("flush reported %v, want orders-0 at 6 (two files of flush.size=3 uploaded, one record open)", got)
			}
			keys := listKeys(t, s, "lake", dir+"/")
			want := []string{
				dir + "/orders/partition=0/orders+0+0000000000" + c.ext,
				dir + "/orders/partition=0/orders+0+0000000003" + c.ext,
			}
			if !reflect.DeepEqual(keys, want) {
				t.Fatalf("keys\n got %q\nwant %q", keys, want)
			}
			for fi, key := range keys {
				data := getObject(t, s, "lake", key)
				var rows []any
				switch {
				case strings.HasSuffix(c.ext, ".parquet"):
					m := readWith(t, "parquet", data)
					wantTypes := map[string]any{"id": "int64", "name": "string", "score": "double", "ratio": "float",
						"small": "int8", "medium": "int16", "count": "int32", "active": "bool", "note": "string",
						"raw": "binary", "amount": "decimal128(38, 2)", "day": "date32[day]", "at": "time32[ms]",
						"ts": "timestamp[ms, tz=UTC]", "tags": "list<element: string not null>", "attrs": "map<string, int32 ('attrs')>",
						"addr": "struct<city: string not null, zip: int32>"}
					if jsonNorm(t, m["types"]) != jsonNorm(t, wantTypes) {
						t.Fatalf("parquet column types\n got %v\nwant %v", m["types"], wantTypes)
					}
					if nl := m["nullable"].(map[string]any); nl["note"] != true || nl["id"] != false {
						t.Fatalf("nullability: %v", nl)
					}
					rows = m["rows"].([]any)
				case c.ext == ".avro":
					m := readWith(t, "avro", data)
					rows = m["rows"].([]any)
					sch := jsonNorm(t, m["schema"])
					for _, want := range []string{`"connect.name":"com.example.Order"`, `"logicalType":"decimal"`, `"connect.type":"int8"`, `"logicalType":"timestamp-millis"`} {
						if !strings.Contains(sch, want) {
							t.Fatalf("avro schema lacks %s: %s", want, sch)
						}
					}
				default:
					if strings.HasSuffix(c.ext, ".gz") {
						zr, err := gzip.NewReader(bytes.NewReader(data))
						if err != nil {
							t.Fatal(err)
						}
						data, _ = io.ReadAll(zr)
					}
					lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
					if len(lines) != 3 {
						t.Fatalf("%s has %d lines", key, len(lines))
					}
					for li, l := range lines {
						var m map[string]any
						if err := json.Unmarshal([]byte(l), &m); err != nil {
							t.Fatalf("line %q: %v", l, err)
						}
						i := int64(fi*3 + li)
						dec := schema.AppendDecimal(nil, big.NewInt(12345+i))
						want := map[string]any{"id": float64(i), "raw": base64.StdEncoding.EncodeToString([]byte{byte(i), 0, 255}),
							"amount": base64.StdEncoding.EncodeToString(dec), "ts": float64(baseTime.Add(time.Duration(i) * time.Second).UnixMilli()),
							"day": float64(time.Date(2026, 3, 4+int(i%20), 0, 0, 0, 0, time.UTC).Unix() / 86400), "at": float64(13*3600000 + 14*60000 + 15016)}
						for k, v := range want {
							if m[k] != v {
								t.Fatalf("line %d field %s = %v, want %v (%s)", i, k, m[k], v, l)
							}
						}
					}
					continue
				}
				if len(rows) != 3 {
					t.Fatalf("%s has %d rows", key, len(rows))
				}
				for ri, row := range rows {
					want := expectedRow(int64(fi*3+ri), c.ext == ".avro")
					if g, w := jsonNorm(t, row), jsonNorm(t, want); g != w {
						t.Fatalf("%s row %d\n got %s\nwant %s", key, ri, g, w)
					}
				}
			}
		})
	}
}

// TestS3SinkValidate: a missing bucket and bad credentials are reported
// on their keys at validation, before anything runs.
func TestS3SinkValidate(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	c := s3Connector()
	check := func(cfg map[string]string, key, want string) {
		t.Helper()
		infos, err := c.Validate(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		errs := infos.Errors()[key]
		if len(errs) == 0 || !strings.Contains(strings.Join(errs, " "), want) {
			t.Fatalf("errors on %s: %v (all: %v), want one containing %q", key, errs, infos.Errors(), want)
		}
	}
	cfg := s3Config(s, "nope", "format.class", "JsonFormat")
	check(cfg, "s3.bucket.name", "does not exist")
	cfg = s3Config(s, "lake", "format.class", "JsonFormat", "aws.secret.access.key", "wrong")
	check(cfg, "aws.access.key.id", "denied")
	cfg = s3Config(s, "lake", "format.class", "CsvFormat")
	check(cfg, "format.class", "Invalid value")
	cfg = s3Config(s, "lake", "format.class", "JsonFormat", "partitioner.class", "TimeBasedPartitioner")
	check(cfg, "partition.duration.ms", "positive")
	ok := s3Config(s, "lake", "format.class", "JsonFormat")
	infos, err := c.Validate(context.Background(), ok)
	if err != nil || infos.ErrorCount != 0 {
		t.Fatalf("valid config: %v %v", err, infos.Errors())
	}
}

var _ = fmt.Sprint
