package s3

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// Config is the S3 sink's configuration: the Confluent S3 sink's keys and
// defaults (kafka-connect-storage-cloud and kafka-connect-storage-common),
// plus memory.buffer.max.bytes, this connector's memory bound.
type Config struct {
	Bucket         string       `key:"s3.bucket.name" default:"" importance:"high" group:"S3" doc:"The S3 Bucket. Required unless store.url is a file:// URL."`
	Region         string       `key:"s3.region" default:"us-west-2" importance:"medium" group:"S3" doc:"The AWS region to be used the connector."`
	StoreURL       string       `key:"store.url" default:"" importance:"high" group:"Storage" doc:"Store's connection URL, if applicable: a custom S3 endpoint (http://host:port), or file:///path to write the same layout to a local directory."`
	PathStyle      bool         `key:"s3.path.style.access.enabled" default:"true" importance:"low" group:"S3" doc:"Specifies whether or not to enable path style access to the bucket used by the connector."`
	AccessKeyID    string       `key:"aws.access.key.id" default:"" importance:"high" group:"S3" doc:"The AWS access key ID used to authenticate personal AWS credentials; empty: the default AWS credentials chain (environment, shared files, instance role)."`
	SecretKey      sdk.Password `key:"aws.secret.access.key" optional:"" importance:"high" group:"S3" doc:"The secret access key used to authenticate personal AWS credentials."`
	PartSize       int32        `key:"s3.part.size" default:"26214400" validate:"min=5242880" importance:"high" group:"S3" doc:"The Part Size in S3 Multi-part Uploads; a file larger than this is uploaded in parts of this size."`
	PartRetries    int32        `key:"s3.part.retries" default:"3" validate:"min=0" importance:"medium" group:"S3" doc:"Maximum number of retry attempts for failed requests (with exponential backoff)."`
	RetryBackoffMs int64        `key:"s3.retry.backoff.ms" default:"200" validate:"min=0" importance:"low" group:"S3" doc:"How long to wait in milliseconds before attempting the first retry of a failed S3 request."`
	Compression    string       `key:"s3.compression.type" default:"none" importance:"low" group:"S3" doc:"Compression type for files written to S3 by JsonFormat and ByteArrayFormat: none or gzip."`
	CompressLevel  int32        `key:"s3.compression.level" default:"-1" validate:"min=-1,max=9" importance:"low" group:"S3" doc:"The gzip level (-1 is the default level)."`
	Conditional    bool         `key:"enable.conditional.writes" default:"true" importance:"low" group:"S3" doc:"Create objects with If-None-Match: * where the server supports it, so that a replayed or zombie task never replaces an object that already exists. Applies to deterministic configurations only: with rotate.schedule.interval.ms or timestamp.extractor=Wallclock a replayed file may hold more records than the object of its name, so objects are replaced."`

	TopicsDir    string `key:"topics.dir" default:"topics" importance:"high" group:"Storage" doc:"Top level directory to store the data ingested from Kafka."`
	DirDelim     string `key:"directory.delim" default:"/" importance:"medium" group:"Storage" doc:"Directory delimiter pattern."`
	FileDelim    string `key:"file.delim" default:"+" importance:"medium" group:"Storage" doc:"File delimiter pattern."`
	ZeroPad      int32  `key:"filename.offset.zero.pad.width" default:"10" validate:"min=0" importance:"low" group:"Connector" doc:"Width to zero-pad offsets in store's filenames if offsets are too short in order to provide fixed-width filenames that can be ordered by simple lexicographic sorting."`
	FlushSize    int32  `key:"flush.size" validate:"min=1" importance:"high" group:"Connector" doc:"Number of records written to store before invoking file commits."`
	RotateMs     int64  `key:"rotate.interval.ms" default:"-1" importance:"high" group:"Connector" doc:"The time interval in milliseconds to invoke file commits, by the timestamp extractor's time: a file is committed once a record's time is this far past its first record's. -1 disables it."`
	ScheduleMs   int64  `key:"rotate.schedule.interval.ms" default:"-1" importance:"medium" group:"Connector" doc:"The time interval in milliseconds to periodically invoke file commits, by wall clock, aligned to midnight of timezone (which it needs). -1 disables it. Makes delivery at-least-once."`
	Format       string `key:"format.class" importance:"high" group:"Connector" doc:"The format class to use when writing data to the store: JsonFormat, AvroFormat, ParquetFormat or ByteArrayFormat (io.confluent.connect.s3.format.*)."`
	KeysFormat   string `key:"keys.format.class" default:"io.confluent.connect.s3.format.avro.AvroFormat" importance:"low" group:"Connector" doc:"The format class to use when writing keys to the store (store.kafka.keys)."`
	HdrsFormat   string `key:"headers.format.class" default:"io.confluent.connect.s3.format.avro.AvroFormat" importance:"low" group:"Connector" doc:"The format class to use when writing headers to the store (store.kafka.headers)."`
	StoreKeys    bool   `key:"store.kafka.keys" default:"false" importance:"low" group:"Connector" doc:"Enable or disable writing keys to storage, in a file beside each data file (<name>.keys.<ext>)."`
	StoreHdrs    bool   `key:"store.kafka.headers" default:"false" importance:"low" group:"Connector" doc:"Enable or disable writing headers to storage, in a file beside each data file (<name>.headers.<ext>)."`
	ParquetCodec string `key:"parquet.codec" default:"snappy" importance:"low" group:"Connector" doc:"The Parquet compression codec: none, snappy, gzip, zstd (lz4 and brotli are not supported)."`
	AvroCodec    string `key:"avro.codec" default:"null" importance:"low" group:"Connector" doc:"The Avro compression codec: null, deflate, snappy or zstandard (bzip2 and xz are not supported)."`
	OnNull       string `key:"behavior.on.null.values" default:"fail" importance:"low" group:"Connector" doc:"How to handle records with a null value (tombstones): fail, ignore, or write (the key, and headers, go to keys files under the tombstone.encoded.partition directory; needs store.kafka.keys)."`
	TombstoneDir string `key:"tombstone.encoded.partition" default:"tombstone" importance:"low" group:"Connector" doc:"Output directory (encoded partition) for tombstones when behavior.on.null.values=write."`
	Compat       string `key:"schema.compatibility" default:"NONE" importance:"high" group:"Schema" doc:"The schema compatibility rule: NONE rotates the file on any schema change; BACKWARD and FULL project records of an older schema version onto the newest seen (and rotate when a newer version arrives); FORWARD projects newer ones onto the oldest."`
	ByteArrayExt string `key:"format.bytearray.extension" default:".bin" importance:"low" group:"Connector" doc:"Output file extension for ByteArrayFormat."`
	ByteArraySep string `key:"format.bytearray.separator" default:"\n" importance:"low" group:"Connector" doc:"String inserted between records for ByteArrayFormat."`
	DecimalFmt   string `key:"json.decimal.format" default:"BASE64" importance:"low" group:"Connector" doc:"How JsonFormat writes decimals: BASE64 or NUMERIC."`

	Partitioner    string   `key:"partitioner.class" default:"io.confluent.connect.storage.partitioner.DefaultPartitioner" importance:"high" group:"Partitioner" doc:"The partitioner: DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner, DailyPartitioner or HourlyPartitioner (io.confluent.connect.storage.partitioner.*)."`
	FieldNames     []string `key:"partition.field.name" default:"" importance:"medium" group:"Partitioner" doc:"The name of the partitioning field(s) when FieldPartitioner is used."`
	PathFormat     string   `key:"path.format" default:"" importance:"medium" group:"Partitioner" doc:"Joda-Time pattern of the directories of TimeBasedPartitioner, e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH."`
	DurationMs     int64    `key:"partition.duration.ms" default:"-1" importance:"medium" group:"Partitioner" doc:"The duration of a partition in milliseconds, used by TimeBasedPartitioner."`
	Locale         string   `key:"locale" default:"" importance:"medium" group:"Partitioner" doc:"The locale to use when partitioning with TimeBasedPartitioner (month and day names are English)."`
	Timezone       string   `key:"timezone" default:"" importance:"medium" group:"Partitioner" doc:"The timezone of TimeBasedPartitioner and of rotate.schedule.interval.ms: a zone ID (UTC, Europe/Paris) or an offset (+02:00)."`
	Extractor      string   `key:"timestamp.extractor" default:"Wallclock" importance:"medium" group:"Partitioner" doc:"The extractor of the timestamp of records for TimeBasedPartitioner: Wallclock, Record (the Kafka timestamp) or RecordField (timestamp.field). Wallclock makes delivery at-least-once."`
	TimestampField string   `key:"timestamp.field" default:"timestamp" importance:"medium" group:"Partitioner" doc:"The record field (dotted for nested fields) holding the timestamp for RecordField: epoch milliseconds, a Timestamp, or an ISO-8601 string."`

	MemoryMax int64 `key:"memory.buffer.max.bytes" default:"67108864" validate:"min=1048576" importance:"medium" group:"Connector" doc:"Bound on the bytes a task holds in memory for its open files (encoders' buffers plus not yet uploaded data). When reached, the largest open file's buffered data is moved to a local spill file (or uploaded as a multipart part), so the task's memory stays about this bound plus a fixed overhead whatever the number of partitions. Does not change the files written."`
}

// Class is the connector class, Confluent's.
const Class = "io.confluent.connect.s3.S3SinkConnector"

// formatName resolves a format class (full, simple or short name) to one of
// json, avro, parquet, bytearray.
func formatName(class string) (string, bool) {
	simple := class[strings.LastIndex(class, ".")+1:]
	switch strings.ToLower(strings.TrimSuffix(simple, "Format")) {
	case "json":
		return "json", true
	case "avro":
		return "avro", true
	case "parquet":
		return "parquet", true
	case "bytearray":
		return "bytearray", true
	}
	return "", false
}

// partitionerName resolves a partitioner class to default, field,
// timebased, daily or hourly.
func partitionerName(class string) (string, bool) {
	simple := class[strings.LastIndex(class, ".")+1:]
	switch strings.ToLower(strings.TrimSuffix(simple, "Partitioner")) {
	case "default", "":
		return "default", true
	case "field":
		return "field", true
	case "timebased":
		return "timebased", true
	case "daily":
		return "daily", true
	case "hourly":
		return "hourly", true
	}
	return "", false
}

// fileStoreDir returns the directory of a file:// store URL.
func fileStoreDir(storeURL string) (string, bool) {
	u, err := url.Parse(storeURL)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	if u.Path == "" {
		return u.Opaque, true
	}
	return u.Path, true
}

func oneOf(v string, allowed ...string) bool {
	return slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, v) })
}

// Validate checks the rules that involve more than one key, with the
// messages Confluent's connector gives where it has one.
func (c *Config) Validate() []sdk.FieldError {
	var errs []sdk.FieldError
	bad := func(key, format string, a ...any) {
		errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf(format, a...)})
	}
	_, isFile := fileStoreDir(c.StoreURL)
	if c.StoreURL != "" && !isFile {
		u, err := url.Parse(c.StoreURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("store.url", "must be an http(s):// endpoint or a file:// directory, not %q", c.StoreURL)
		}
	}
	if !isFile && c.Bucket == "" {
		bad("s3.bucket.name", "Missing required configuration \"s3.bucket.name\" which has no default value.")
	}
	if (c.AccessKeyID == "") != (c.SecretKey == "") {
		bad("aws.access.key.id", "aws.access.key.id and aws.secret.access.key must be set together (or both left empty for the default credentials chain)")
	}
	if _, ok := formatName(c.Format); !ok {
		bad("format.class", "Invalid value %s for configuration format.class: not one of JsonFormat, AvroFormat, ParquetFormat, ByteArrayFormat", c.Format)
	}
	if _, ok := formatName(c.KeysFormat); !ok {
		bad("keys.format.class", "Invalid value %s: not one of JsonFormat, AvroFormat, ParquetFormat, ByteArrayFormat", c.KeysFormat)
	}
	if f, ok := formatName(c.HdrsFormat); !ok || f == "bytearray" {
		bad("headers.format.class", "Invalid value %s: not one of JsonFormat, AvroFormat, ParquetFormat", c.HdrsFormat)
	}
	if !oneOf(c.Compression, "none", "gzip") {
		bad("s3.compression.type", "Invalid value %s: must be none or gzip", c.Compression)
	}
	if !oneOf(c.ParquetCodec, "none", "uncompressed", "snappy", "gzip", "zstd") {
		bad("parquet.codec", "Invalid value %s: must be none, snappy, gzip or zstd", c.ParquetCodec)
	}
	if !oneOf(c.AvroCodec, "null", "deflate", "snappy", "zstandard") {
		bad("avro.codec", "Invalid value %s: must be null, deflate, snappy or zstandard", c.AvroCodec)
	}
	if !oneOf(c.OnNull, "fail", "ignore", "write") {
		bad("behavior.on.null.values", "Invalid value %s: must be fail, ignore or write", c.OnNull)
	} else if strings.EqualFold(c.OnNull, "write") && !c.StoreKeys {
		bad("behavior.on.null.values", "behavior.on.null.values=write needs store.kafka.keys=true: tombstones are written to keys files")
	}
	if !oneOf(c.Compat, "NONE", "BACKWARD", "FORWARD", "FULL") {
		bad("schema.compatibility", "Invalid value %s: must be NONE, BACKWARD, FORWARD or FULL", c.Compat)
	}
	if !oneOf(c.DecimalFmt, "BASE64", "NUMERIC") {
		bad("json.decimal.format", "Invalid value %s: must be BASE64 or NUMERIC", c.DecimalFmt)
	}
	if c.DirDelim == "" {
		bad("directory.delim", "must not be empty")
	}
	if c.ScheduleMs > 0 && c.Timezone == "" {
		bad("timezone", "rotate.schedule.interval.ms needs a timezone")
	}
	if c.Timezone != "" {
		if _, err := loadZone(c.Timezone); err != nil {
			bad("timezone", "%v", err)
		}
	}
	p, ok := partitionerName(c.Partitioner)
	if !ok {
		bad("partitioner.class", "Invalid value %s: not one of DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner, DailyPartitioner, HourlyPartitioner", c.Partitioner)
	}
	switch p {
	case "field":
		if len(c.FieldNames) == 0 {
			bad("partition.field.name", "FieldPartitioner needs partition.field.name")
		}
	case "timebased", "daily", "hourly":
		if p == "timebased" {
			if c.DurationMs <= 0 {
				bad("partition.duration.ms", "Partition duration needs to be a positive.")
			}
			if strings.TrimSpace(c.PathFormat) == "" || c.PathFormat == c.DirDelim {
				bad("path.format", "Path format cannot be empty.")
			} else if _, err := parseJoda(c.PathFormat); err != nil {
				bad("path.format", "%v", err)
			}
		}
		if strings.TrimSpace(c.Locale) == "" {
			bad("locale", "Locale cannot be empty.")
		}
		if strings.TrimSpace(c.Timezone) == "" {
			bad("timezone", "Timezone cannot be empty.")
		}
		if !oneOf(c.Extractor, "Wallclock", "Record", "RecordField") {
			bad("timestamp.extractor", "Invalid timestamp extractor: %s (Wallclock, Record or RecordField)", c.Extractor)
		}
	}
	return errs
}
