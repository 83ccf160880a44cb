package s3

import (
	"context"
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// version is Tributary's (worker.Version), as every first-party connector
// reports it; cmd/tributary's tests check they agree.
const version = "4.4.0-tributary"

// Connector returns the S3 sink connector.
func Connector() sdk.Connector { return connector{base()} }

func base() sdk.SinkConnector[Config] {
	return sdk.SinkConnector[Config]{
		Class:   Class,
		Aliases: []string{"S3Sink", "S3SinkConnector"},
		Version: version,
		Doc:     "Writes records to S3 (or a local directory) in Confluent's S3 sink layout: JSON, Avro, Parquet or raw bytes, exactly once for deterministic configurations.",
		NewTask: func(c Config) sdk.SinkTask { return &sinkTask{cfg: c} },
		Check:   check,
		TaskConfigs: func(_ context.Context, c Config, maxTasks int) ([]Config, error) {
			out := make([]Config, maxTasks)
			for i := range out {
				out[i] = c
			}
			return out, nil
		},
	}
}

// connector adds to the SDK's sink connector the warning about keys it
// does not know (Confluent settings it does not implement).
type connector struct{ sdk.SinkConnector[Config] }

// NewSinkTask implements sdk.SinkPlugin.
func (c connector) NewSinkTask(config map[string]string) (sdk.SinkTask, error) {
	t, err := c.SinkConnector.NewSinkTask(config)
	if err != nil {
		return nil, err
	}
	st := t.(*sinkTask)
	st.unknown = unknownKeys(c.Spec(), config)
	return st, nil
}

// workerKeys are the keys every connector's configuration may hold that
// belong to the worker, not to the connector.
var workerKeys = []string{"name", "connector.class", "tasks.max", "topics", "topics.regex", "key.converter",
	"value.converter", "header.converter", "config.action.reload", "task.class"}

var workerPrefixes = []string{"key.converter.", "value.converter.", "header.converter.", "transforms", "predicates",
	"errors.", "consumer.override.", "producer.override.", "admin.override."}

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

// check runs at validation: the store must be reachable and writable with
// the credentials given.
func check(ctx context.Context, c Config) error {
	st, err := newStore(ctx, &c)
	if err != nil {
		return sdk.FieldError{Key: "store.url", Message: err.Error()}
	}
	if err := st.check(ctx); err != nil {
		key := "s3.bucket.name"
		if strings.Contains(err.Error(), "denied") {
			key = "aws.access.key.id"
		} else if _, ok := fileStoreDir(c.StoreURL); ok {
			key = "store.url"
		}
		return sdk.FieldError{Key: key, Message: err.Error()}
	}
	return nil
}
