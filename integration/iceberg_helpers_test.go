package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// icebergLake is an Iceberg warehouse on versitygw with a SQL catalog on
// SQLite: what the Iceberg sink writes and what the independent readers
// (pyiceberg, Iceberg's Java library) read.
type icebergLake struct {
	s3      *harness.S3
	bucket  string
	db      string // the SQLite catalog file
	catalog string // the catalog's name
}

func newIcebergLake(t *testing.T) *icebergLake {
	t.Helper()
	return &icebergLake{s3: harness.VersityGW(t, "lake"), bucket: "lake", db: filepath.Join(t.TempDir(), "catalog.db"), catalog: "iceberg"}
}

// sinkConfig is the Iceberg sink's catalog and warehouse keys.
func (l *icebergLake) sinkConfig() map[string]string {
	return map[string]string{
		"iceberg.catalog":                      l.catalog,
		"iceberg.catalog.type":                 "sql",
		"iceberg.catalog.uri":                  "sqlite:///" + l.db,
		"iceberg.catalog.warehouse":            "s3://" + l.bucket + "/warehouse",
		"iceberg.catalog.s3.endpoint":          l.s3.URL,
		"iceberg.catalog.s3.region":            l.s3.Region,
		"iceberg.catalog.s3.access-key-id":     l.s3.AccessKey,
		"iceberg.catalog.s3.secret-access-key": l.s3.SecretKey,
	}
}

// icebergTable is a table as a reader gives it.
type icebergTable struct {
	Schema []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Required bool   `json:"required"`
	} `json:"schema"`
	Identifier          []string          `json:"identifier"`
	Rows                []map[string]any  `json:"rows"`
	Summary             map[string]string `json:"summary"`
	DataFiles           int               `json:"data_files"`
	EqualityDeleteFiles int               `json:"equality_delete_files"`
	Snapshots           int               `json:"snapshots"`
	ReadBy              string            `json:"read_by"`
	ReferencedFiles     []string          `json:"referenced_files"`
}

func (it *icebergTable) types() map[string]string {
	m := map[string]string{}
	for _, f := range it.Schema {
		req := "optional"
		if f.Required {
			req = "required"
		}
		m[f.Name] = f.Type + " " + req
	}
	return m
}

// readPy reads a table with pyiceberg (testdata/iceberg_read.py).
func (l *icebergLake) readPy(t *testing.T, table string) *icebergTable {
	t.Helper()
	py := harness.Python(t, "pyiceberg", "sqlalchemy", "pyarrow")
	cfg, _ := json.Marshal(map[string]string{
		"catalog-name": l.catalog, "uri": "sqlite:///" + l.db, "warehouse": "s3://" + l.bucket + "/warehouse",
		"s3.endpoint": l.s3.URL, "s3.region": l.s3.Region, "s3.access-key-id": l.s3.AccessKey, "s3.secret-access-key": l.s3.SecretKey,
	})
	out, err := exec.Command(py, "testdata/iceberg_read.py", string(cfg), table).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("iceberg_read.py %s: %v\n%s", table, err, stderr)
	}
	var it icebergTable
	if err := json.Unmarshal(out, &it); err != nil {
		t.Fatalf("iceberg_read.py output: %v\n%s", err, out)
	}
	return &it
}

// duckConfig is testdata/duckdb_iceberg.py's configuration for the lake.
func (l *icebergLake) duckConfig() string {
	b, _ := json.Marshal(map[string]any{"catalog_db": l.db, "catalog": l.catalog,
		"s3": map[string]string{"endpoint": l.s3.URL, "key": l.s3.AccessKey, "secret": l.s3.SecretKey, "region": l.s3.Region}})
	return string(b)
}

// readDuck reads a table with DuckDB's iceberg extension
// (testdata/duckdb_iceberg.py).
func (l *icebergLake) readDuck(t *testing.T, table string) *icebergTable {
	t.Helper()
	out, err := exec.Command(harness.DuckDBIcebergPython(t), "testdata/duckdb_iceberg.py", l.duckConfig(), table).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("duckdb_iceberg.py %s: %v\n%s", table, err, stderr)
	}
	var it icebergTable
	if err := json.Unmarshal(out, &it); err != nil {
		t.Fatalf("duckdb_iceberg.py output: %v\n%s", err, out)
	}
	return &it
}

// readJava reads a table with Apache Iceberg's Java library: JdbcCatalog,
// S3FileIO and iceberg-data's generic reader (testdata/IcebergRead.java).
func (l *icebergLake) readJava(t *testing.T, table string) *icebergTable {
	t.Helper()
	out := harness.RunIcebergJava(t, "testdata/IcebergRead.java", "table="+table, "catalog-name="+l.catalog,
		"uri=jdbc:sqlite:"+l.db, "warehouse=s3://"+l.bucket+"/warehouse",
		"io-impl=org.apache.iceberg.aws.s3.S3FileIO", "s3.endpoint="+l.s3.URL, "s3.path-style-access=true",
		"s3.access-key-id="+l.s3.AccessKey, "s3.secret-access-key="+l.s3.SecretKey, "client.region="+l.s3.Region)
	var it icebergTable
	if err := json.Unmarshal(out, &it); err != nil {
		t.Fatalf("IcebergRead output: %v\n%s", err, out)
	}
	it.ReadBy = "Iceberg Java generics"
	return &it
}

// tableOffsets parses a snapshot summary's offsets of topic for group.
func tableOffsets(t *testing.T, summary map[string]string, topic, group string) map[int32]int64 {
	t.Helper()
	raw, ok := summary["kafka.connect.offsets."+topic+"."+group]
	if !ok {
		return nil
	}
	var m map[string]int64
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("summary offsets %q: %v", raw, err)
	}
	out := map[int32]int64{}
	for p, o := range m {
		n, _ := strconv.Atoi(p)
		out[int32(n)] = o
	}
	return out
}

// waitTableCaughtUp waits until the table's snapshot summary holds, for
// every partition of topic, the topic's end offset: every change is in.
func (l *icebergLake) waitTableCaughtUp(t *testing.T, bootstrap, topic, table, group string, within time.Duration, status func() string) *icebergTable {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	deadline := time.Now().Add(within)
	for {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err != nil {
			t.Fatal(err)
		}
		exists, _ := sqliteHasTable(l.db, table)
		if exists {
			it := l.readPy(t, table)
			offs := tableOffsets(t, it.Summary, topic, group)
			caught := len(offs) > 0
			ends.Each(func(o kadm.ListedOffset) {
				// The records after the table's offset may be tombstones
				// (Debezium's after each delete), which change no row: no
				// commit records them until the next change does.
				if o.Offset > 0 && offs[o.Partition] < o.Offset &&
					!onlyTombstones(t, bootstrap, topic, o.Partition, offs[o.Partition], o.Offset) {
					caught = false
				}
			})
			if caught {
				return it
			}
			if time.Now().After(deadline) {
				t.Fatalf("table %s holds offsets %v, the topic ends at %v after %v\n%s", table, offs, ends, within, status())
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no table %s after %v\n%s", table, within, status())
		}
		time.Sleep(time.Second)
	}
}

// waitTableEquals waits until the table holds the topic's end (as
// waitTableCaughtUp) and its rows, read by pyiceberg, equal want (rows keyed
// by key). The table holding the topic's end says nothing of changes the
// source has not produced yet (a slower server, a loaded machine), so it
// reads again for a while; a lost or doubled change never matches and fails
// the test with the differences.
func (l *icebergLake) waitTableEquals(t *testing.T, bootstrap, topic, table, group string, want []map[string]any, key string, within time.Duration, status func() string) *icebergTable {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		it := l.waitTableCaughtUp(t, bootstrap, topic, table, group, within, status)
		diffs := sameRows(want, it.Rows, key)
		if len(diffs) == 0 {
			return it
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %s reads %d rows of %s, the source has %d; differences:\n%v\n%s", within, it.ReadBy, len(it.Rows), table, len(want), diffs, status())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// sqliteHasTable tells whether the SQL catalog lists table (namespace.name),
// reading the catalog file with Python's sqlite3 to avoid a Go driver here.
func sqliteHasTable(db, table string) (bool, error) {
	i := strings.LastIndex(table, ".")
	out, err := exec.Command("python3", "-c", `import sqlite3,sys
try:
    c = sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True, timeout=30)
    n = c.execute("select count(*) from iceberg_tables where table_namespace=? and table_name=? and metadata_location is not null", (sys.argv[2], sys.argv[3])).fetchone()[0]
except sqlite3.OperationalError:
    n = 0
print(n)`, db, table[:i], table[i+1:]).Output()
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "1", nil
}

// pgRows reads a query's rows rendered as the Iceberg readers render
// them: numbers, booleans and strings as they are, numeric as exact text,
// dates as ISO dates, timestamps with microseconds (timestamptz in UTC with
// a Z), NULL as nil.
func pgRows(t *testing.T, conn *pgx.Conn, query string) []map[string]any {
	t.Helper()
	rows, err := conn.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var out []map[string]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, v := range vals {
			name := fields[i].Name
			switch x := v.(type) {
			case nil:
				m[name] = nil
			case int16:
				m[name] = float64(x)
			case int32:
				m[name] = float64(x)
			case int64:
				m[name] = float64(x)
			case float64:
				m[name] = x
			case bool, string:
				m[name] = x
			case pgtype.Numeric:
				m[name] = numericText(x)
			case time.Time:
				switch fields[i].DataTypeOID {
				case pgtype.DateOID:
					m[name] = x.Format("2006-01-02")
				case pgtype.TimestamptzOID:
					m[name] = x.UTC().Format("2006-01-02T15:04:05.000000") + "Z"
				default:
					m[name] = x.Format("2006-01-02T15:04:05.000000")
				}
			default:
				t.Fatalf("column %s: unhandled %T", name, v)
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func numericText(n pgtype.Numeric) string {
	x := new(big.Int).Set(n.Int)
	s := new(big.Int).Abs(x).String()
	scale := int(-n.Exp)
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	} else {
		s += strings.Repeat("0", -scale)
	}
	if x.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// sameRows compares two row sets by id, every column by its rendering;
// it returns the differences (at most 10).
func sameRows(want, got []map[string]any, key string) []string {
	index := func(rows []map[string]any) (map[string]map[string]any, []string) {
		m := map[string]map[string]any{}
		var dups []string
		for _, r := range rows {
			k := fmt.Sprint(r[key])
			if _, ok := m[k]; ok {
				dups = append(dups, "duplicate "+key+" "+k)
			}
			m[k] = r
		}
		return m, dups
	}
	w, _ := index(want)
	g, diffs := index(got)
	for _, k := range slices.Sorted(maps.Keys(w)) {
		gr, ok := g[k]
		if !ok {
			diffs = append(diffs, "missing "+key+" "+k)
			continue
		}
		if !maps.EqualFunc(w[k], gr, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			diffs = append(diffs, fmt.Sprintf("%s %s: %v, want %v", key, k, gr, w[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if _, ok := w[k]; !ok {
			diffs = append(diffs, "extra "+key+" "+k)
		}
	}
	if len(diffs) > 10 {
		diffs = append(diffs[:10], fmt.Sprintf("… %d more", len(diffs)-10))
	}
	return diffs
}

// runPython runs a Python program given as text with args.
func runPython(py, program string, args ...string) ([]byte, error) {
	out, err := exec.Command(py, append([]string{"-c", program}, args...)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return out, fmt.Errorf("%w\n%s", err, ee.Stderr)
	}
	return out, err
}

// onlyTombstones tells whether the records of a partition from offset
// from to offset to (exclusive) all have null values.
func onlyTombstones(t *testing.T, bootstrap, topic string, partition int32, from, to int64) bool {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(from)}}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for next := from; next < to; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return false
		}
		for _, r := range fs.Records() {
			if r.Offset >= to {
				return true
			}
			if r.Value != nil {
				return false
			}
			next = r.Offset + 1
		}
	}
	return true
}
