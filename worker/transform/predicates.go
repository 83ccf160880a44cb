package transform

// The predicates of Kafka Connect (org.apache.kafka.connect.transforms.predicates).

var topicNameMatchesKeys = []Key{
	{Name: "pattern", Type: TypeString, Default: NoDefault, Validator: all(nonEmptyString, javaRegex), Importance: "MEDIUM",
		Doc: "A Java regular expression for matching against the name of a record's topic."},
}

// topicNameMatches is TopicNameMatches: the whole topic matches pattern.
type topicNameMatches struct {
	re *javaRegexp
	// last remembers the latest topic and answer.
	last    string
	lastHit bool
	primed  bool
}

func newTopicNameMatches(c Config) (Predicate, error) {
	re, err := compileJava(c.String("pattern"))
	if err != nil {
		return nil, invalid("pattern", c.String("pattern"), "entry must be a Java-compatible regular expression: "+err.Error())
	}
	return &topicNameMatches{re: re}, nil
}

func (p *topicNameMatches) Test(r *Record) bool {
	if !p.primed || r.Topic != p.last {
		p.last, p.lastHit, p.primed = r.Topic, p.re.matches(r.Topic), true
	}
	return p.lastHit
}

var hasHeaderKeyKeys = []Key{
	{Name: "name", Type: TypeString, Default: NoDefault, Validator: nonEmptyString, Importance: "MEDIUM", Doc: "The header name."},
}

// hasHeaderKey is HasHeaderKey: the record has a header of that name.
type hasHeaderKey struct{ name string }

func newHasHeaderKey(c Config) (Predicate, error) { return hasHeaderKey{c.String("name")}, nil }

func (p hasHeaderKey) Test(r *Record) bool {
	for _, h := range r.Headers {
		if h.Key == p.name {
			return true
		}
	}
	return false
}

// recordIsTombstone is RecordIsTombstone: the value is null.
type recordIsTombstone struct{}

func newRecordIsTombstone(Config) (Predicate, error) { return recordIsTombstone{}, nil }

func (recordIsTombstone) Test(r *Record) bool { return r.Value == nil }
