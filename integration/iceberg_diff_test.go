package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// diffSchema is the Connect schema (JsonConverter's JSON) of the
// differential test's records: a field of each kind Apache's sink maps.
const diffSchema = `{"type":"struct","name":"diff.Row","optional":false,"fields":[
 {"field":"id","type":"int64","optional":false},
 {"field":"name","type":"string","optional":false},
 {"field":"small","type":"int16","optional":false},
 {"field":"amount","type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},
 {"field":"ts","type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},
 {"field":"day","type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1},
 {"field":"flag","type":"boolean","optional":true},
 {"field":"score","type":"double","optional":true},
 {"field":"note","type":"string","optional":true},
 {"field":"nested","type":"struct","optional":true,"fields":[{"field":"a","type":"int32","optional":true},{"field":"b","type":"string","optional":true}]},
 {"field":"tags","type":"array","optional":true,"items":{"type":"string","optional":true}}]}`

// diffRecord is record i of the differential test, as JsonConverter
// (schemas.enable=true) writes it.
func diffRecord(i int64) []byte {
	unscaled := big.NewInt(i*137 - 5000)
	b := unscaled.Bytes()
	if unscaled.Sign() < 0 { // two's complement, big-endian
		n := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*(len(b)+1))), unscaled)
		b = n.Bytes()[1:]
		if b[0]&0x80 == 0 {
			b = append([]byte{0xff}, b...)
		}
	} else if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	payload := map[string]any{
		"id": i, "name": fmt.Sprintf("name-%d", i), "small": i % 300, "amount": base64.StdEncoding.EncodeToString(b),
		"ts": 1767225600000 + i*1001, "flag": i%2 == 0, "score": float64(i) / 7,
		"nested": map[string]any{"a": i % 5, "b": fmt.Sprint("b", i)}, "tags": []any{"x", fmt.Sprint("t", i%3)},
	}
	if i%4 != 0 {
		payload["day"] = 20000 + i%100
		payload["note"] = fmt.Sprintf("note %d", i)
	}
	p, _ := json.Marshal(payload)
	return []byte(`{"schema":` + diffSchema + `,"payload":` + string(p) + `}`)
}

// TestIcebergDifferentialApache runs Apache Iceberg's own Kafka Connect
// sink (iceberg-kafka-connect 1.12 from Maven Central, append mode, on
// Kafka Connect 4.4) and Tributary's Iceberg sink (append mode, on a
// Tributary worker) on the same topic, each into its own table, and
// compares the tables as Iceberg's Java library reads them: the same
// columns and types, the same rows.
func TestIcebergDifferentialApache(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: runs Kafka Connect 4.4 with Apache's Iceberg sink beside a Tributary worker")
	}
	const n = 2000
	bootstrap, r, _, _ := startWorker(t, "icediff", map[string]string{"offset.flush.interval.ms": "500"})
	ctx := context.Background()
	adm := kadm.NewClient(newClient(t, bootstrap))
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "diff", "control-iceberg"); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, bootstrap)
	var recs []*kgo.Record
	for i := int64(0); i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: "diff", Value: diffRecord(i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Apache's sink, its plugin directory holding Iceberg's jars.
	plugins := harness.IcebergConnectPlugins(t)
	kc := harness.KafkaConnect(t, bootstrap, harness.WithWorkerProperty("plugin.path", plugins))
	apacheWH := t.TempDir()
	kr := rest{t, kc.URL()}
	kr.must("POST", "/connectors", map[string]any{"name": "apache", "config": map[string]string{
		"connector.class":                    "org.apache.iceberg.connect.IcebergSinkConnector",
		"topics":                             "diff",
		"key.converter":                      "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                    "org.apache.kafka.connect.json.JsonConverter",
		"iceberg.tables":                     "diff.apache",
		"iceberg.tables.auto-create-enabled": "true",
		"iceberg.control.commit.interval-ms": "2000",
		"iceberg.catalog.type":               "hadoop",
		"iceberg.catalog.warehouse":          "file://" + apacheWH,
		"iceberg.kafka.bootstrap.servers":    bootstrap,
	}}, 201)

	// Tributary's, in append mode.
	oursDir := t.TempDir()
	r.must("POST", "/connectors", map[string]any{"name": "ours", "config": map[string]string{
		"connector.class":                    "org.apache.iceberg.connect.IcebergSinkConnector",
		"topics":                             "diff",
		"key.converter":                      "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                    "org.apache.kafka.connect.json.JsonConverter",
		"iceberg.tables":                     "diff.ours",
		"iceberg.tables.auto-create-enabled": "true",
		"iceberg.control.commit.interval-ms": "1000",
		"iceberg.catalog.type":               "sql",
		"iceberg.catalog.uri":                "sqlite:///" + filepath.Join(oursDir, "catalog.db"),
		"iceberg.catalog.warehouse":          "file://" + filepath.Join(oursDir, "warehouse"),
	}}, 201)

	read := func(args ...string) *icebergTable {
		out := harness.RunIcebergJava(t, "testdata/IcebergRead.java", args...)
		var it icebergTable
		if err := json.Unmarshal(out, &it); err != nil {
			t.Fatalf("IcebergRead: %v\n%s", err, out)
		}
		return &it
	}
	var apache, ours *icebergTable
	for deadline := time.Now().Add(3 * time.Minute); ; {
		if _, err := os.Stat(filepath.Join(apacheWH, "diff", "apache", "metadata", "version-hint.text")); err == nil {
			apache = read("table=diff.apache", "catalog-type=hadoop", "warehouse=file://"+apacheWH)
		}
		if ok, _ := sqliteHasTable(filepath.Join(oursDir, "catalog.db"), "diff.ours"); ok {
			ours = read("table=diff.ours", "uri=jdbc:sqlite:"+filepath.Join(oursDir, "catalog.db"), "warehouse=file://"+filepath.Join(oursDir, "warehouse"))
		}
		if apache != nil && ours != nil && len(apache.Rows) >= n && len(ours.Rows) >= n {
			break
		}
		if time.Now().After(deadline) {
			count := func(it *icebergTable) int {
				if it == nil {
					return -1
				}
				return len(it.Rows)
			}
			t.Fatalf("after 3 minutes Apache's table has %d rows, Tributary's %d, of %d\n%s\n%s", count(apache), count(ours), n,
				kr.statusOf("apache")(), r.statusOf("ours")())
		}
		time.Sleep(3 * time.Second)
	}
	// Nested field ids are left out of the comparison: Java assigns a
	// new table's ids level by level, iceberg-go depth first (each field's
	// children before its next sibling); the ids are the table's own
	// business, and the data files carry them consistently.
	ids := regexp.MustCompile(`\b\d+: `)
	norm := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = ids.ReplaceAllString(v, "")
		}
		return out
	}
	if a, o := norm(apache.types()), norm(ours.types()); !maps.Equal(a, o) {
		t.Errorf("column types differ:\nApache's:    %v\nTributary's: %v", a, o)
	}
	if diffs := sameRows(apache.Rows, ours.Rows, "id"); len(diffs) > 0 {
		t.Errorf("Tributary's table differs from Apache's (%d and %d rows):\n%v", len(ours.Rows), len(apache.Rows), diffs)
	}
	t.Logf("%d records: Apache's sink and Tributary's make the same table (%d columns, %d rows)", n, len(ours.Schema), len(ours.Rows))
}
