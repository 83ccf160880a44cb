package postgres

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// Config is the connector's configuration: Debezium's PostgreSQL connector
// keys, names and defaults, so that a Debezium configuration works as is.
type Config struct {
	Hostname    string       `key:"database.hostname" importance:"high" validate:"nonempty" group:"Connection" doc:"Resolvable hostname or IP address of the PostgreSQL server; or several, host[:port] separated by commas (a primary and its standbys), of which the connector uses the one that accepts writes."`
	Port        int32        `key:"database.port" default:"5432" importance:"high" validate:"min=1,max=65535" group:"Connection" doc:"Port of the PostgreSQL server."`
	User        string       `key:"database.user" importance:"high" validate:"nonempty" group:"Connection" doc:"Name of the database user; it needs the REPLICATION attribute (or rds_replication), SELECT on the captured tables, and CREATE on the database when the publication is created automatically."`
	Password    sdk.Password `key:"database.password" optional:"" importance:"high" group:"Connection" doc:"Password of the database user."`
	DBName      string       `key:"database.dbname" importance:"high" validate:"nonempty" group:"Connection" doc:"Name of the database to capture changes from."`
	SSLMode     string       `key:"database.sslmode" default:"prefer" importance:"medium" validate:"enum=disable|allow|prefer|require|verify-ca|verify-full" group:"Connection" doc:"Whether to use an encrypted connection: disable, allow, prefer (try TLS, fall back to plain), require, verify-ca (require and check the server certificate against database.sslrootcert) or verify-full (verify-ca and check the host name)."`
	SSLCert     string       `key:"database.sslcert" optional:"" group:"Connection" doc:"File containing the client's TLS certificate."`
	SSLKey      string       `key:"database.sslkey" optional:"" group:"Connection" doc:"File containing the client's TLS private key."`
	SSLPassword sdk.Password `key:"database.sslpassword" optional:"" group:"Connection" doc:"Password of the client's private key file."`
	SSLRootCert string       `key:"database.sslrootcert" optional:"" group:"Connection" doc:"File containing the root certificates the server certificate is checked against."`

	TopicPrefix string `key:"topic.prefix" importance:"high" validate:"regex=^[a-zA-Z0-9._-]+$" group:"Connector" doc:"Topic prefix naming this database server: change events of table s.t go to <topic.prefix>.s.t. It is also the source partition of the offsets, so it must not change once the connector has run."`

	SchemaInclude []string `key:"schema.include.list" optional:"" group:"Filters" doc:"Comma-separated regular expressions matching the names of the schemas to capture (whole names, case-insensitive); other schemas are left out. Not with schema.exclude.list."`
	SchemaExclude []string `key:"schema.exclude.list" optional:"" group:"Filters" doc:"Comma-separated regular expressions matching the names of schemas not to capture. Not with schema.include.list."`
	TableInclude  []string `key:"table.include.list" optional:"" group:"Filters" doc:"Comma-separated regular expressions matching schema.table names to capture (whole names, case-insensitive). Not with table.exclude.list."`
	TableExclude  []string `key:"table.exclude.list" optional:"" group:"Filters" doc:"Comma-separated regular expressions matching schema.table names not to capture. Not with table.include.list."`
	ColumnInclude []string `key:"column.include.list" optional:"" group:"Filters" doc:"Comma-separated regular expressions matching schema.table.column names of the columns to put in change event values; primary-key columns always stay in the key. Not with column.exclude.list."`
	ColumnExclude []string `key:"column.exclude.list" optional:"" group:"Filters" doc:"Comma-separated regular expressions matching schema.table.column names of columns to leave out of change event values. Not with column.include.list."`

	PluginName            string        `key:"plugin.name" default:"pgoutput" importance:"medium" validate:"enum=pgoutput" group:"Replication" doc:"Logical decoding plugin; pgoutput (built into PostgreSQL 10 and later) is the one supported."`
	SlotName              string        `key:"slot.name" default:"debezium" importance:"medium" validate:"regex=^[a-z0-9_]{1,63}$" group:"Replication" doc:"Name of the logical replication slot; one per connector. Created when missing."`
	SlotFailover          bool          `key:"slot.failover" default:"false" group:"Replication" doc:"Create the replication slot as a failover slot (PostgreSQL 17 and later; an existing slot is altered): a physical standby with sync_replication_slots=on keeps a copy in step, so that after its promotion the connector (database.hostname listing both servers, host:port,host:port) goes on from the synchronised slot. Set synchronized_standby_slots on the primary so that the slot never runs ahead of the standby."`
	SlotDropOnStop        bool          `key:"slot.drop.on.stop" default:"false" group:"Replication" doc:"Drop the replication slot when the task stops gracefully (for tests and short-lived pipelines: changes made while the connector is stopped are then not captured)."`
	PublicationName       string        `key:"publication.name" default:"dbz_publication" importance:"medium" validate:"nonempty" group:"Replication" doc:"Name of the publication whose tables are captured."`
	PublicationAutocreate string        `key:"publication.autocreate.mode" default:"all_tables" importance:"medium" validate:"enum=all_tables|disabled|filtered|no_tables" group:"Replication" doc:"What to do when the publication does not exist: all_tables (CREATE PUBLICATION ... FOR ALL TABLES, needs a superuser), filtered (a publication of the tables the filters select, kept up to date at each start), disabled (fail: it must exist) or no_tables (an empty publication)."`
	PublishViaRoot        bool          `key:"publish.via.partition.root" default:"false" group:"Replication" doc:"Create (or set) the publication with publish_via_partition_root (PostgreSQL 13 and later): the changes of a partitioned table's partitions, including partitions added later, are published as the partitioned table's, so its events go to one topic, <topic.prefix>.<schema>.<root table>; list the root table in table.include.list."`
	StatusInterval        time.Duration `key:"status.update.interval.ms" default:"10000" validate:"min=1" group:"Replication" doc:"Interval between status updates to the server (the slot's confirmed LSN is sent as soon as offsets are committed; this bounds the wait for idle periods), in milliseconds."`
	MaxRetries            int32         `key:"errors.max.retries" default:"-1" validate:"min=-1" group:"Replication" doc:"How many times in a row the task reconnects after it lost its connection to the server (a restart, a failover, a network cut) before it fails: -1 without limit, 0 never. During the initial snapshot a reconnection takes the snapshot again, from a new slot. The count starts again once records flow."`
	RetryWait             time.Duration `key:"retriable.restart.connector.wait.ms" default:"10000" validate:"min=0" group:"Replication" doc:"The longest wait between two reconnection attempts, in milliseconds: the first comes after 0.5 s, each next one 0.5 s later, up to this."`
	WALWarnBytes          int64         `key:"slot.wal.warning.bytes" default:"1073741824" validate:"min=0" group:"Replication" doc:"Log a warning, with the size, when the replication slot retains more WAL than this many bytes (checked every minute; 0 turns the check off). A Tributary extension: see also the server's max_slot_wal_keep_size."`
	Streaming             bool          `key:"pgoutput.streaming" default:"true" group:"Replication" doc:"Read the slot with pgoutput protocol version 2 and streaming on where the server has it (PostgreSQL 14 and later), so that the server sends a transaction larger than its logical_decoding_work_mem while it is in progress instead of spilling it to its own disk; the connector holds such a transaction's changes (see pgoutput.stream.buffer.bytes) and emits them when it commits, exactly as protocol 1 would. false reads with protocol 1. A Tributary extension."`
	StreamBufferBytes     int64         `key:"pgoutput.stream.buffer.bytes" default:"67108864" validate:"min=0" group:"Replication" doc:"Bytes of in-progress streamed transactions (as the server sent them) the connector keeps in memory; beyond this, the largest one moves to a temporary file, unlinked at once so that a crash leaves nothing behind. A Tributary extension."`
	StreamSpillDir        string        `key:"pgoutput.stream.spill.dir" optional:"" group:"Replication" doc:"Directory of the temporary files of pgoutput.stream.buffer.bytes (default: the system's temporary directory, $TMPDIR). A Tributary extension."`

	SnapshotMode      string `key:"snapshot.mode" default:"initial" importance:"medium" validate:"enum=initial|always|no_data|initial_only|when_needed|never|schema_only" group:"Snapshot" doc:"initial: snapshot the tables when the connector has no offsets (or its snapshot did not complete), then stream; always: snapshot at every start, then stream; no_data: never snapshot, only stream; initial_only: snapshot, then stop capturing; when_needed: snapshot when there are no offsets or the slot no longer holds the changes after them. never and schema_only are old names of no_data."`
	SnapshotThreads   int32  `key:"snapshot.max.threads" default:"1" validate:"min=1,max=64" group:"Snapshot" doc:"Number of tables read in parallel during the snapshot, each over its own connection importing the same exported snapshot."`
	SnapshotFetchSize int32  `key:"snapshot.fetch.size" default:"10240" validate:"min=1" group:"Snapshot" doc:"Rows read per chunk of a table during the snapshot (tables are read in chunks by primary key, or by physical position when there is none, so memory stays bounded)."`

	SignalChannels       []string      `key:"signal.enabled.channels" default:"source" validate:"enum=source|kafka|file" group:"Signals" doc:"Channels the connector reads signals from (execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot, log): source (inserts into the table signal.data.collection, read through the replication stream), kafka (records on signal.kafka.topic whose key is topic.prefix) and file (JSON lines appended to signal.file)."`
	SignalTable          string        `key:"signal.data.collection" optional:"" group:"Signals" doc:"The signal table, schema.table, with columns id (varchar), type (varchar) and data (varchar/text). It is captured whatever the filters say (it joins a filtered publication); incremental snapshots write their watermarks into it unless read.only=true."`
	SignalKafkaTopic     string        `key:"signal.kafka.topic" optional:"" group:"Signals" doc:"Topic of the kafka signal channel (default: <topic.prefix>-signal); its partition 0 is read."`
	SignalKafkaBootstrap string        `key:"signal.kafka.bootstrap.servers" optional:"" group:"Signals" doc:"Bootstrap servers of the Kafka cluster holding signal.kafka.topic (required by the kafka channel)."`
	SignalKafkaGroup     string        `key:"signal.kafka.groupId" default:"kafka-signal" group:"Signals" doc:"Consumer group of the kafka signal channel: it commits the position of the signals it has acted on."`
	SignalFile           string        `key:"signal.file" default:"file-signals.txt" group:"Signals" doc:"File of the file signal channel: one JSON signal per line ({\"id\": ..., \"type\": ..., \"data\": {...}}); the connector empties the file once it has read it."`
	SignalPollInterval   time.Duration `key:"signal.poll.interval.ms" default:"5000" validate:"min=1" group:"Signals" doc:"How often the kafka and file channels are read, in milliseconds."`
	IncrementalChunkSize int32         `key:"incremental.snapshot.chunk.size" default:"1024" validate:"min=1" group:"Signals" doc:"Rows read per chunk of an incremental snapshot (the rows of a chunk are held in memory until its window closes)."`
	IncrementalWatermark string        `key:"incremental.snapshot.watermarking.strategy" default:"insert_insert" validate:"enum=insert_insert|insert_delete" group:"Signals" doc:"How an incremental snapshot's chunk windows are marked in the signal table: insert_insert (an open and a close row per chunk) or insert_delete (an open row, deleted to close the window, so the table does not grow)."`
	ReadOnly             bool          `key:"read.only" default:"false" group:"Signals" doc:"Incremental snapshots without writing to the database (a read-only user, a standby): each chunk is read with its transaction snapshot (pg_current_snapshot) and the window closes on the stream's own position, instead of watermark rows in the signal table. A Tributary method: Debezium's read-only mode differs in detail, not in the events."`

	HeartbeatInterval time.Duration `key:"heartbeat.interval.ms" default:"0" validate:"min=0" group:"Heartbeat" doc:"Interval between heartbeat records (0: none). Heartbeats go to the heartbeat topic and carry the current WAL position, so the slot keeps advancing when the captured tables are idle while the server writes WAL."`
	HeartbeatQuery    string        `key:"heartbeat.action.query" optional:"" group:"Heartbeat" doc:"SQL statement run on each heartbeat (for example an update of a heartbeat table in the publication). Without it, the connector writes a logical decoding message (pg_logical_emit_message) so that even an idle server moves the slot."`
	HeartbeatPrefix   string        `key:"topic.heartbeat.prefix" default:"__debezium-heartbeat" group:"Heartbeat" doc:"Prefix of the heartbeat topic, <prefix>.<topic.prefix>."`

	ProvideTxMetadata bool   `key:"provide.transaction.metadata" default:"false" group:"Events" doc:"Emit a BEGIN and an END event per transaction to <topic.prefix>.<topic.transaction> (the END with its event count per table), and give each change event a transaction block (id, total_order, data_collection_order)."`
	TopicTransaction  string `key:"topic.transaction" default:"transaction" group:"Events" doc:"Suffix of the transaction metadata topic, <topic.prefix>.<topic.transaction>."`

	TombstonesOnDelete bool     `key:"tombstones.on.delete" default:"true" group:"Events" doc:"Emit a tombstone (the key with a null value) after each delete event, so that log compaction can remove the key."`
	SkippedOperations  []string `key:"skipped.operations" default:"t" validate:"enum=c|u|d|t|none" group:"Events" doc:"Operations not to emit: c (inserts), u (updates), d (deletes), t (truncates), or none."`
	DecimalMode        string   `key:"decimal.handling.mode" default:"precise" importance:"medium" validate:"enum=precise|double|string" group:"Types" doc:"How numeric and decimal values are represented: precise (Connect Decimal, or io.debezium.data.VariableScaleDecimal for numeric without a scale), double (FLOAT64) or string."`
	TimePrecisionMode  string   `key:"time.precision.mode" default:"adaptive" importance:"medium" validate:"enum=adaptive|adaptive_time_microseconds|connect" group:"Types" doc:"How dates and times are represented: adaptive (io.debezium.time types with the column's precision), adaptive_time_microseconds (as adaptive, TIME always in microseconds) or connect (Kafka Connect's Date, Time and Timestamp, in milliseconds)."`
	BinaryMode         string   `key:"binary.handling.mode" default:"bytes" validate:"enum=bytes|base64|base64-url-safe|hex" group:"Types" doc:"How bytea values are represented: bytes, or a base64, base64-url-safe or hex string."`
	IntervalMode       string   `key:"interval.handling.mode" default:"numeric" validate:"enum=numeric|string" group:"Types" doc:"How interval values are represented: numeric (io.debezium.time.MicroDuration, microseconds, a month counted as 30.4375 days) or string (io.debezium.time.Interval, ISO 8601)."`
	Placeholder        string   `key:"unavailable.value.placeholder" default:"__debezium_unavailable_value" group:"Types" doc:"Value put in place of an unchanged TOASTed value that the server did not send (a hex: prefix gives the bytes of a binary placeholder)."`
	IncludeUnknown     bool     `key:"include.unknown.datatypes" default:"false" group:"Types" doc:"Include columns of types the connector does not know, as BYTES of the value's text; otherwise such columns are left out (with a warning)."`
	MoneyDigits        int32    `key:"money.fraction.digits" default:"2" validate:"min=0,max=20" group:"Types" doc:"Scale of the decimal that money values become."`
}

// Operations named by skipped.operations.
const (
	opCreate   = "c"
	opUpdate   = "u"
	opDelete   = "d"
	opTruncate = "t"
	opRead     = "r"
)

// Validate implements sdk.Validator: the cross-field rules.
func (c *Config) Validate() []sdk.FieldError {
	var errs []sdk.FieldError
	pair := func(inc, exc string, a, b []string) {
		if len(a) > 0 && len(b) > 0 {
			errs = append(errs, sdk.FieldError{Key: exc, Message: fmt.Sprintf("%s and %s cannot both be set", inc, exc)})
		}
	}
	pair("schema.include.list", "schema.exclude.list", c.SchemaInclude, c.SchemaExclude)
	pair("table.include.list", "table.exclude.list", c.TableInclude, c.TableExclude)
	pair("column.include.list", "column.exclude.list", c.ColumnInclude, c.ColumnExclude)
	for key, list := range map[string][]string{
		"schema.include.list": c.SchemaInclude, "schema.exclude.list": c.SchemaExclude,
		"table.include.list": c.TableInclude, "table.exclude.list": c.TableExclude,
		"column.include.list": c.ColumnInclude, "column.exclude.list": c.ColumnExclude,
	} {
		if _, err := compileList(list); err != nil {
			errs = append(errs, sdk.FieldError{Key: key, Message: err.Error()})
		}
	}
	if slices.Contains(c.SkippedOperations, "none") && len(c.SkippedOperations) > 1 {
		errs = append(errs, sdk.FieldError{Key: "skipped.operations", Message: "none cannot be combined with operations"})
	}
	if strings.HasPrefix(c.Placeholder, "hex:") {
		if _, err := hexDecode(c.Placeholder[4:]); err != nil {
			errs = append(errs, sdk.FieldError{Key: "unavailable.value.placeholder", Message: "the hex: prefix must be followed by hexadecimal digits"})
		}
	}
	if c.SignalTable != "" {
		if _, err := parseTableID(c.SignalTable); err != nil {
			errs = append(errs, sdk.FieldError{Key: "signal.data.collection", Message: err.Error()})
		}
	}
	if slices.Contains(c.SignalChannels, "kafka") && strings.TrimSpace(c.SignalKafkaBootstrap) == "" {
		errs = append(errs, sdk.FieldError{Key: "signal.kafka.bootstrap.servers", Message: "the kafka signal channel needs the bootstrap servers of the cluster holding signal.kafka.topic"})
	}
	slices.SortFunc(errs, func(a, b sdk.FieldError) int { return strings.Compare(a.Key, b.Key) })
	return errs
}

// snapshotMode returns snapshot.mode with the old names mapped to the new.
func (c *Config) snapshotMode() string {
	switch c.SnapshotMode {
	case "never", "schema_only":
		return "no_data"
	}
	return c.SnapshotMode
}

// skipped reports whether operation op is left out.
func (c *Config) skipped(op string) bool { return slices.Contains(c.SkippedOperations, op) }

// connString returns the pgx connection string for the database;
// replication adds replication=database.
func (c *Config) connString(replication bool) string {
	// database.hostname may list several servers (host[:port], comma
	// separated): the connection goes to the first that accepts writes,
	// the primary after a failover.
	var hosts []string
	for _, h := range strings.Split(c.Hostname, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if host, port, err := net.SplitHostPort(h); err == nil {
			hosts = append(hosts, net.JoinHostPort(host, port))
		} else {
			hosts = append(hosts, net.JoinHostPort(h, strconv.Itoa(int(c.Port))))
		}
	}
	u := url.URL{Scheme: "postgres", Host: strings.Join(hosts, ","), Path: "/" + c.DBName}
	if c.Password != "" {
		u.User = url.UserPassword(c.User, c.Password.Value())
	} else {
		u.User = url.User(c.User)
	}
	q := url.Values{}
	q.Set("sslmode", c.SSLMode)
	for k, v := range map[string]string{"sslcert": c.SSLCert, "sslkey": c.SSLKey, "sslrootcert": c.SSLRootCert, "sslpassword": c.SSLPassword.Value()} {
		if v != "" {
			q.Set(k, v)
		}
	}
	q.Set("connect_timeout", "30")
	q.Set("application_name", "tributary-"+c.SlotName)
	// Value text formats the decoders rely on, for the snapshot
	// connections and the walsender alike (pgoutput formats values with
	// the session's settings).
	q.Set("DateStyle", "ISO")
	q.Set("TimeZone", "UTC")
	q.Set("IntervalStyle", "iso_8601")
	q.Set("extra_float_digits", "3")
	q.Set("bytea_output", "hex")
	q.Set("lc_monetary", "C")
	q.Set("client_encoding", "UTF8")
	if replication {
		q.Set("replication", "database")
	}
	if len(hosts) > 1 {
		q.Set("target_session_attrs", "read-write")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// filters decides which schemas, tables and columns are captured, with
// Debezium's rules: whole-name, case-insensitive regular expressions.
type filters struct {
	schemaInc, schemaExc, tableInc, tableExc, colInc, colExc []*regexp.Regexp
	// signal is signal.data.collection: captured whatever the lists say,
	// as Debezium does.
	signal tableID
}

func compileList(list []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range list {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		re, err := regexp.Compile("(?i)^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func newFilters(c *Config) (*filters, error) {
	f := &filters{}
	for _, x := range []struct {
		dst  *[]*regexp.Regexp
		list []string
	}{{&f.schemaInc, c.SchemaInclude}, {&f.schemaExc, c.SchemaExclude}, {&f.tableInc, c.TableInclude},
		{&f.tableExc, c.TableExclude}, {&f.colInc, c.ColumnInclude}, {&f.colExc, c.ColumnExclude}} {
		res, err := compileList(x.list)
		if err != nil {
			return nil, err
		}
		*x.dst = res
	}
	if c.SignalTable != "" {
		id, err := parseTableID(c.SignalTable)
		if err != nil {
			return nil, fmt.Errorf("postgres: signal.data.collection: %w", err)
		}
		f.signal = id
	}
	return f, nil
}

// parseTableID parses schema.table, either part in double quotes when it
// holds a dot ("public.\"My.Table\"").
func parseTableID(s string) (tableID, error) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case ch == '"':
			quoted = !quoted
		case ch == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(ch)
		}
	}
	parts = append(parts, cur.String())
	if quoted || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return tableID{}, fmt.Errorf("%q is not schema.table", s)
	}
	return tableID{schema: strings.TrimSpace(parts[0]), name: strings.TrimSpace(parts[1])}, nil
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// systemSchemas are never captured.
var systemSchemas = []string{"pg_catalog", "information_schema", "pg_toast"}

// table reports whether schema.table is captured.
func (f *filters) table(schema, table string) bool {
	if slices.Contains(systemSchemas, schema) || strings.HasPrefix(schema, "pg_temp") || strings.HasPrefix(schema, "pg_toast") {
		return false
	}
	if f.signal.name != "" && f.signal.schema == schema && f.signal.name == table {
		return true
	}
	if len(f.schemaInc) > 0 && !anyMatch(f.schemaInc, schema) || anyMatch(f.schemaExc, schema) {
		return false
	}
	id := schema + "." + table
	if len(f.tableInc) > 0 && !anyMatch(f.tableInc, id) || anyMatch(f.tableExc, id) {
		return false
	}
	return true
}

// rank orders tables for the snapshot as Debezium does: by the first entry
// of table.include.list that matches them.
func (f *filters) rank(schema, table string) int {
	id := schema + "." + table
	for i, re := range f.tableInc {
		if re.MatchString(id) {
			return i
		}
	}
	return 0
}

// column reports whether a column goes into change event values.
func (f *filters) column(schema, table, column string) bool {
	id := schema + "." + table + "." + column
	if len(f.colInc) > 0 && !anyMatch(f.colInc, id) || anyMatch(f.colExc, id) {
		return false
	}
	return true
}

// knownKeys are the keys the connector or the worker reads; others are
// reported as ignored.
func knownKey(k string) bool {
	if isColumnRuleKey(k) || k == "column.propagate.source.type" || k == "datatype.propagate.source.type" || k == "message.key.columns" {
		return true
	}
	for _, p := range []string{"transforms", "predicates", "errors.", "producer.override.", "consumer.override.",
		"admin.override.", "topic.creation.", "key.converter", "value.converter", "header.converter"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	switch k {
	case "name", "connector.class", "tasks.max", "config.action.reload", "exactly.once.support",
		"transaction.boundary", "transaction.boundary.interval.ms", "offsets.storage.topic":
		return true
	}
	return false
}
