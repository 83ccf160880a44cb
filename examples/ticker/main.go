// Command ticker is an example third-party Tributary connector: a source
// that emits a numbered tick every interval. Build it and drop the binary
// into a directory listed in the worker's plugin.path:
//
//	go build -o /opt/tributary/plugins/ticker ./examples/ticker
//
// then create a connector with "connector.class": "Ticker".
package main

import (
	"context"
	"errors"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Config is the connector's configuration; the tags make its Kafka Connect
// config definition.
type Config struct {
	Topic    string        `key:"topic" importance:"high" validate:"nonempty" doc:"Topic to write ticks to."`
	Interval time.Duration `key:"interval.ms" default:"1000" validate:"min=1" doc:"Pause between ticks, in milliseconds."`
}

var tick = schema.StructOf("example.Tick").Field("seq", schema.Int64).Field("at", schema.Timestamp).Build()

var part = sdk.Partition{"ticker": "main"}

type task struct {
	cfg Config
	seq int64
}

func (t *task) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	off, err := tc.Offset(ctx, part) // nil when nothing is stored yet
	if seq, ok := off.Int64("seq"); ok {
		t.seq = seq + 1
	}
	return err
}

func (t *task) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	select {
	case <-ctx.Done():
		return nil, nil
	case <-time.After(t.cfg.Interval):
	}
	v := schema.NewStruct(tick).Set("seq", t.seq).Set("at", time.Now().UTC())
	t.seq++
	return []sdk.SourceRecord{{Partition: part, Offset: sdk.Offset{"seq": t.seq - 1},
		Topic: t.cfg.Topic, ValueSchema: tick, Value: v}}, nil
}

func (t *task) Close(context.Context) error { return nil }

// alterOffsets has the connector decide on offsets set through the REST
// API (PATCH /connectors/{name}/offsets): a reset is always fine, a new
// offset must be a sequence number.
func alterOffsets(_ context.Context, _ Config, offsets []sdk.SourceOffset) error {
	for _, o := range offsets {
		if seq, ok := o.Offset["seq"].(int64); o.Offset != nil && (!ok || seq < 0) {
			return errors.New("a ticker offset is {\"seq\": n} with n a whole number >= 0")
		}
	}
	return nil
}

func connector() sdk.Connector {
	return sdk.SourceConnector[Config]{
		Class:        "com.example.TickerConnector",
		Version:      "0.1.0",
		NewTask:      func(c Config) sdk.SourceTask { return &task{cfg: c} },
		AlterOffsets: alterOffsets,
	}
}

func main() { sdk.Serve(connector()) }
