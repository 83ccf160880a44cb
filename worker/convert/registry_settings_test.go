package convert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk/schema"
)

var registryClasses = []string{AvroClass, JSONSchemaClass, ProtobufClass}

// TestUseLatestVersionAsksOnce: with use.latest.version each converter
// asks the registry for the subject's latest version once for 1,000
// records (latest.cache.ttl.sec -1, the default, or an hour), and once
// per record with latest.cache.ttl.sec=0, as Confluent's serdes do; a new
// version of the subject is seen only when the cached one expired.
func TestUseLatestVersionAsksOnce(t *testing.T) {
	const records = 1000
	rec := schema.StructOf("shop.Order").Field("id", schema.Int64).Field("note", schema.OptionalString).Build()
	for _, class := range registryClasses {
		for _, tc := range []struct {
			ttl  string
			want int64
		}{{"", 1}, {"3600", 1}, {"0", records}} {
			t.Run(fmt.Sprintf("%s/ttl=%q", class[strings.LastIndexByte(class, '.')+1:], tc.ttl), func(t *testing.T) {
				reg := newBundledRegistry(t)
				writer, err := New(class, false, map[string]string{"schema.registry.url": reg.url})
				if err != nil {
					t.Fatal(err)
				}
				first, err := writer.FromConnect("orders", rec, schema.NewStruct(rec).Set("id", int64(0)))
				if err != nil {
					t.Fatal(err)
				}
				cfg := map[string]string{"schema.registry.url": reg.url, "auto.register.schemas": "false", "use.latest.version": "true"}
				if tc.ttl != "" {
					cfg["latest.cache.ttl.sec"] = tc.ttl
				}
				latest, err := New(class, false, cfg)
				if err != nil {
					t.Fatal(err)
				}
				before := reg.requests.Load()
				for i := range records {
					b, err := latest.FromConnect("orders", rec, schema.NewStruct(rec).Set("id", int64(i)))
					if err != nil {
						t.Fatalf("record %d: %v", i, err)
					}
					if i == 0 && string(b[:5]) != string(first[:5]) {
						t.Fatalf("record 0 written with id %x, want the latest's %x", b[1:5], first[1:5])
					}
				}
				if n := reg.requests.Load() - before; n != tc.want {
					t.Errorf("%d records made %d registry requests, want %d", records, n, tc.want)
				}

				// A new version of the subject: seen at once with
				// latest.cache.ttl.sec=0, not before the TTL otherwise.
				rec2 := schema.StructOf("shop.Order").Field("id", schema.Int64).Build()
				second, err := writer.FromConnect("orders", rec2, schema.NewStruct(rec2).Set("id", int64(0)))
				if err != nil {
					t.Fatal(err)
				}
				b, err := latest.FromConnect("orders", rec, schema.NewStruct(rec).Set("id", int64(1)))
				switch {
				case tc.ttl != "0" && (err != nil || string(b[:5]) != string(first[:5])):
					t.Errorf("within the TTL: %x %v, want the cached id %x", b[:min(len(b), 5)], err, first[1:5])
				case tc.ttl == "0" && class == AvroClass && (err == nil || !strings.Contains(err.Error(), "is not the record's schema")):
					t.Errorf("TTL 0, a new latest version that is not the record's schema: %v", err)
				case tc.ttl == "0" && class != AvroClass && (err != nil || string(b[:5]) != string(second[:5])):
					t.Errorf("TTL 0: %x %v, want the new latest id %x", b[:min(len(b), 5)], err, second[1:5])
				}
			})
		}
	}
}

// TestLatestCacheSettingsRefused: bad latest.cache.size and
// latest.cache.ttl.sec values are refused at configure, naming the key.
func TestLatestCacheSettingsRefused(t *testing.T) {
	for _, class := range registryClasses {
		for _, tc := range []struct{ key, value, says string }{
			{"latest.cache.size", "0", "must be at least 1"},
			{"latest.cache.size", "-5", "must be at least 1"},
			{"latest.cache.size", "many", "not a number"},
			{"latest.cache.ttl.sec", "-2", "must be at least -1"},
			{"latest.cache.ttl.sec", "1.5", "not a number"},
			{"latest.cache.ttl.sec", "", "not a number"},
		} {
			_, err := New(class, false, map[string]string{"schema.registry.url": "http://127.0.0.1:1", tc.key: tc.value})
			if err == nil || !strings.Contains(err.Error(), "configuration "+tc.key) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s with %s=%q: %v, want an error naming %s that says %q", class, tc.key, tc.value, err, tc.key, tc.says)
			}
		}
		for _, good := range []map[string]string{
			{"latest.cache.size": "1", "latest.cache.ttl.sec": "-1"},
			{"latest.cache.size": " 5000 ", "latest.cache.ttl.sec": "0"},
		} {
			good["schema.registry.url"] = "http://127.0.0.1:1"
			if _, err := New(class, false, good); err != nil {
				t.Errorf("%s with %v: %v", class, good, err)
			}
		}
	}
}
