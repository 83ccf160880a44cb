package convert

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// configReader reads typed converter settings, collecting the errors of
// bad values (as Kafka's ConfigDef reports them).
type configReader struct {
	config map[string]string
	errs   []error
}

func (r *configReader) boolean(key string, dst *bool) {
	v, ok := r.config[key]
	if !ok {
		return
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		r.errs = append(r.errs, fmt.Errorf("invalid value %s for configuration %s: expected value to be either true or false", v, key))
	}
}

func (r *configReader) integer(key string, dst *int) {
	v, ok := r.config[key]
	if !ok {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("invalid value %s for configuration %s: not a number of type INT", v, key))
		return
	}
	*dst = n
}

// integerAtLeast reads an integer setting that must be at least low.
func (r *configReader) integerAtLeast(key string, dst *int, low int) {
	n := *dst
	r.integer(key, &n)
	if n < low {
		r.errs = append(r.errs, fmt.Errorf("invalid value %d for configuration %s: value must be at least %d", n, key, low))
		return
	}
	*dst = n
}

// registrySettings are the settings every schema-registry converter takes
// (Confluent's AbstractKafkaSchemaSerDeConfig): the registry client,
// key.subject.name.strategy / value.subject.name.strategy,
// auto.register.schemas (true), use.latest.version (false), use.schema.id
// (-1) and normalize.schemas (false), and how long the latest version of
// a subject is kept for use.latest.version: latest.cache.size (1000
// subjects) and latest.cache.ttl.sec (-1: until evicted; 0: not kept;
// n: n seconds after it was fetched).
type registrySettings struct {
	isKey     bool
	client    *sr.Client
	subject   sr.SubjectNameStrategy
	autoReg   bool
	useLatest bool
	useID     int
	normalize bool
}

// registry reads the registry settings.
func (r *configReader) registry(isKey bool, logger *slog.Logger) registrySettings {
	rs := registrySettings{isKey: isKey, autoReg: true, useID: -1}
	r.boolean("auto.register.schemas", &rs.autoReg)
	r.boolean("use.latest.version", &rs.useLatest)
	r.boolean("normalize.schemas", &rs.normalize)
	r.integer("use.schema.id", &rs.useID)
	latestSize, latestTTL := sr.DefaultLatestCacheSize, -1
	r.integerAtLeast("latest.cache.size", &latestSize, 1)
	r.integerAtLeast("latest.cache.ttl.sec", &latestTTL, -1)
	strategyKey := "value.subject.name.strategy"
	if isKey {
		strategyKey = "key.subject.name.strategy"
	}
	var err error
	if rs.subject, err = sr.Strategy(r.config[strategyKey]); err != nil {
		r.errs = append(r.errs, err)
	}
	// Confluent's serdes keep the latest versions in a cache of their own
	// beside their client's; the client's cache, under the same keys,
	// does the same here (Register, which drops an entry, is not used
	// with use.latest.version).
	cfg, err := sr.ParseConfig(r.config, logger)
	if err != nil {
		r.errs = append(r.errs, err)
		return rs
	}
	cfg.LatestTTL, cfg.LatestCacheSize = time.Duration(latestTTL)*time.Second, latestSize
	if rs.client, err = sr.New(cfg); err != nil {
		r.errs = append(r.errs, err)
	}
	return rs
}

// byLatest reports whether use.latest.version decides the writer's id
// (use.schema.id and auto.register.schemas come before it).
func (rs *registrySettings) byLatest() bool { return rs.useID < 0 && !rs.autoReg && rs.useLatest }

// stillWriter reports whether id, the writer id a converter keeps for
// subject, may write another record: always, unless use.latest.version
// decides it and the subject's latest version, as latest.cache.size and
// latest.cache.ttl.sec keep it, is another id by now.
func (rs *registrySettings) stillWriter(subject string, id int) (bool, error) {
	if !rs.byLatest() {
		return true, nil
	}
	latest, err := rs.client.Latest(registryCtx(), subject)
	if err != nil {
		return false, fmt.Errorf("convert: reading the latest schema of subject %s: %w", subject, err)
	}
	return latest.ID == id, nil
}

// writerSchema finds the schema a record is written with under subject,
// as Confluent's serializers do: use.schema.id (without asking the
// registry), else s registered (auto.register.schemas), else the
// subject's latest version (use.latest.version), else s looked up. used
// is the registry's latest schema for use.latest.version, s otherwise.
func (rs *registrySettings) writerSchema(subject string, s sr.Schema) (id int, used sr.Schema, err error) {
	ctx := registryCtx()
	switch {
	case rs.useID >= 0:
		return rs.useID, s, nil
	case rs.autoReg:
		if id, err = rs.client.Register(ctx, subject, s, rs.normalize); err != nil {
			return 0, s, fmt.Errorf("convert: registering the schema under subject %s: %w", subject, err)
		}
		return id, s, nil
	case rs.useLatest:
		latest, err := rs.client.Latest(ctx, subject)
		if err != nil {
			return 0, s, fmt.Errorf("convert: reading the latest schema of subject %s: %w", subject, err)
		}
		return latest.ID, latest.Schema, nil
	}
	got, err := rs.client.Lookup(ctx, subject, s, rs.normalize)
	if err != nil {
		return 0, s, fmt.Errorf("convert: looking up the schema under subject %s (auto.register.schemas=false): %w", subject, err)
	}
	return got.ID, s, nil
}
