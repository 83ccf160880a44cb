package iceberg

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestValidate: a configuration with problems is refused before anything
// is written, each problem under its key, with what to set.
func TestValidate(t *testing.T) {
	t.Parallel()
	infos, err := Connector().Validate(context.Background(), map[string]string{
		"connector.class":                     Class,
		"iceberg.tables.dynamic-enabled":      "true",
		"iceberg.tables.default-partition-by": "bucket(id)",
		"iceberg.table.db.t.route-regex":      "(",
		"iceberg.table.db.t.bogus":            "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	errs := infos.Errors()
	for key, want := range map[string]string{
		"iceberg.tables.route-field":          "route field",
		"iceberg.tables.default-partition-by": "bucket takes a column and a number",
		"iceberg.table.db.t.route-regex":      "invalid regular expression",
		"iceberg.table.db.t.bogus":            "unknown table setting",
		"iceberg.catalog.type":                "catalog type",
	} {
		if !slices.ContainsFunc(errs[key], func(e string) bool { return strings.Contains(e, want) }) {
			t.Errorf("%s: errors %q, want one with %q (all: %v)", key, errs[key], want, errs)
		}
	}
	if infos.ErrorCount < 5 {
		t.Errorf("error count %d", infos.ErrorCount)
	}
	// A key of the struct with a bad value is the SDK's check (the rules
	// across keys run once every key parses, as the SDK's Validator does).
	bad, _ := Connector().Validate(context.Background(), map[string]string{"connector.class": Class, "iceberg.tables": "db.t",
		"iceberg.catalog.type": "sql", "iceberg.control.commit.interval-ms": "0"})
	if len(bad.Errors()["iceberg.control.commit.interval-ms"]) == 0 {
		t.Errorf("commit interval 0: %v", bad.Errors())
	}
	ok, err := Connector().Validate(context.Background(), map[string]string{"connector.class": Class, "iceberg.tables": "db.t",
		"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "sqlite:///x.db", "iceberg.catalog.warehouse": "file:///x"})
	if err != nil || ok.ErrorCount != 0 {
		t.Errorf("a valid configuration: %v %v", ok.Errors(), err)
	}
}

func TestSplitList(t *testing.T) {
	t.Parallel()
	got := splitList(" id, bucket(id, 16) ,day(ts),, truncate(4,name)")
	if want := []string{"id", "bucket(id, 16)", "day(ts)", "truncate(4,name)"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
