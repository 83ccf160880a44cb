// Package discard is a sink connector that drops every record: the
// measuring end of benchmarks (datagen → topic → discard) and a way to
// consume a topic without writing anywhere. Flush reports everything it was
// given as durable, so the consumer group's committed offsets follow what
// the task received.
package discard

import (
	"context"

	"github.com/tributary-dev/tributary/sdk"
)

// Class is the connector class.
const Class = "dev.tributary.connect.discard.DiscardSinkConnector"

// Config is the discard sink's configuration (the topics to read are the
// framework's topics or topics.regex setting).
type Config struct{}

// Connector returns the DiscardSink connector.
func Connector() sdk.Connector {
	return sdk.SinkConnector[Config]{
		Class:   Class,
		Version: "4.4.0-tributary", // Tributary's (worker.Version), checked by cmd/tributary's tests
		Doc:     "Drops every record; reports everything delivered as durable.",
		NewTask: func(Config) sdk.SinkTask { return task{} },
	}
}

type task struct{}

func (task) Open(context.Context, sdk.SinkTaskContext) error { return nil }

func (task) Put(context.Context, []sdk.SinkRecord) error { return nil }

func (task) Flush(_ context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	return offsets, nil
}

func (task) Close(context.Context) error { return nil }
