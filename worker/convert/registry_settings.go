package convert

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

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

// registrySettings are the settings every schema-registry converter takes
// (Confluent's AbstractKafkaSchemaSerDeConfig): the registry client,
// key.subject.name.strategy / value.subject.name.strategy,
// auto.register.schemas (true), use.latest.version (false), use.schema.id
// (-1) and normalize.schemas (false).
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
	strategyKey := "value.subject.name.strategy"
	if isKey {
		strategyKey = "key.subject.name.strategy"
	}
	var err error
	if rs.subject, err = sr.Strategy(r.config[strategyKey]); err != nil {
		r.errs = append(r.errs, err)
	}
	if rs.client, err = sr.NewFromConfig(r.config, logger); err != nil {
		r.errs = append(r.errs, err)
	}
	return rs
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
