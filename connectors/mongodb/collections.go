package mongodb

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// namespace is a captured collection.
type namespace struct{ db, coll string }

func (n namespace) String() string { return n.db + "." + n.coll }

// collections lists the captured collections (not views), sorted by
// namespace, within capture.scope.
func (t *task) collections(ctx context.Context) ([]namespace, error) {
	var dbs []string
	switch t.cfg.CaptureScope {
	case "database":
		dbs = []string{t.cfg.CaptureTarget}
	case "collection":
		db, _, _ := strings.Cut(t.cfg.CaptureTarget, ".")
		dbs = []string{db}
	default:
		var err error
		if dbs, err = t.client.ListDatabaseNames(ctx, bson.D{}); err != nil {
			return nil, fmt.Errorf("mongodb: list databases: %w", err)
		}
	}
	var out []namespace
	for _, db := range dbs {
		if !t.f.database(db) {
			continue
		}
		specs, err := t.client.Database(db).ListCollectionSpecifications(ctx, bson.D{})
		if err != nil {
			return nil, fmt.Errorf("mongodb: list collections of %s: %w", db, err)
		}
		for _, s := range specs {
			if s.Type != "" && s.Type != "collection" {
				continue
			}
			if t.cfg.CaptureScope == "collection" && db+"."+s.Name != t.cfg.CaptureTarget {
				continue
			}
			if t.f.collection(db, s.Name) {
				out = append(out, namespace{db, s.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

func asServerError(err error, se *mongo.ServerError) bool { return errors.As(err, se) }
