// Package sdk is the Go SDK for Tributary connectors. It maps one-to-one
// onto Kafka Connect's model (connect/api):
//
//	Kafka Connect                      sdk
//	SourceConnector / SinkConnector    SourceConnector[C] / SinkConnector[C]
//	  config() ConfigDef                 the tagged config struct C
//	  validate(Map)                      tags, C.Validate, Check
//	  taskConfigs(maxTasks)              TaskConfigs
//	  start / stop, ConnectorContext     Run(ctx, cfg, ConnectorContext)
//	SourceTask.poll / commit           SourceTask.Poll / OffsetsCommitter
//	OffsetStorageReader                SourceTaskContext.Offset(s)
//	SinkTask.put / preCommit           SinkTask.Put / Flush
//	SinkTask.open / close              PartitionsHandler.Assigned / Revoked
//	SinkTaskContext.offset             SinkTaskContext.Rewind
//	RetriableException                 Retriable(err)
//	SourceRecord / SinkRecord          SourceRecord / SinkRecord
//	Schema, Struct, logical types      package sdk/schema
//
// A plugin is an executable whose main calls Serve; the worker finds it
// under plugin.path, starts it, and talks to it over gRPC. A minimal source:
//
//	type Config struct {
//		Topic    string        `key:"topic" importance:"high" validate:"nonempty" doc:"Topic to write ticks to."`
//		Interval time.Duration `key:"interval.ms" default:"1000" validate:"min=1" doc:"Pause between ticks."`
//	}
//
//	type task struct{ cfg Config; seq int64 }
//
//	var part = sdk.Partition{"ticker": "main"}
//
//	func (t *task) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
//		off, err := tc.Offset(ctx, part) // nil when nothing is stored
//		if seq, ok := off.Int64("seq"); ok {
//			t.seq = seq + 1
//		}
//		return err
//	}
//
//	func (t *task) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
//		select {
//		case <-ctx.Done():
//			return nil, nil
//		case <-time.After(t.cfg.Interval):
//		}
//		t.seq++
//		return []sdk.SourceRecord{{Partition: part, Offset: sdk.Offset{"seq": t.seq - 1},
//			Topic: t.cfg.Topic, ValueSchema: schema.Int64, Value: t.seq - 1}}, nil
//	}
//
//	func (t *task) Close(context.Context) error { return nil }
//
//	func main() {
//		sdk.Serve(sdk.SourceConnector[Config]{
//			Class:   "com.example.TickerConnector", // aliases Ticker, TickerConnector
//			Version: "0.1.0",
//			NewTask: func(c Config) sdk.SourceTask { return &task{cfg: c} },
//		})
//	}
//
// Config structs: each field with a `key` tag is a Kafka Connect config key.
// Tags: key, default (absent: the key is required), optional (no default,
// not required), importance (high|medium|low), doc, group, order, width,
// display, dependents, and validate with comma-separated rules min=, max=,
// nonempty, enum=a|b (also the recommended values) and regex=. Go types map
// to Kafka types: string STRING, bool BOOLEAN, int16 SHORT, int32 INT,
// int/int64 LONG, float64 DOUBLE, []string LIST, time.Duration LONG
// (milliseconds), Password PASSWORD. The definitions (Spec().Config) and
// validation results (ConfigInfos) are exactly the JSON of Kafka Connect's
// /connector-plugins/{p}/config and /config/validate.
//
// Lifecycle and concurrency: a task's Open, Poll/Put/Flush and Close are
// called from one goroutine, Close exactly once. Poll must return soon after
// its context is cancelled. OffsetsCommitted may run concurrently with Poll,
// never with Close. A panic anywhere in connector code fails the task with
// the panic value as message and the stack as trace.
//
// Use package sdk/sdktest from your tests to check a connector against the
// acceptance kit, and see docs/sdk.md for the guide.
package sdk
