package transform

import (
	"fmt"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// Transformation is a single message transform (Kafka Connect's
// Transformation): Apply changes r, or returns false to drop the record.
// A transformation is used by one task at a time (it may cache schemas
// without locking); an error is the failure of this record alone.
type Transformation interface {
	Apply(r *Record) (keep bool, err error)
}

// Predicate decides whether a transformation applies to a record (Kafka
// Connect's Predicate). Like a Transformation it is used by one task at a
// time.
type Predicate interface {
	Test(r *Record) bool
}

// stage is one transformation of a chain, with its optional predicate.
type stage struct {
	alias, class string
	t            Transformation
	pred         Predicate
	negate       bool
}

// Chain is a connector's transformations in order (Kafka Connect's
// TransformationChain). Build one per task with New; it is not safe for
// concurrent use.
type Chain struct {
	stages []stage
}

// Len is the number of transformations.
func (c *Chain) Len() int {
	if c == nil {
		return 0
	}
	return len(c.stages)
}

// Apply runs r through the chain: false when a transformation dropped it.
// An error is a *StageError naming the transformation that failed.
func (c *Chain) Apply(r *Record) (bool, error) {
	r.ownKey, r.ownValue = false, false
	for i := range c.stages {
		s := &c.stages[i]
		if s.pred != nil && s.pred.Test(r) == s.negate {
			continue
		}
		keep, err := s.t.Apply(r)
		if err != nil {
			return false, &StageError{Alias: s.alias, Class: s.class, Err: err}
		}
		if !keep {
			return false, nil
		}
	}
	return true, nil
}

// Source runs a source record through the chain.
func (c *Chain) Source(rec *sdk.SourceRecord) (bool, error) {
	r := FromSource(rec)
	keep, err := c.Apply(&r)
	if keep && err == nil {
		r.ToSource(rec)
	}
	return keep, err
}

// Sink runs a sink record through the chain.
func (c *Chain) Sink(rec *sdk.SinkRecord) (bool, error) {
	r := FromSink(rec)
	keep, err := c.Apply(&r)
	if keep && err == nil {
		r.ToSink(rec)
	}
	return keep, err
}

// The connector settings of transformations and predicates.
const (
	TransformsKey = "transforms"
	PredicatesKey = "predicates"
)

// aliases parses a transforms or predicates setting (a LIST).
func aliases(props map[string]string, key string) []string {
	v, err := parseType(key, props[key], TypeList)
	if err != nil {
		return nil
	}
	return v.([]string)
}

// withPrefix returns the settings under prefix, without it (Kafka's
// originalsWithPrefix).
func withPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// New builds the chain a connector's settings describe: transforms,
// transforms.<alias>.type and its settings, transforms.<alias>.predicate and
// .negate, predicates and predicates.<alias>.type and settings. Settings
// that Validate accepts always build; an error names the setting at fault.
func New(props map[string]string) (*Chain, error) {
	c := &Chain{}
	for _, alias := range aliases(props, TransformsKey) {
		prefix := TransformsKey + "." + alias + "."
		class := javaTrim(props[prefix+"type"])
		p := lookup(class, KindTransformation)
		if p == nil {
			return nil, fmt.Errorf("%stype: %w", prefix, unknownClass(prefix+"type", props[prefix+"type"]))
		}
		conf := withPrefix(props, prefix)
		predAlias, hasPred := conf["predicate"]
		negate := conf["negate"]
		delete(conf, "predicate")
		delete(conf, "negate")
		t, err := p.transformation(conf)
		if err != nil {
			return nil, fmt.Errorf("transformation %s (%s): %w", alias, p.class, err)
		}
		s := stage{alias: alias, class: p.class, t: t}
		if hasPred && javaTrim(predAlias) != "" {
			predAlias = javaTrim(predAlias)
			pprefix := PredicatesKey + "." + predAlias + "."
			pp := lookup(javaTrim(props[pprefix+"type"]), KindPredicate)
			if pp == nil {
				return nil, fmt.Errorf("%stype: %w", pprefix, unknownClass(pprefix+"type", props[pprefix+"type"]))
			}
			pred, err := pp.predicate(withPrefix(props, pprefix))
			if err != nil {
				return nil, fmt.Errorf("predicate %s (%s): %w", predAlias, pp.class, err)
			}
			s.pred = pred
			s.negate = strings.EqualFold(negate, "true") // Boolean.parseBoolean
		}
		c.stages = append(c.stages, s)
	}
	return c, nil
}

// unknownClass is Kafka's error for a CLASS setting naming no class.
func unknownClass(name, value string) error {
	return invalid(name, value, "Class "+value+" could not be found.")
}
