package discard_test

import (
	"context"
	"testing"

	"github.com/tributary-dev/tributary/connectors/discard"
	"github.com/tributary-dev/tributary/sdk"
)

func TestDiscard(t *testing.T) {
	c := discard.Connector()
	if got := c.Spec().Class; got != discard.Class {
		t.Fatalf("class %q", got)
	}
	sp, ok := c.(sdk.SinkPlugin)
	if !ok {
		t.Fatal("not a sink plugin")
	}
	task, err := sp.NewSinkTask(map[string]string{"topics": "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := task.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := task.Put(ctx, make([]sdk.SinkRecord, 3)); err != nil {
		t.Fatal(err)
	}
	offs := map[sdk.TopicPartition]int64{{Topic: "t", Partition: 0}: 42}
	got, err := task.Flush(ctx, offs)
	if err != nil || got[sdk.TopicPartition{Topic: "t", Partition: 0}] != 42 {
		t.Fatalf("flush = %v, %v", got, err)
	}
	if err := task.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
