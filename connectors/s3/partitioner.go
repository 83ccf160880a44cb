package s3

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// partitioner maps a record to its encoded partition, the directory part of
// its object key after the topic, exactly as Confluent's partitioners do.
type partitioner struct {
	kind       string // default, field, timebased (daily and hourly are timebased)
	delim      string
	fields     []string
	zone       *time.Location
	pattern    jodaPattern
	durationMs int64
	// extract is the timestamp extractor of time-based partitioners (nil
	// otherwise); it returns epoch milliseconds.
	extract   func(r *sdk.SinkRecord, nowMs int64) (int64, error)
	wallclock bool
}

// Daily and hourly partitioners are time-based with fixed settings.
const (
	dailyFormat  = "'year'=YYYY/'month'=MM/'day'=dd"
	hourlyFormat = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
)

func newPartitioner(c *Config) (*partitioner, error) {
	kind, ok := partitionerName(c.Partitioner)
	if !ok {
		return nil, fmt.Errorf("s3: unknown partitioner.class %q", c.Partitioner)
	}
	p := &partitioner{kind: kind, delim: c.DirDelim, fields: c.FieldNames}
	if kind == "default" || kind == "field" {
		return p, nil
	}
	format, dur := c.PathFormat, c.DurationMs
	switch kind {
	case "daily":
		format, dur = strings.ReplaceAll(dailyFormat, "/", c.DirDelim), 24*3600*1000
	case "hourly":
		format, dur = strings.ReplaceAll(hourlyFormat, "/", c.DirDelim), 3600*1000
	}
	// A delimiter the user put at the end is dropped, as Confluent does.
	format = strings.TrimSuffix(format, c.DirDelim)
	pat, err := parseJoda(format)
	if err != nil {
		return nil, err
	}
	zone, err := loadZone(c.Timezone)
	if err != nil {
		return nil, err
	}
	p.kind, p.pattern, p.durationMs, p.zone = "timebased", pat, dur, zone
	switch strings.ToLower(c.Extractor) {
	case "wallclock":
		p.wallclock = true
		p.extract = func(_ *sdk.SinkRecord, now int64) (int64, error) { return now, nil }
	case "record":
		p.extract = func(r *sdk.SinkRecord, _ int64) (int64, error) {
			if r.Timestamp.IsZero() {
				return 0, fmt.Errorf("s3: unable to determine timestamp using timestamp.extractor Record for record %s+%d: it has no timestamp", r.Topic, r.Offset)
			}
			return r.Timestamp.UnixMilli(), nil
		}
	case "recordfield":
		field := c.TimestampField
		p.extract = func(r *sdk.SinkRecord, _ int64) (int64, error) { return fieldTimestamp(r, field) }
	default:
		return nil, fmt.Errorf("s3: invalid timestamp extractor: %s", c.Extractor)
	}
	return p, nil
}

// encode returns the record's encoded partition.
func (p *partitioner) encode(r *sdk.SinkRecord, ts int64) (string, error) {
	switch p.kind {
	case "default":
		return "partition=" + strconv.Itoa(int(r.Partition)), nil
	case "field":
		st, ok := r.Value.(*schema.Struct)
		if !ok {
			return "", fmt.Errorf("s3: FieldPartitioner needs struct values, record %s+%d has %T (error encoding partition)", r.Topic, r.Offset, r.Value)
		}
		var b strings.Builder
		for i, name := range p.fields {
			v, s, err := nested(st, name)
			if err != nil {
				return "", err
			}
			if i > 0 {
				b.WriteString(p.delim)
			}
			b.WriteString(name)
			b.WriteByte('=')
			switch s.Type {
			case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64, schema.TypeString, schema.TypeBoolean:
				fmt.Fprint(&b, v)
			default:
				return "", fmt.Errorf("s3: type %s of field %q is not supported as a partition key", s.Type, name)
			}
		}
		return b.String(), nil
	}
	// Time-based: the start of the record's bucket in local time, as Joda's
	// convertUTCToLocal / convertLocalToUTC pair computes it.
	_, off := time.UnixMilli(ts).In(p.zone).Zone()
	local := ts + int64(off)*1000
	bucket := local / p.durationMs * p.durationMs
	_, off2 := time.UnixMilli(bucket - int64(off)*1000).In(p.zone).Zone()
	start := time.UnixMilli(bucket - int64(off2)*1000).In(p.zone)
	return p.pattern.format(start), nil
}

// path is the directory of an encoded partition: topic, delimiter, encoded
// partition (Confluent's generatePartitionedPath).
func (p *partitioner) path(topic, encoded string) string { return topic + p.delim + encoded }

// nested returns the value and schema of a dotted field path in a struct.
func nested(st *schema.Struct, path string) (any, *schema.Schema, error) {
	var cur any = st
	var s *schema.Schema
	for part := range strings.SplitSeq(path, ".") {
		x, ok := cur.(*schema.Struct)
		if !ok {
			return nil, nil, fmt.Errorf("s3: field %q: %q is not a struct", path, part)
		}
		f := x.Schema().Field(part)
		if f == nil {
			return nil, nil, fmt.Errorf("s3: field %q not found in %s", path, x.Schema())
		}
		cur, s = x.GetIndex(f.Index), f.Schema
	}
	return cur, s, nil
}

// fieldTimestamp is the RecordField extractor: an int32/int64 epoch-ms
// field, a Timestamp field, or an ISO-8601 string, in a struct or a map.
func fieldTimestamp(r *sdk.SinkRecord, field string) (int64, error) {
	var v any
	switch x := r.Value.(type) {
	case *schema.Struct:
		fv, _, err := nested(x, field)
		if err != nil {
			return 0, err
		}
		v = fv
	case map[string]any:
		var cur any = x
		for part := range strings.SplitSeq(field, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return 0, fmt.Errorf("s3: error extracting timestamp from record field: %s", field)
			}
			cur = m[part]
		}
		v = cur
	default:
		return 0, fmt.Errorf("s3: value is not of Struct or Map type (record %s+%d)", r.Topic, r.Offset)
	}
	switch t := v.(type) {
	case time.Time:
		return t.UnixMilli(), nil
	case int32:
		return int64(t), nil
	case int64:
		return t, nil
	case float64:
		return int64(t), nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
			if ts, err := time.Parse(layout, t); err == nil {
				return ts.UnixMilli(), nil
			}
		}
		return 0, fmt.Errorf("s3: timestamp field %s: cannot parse %q as ISO-8601", field, t)
	}
	return 0, fmt.Errorf("s3: unsupported type %T for user-defined timestamp field %s", v, field)
}
