package transform

import (
	"strings"
)

// RegexRouter, TimestampRouter and Filter: transformations of the whole
// record.

var regexRouterKeys = []Key{
	{Name: "regex", Type: TypeString, Default: NoDefault, Validator: javaRegex, Importance: "HIGH",
		Doc: "Regular expression to use for matching."},
	{Name: "replacement", Type: TypeString, Default: NoDefault, Importance: "HIGH", Doc: "Replacement string."},
}

// regexRouter is org.apache.kafka.connect.transforms.RegexRouter: a topic
// the regex matches whole is replaced (Matcher.replaceFirst).
type regexRouter struct {
	re          *javaRegexp
	replacement string
	// last caches the latest routing: a task's records mostly share a
	// topic.
	lastIn, lastOut string
}

func newRegexRouter(c Config) (Transformation, error) {
	re, err := compileJava(c.String("regex"))
	if err != nil {
		return nil, err
	}
	return &regexRouter{re: re, replacement: c.String("replacement")}, nil
}

func (t *regexRouter) Apply(r *Record) (bool, error) {
	if t.lastIn != "" && r.Topic == t.lastIn {
		r.Topic = t.lastOut
		return true, nil
	}
	if !t.re.matches(r.Topic) {
		return true, nil
	}
	out, err := t.re.replaceFirst(r.Topic, t.replacement)
	if err != nil {
		return false, err
	}
	t.lastIn, t.lastOut = r.Topic, out
	r.Topic = out
	return true, nil
}

var timestampRouterKeys = []Key{
	{Name: "topic.format", Type: TypeString, Default: "${topic}-${timestamp}", Importance: "HIGH",
		Doc: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."},
	{Name: "timestamp.format", Type: TypeString, Default: "yyyyMMdd", Importance: "HIGH",
		Doc: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."},
}

// timestampRouter is org.apache.kafka.connect.transforms.TimestampRouter.
type timestampRouter struct {
	topicFormat string
	format      *dateFormat
}

func newTimestampRouter(c Config) (Transformation, error) {
	f, err := newDateFormat(c.String("timestamp.format"))
	if err != nil {
		return nil, err
	}
	return &timestampRouter{topicFormat: c.String("topic.format"), format: f}, nil
}

func (t *timestampRouter) Apply(r *Record) (bool, error) {
	if r.Timestamp.IsZero() {
		return false, dataErr("Timestamp missing on record: %s", recordString(r))
	}
	ts := t.format.format(r.Timestamp.UnixMilli())
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	r.Topic = strings.ReplaceAll(topic, "${timestamp}", ts)
	return true, nil
}

// recordString is a short rendering of a record for error messages.
func recordString(r *Record) string {
	kind := "SourceRecord"
	if r.Sink {
		kind = "SinkRecord"
	}
	return kind + "{topic='" + r.Topic + "'}"
}

// filter is org.apache.kafka.connect.transforms.Filter: it drops every
// record (with a predicate, the ones it matches).
type filter struct{}

func newFilter(Config) (Transformation, error) { return filter{}, nil }

func (filter) Apply(*Record) (bool, error) { return false, nil }
