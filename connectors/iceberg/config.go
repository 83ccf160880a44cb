package iceberg

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// Config is the Iceberg sink's configuration: Apache Iceberg's sink keys
// and defaults (kafka-connect IcebergSinkConfig), plus Tabular's upsert
// mode (iceberg.tables.upsert-mode-enabled, iceberg.tables.cdc-field) that
// Apache dropped. Keys with a variable part are read by parseExtra:
// iceberg.catalog.<property> (the catalog's own properties: type, uri,
// warehouse, s3.*), iceberg.table.<table>.<id-columns|route-regex|
// partition-by>, iceberg.tables.auto-create-props.<property> and
// iceberg.tables.write-props.<property>.
type Config struct {
	Tables         []string `key:"iceberg.tables" default:"" importance:"high" group:"Tables" doc:"Comma-separated list of destination tables (namespace.table)."`
	DynamicEnabled bool     `key:"iceberg.tables.dynamic-enabled" default:"false" importance:"medium" group:"Tables" doc:"Enable dynamic routing to tables based on a record value field (iceberg.tables.route-field)."`
	RouteField     string   `key:"iceberg.tables.route-field" default:"" importance:"medium" group:"Tables" doc:"Source record value field (dotted for nested fields) used for routing: the table name with dynamic routing, or the value matched by iceberg.table.<table>.route-regex."`
	IDColumns      []string `key:"iceberg.tables.default-id-columns" default:"" importance:"medium" group:"Tables" doc:"Default comma-separated list of columns that identify a row in tables (primary key); empty: the fields of the record key."`
	PartitionBy    []string `key:"iceberg.tables.default-partition-by" default:"" importance:"medium" group:"Tables" doc:"Default comma-separated list of partition fields to use when creating tables: a column, or year(c), month(c), day(c), hour(c), bucket(c, n), truncate(c, w)."`
	AutoCreate     bool     `key:"iceberg.tables.auto-create-enabled" default:"false" importance:"medium" group:"Tables" doc:"Set to true to automatically create destination tables, from the schema of the first record routed to them."`
	EvolveSchema   bool     `key:"iceberg.tables.evolve-schema-enabled" default:"false" importance:"medium" group:"Tables" doc:"Set to true to add any missing record fields to the table schema automatically."`
	ForceOptional  bool     `key:"iceberg.tables.schema-force-optional" default:"false" importance:"low" group:"Tables" doc:"Set to true to set columns as optional during table create and evolution (id columns stay required)."`
	UpsertMode     bool     `key:"iceberg.tables.upsert-mode-enabled" default:"false" importance:"high" group:"Tables" doc:"Set to true to treat all appends as upserts: each row replaces the row of its id columns, deletes remove it (Tabular's key; the table must be format version 2 or later)."`
	CDCField       string   `key:"iceberg.tables.cdc-field" default:"" importance:"high" group:"Tables" doc:"Source record field that identifies the type of operation (insert: I, c, r; update: U, u; delete: D, d; truncate: t), e.g. __op after ExtractNewRecordState. Debezium envelopes (op, before, after) need neither this nor an unwrapping transform."`

	CommitIntervalMs int64 `key:"iceberg.control.commit.interval-ms" default:"300000" validate:"min=1" importance:"medium" group:"Commit" doc:"Commit interval in msec: how often each task commits what it has written to its tables."`
	CommitTimeoutMs  int64 `key:"iceberg.control.commit.timeout-ms" default:"30000" validate:"min=1" importance:"low" group:"Commit" doc:"How long a commit may retry against concurrent commits before the task fails."`
	CommitMaxRecords int64 `key:"iceberg.control.commit.max-records" default:"1000000" validate:"min=1" importance:"low" group:"Commit" doc:"Tributary: a task commits a table before its interval once it holds this many changes for it, to bound its memory."`

	CatalogName string `key:"iceberg.catalog" default:"iceberg" importance:"medium" group:"Catalog" doc:"Name of the catalog."`
	// The catalog's secret properties, declared as passwords so that the
	// worker hides their values in its logs, responses and traces; the
	// catalog reads them with the other iceberg.catalog.* properties.
	S3SecretKey    sdk.Password `key:"iceberg.catalog.s3.secret-access-key" optional:"" importance:"medium" group:"Catalog" doc:"Secret access key of the warehouse's S3 store (else the AWS default chain)."`
	S3SessionToken sdk.Password `key:"iceberg.catalog.s3.session-token" optional:"" importance:"low" group:"Catalog" doc:"Session token of the warehouse's S3 store."`
	JDBCPassword   sdk.Password `key:"iceberg.catalog.jdbc.password" optional:"" importance:"medium" group:"Catalog" doc:"Password of a PostgreSQL SQL catalog's user (iceberg.catalog.jdbc.user), as Java JdbcCatalog's jdbc.password."`
	Credential     sdk.Password `key:"iceberg.catalog.credential" optional:"" importance:"medium" group:"Catalog" doc:"A REST catalog's OAuth2 client credential (client_id:client_secret)."`
	Token          sdk.Password `key:"iceberg.catalog.token" optional:"" importance:"medium" group:"Catalog" doc:"A REST catalog's bearer token."`

	GroupID string `key:"iceberg.connect.group-id" default:"" importance:"low" group:"Commit" doc:"Name of the Connect consumer group whose offsets are stored in snapshot summaries (kafka.connect.offsets.<topic>.<group>); empty: connect-<connector name>."`

	CompactEvery    int64 `key:"iceberg.tables.maintenance.compact-interval-ms" default:"0" validate:"min=0" importance:"low" group:"Maintenance" doc:"Tributary: every so often (0: never), a task rewrites the small data files and the equality deletes of its tables into merged files."`
	ExpireOlderThan int64 `key:"iceberg.tables.maintenance.expire-snapshots-older-than-ms" default:"0" validate:"min=0" importance:"low" group:"Maintenance" doc:"Tributary: after each compaction, expire snapshots older than this (0: never), keeping at least the last one."`
}

// Classes: Apache Iceberg's sink and Tabular's, whose configuration it
// inherited.
const (
	Class        = "org.apache.iceberg.connect.IcebergSinkConnector"
	TabularClass = "io.tabular.iceberg.connect.IcebergSinkConnector"
)

// extra holds the keys with a variable part.
type extra struct {
	catalog     map[string]string // iceberg.catalog.* without the prefix
	createProps map[string]string // iceberg.tables.auto-create-props.*
	writeProps  map[string]string // iceberg.tables.write-props.*
	tables      map[string]*tableConfig
}

// tableConfig is the iceberg.table.<table>.* settings of one table.
type tableConfig struct {
	idColumns   []string
	partitionBy []string
	routeRegex  *regexp.Regexp
}

// parseExtra reads the prefixed keys of a raw configuration. Each problem
// is a field error.
func parseExtra(raw map[string]string) (extra, []sdk.FieldError) {
	e := extra{catalog: map[string]string{}, createProps: map[string]string{}, writeProps: map[string]string{}, tables: map[string]*tableConfig{}}
	var errs []sdk.FieldError
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		switch {
		case strings.HasPrefix(k, "iceberg.catalog."):
			e.catalog[strings.TrimPrefix(k, "iceberg.catalog.")] = v
		case strings.HasPrefix(k, "iceberg.tables.auto-create-props."):
			e.createProps[strings.TrimPrefix(k, "iceberg.tables.auto-create-props.")] = v
		case strings.HasPrefix(k, "iceberg.tables.write-props."):
			e.writeProps[strings.TrimPrefix(k, "iceberg.tables.write-props.")] = v
		case strings.HasPrefix(k, "iceberg.table."):
			rest := strings.TrimPrefix(k, "iceberg.table.")
			i := strings.LastIndex(rest, ".")
			if i <= 0 {
				errs = append(errs, sdk.FieldError{Key: k, Message: "expected iceberg.table.<table>.<setting>"})
				continue
			}
			name, setting := rest[:i], rest[i+1:]
			tc := e.tables[name]
			if tc == nil {
				tc = &tableConfig{}
				e.tables[name] = tc
			}
			switch setting {
			case "id-columns":
				tc.idColumns = splitList(v)
			case "partition-by":
				tc.partitionBy = splitList(v)
			case "route-regex":
				re, err := regexp.Compile(v)
				if err != nil {
					errs = append(errs, sdk.FieldError{Key: k, Message: fmt.Sprintf("invalid regular expression: %v", err)})
					continue
				}
				tc.routeRegex = re
			case "commit-branch":
				if v != "" && v != "main" {
					errs = append(errs, sdk.FieldError{Key: k, Message: "only the main branch is supported"})
				}
			default:
				errs = append(errs, sdk.FieldError{Key: k, Message: fmt.Sprintf("unknown table setting %q (id-columns, partition-by, route-regex)", setting)})
			}
		}
	}
	return e, errs
}

// splitList splits a comma-separated list, keeping the commas inside
// parentheses (bucket(id, 16)).
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				if t := strings.TrimSpace(s[start:i]); t != "" {
					out = append(out, t)
				}
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// validate checks the rules that involve more than one key.
func (c *Config) validate(e extra) []sdk.FieldError {
	var errs []sdk.FieldError
	bad := func(key, format string, a ...any) {
		errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf(format, a...)})
	}
	if len(c.Tables) == 0 && !c.DynamicEnabled {
		bad("iceberg.tables", "Must specify table name(s) with iceberg.tables, or enable iceberg.tables.dynamic-enabled")
	}
	if c.DynamicEnabled && c.RouteField == "" {
		bad("iceberg.tables.route-field", "Must specify a route field if using dynamic routing")
	}
	for _, t := range c.Tables {
		if _, err := parseIdent(t); err != nil {
			bad("iceberg.tables", "%v", err)
		}
		if tc := e.tables[t]; tc != nil && tc.routeRegex != nil && c.RouteField == "" {
			bad("iceberg.table."+t+".route-regex", "route-regex needs iceberg.tables.route-field")
		}
	}
	for name, tc := range e.tables {
		for _, p := range tc.partitionBy {
			if _, err := parsePartitionField(p); err != nil {
				bad("iceberg.table."+name+".partition-by", "%v", err)
			}
		}
	}
	for _, p := range c.PartitionBy {
		if _, err := parsePartitionField(p); err != nil {
			bad("iceberg.tables.default-partition-by", "%v", err)
		}
	}
	if v := e.createProps["format-version"]; v != "" && v != "2" && v != "3" && (c.UpsertMode || c.CDCField != "") {
		bad("iceberg.tables.auto-create-props.format-version", "upserts and deletes need format version 2 or 3, not %s", v)
	}
	if e.catalog["type"] == "" && e.catalog["catalog-impl"] == "" {
		bad("iceberg.catalog.type", "Must specify the catalog type: rest, sql or glue")
	}
	return errs
}

// idColumns returns a table's id columns: its own, else the default.
func (c *Config) idColumns(e extra, table string) []string {
	if tc := e.tables[table]; tc != nil && len(tc.idColumns) > 0 {
		return tc.idColumns
	}
	return c.IDColumns
}

// partitionBy returns a table's partition fields: its own, else the
// default.
func (c *Config) partitionBy(e extra, table string) []string {
	if tc := e.tables[table]; tc != nil && len(tc.partitionBy) > 0 {
		return tc.partitionBy
	}
	return c.PartitionBy
}

// parseIdent splits namespace.table (the last dot separates the table).
func parseIdent(s string) ([]string, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return nil, fmt.Errorf("table %q is not namespace.table", s)
	}
	return parts, nil
}
