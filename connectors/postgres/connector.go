package postgres

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// Class is the connector class: Debezium's, so that a Debezium
// configuration works unchanged.
const Class = "io.debezium.connector.postgresql.PostgresConnector"

// Version is the connector's version: Tributary's (worker.Version), as every
// first-party connector reports it; cmd/tributary's tests check they agree.
const Version = "4.4.0-tributary"

// Connector returns the PostgreSQL change-data-capture source.
func Connector() sdk.Connector {
	return connector{sdk.SourceConnector[Config]{
		Class:   Class,
		Aliases: []string{"postgres-cdc"},
		Version: Version,
		Doc:     "Streams the changes of PostgreSQL tables (logical replication, pgoutput) as Debezium change events, after a consistent snapshot.",
		NewTask: func(c Config) sdk.SourceTask { return newTask(c) },
		TaskConfigs: func(_ context.Context, c Config, _ int) ([]Config, error) {
			return []Config{c}, nil // one slot, one task
		},
		Check: check,
		// As Debezium's PostgresConnector (2.3+, DBZ-6547): supported
		// with poll boundaries (it defines none of its own). Streaming is
		// exactly once; an initial snapshot interrupted by a restart is
		// taken again from the start, so its rows may come twice.
		ExactlyOnce: func(Config) sdk.ExactlyOnceSupport { return sdk.ExactlyOnceSupported },
	}}
}

// connector adds the warning about unknown keys to the SDK's connector.
type connector struct {
	sdk.SourceConnector[Config]
}

// Start implements sdk.Connector: it logs the keys the connector does not
// know (other Debezium settings are accepted and ignored).
func (c connector) Start(ctx context.Context, config map[string]string, cc sdk.ConnectorContext) (sdk.RunningConnector, error) {
	if cc != nil {
		warnUnknown(cc.Logger(), config, c.Spec())
	}
	return c.SourceConnector.Start(ctx, config, cc)
}

// NewSourceTask implements sdk.SourcePlugin: the typed configuration, plus
// the column transformations, whose keys are not fixed.
func (c connector) NewSourceTask(config map[string]string) (sdk.SourceTask, error) {
	cfg, err := sdk.ParseConfig[Config](config)
	if err != nil {
		return nil, err
	}
	rules, errs := parseColumnRules(config)
	if len(errs) > 0 {
		ce := &sdk.ConfigError{Errors: map[string][]string{}}
		for k, m := range errs {
			ce.Errors[k] = append(ce.Errors[k], m)
		}
		return nil, ce
	}
	t := newTask(cfg)
	t.rules = rules
	return t, nil
}

// Validate implements sdk.Connector: the SDK's validation, plus the keys of
// the column transformations.
func (c connector) Validate(ctx context.Context, config map[string]string) (sdk.ConfigInfos, error) {
	infos, err := c.SourceConnector.Validate(ctx, config)
	if err != nil {
		return infos, err
	}
	_, errs := parseColumnRules(config)
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		v := config[k]
		infos.Configs = append(infos.Configs, sdk.ConfigInfo{
			Definition: sdk.ConfigKeyInfo{Name: k, Type: sdk.TypeString},
			Value:      sdk.ConfigValueInfo{Name: k, Value: &v, RecommendedValues: []string{}, Errors: []string{errs[k]}, Visible: true},
		})
		infos.ErrorCount++
	}
	return infos, nil
}

// unknownKeys returns the keys of config neither the connector nor the
// worker reads, sorted.
func unknownKeys(config map[string]string, spec sdk.Spec) []string {
	known := map[string]bool{}
	for _, k := range spec.Config {
		known[k.Name] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(config)) {
		if !known[k] && !knownKey(k) {
			out = append(out, k)
		}
	}
	return out
}

func warnUnknown(logger *slog.Logger, config map[string]string, spec sdk.Spec) {
	if logger == nil {
		return
	}
	if un := unknownKeys(config, spec); len(un) > 0 {
		logger.Warn("settings accepted but not supported, ignored: "+strings.Join(un, ", "), "keys", un)
	}
}
