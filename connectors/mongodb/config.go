package mongodb

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/tributary-dev/tributary/sdk"
)

// Capture modes: Debezium's four change-stream modes plus Tributary's poll.
const (
	CaptureChangeStreams            = "change_streams"
	CaptureChangeStreamsFull        = "change_streams_update_full"
	CaptureChangeStreamsPre         = "change_streams_with_pre_image"
	CaptureChangeStreamsFullWithPre = "change_streams_update_full_with_pre_image"
	CapturePoll                     = "poll"
)

// Snapshot modes (never is Debezium's deprecated name of no_data).
const (
	SnapshotInitial     = "initial"
	SnapshotAlways      = "always"
	SnapshotInitialOnly = "initial_only"
	SnapshotNoData      = "no_data"
	SnapshotNever       = "never"
	SnapshotWhenNeeded  = "when_needed"
)

// Config is the connector's configuration: Debezium's MongoDB connector
// keys (with its defaults) for what Tributary implements, plus the
// capture.poll.* keys of capture.mode=poll.
type Config struct {
	ConnectionString sdk.Password  `key:"mongodb.connection.string" importance:"high" group:"Connection" order:"1" width:"medium" display:"Connection String" doc:"Database connection string (mongodb:// or mongodb+srv://), with hosts, credentials, TLS (tls=true, tlsCAFile=…) and other options in MongoDB's URI syntax. It is hidden in validation results and logs."`
	TopicPrefix      string        `key:"topic.prefix" importance:"high" validate:"regex=^[a-zA-Z0-9._-]+$" group:"Connection" order:"0" display:"Topic prefix" doc:"Prefix of every topic this connector writes to: change events of collection <db>.<coll> go to <topic.prefix>.<db>.<coll>. Also names the connector's source partition (server_id) in the offsets, so it must stay the same for the connector's life."`
	User             string        `key:"mongodb.user" optional:"" importance:"high" group:"Connection" order:"3" doc:"Database user, if not given in the connection string."`
	Password         sdk.Password  `key:"mongodb.password" optional:"" importance:"high" group:"Connection" order:"4" doc:"Password of mongodb.user."`
	AuthSource       string        `key:"mongodb.authsource" default:"admin" group:"Connection" doc:"Database holding the credentials of mongodb.user."`
	SSLEnabled       bool          `key:"mongodb.ssl.enabled" default:"false" group:"Connection" doc:"Connect with TLS (the same as tls=true in the connection string)."`
	SSLInvalidHost   bool          `key:"mongodb.ssl.invalid.hostname.allowed" default:"false" group:"Connection" doc:"Accept server certificates whose host name does not match (tlsAllowInvalidHostnames); allows man-in-the-middle attacks."`
	ConnectTimeout   time.Duration `key:"mongodb.connect.timeout.ms" default:"10000" validate:"min=1" group:"Connection" doc:"Connection timeout, in milliseconds."`
	SelectionTimeout time.Duration `key:"mongodb.server.selection.timeout.ms" default:"30000" validate:"min=1" group:"Connection" doc:"Server selection timeout, in milliseconds."`
	HeartbeatFreq    time.Duration `key:"mongodb.heartbeat.frequency.ms" default:"10000" validate:"min=500" group:"Connection" doc:"How often the driver checks each server, in milliseconds."`

	DatabaseInclude   []string `key:"database.include.list" optional:"" importance:"high" group:"Filters" doc:"Comma-separated regular expressions (or literals, see filters.match.mode) matching the databases to capture; all but admin, config and local by default. Not with database.exclude.list."`
	DatabaseExclude   []string `key:"database.exclude.list" optional:"" importance:"high" group:"Filters" doc:"Comma-separated regular expressions (or literals) matching databases not to capture. Not with database.include.list."`
	CollectionInclude []string `key:"collection.include.list" optional:"" importance:"high" group:"Filters" doc:"Comma-separated regular expressions (or literals) matching the <db>.<collection> names to capture. Not with collection.exclude.list."`
	CollectionExclude []string `key:"collection.exclude.list" optional:"" importance:"high" group:"Filters" doc:"Comma-separated regular expressions (or literals) matching <db>.<collection> names not to capture. Not with collection.include.list."`
	FiltersMatchMode  string   `key:"filters.match.mode" default:"regex" validate:"enum=regex|literal" group:"Filters" doc:"How the include and exclude lists match: 'regex' (the default; a name must match a whole expression, case-insensitively) or 'literal' (exact names)."`
	FieldExclude      string   `key:"field.exclude.list" optional:"" importance:"medium" group:"Filters" doc:"Comma-separated fully-qualified fields to leave out of change events: <db>.<collection>.<field>[.<nested>…], where <db> and <collection> may contain the wildcard *."`

	CaptureMode         string        `key:"capture.mode" default:"change_streams_update_full" importance:"medium" validate:"enum=change_streams|change_streams_update_full|change_streams_with_pre_image|change_streams_update_full_with_pre_image|poll" group:"Capture" doc:"How changes are captured. 'change_streams': change streams, updates carry only their updateDescription; 'change_streams_update_full' (the default): updates also carry the full document (after); the *_with_pre_image variants also carry the document before the change (before; MongoDB 6.0+ with changeStreamPreAndPostImages enabled on the collection); 'poll' (Tributary): no change streams, for MongoDB-wire servers without them such as FerretDB: collections are scanned by capture.poll.field; deletes are not seen."`
	FullUpdateType      string        `key:"capture.mode.full.update.type" default:"lookup" importance:"medium" validate:"enum=lookup|post_image" group:"Capture" doc:"How full documents of updates are obtained: 'lookup' (the default; the document as it is when the event is read, which may be a later state) or 'post_image' (the document right after the change; MongoDB 6.0+ with changeStreamPreAndPostImages)."`
	CaptureScope        string        `key:"capture.scope" default:"deployment" importance:"medium" validate:"enum=deployment|database|collection" group:"Capture" doc:"What the change stream watches: 'deployment' (the default), 'database' or 'collection' (named by capture.target)."`
	CaptureTarget       string        `key:"capture.target" optional:"" importance:"medium" group:"Capture" doc:"The database (capture.scope=database) or <db>.<collection> (capture.scope=collection) to watch."`
	StartOpTime         int64         `key:"capture.start.op.time" default:"-1" group:"Capture" doc:"Without a stored offset and without a snapshot, start streaming from this cluster time (seconds since the epoch); -1 for now."`
	CursorMaxAwait      time.Duration `key:"cursor.max.await.time.ms" default:"1000" validate:"min=1" group:"Capture" doc:"How long the server waits for new change events before answering a getMore, in milliseconds."`
	OversizeMode        string        `key:"cursor.oversize.handling.mode" default:"fail" validate:"enum=fail|skip|split" group:"Capture" doc:"Change events larger than MongoDB's 16 MB limit: 'fail' (the default; the server fails the stream, the task fails), 'skip' (events whose documents exceed cursor.oversize.skip.threshold bytes are filtered out on the server) or 'split' (the server splits them with $changeStreamSplitLargeEvent, MongoDB 7.0+, and the connector joins the fragments)."`
	OversizeThreshold   int32         `key:"cursor.oversize.skip.threshold" default:"0" validate:"min=0" group:"Capture" doc:"With cursor.oversize.handling.mode=skip, the largest full document or pre-image (in BSON bytes) of an event that is kept."`
	CursorPipeline      string        `key:"cursor.pipeline" optional:"" group:"Capture" width:"long" doc:"Stages to add to the change stream's aggregation pipeline, as a JSON array of MongoDB pipeline stages in extended JSON (e.g. [{\"$match\": {\"fullDocument.region\": \"eu\"}}]): they filter or reshape the change events on the server. Where they go is set by cursor.pipeline.order. Not used by capture.mode=poll."`
	CursorPipelineOrder string        `key:"cursor.pipeline.order" default:"internal_first" validate:"enum=internal_first|user_first|user_only" group:"Capture" doc:"Where the stages of cursor.pipeline go: 'internal_first' (the default) after the connector's own $match on the captured collections and operation types, 'user_first' before it, 'user_only' instead of it (the user's stages must then filter; the connector still drops events of collections it does not capture)."`
	PollField           string        `key:"capture.poll.field" default:"_id" validate:"nonempty" group:"Poll mode" doc:"capture.mode=poll: the monotonically increasing field the collections are scanned by: _id (ObjectIds; new documents are create events) or a field every insert and update sets to a larger value, such as an update timestamp (then updates are seen too). It should be indexed."`
	PollDelay           time.Duration `key:"capture.poll.delay.ms" default:"0" validate:"min=0" group:"Poll mode" doc:"capture.mode=poll: read only documents whose capture.poll.field (an ObjectId or a date) is at least this old, in milliseconds, so that a write that took an earlier value but committed later is not passed over (set it to the longest time between taking the value and committing, e.g. 2000, when several clients write at once)."`
	PollInterval        time.Duration `key:"poll.interval.ms" default:"500" validate:"min=1" group:"Capture" doc:"How long to wait before the next read after a read that found nothing new, in milliseconds."`
	MaxBatchSize        int32         `key:"max.batch.size" default:"2048" validate:"min=1" group:"Capture" doc:"The most change events one poll of the task returns."`

	SnapshotMode        string   `key:"snapshot.mode" default:"initial" importance:"low" validate:"enum=initial|always|initial_only|no_data|never|when_needed" group:"Snapshot" doc:"When to copy the existing documents (read events): 'initial' (the default) when there is no offset; 'always' at every start; 'initial_only' only the snapshot, no streaming; 'no_data' (or 'never') no snapshot, stream only; 'when_needed' when there is no offset or the stored resume token is no longer in the oplog."`
	SnapshotCollections []string `key:"snapshot.include.collection.list" optional:"" group:"Snapshot" doc:"Comma-separated regular expressions matching the <db>.<collection> names to snapshot, among the captured ones; all captured collections by default."`
	SnapshotMaxThreads  int32    `key:"snapshot.max.threads" default:"1" validate:"min=1,max=64" group:"Snapshot" doc:"How many collections the snapshot copies at once, each over a connection of its own (Debezium's snapshot.max.threads); 1 (the default) copies them one after the other."`
	SnapshotFetchSize   int32    `key:"snapshot.fetch.size" default:"0" validate:"min=0" group:"Snapshot" doc:"Documents per batch of the snapshot's queries; 0 for the server's default."`

	HeartbeatInterval time.Duration `key:"heartbeat.interval.ms" default:"0" validate:"min=0" group:"Heartbeats" doc:"How often to send a heartbeat record (topic <heartbeat.topics.prefix>.<topic.prefix>) carrying the latest resume token while no change event arrives, in milliseconds; 0 for none. Idle streams advance their stored offset either way."`
	HeartbeatPrefix   string        `key:"heartbeat.topics.prefix" default:"__debezium-heartbeat" group:"Heartbeats" doc:"Prefix of the heartbeat topic."`
	Tombstones        bool          `key:"tombstones.on.delete" default:"true" importance:"high" doc:"Follow each delete event with a tombstone (the same key, a null value) so that log compaction can drop the document's records."`
}

// Validate implements sdk.Validator: cross-field checks and the parsing of
// values the tags cannot check.
func (c *Config) Validate() []sdk.FieldError {
	var errs []sdk.FieldError
	add := func(key, format string, args ...any) {
		errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	if _, err := connstring.ParseAndValidate(c.ConnectionString.Value()); err != nil {
		add("mongodb.connection.string", "Invalid connection string: %v (expected mongodb://[user:password@]host[:port][,host…][/?options] or mongodb+srv://…)", redact(err.Error(), c.ConnectionString.Value()))
	}
	if len(c.DatabaseInclude) > 0 && len(c.DatabaseExclude) > 0 {
		add("database.exclude.list", "database.include.list and database.exclude.list cannot both be set")
	}
	if len(c.CollectionInclude) > 0 && len(c.CollectionExclude) > 0 {
		add("collection.exclude.list", "collection.include.list and collection.exclude.list cannot both be set")
	}
	if c.FiltersMatchMode == "regex" {
		for key, list := range map[string][]string{
			"database.include.list": c.DatabaseInclude, "database.exclude.list": c.DatabaseExclude,
			"collection.include.list": c.CollectionInclude, "collection.exclude.list": c.CollectionExclude,
			"snapshot.include.collection.list": c.SnapshotCollections,
		} {
			for _, p := range list {
				if _, err := regexp.Compile(p); err != nil {
					add(key, "%q is not a valid regular expression: %v", p, err)
				}
			}
		}
	}
	if _, err := parseFieldExcludes(c.FieldExclude); err != nil {
		add("field.exclude.list", "%v", err)
	}
	switch c.CaptureScope {
	case "database":
		if c.CaptureTarget == "" {
			add("capture.target", "capture.scope=database needs the database name in capture.target")
		}
	case "collection":
		if db, coll, ok := strings.Cut(c.CaptureTarget, "."); !ok || db == "" || coll == "" {
			add("capture.target", "capture.scope=collection needs <db>.<collection> in capture.target, got %q", c.CaptureTarget)
		}
	}
	if _, err := parsePipeline(c.CursorPipeline); err != nil {
		add("cursor.pipeline", "%v", err)
	}
	if c.Password.Value() != "" && c.User == "" {
		add("mongodb.user", "mongodb.password is set but mongodb.user is not")
	}
	return errs
}

// redact removes the connection string (which may hold a password) from an
// error message.
func redact(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "[hidden]")
}

// fieldExclude is one entry of field.exclude.list.
type fieldExclude struct {
	ns   *regexp.Regexp // <db>.<collection>, wildcards expanded
	path []string
}

func parseFieldExcludes(list string) ([]fieldExclude, error) {
	var out []fieldExclude
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	for _, entry := range strings.Split(strings.TrimSpace(list), ",") {
		nodes := strings.Split(strings.TrimSpace(entry), ".")
		if len(nodes) < 3 || slices.Contains(nodes, "") {
			return nil, fmt.Errorf("invalid format: %q (expected <db>.<collection>.<field>[.<nested>…])", entry)
		}
		toRegex := func(s string) string {
			parts := strings.Split(s, "*")
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			return strings.Join(parts, ".*")
		}
		re, err := regexp.Compile("(?i)^" + toRegex(nodes[0]) + `\.` + toRegex(nodes[1]) + "$")
		if err != nil {
			return nil, fmt.Errorf("invalid format: %q: %v", entry, err)
		}
		out = append(out, fieldExclude{ns: re, path: nodes[2:]})
	}
	return out, nil
}

// changeStreams reports whether the mode reads change streams.
func (c *Config) changeStreams() bool { return c.CaptureMode != CapturePoll }

func (c *Config) fullDocument() bool {
	return c.CaptureMode == CaptureChangeStreamsFull || c.CaptureMode == CaptureChangeStreamsFullWithPre
}

func (c *Config) preImages() bool {
	return c.CaptureMode == CaptureChangeStreamsPre || c.CaptureMode == CaptureChangeStreamsFullWithPre
}

// parsePipeline reads cursor.pipeline: a JSON array of pipeline stages in
// MongoDB's extended JSON (relaxed or canonical); empty means none.
func parsePipeline(text string) (mongo.Pipeline, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	// The driver reads documents, not arrays: the array is read as the
	// value of a field.
	var doc struct {
		Stages []bson.D `bson:"stages"`
	}
	if err := bson.UnmarshalExtJSON([]byte(`{"stages":`+text+`}`), false, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON array of pipeline stages (e.g. [{\"$match\": {\"operationType\": \"insert\"}}]): %v", err)
	}
	for i, st := range doc.Stages {
		if len(st) != 1 || !strings.HasPrefix(st[0].Key, "$") {
			return nil, fmt.Errorf("stage %d is not a pipeline stage: a stage is a document with one field, the stage's name starting with $, such as $match or $project", i+1)
		}
	}
	return mongo.Pipeline(doc.Stages), nil
}

// changeStreamPipeline assembles the change stream's pipeline as Debezium
// does: the size filter of cursor.oversize.handling.mode=skip, then the
// connector's own $match (internal) and the user's stages in the order of
// cursor.pipeline.order, then $changeStreamSplitLargeEvent for split.
func (c *Config) changeStreamPipeline(internal bson.D, user mongo.Pipeline) mongo.Pipeline {
	var p mongo.Pipeline
	if c.OversizeMode == "skip" {
		lte := func(field string) bson.D {
			return bson.D{{Key: "$expr", Value: bson.D{{Key: "$lte", Value: bson.A{
				bson.D{{Key: "$bsonSize", Value: field}}, c.OversizeThreshold}}}}}
		}
		p = append(p, bson.D{{Key: "$match", Value: bson.D{{Key: "$and", Value: bson.A{lte("$fullDocument"), lte("$fullDocumentBeforeChange")}}}}})
	}
	switch c.CursorPipelineOrder {
	case "user_first":
		p = append(append(p, user...), internal)
	case "user_only":
		p = append(p, user...)
	default:
		p = append(append(p, internal), user...)
	}
	if c.OversizeMode == "split" {
		p = append(p, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}})
	}
	return p
}
