package mongodb

import (
	"regexp"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// builtinDBs are never captured.
var builtinDBs = []string{"admin", "config", "local"}

// filters decide which databases and collections are captured, as
// Debezium's Filters do: an include or an exclude list per level, each entry
// a regular expression matching the whole name case-insensitively, or an
// exact name with filters.match.mode=literal.
type filters struct {
	literal                bool
	dbInclude, dbExclude   []string
	colInclude, colExclude []string
	snapshot               []*regexp.Regexp
	re                     map[string]*regexp.Regexp
	fields                 []fieldExclude
}

func newFilters(c *Config) (*filters, error) {
	f := &filters{
		literal:   c.FiltersMatchMode == "literal",
		dbInclude: trimAll(c.DatabaseInclude), dbExclude: trimAll(c.DatabaseExclude),
		colInclude: trimAll(c.CollectionInclude), colExclude: trimAll(c.CollectionExclude),
		re: map[string]*regexp.Regexp{},
	}
	if !f.literal {
		for _, list := range [][]string{f.dbInclude, f.dbExclude, f.colInclude, f.colExclude} {
			for _, p := range list {
				re, err := regexp.Compile("(?i)^(?:" + p + ")$")
				if err != nil {
					return nil, err
				}
				f.re[p] = re
			}
		}
	}
	for _, p := range trimAll(c.SnapshotCollections) {
		re, err := regexp.Compile("(?i)^(?:" + p + ")$")
		if err != nil {
			return nil, err
		}
		f.snapshot = append(f.snapshot, re)
	}
	var err error
	f.fields, err = parseFieldExcludes(c.FieldExclude)
	return f, err
}

func trimAll(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (f *filters) matchAny(list []string, name string) bool {
	for _, p := range list {
		if f.literal {
			if p == name {
				return true
			}
		} else if f.re[p].MatchString(name) {
			return true
		}
	}
	return false
}

// database reports whether database db may hold captured collections.
func (f *filters) database(db string) bool {
	if slices.Contains(builtinDBs, db) {
		return false
	}
	switch {
	case len(f.dbInclude) > 0:
		return f.matchAny(f.dbInclude, db)
	case len(f.dbExclude) > 0:
		return !f.matchAny(f.dbExclude, db)
	}
	return true
}

// collection reports whether collection db.coll is captured.
func (f *filters) collection(db, coll string) bool {
	if !f.database(db) || strings.HasPrefix(coll, "system.") {
		return false
	}
	ns := db + "." + coll
	switch {
	case len(f.colInclude) > 0:
		return f.matchAny(f.colInclude, ns)
	case len(f.colExclude) > 0:
		return !f.matchAny(f.colExclude, ns)
	}
	return true
}

// snapshotted reports whether a captured collection is part of snapshots.
func (f *filters) snapshotted(ns string) bool {
	if len(f.snapshot) == 0 {
		return true
	}
	for _, re := range f.snapshot {
		if re.MatchString(ns) {
			return true
		}
	}
	return false
}

// excluded returns the field paths field.exclude.list removes from the
// documents of namespace ns.
func (f *filters) excluded(ns string) exclusions {
	var out exclusions
	for _, fe := range f.fields {
		if fe.ns.MatchString(ns) {
			out = append(out, fe.path)
		}
	}
	return out
}

// matchStage is the change stream's $match on the namespaces and operation
// types the connector captures, evaluated by the server. The connector
// checks each event with collection too.
func (f *filters) matchStage() bson.D {
	and := bson.A{bson.D{{Key: "operationType", Value: bson.D{{Key: "$in", Value: bson.A{"insert", "update", "replace", "delete"}}}}}}
	ns := func(field string, list []string, exclude bool) {
		if len(list) == 0 {
			return
		}
		var cond bson.D
		if f.literal {
			vals := bson.A{}
			for _, s := range list {
				vals = append(vals, s)
			}
			op := "$in"
			if exclude {
				op = "$nin"
			}
			cond = bson.D{{Key: op, Value: vals}}
		} else {
			re := bson.Regex{Pattern: "^(?:" + strings.Join(list, "|") + ")$", Options: "i"}
			if exclude {
				cond = bson.D{{Key: "$not", Value: re}}
			} else {
				cond = bson.D{{Key: "$regex", Value: re.Pattern}, {Key: "$options", Value: "i"}}
			}
		}
		and = append(and, bson.D{{Key: field, Value: cond}})
	}
	ns("ns.db", f.dbInclude, false)
	ns("ns.db", f.dbExclude, true)
	// The namespace "<db>.<coll>" as one string, for the collection lists.
	nsExpr := bson.D{{Key: "$concat", Value: bson.A{"$ns.db", ".", "$ns.coll"}}}
	if len(f.colInclude) > 0 || len(f.colExclude) > 0 {
		list, exclude := f.colInclude, false
		if len(list) == 0 {
			list, exclude = f.colExclude, true
		}
		var expr bson.D
		if f.literal {
			vals := bson.A{}
			for _, s := range list {
				vals = append(vals, s)
			}
			expr = bson.D{{Key: "$in", Value: bson.A{nsExpr, vals}}}
		} else {
			expr = bson.D{{Key: "$regexMatch", Value: bson.D{
				{Key: "input", Value: nsExpr},
				{Key: "regex", Value: "^(?:" + strings.Join(list, "|") + ")$"},
				{Key: "options", Value: "i"},
			}}}
		}
		if exclude {
			expr = bson.D{{Key: "$not", Value: bson.A{expr}}}
		}
		and = append(and, bson.D{{Key: "$expr", Value: expr}})
	}
	return bson.D{{Key: "$match", Value: bson.D{{Key: "$and", Value: and}}}}
}
