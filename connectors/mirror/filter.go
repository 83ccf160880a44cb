package mirror

import (
	"fmt"
	"regexp"
	"strings"
)

// Pattern is a list of Java regular expressions, joined with "|" and
// matched against the whole name (Kafka's MirrorUtils.compilePatternList
// and Matcher.matches). An empty list matches nothing.
type Pattern struct{ re *regexp.Regexp }

// CompilePattern compiles a comma-separated list (or the list items) of
// Java regular expressions. Constructs Go's RE2 lacks (lookaround,
// back-references, possessive quantifiers) are refused with an error.
func CompilePattern(items []string) (Pattern, error) {
	var parts []string
	for _, it := range items {
		if it = strings.TrimSpace(it); it != "" {
			parts = append(parts, it)
		}
	}
	if len(parts) == 0 {
		return Pattern{}, nil
	}
	joined := strings.Join(parts, "|")
	re, err := regexp.Compile(`^(?:` + joined + `)$`)
	if err != nil {
		return Pattern{}, fmt.Errorf("regular expression %q: %w (Java-only constructs such as lookaround, back-references and possessive quantifiers are not supported)", joined, err)
	}
	return Pattern{re: re}, nil
}

// SplitList splits a Kafka LIST value: comma-separated, items trimmed.
func SplitList(v string) []string {
	var out []string
	for _, it := range strings.Split(v, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// Matches reports whether name matches the whole pattern.
func (p Pattern) Matches(name string) bool { return p.re != nil && p.re.MatchString(name) }

// Filter is an include and an exclude pattern (Kafka's DefaultTopicFilter,
// DefaultGroupFilter and DefaultConfigPropertyFilter).
type Filter struct{ Include, Exclude Pattern }

// NewFilter compiles include and exclude lists.
func NewFilter(include, exclude []string) (Filter, error) {
	in, err := CompilePattern(include)
	if err != nil {
		return Filter{}, err
	}
	ex, err := CompilePattern(exclude)
	if err != nil {
		return Filter{}, err
	}
	return Filter{in, ex}, nil
}

// Accepts reports whether name is included and not excluded.
func (f Filter) Accepts(name string) bool { return f.Include.Matches(name) && !f.Exclude.Matches(name) }

// Defaults of the filters' keys.
const (
	DefaultTopics = ".*"
	// DefaultTopicsExclude is Kafka 4.x's DefaultTopicFilter default
	// (connect-mirror 4.3.1): MirrorMaker 2's own internal topics,
	// replicas and __ topics; other topics ending in .internal or
	// -internal are copied.
	DefaultTopicsExclude = `mm2.*\.internal, .*\.replica, __.*`
	DefaultGroups        = ".*"
	DefaultGroupsExclude = "console-consumer-.*, connect-.*, __.*"
	// DefaultConfigPropertiesExclude is DefaultConfigPropertyFilter's
	// config.properties.exclude.
	DefaultConfigPropertiesExclude = `follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, unclean\.leader\.election\.enable, min\.insync\.replicas`
)
