package kafkarest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// format is an embedded data format of the v2 API.
type format int

const (
	formatNone format = iota
	formatBinary
	formatJSON
	formatAvro
	formatProtobuf
	formatJSONSchema
)

var formatNames = map[string]format{
	"binary": formatBinary, "json": formatJSON, "avro": formatAvro,
	"protobuf": formatProtobuf, "jsonschema": formatJSONSchema,
}

func (f format) String() string {
	for n, v := range formatNames {
		if v == f {
			return n
		}
	}
	return "none"
}

// needsRegistry reports whether f's records go through a schema registry.
func (f format) needsRegistry() bool {
	return f == formatAvro || f == formatProtobuf || f == formatJSONSchema
}

// registryType is f's schemaType in the registry's REST API.
func (f format) registryType() string {
	switch f {
	case formatJSONSchema:
		return "JSON"
	case formatProtobuf:
		return "PROTOBUF"
	}
	return "AVRO"
}

// v3Type is f's type in v3 produce requests and delivery reports.
func (f format) v3Type() string {
	if f == formatJSONSchema {
		return "JSONSCHEMA"
	}
	return f.registryType()
}

// formatOfRegistryType is the schema format of a registry schemaType (""
// is Avro, the registry's default).
func formatOfRegistryType(t string) (format, bool) {
	switch strings.ToUpper(t) {
	case "", "AVRO":
		return formatAvro, true
	case "JSON":
		return formatJSONSchema, true
	case "PROTOBUF":
		return formatProtobuf, true
	}
	return formatNone, false
}

// formatOfV3Type is the schema format of a v3 type; false for the types
// without a schema (BINARY, JSON, STRING) and unknown ones.
func formatOfV3Type(t string) (format, bool) {
	switch strings.ToUpper(t) {
	case "AVRO":
		return formatAvro, true
	case "JSONSCHEMA":
		return formatJSONSchema, true
	case "PROTOBUF":
		return formatProtobuf, true
	}
	return formatNone, false
}

// v2ContentType is the v2 responses' media type.
const v2ContentType = "application/vnd.kafka.v2+json"

// parseV2MediaType reads application/vnd.kafka.{format}.v2+json; ok is
// false for any other media type.
func parseV2MediaType(s string) (f format, ok bool) {
	mt, _, err := mime.ParseMediaType(s)
	if err != nil {
		return formatNone, false
	}
	rest, found := strings.CutPrefix(mt, "application/vnd.kafka.")
	if !found {
		return formatNone, false
	}
	name, found := strings.CutSuffix(rest, ".v2+json")
	if !found {
		return formatNone, false
	}
	f, ok = formatNames[name]
	return f, ok
}

// acceptedFormat picks the embedded format an Accept header asks for:
// formatNone when it names none (any, or application/json).
func acceptedFormat(accept string) format {
	for part := range strings.SplitSeq(accept, ",") {
		if f, ok := parseV2MediaType(strings.TrimSpace(part)); ok {
			return f
		}
	}
	return formatNone
}

// v2Record is one record of a v2 produce request, decoded.
type v2Record struct {
	Key, Value []byte // nil: null
	Partition  int32  // -1: not given
}

// v2ProduceBody is a v2 produce request's body, in every format: the
// schema fields matter only to the schema formats.
type v2ProduceBody struct {
	KeySchema     *string `json:"key_schema"`
	KeySchemaID   *int    `json:"key_schema_id"`
	ValueSchema   *string `json:"value_schema"`
	ValueSchemaID *int    `json:"value_schema_id"`
	Records       []struct {
		Key       json.RawMessage `json:"key"`
		Value     json.RawMessage `json:"value"`
		Partition *int32          `json:"partition"`
	} `json:"records"`
}

// decodeV2Produce decodes a v2 produce body, refusing one without records.
func decodeV2Produce(body []byte) (*v2ProduceBody, *Error) {
	var req v2ProduceBody
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if req.Records == nil {
		return nil, unprocessable("records may not be null")
	}
	if len(req.Records) == 0 {
		return nil, unprocessable("records may not be empty")
	}
	return &req, nil
}

// parseV2Produce decodes a v2 produce body in embedded format f. Nothing is
// produced unless the whole body is valid.
func parseV2Produce(f format, body []byte) ([]v2Record, *Error) {
	req, err := decodeV2Produce(body)
	if err != nil {
		return nil, err
	}
	if f.needsRegistry() {
		return nil, errRegistryMissing
	}
	out := make([]v2Record, len(req.Records))
	for i, r := range req.Records {
		out[i].Partition = -1
		if r.Partition != nil {
			if *r.Partition < 0 {
				return nil, unprocessable("records[%d].partition: must be >= 0", i)
			}
			out[i].Partition = *r.Partition
		}
		var err error
		if out[i].Key, err = embeddedBytes(f, r.Key); err != nil {
			return nil, errorf(http.StatusUnprocessableEntity, codeConversion, "Conversion of JSON to %s failed: records[%d].key: %v", f, i, err)
		}
		if out[i].Value, err = embeddedBytes(f, r.Value); err != nil {
			return nil, errorf(http.StatusUnprocessableEntity, codeConversion, "Conversion of JSON to %s failed: records[%d].value: %v", f, i, err)
		}
	}
	return out, nil
}

// embeddedBytes is the record bytes of a key or value given as raw JSON in
// format f: a base64 string for binary, any JSON (compacted) for json;
// absent or null is a null key or value.
func embeddedBytes(f format, raw json.RawMessage) ([]byte, error) {
	if isNull(raw) {
		return nil, nil
	}
	switch f {
	case formatBinary:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("want a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("not base64: %v", err)
		}
		return b, nil
	default:
		return compact(raw)
	}
}

// compact is raw JSON without insignificant white space, as Confluent's
// Jackson writes it; raw without any white space byte is that already (the
// decoder that gave it checked it is valid JSON).
func compact(raw json.RawMessage) ([]byte, error) {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return raw, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// decodeStrict decodes one JSON value from body into v: a syntax error or a
// field of the wrong type is a 400 naming it, trailing data too.
func decodeStrict(body []byte, v any) *Error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("Unexpected data after the JSON body")
	}
	return nil
}

// jsonError is the 400 for a body that does not decode, naming the field
// when the value had the wrong type.
func jsonError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the body"
		}
		return unprocessable("%s: cannot be a JSON %s (want %s)", field, te.Value, te.Type)
	}
	return badRequest("Error processing JSON: %v", err)
}

// topicPartition names a partition in the consumer bodies.
type topicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// topicPartitionOffset is a partition with an offset (positions, commits).
type topicPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// consumerCreate is the body of POST /consumers/{group}.
type consumerCreate struct {
	Name            string
	Format          format
	AutoOffsetReset string // earliest, latest (default) or none
	AutoCommit      bool   // default true
	FetchMinBytes   int32  // -1: default
	RequestTimeout  int    // consumer.request.timeout.ms, 0: default
}

// parseConsumerCreate decodes and checks the body of POST /consumers/{group}.
func parseConsumerCreate(body []byte) (consumerCreate, *Error) {
	c := consumerCreate{Format: formatBinary, AutoOffsetReset: "latest", AutoCommit: true, FetchMinBytes: -1}
	if len(bytes.TrimSpace(body)) == 0 {
		return c, nil
	}
	var req struct {
		Name            *string `json:"name"`
		ID              *string `json:"id"`
		Format          *string `json:"format"`
		AutoOffsetReset *string `json:"auto.offset.reset"`
		AutoCommit      *string `json:"auto.commit.enable"`
		FetchMinBytes   *string `json:"fetch.min.bytes"`
		RequestTimeout  *string `json:"consumer.request.timeout.ms"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return c, err
	}
	if req.Name != nil {
		c.Name = *req.Name
	} else if req.ID != nil {
		c.Name = *req.ID
	}
	if strings.ContainsAny(c.Name, "/?#%") {
		return c, unprocessable("name: %q may not contain '/', '?', '#' or '%%'", c.Name)
	}
	if req.Format != nil {
		f, ok := formatNames[strings.ToLower(*req.Format)]
		if !ok {
			return c, errorf(http.StatusUnprocessableEntity, codeInvalidConsumerConfig, "Invalid consumer configuration: format: %q is not binary, json, avro, protobuf or jsonschema", *req.Format)
		}
		c.Format = f
	}
	if req.AutoOffsetReset != nil {
		switch v := strings.ToLower(*req.AutoOffsetReset); v {
		case "earliest", "latest", "none":
			c.AutoOffsetReset = v
		default:
			return c, errorf(http.StatusUnprocessableEntity, codeInvalidConsumerConfig, "Invalid consumer configuration: auto.offset.reset: %q is not earliest, latest or none", *req.AutoOffsetReset)
		}
	}
	if req.AutoCommit != nil {
		switch strings.ToLower(*req.AutoCommit) {
		case "true":
			c.AutoCommit = true
		case "false":
			c.AutoCommit = false
		default:
			return c, errorf(http.StatusUnprocessableEntity, codeInvalidConsumerConfig, "Invalid consumer configuration: auto.commit.enable: %q is not true or false", *req.AutoCommit)
		}
	}
	if req.FetchMinBytes != nil {
		var n int32
		if _, err := fmt.Sscan(*req.FetchMinBytes, &n); err != nil || n < 0 {
			return c, errorf(http.StatusUnprocessableEntity, codeInvalidConsumerConfig, "Invalid consumer configuration: fetch.min.bytes: %q is not a non-negative integer", *req.FetchMinBytes)
		}
		c.FetchMinBytes = n
	}
	if req.RequestTimeout != nil {
		var n int
		if _, err := fmt.Sscan(*req.RequestTimeout, &n); err != nil || n < 0 {
			return c, errorf(http.StatusUnprocessableEntity, codeInvalidConsumerConfig, "Invalid consumer configuration: consumer.request.timeout.ms: %q is not a non-negative integer", *req.RequestTimeout)
		}
		c.RequestTimeout = n
	}
	return c, nil
}

// subscription is the body of POST …/subscription: topics or a pattern.
type subscription struct {
	Topics  []string
	Pattern string
}

func parseSubscription(body []byte) (subscription, *Error) {
	var req struct {
		Topics       []string `json:"topics"`
		TopicPattern *string  `json:"topic_pattern"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return subscription{}, err
	}
	switch {
	case len(req.Topics) > 0 && req.TopicPattern != nil:
		return subscription{}, unprocessable("topics and topic_pattern: give one, not both")
	case req.TopicPattern != nil:
		if *req.TopicPattern == "" {
			return subscription{}, unprocessable("topic_pattern may not be empty")
		}
		return subscription{Pattern: *req.TopicPattern}, nil
	case len(req.Topics) == 0:
		return subscription{}, unprocessable("topics: give at least one topic, or topic_pattern")
	}
	for i, t := range req.Topics {
		if t == "" {
			return subscription{}, unprocessable("topics[%d] may not be empty", i)
		}
	}
	return subscription{Topics: req.Topics}, nil
}

// parsePartitions decodes {"partitions":[{"topic":…,"partition":…}]}.
func parsePartitions(body []byte, allowEmpty bool) ([]topicPartition, *Error) {
	var req struct {
		Partitions []topicPartition `json:"partitions"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if len(req.Partitions) == 0 && !allowEmpty {
		return nil, unprocessable("partitions may not be empty")
	}
	for i, p := range req.Partitions {
		if p.Topic == "" {
			return nil, unprocessable("partitions[%d].topic may not be empty", i)
		}
		if p.Partition < 0 {
			return nil, unprocessable("partitions[%d].partition must be >= 0", i)
		}
	}
	return req.Partitions, nil
}

// parseOffsets decodes {"offsets":[{"topic","partition","offset"}]}; an
// empty body is no offsets (commit what was returned).
func parseOffsets(body []byte, allowEmpty bool) ([]topicPartitionOffset, *Error) {
	if allowEmpty && len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var req struct {
		Offsets []topicPartitionOffset `json:"offsets"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if len(req.Offsets) == 0 && !allowEmpty {
		return nil, unprocessable("offsets may not be empty")
	}
	for i, o := range req.Offsets {
		if o.Topic == "" {
			return nil, unprocessable("offsets[%d].topic may not be empty", i)
		}
		if o.Partition < 0 {
			return nil, unprocessable("offsets[%d].partition must be >= 0", i)
		}
		if o.Offset < 0 {
			return nil, unprocessable("offsets[%d].offset must be >= 0", i)
		}
	}
	return req.Offsets, nil
}

// v3Data is the key or value of a v3 produce request.
type v3Data struct {
	Type                *string         `json:"type"`
	Data                json.RawMessage `json:"data"`
	Subject             *string         `json:"subject"`
	SubjectNameStrategy *string         `json:"subject_name_strategy"`
	SchemaID            *int            `json:"schema_id"`
	SchemaVersion       *int            `json:"schema_version"`
	Schema              *string         `json:"schema"`
}

// v3Produce is one record of a v3 produce request.
type v3Produce struct {
	PartitionID *int32 `json:"partition_id"`
	Headers     []struct {
		Name  string  `json:"name"`
		Value *string `json:"value"`
	} `json:"headers"`
	Key       *v3Data    `json:"key"`
	Value     *v3Data    `json:"value"`
	Timestamp *time.Time `json:"timestamp"`
}

// v3Payload is a key or value decoded: its bytes, type and size.
type v3Payload struct {
	Bytes         []byte
	Type          string // "" when absent
	SchemaID      int    // of AVRO, PROTOBUF and JSONSCHEMA payloads
	SchemaVersion int    // 0: not known
	Subject       string
}

// v3Header is a decoded header.
type v3Header struct {
	Key   string
	Value []byte
}

// v3Record is a v3 produce request decoded.
type v3Record struct {
	Partition  int32 // -1: not given
	Headers    []v3Header
	Key, Value v3Payload
	Timestamp  time.Time // zero: now
}

// decodeV3Record checks and decodes one v3 produce record.
func decodeV3Record(r *v3Produce) (v3Record, *Error) {
	out := v3Record{Partition: -1}
	if r.PartitionID != nil {
		if *r.PartitionID < 0 {
			return out, badRequest("partition_id: must be >= 0")
		}
		out.Partition = *r.PartitionID
	}
	for i, h := range r.Headers {
		if h.Name == "" {
			return out, badRequest("headers[%d].name may not be empty", i)
		}
		var v []byte
		if h.Value != nil {
			b, err := base64.StdEncoding.DecodeString(*h.Value)
			if err != nil {
				return out, badRequest("headers[%d].value: not base64: %v", i, err)
			}
			v = b
		}
		out.Headers = append(out.Headers, v3Header{Key: h.Name, Value: v})
	}
	var err *Error
	if out.Key, err = decodeV3Data("key", r.Key); err != nil {
		return out, err
	}
	if out.Value, err = decodeV3Data("value", r.Value); err != nil {
		return out, err
	}
	if r.Timestamp != nil {
		out.Timestamp = *r.Timestamp
	}
	return out, nil
}

func decodeV3Data(field string, d *v3Data) (v3Payload, *Error) {
	if d == nil {
		return v3Payload{}, nil
	}
	if d.Subject != nil || d.SubjectNameStrategy != nil || d.SchemaID != nil || d.SchemaVersion != nil || d.Schema != nil {
		return v3Payload{}, errRegistryMissing
	}
	if d.Type == nil {
		if d.Data == nil {
			return v3Payload{}, nil
		}
		// Without a type Confluent looks the topic's latest schema up.
		return v3Payload{}, errRegistryMissing
	}
	p := v3Payload{Type: strings.ToUpper(*d.Type)}
	switch p.Type {
	case "BINARY":
		if isNull(d.Data) {
			return p, nil
		}
		var s string
		if err := json.Unmarshal(d.Data, &s); err != nil {
			return p, badRequest("%s.data: a BINARY payload is a base64 string", field)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return p, badRequest("%s.data: not base64: %v", field, err)
		}
		p.Bytes = b
	case "STRING":
		if isNull(d.Data) {
			return p, nil
		}
		var s string
		if err := json.Unmarshal(d.Data, &s); err != nil {
			return p, badRequest("%s.data: a STRING payload is a JSON string", field)
		}
		p.Bytes = []byte(s)
	case "JSON":
		if d.Data == nil {
			return p, nil
		}
		b, err := compact(d.Data)
		if err != nil {
			return p, badRequest("%s.data: %v", field, err)
		}
		p.Bytes = b
	case "AVRO", "PROTOBUF", "JSONSCHEMA":
		return p, errRegistryMissing
	default:
		return p, badRequest("%s.type: %q is not BINARY, JSON, STRING, AVRO, PROTOBUF or JSONSCHEMA", field, *d.Type)
	}
	return p, nil
}

// configKV is a config of a v3 topic creation.
type configKV struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
}

// createTopic is the body of POST /v3/clusters/{id}/topics.
type createTopic struct {
	Name         string
	Partitions   int32 // -1: the broker's default
	Replication  int16 // -1: the broker's default
	Configs      []configKV
	ValidateOnly bool
}

func parseCreateTopic(body []byte) (createTopic, *Error) {
	var req struct {
		TopicName         *string    `json:"topic_name"`
		PartitionsCount   *int32     `json:"partitions_count"`
		ReplicationFactor *int16     `json:"replication_factor"`
		Configs           []configKV `json:"configs"`
		ValidateOnly      bool       `json:"validate_only"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return createTopic{}, err
	}
	if req.TopicName == nil || *req.TopicName == "" {
		return createTopic{}, badRequest("topic_name: missing")
	}
	out := createTopic{Name: *req.TopicName, Partitions: -1, Replication: -1, ValidateOnly: req.ValidateOnly}
	if req.PartitionsCount != nil {
		if *req.PartitionsCount < 1 {
			return out, badRequest("partitions_count: must be at least 1")
		}
		out.Partitions = *req.PartitionsCount
	}
	if req.ReplicationFactor != nil {
		if *req.ReplicationFactor < 1 {
			return out, badRequest("replication_factor: must be at least 1")
		}
		out.Replication = *req.ReplicationFactor
	}
	for i, c := range req.Configs {
		if c.Name == "" {
			return out, badRequest("configs[%d].name: missing", i)
		}
	}
	out.Configs = req.Configs
	return out, nil
}

// parseConfigValue reads {"value": …} of PUT …/configs/{name}.
func parseConfigValue(body []byte) (*string, *Error) {
	var req struct {
		Value *string `json:"value"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	return req.Value, nil
}

// parseAlterConfigs reads the body of POST …/configs:alter.
func parseAlterConfigs(body []byte) ([]kadm.AlterConfig, bool, *Error) {
	var req struct {
		Data []struct {
			Name      string  `json:"name"`
			Value     *string `json:"value"`
			Operation *string `json:"operation"`
		} `json:"data"`
		ValidateOnly bool `json:"validate_only"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, false, err
	}
	if len(req.Data) == 0 {
		return nil, false, badRequest("data: give at least one config")
	}
	var ops []kadm.AlterConfig
	for i, d := range req.Data {
		if d.Name == "" {
			return nil, false, badRequest("data[%d].name: missing", i)
		}
		op := kadm.AlterConfig{Op: kadm.SetConfig, Name: d.Name, Value: d.Value}
		if d.Operation != nil {
			switch strings.ToUpper(*d.Operation) {
			case "SET":
			case "DELETE":
				op = kadm.AlterConfig{Op: kadm.DeleteConfig, Name: d.Name}
			default:
				return nil, false, badRequest("data[%d].operation: %q is not SET or DELETE", i, *d.Operation)
			}
		}
		ops = append(ops, op)
	}
	return ops, req.ValidateOnly, nil
}
