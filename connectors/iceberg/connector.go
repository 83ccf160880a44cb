package iceberg

import (
	"context"
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// version is Tributary's (worker.Version), as every first-party connector
// reports it; cmd/tributary's tests check they agree.
const version = "4.4.0-tributary"

// Connector returns the Iceberg sink connector.
func Connector() sdk.Connector { return connector{base()} }

func base() sdk.SinkConnector[Config] {
	return sdk.SinkConnector[Config]{
		Class:   Class,
		Aliases: []string{TabularClass, "IcebergSinkConnector", "IcebergSink"},
		Version: version,
		Doc:     "Writes records to Apache Iceberg tables exactly once: appends, or Debezium change streams applied as upserts and deletes (equality deletes in one row delta per commit), with the Kafka offsets in each snapshot's summary.",
		NewTask: func(c Config) sdk.SinkTask { return &sinkTask{cfg: c} },
		TaskConfigs: func(_ context.Context, c Config, maxTasks int) ([]Config, error) {
			out := make([]Config, maxTasks)
			for i := range out {
				out[i] = c
			}
			return out, nil
		},
	}
}

// connector adds to the SDK's sink connector the keys with a variable part
// (iceberg.catalog.*, iceberg.table.<t>.*), which a config struct cannot
// declare: they are checked at validation and given to tasks raw.
type connector struct{ sdk.SinkConnector[Config] }

// Validate implements sdk.Connector: the SDK's checks of the declared
// keys, plus those of the prefixed keys and of rules across keys.
func (c connector) Validate(ctx context.Context, config map[string]string) (sdk.ConfigInfos, error) {
	infos, err := c.SinkConnector.Validate(ctx, config)
	if err != nil {
		return infos, err
	}
	cfg, perr := sdk.ParseConfig[Config](config)
	ex, errs := parseExtra(config)
	if perr == nil {
		errs = append(errs, cfg.validate(ex)...)
	}
	for _, fe := range errs {
		found := false
		for i := range infos.Configs {
			if infos.Configs[i].Value.Name == fe.Key {
				infos.Configs[i].Value.Errors = append(infos.Configs[i].Value.Errors, fe.Message)
				found = true
			}
		}
		if !found {
			v := config[fe.Key]
			infos.Configs = append(infos.Configs, sdk.ConfigInfo{Value: sdk.ConfigValueInfo{Name: fe.Key, Value: &v, Errors: []string{fe.Message}, Visible: true, RecommendedValues: []string{}}})
		}
		infos.ErrorCount++
	}
	return infos, nil
}

// NewSinkTask implements sdk.SinkPlugin.
func (c connector) NewSinkTask(config map[string]string) (sdk.SinkTask, error) {
	t, err := c.SinkConnector.NewSinkTask(config)
	if err != nil {
		return nil, err
	}
	st := t.(*sinkTask)
	st.raw = config
	st.unknown = unknownKeys(c.Spec(), config)
	return st, nil
}

// workerKeys are the keys every connector's configuration may hold that
// belong to the worker, not to the connector.
var workerKeys = []string{"name", "connector.class", "tasks.max", "topics", "topics.regex", "key.converter",
	"value.converter", "header.converter", "config.action.reload", "task.class"}

var workerPrefixes = []string{"key.converter.", "value.converter.", "header.converter.", "transforms", "predicates",
	"errors.", "consumer.override.", "producer.override.", "admin.override.",
	"iceberg.catalog.", "iceberg.table.", "iceberg.tables.auto-create-props.", "iceberg.tables.write-props."}

func unknownKeys(spec sdk.Spec, config map[string]string) []string {
	known := map[string]bool{}
	for _, k := range spec.Config {
		known[k.Name] = true
	}
	var out []string
	for k := range config {
		if known[k] || slices.Contains(workerKeys, k) || slices.ContainsFunc(workerPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
