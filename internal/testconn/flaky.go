// Package testconn holds connectors that misbehave on purpose, for the
// tests of the plugin runtime and of the worker's task runners. A test
// binary serves them as a plugin by calling sdk.Serve when started with
// their argument (see FlakySinkArg).
package testconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tributary-dev/tributary/sdk"
)

// FlakySinkArg on a test binary's command line, when it is started as a
// plugin, says that it serves FlakySink.
const FlakySinkArg = "tributary-test-flaky-sink"

// FlakySinkClass is FlakySink's class.
const FlakySinkClass = "test.FlakySink"

type flakyConfig struct {
	Dir string `key:"dir" doc:"Directory of the control files, and of out, the records flushed."`
}

// FlakySink buffers the records Put and writes them ("partition:offset"
// lines) to dir/out at Flush. Files in dir steer it: with put-retriable,
// Put fails with a Retriable error (and adds a line to attempts); with
// flush-fail, Flush loses the buffer (as a sink whose write failed), adds
// a line to flush-failures and fails; with flush-panic, Flush panics.
func FlakySink() sdk.Connector {
	return sdk.SinkConnector[flakyConfig]{Class: FlakySinkClass, Version: "1",
		NewTask: func(c flakyConfig) sdk.SinkTask { return &flakyTask{dir: c.Dir} }}
}

type flakyTask struct {
	dir string
	buf []string
}

func (t *flakyTask) has(name string) bool {
	_, err := os.Stat(filepath.Join(t.dir, name))
	return err == nil
}

func (t *flakyTask) add(name string, lines ...string) error {
	f, err := os.OpenFile(filepath.Join(t.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(f, l)
	}
	return f.Close()
}

func (t *flakyTask) Open(context.Context, sdk.SinkTaskContext) error { return nil }

func (t *flakyTask) Put(_ context.Context, recs []sdk.SinkRecord) error {
	if t.has("put-retriable") {
		if err := t.add("attempts", "put"); err != nil {
			return err
		}
		return sdk.Retriable(errors.New("downstream unavailable"))
	}
	for _, r := range recs {
		t.buf = append(t.buf, fmt.Sprintf("%d:%d", r.Partition, r.Offset))
	}
	return nil
}

func (t *flakyTask) Flush(_ context.Context, o map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if t.has("flush-panic") {
		panic("boom in Flush")
	}
	if t.has("flush-fail") {
		t.buf = nil // lost, as by a sink whose write failed
		if err := t.add("flush-failures", "flush"); err != nil {
			return nil, err
		}
		return nil, errors.New("disk full")
	}
	if err := t.add("out", t.buf...); err != nil {
		return nil, err
	}
	t.buf = nil
	return o, nil
}

func (t *flakyTask) Close(context.Context) error { return nil }
