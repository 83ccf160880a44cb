package mongodb

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/tributary-dev/tributary/sdk"
)

// task is the connector's one task: a snapshot, then the change stream
// (stream.go) or, with capture.mode=poll, scans (poll.go).
type task struct {
	cfg    Config
	tc     sdk.SourceTaskContext
	log    *slog.Logger
	client *mongo.Client
	f      *filters
	env    *envelopes

	stream *streamer
	poll   *poller
	m      *taskMetrics
}

func (t *task) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	t.tc, t.log = tc, tc.Logger()
	f, err := newFilters(&t.cfg)
	if err != nil {
		return fmt.Errorf("mongodb: filters: %w", err)
	}
	t.f = f
	t.env = newEnvelopes(t.cfg.TopicPrefix, f)
	t.m = newTaskMetrics(sdk.MetricsOf(tc), t.cfg.TopicPrefix)
	if t.client, err = newClient(&t.cfg, t.m.monitor()); err != nil {
		return err
	}
	if t.cfg.changeStreams() {
		t.stream, err = newStreamer(ctx, t)
	} else {
		t.poll, err = newPoller(ctx, t)
	}
	return err
}

func (t *task) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	max = min(max, int(t.cfg.MaxBatchSize))
	if t.stream != nil {
		return t.stream.poll(ctx, max)
	}
	return t.poll.poll(ctx, max)
}

func (t *task) Close(ctx context.Context) error {
	if t.stream != nil {
		t.stream.close(ctx)
	}
	if t.poll != nil {
		t.poll.close(ctx)
	}
	if t.client != nil {
		if err := t.client.Disconnect(ctx); err != nil {
			return fmt.Errorf("mongodb: disconnect: %w", err)
		}
	}
	return nil
}

// wait sleeps for d or until ctx is done.
func wait(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// transient marks an error of the server or the network so that the
// runtime polls again after a back-off, unless the task is stopping.
func transient(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if mongo.IsNetworkError(err) || mongo.IsTimeout(err) {
		return sdk.Retriable(err)
	}
	var se mongo.ServerError
	if asServerError(err, &se) {
		// Errors MongoDB labels as retryable, not-primary/shutdown codes,
		// and a cursor the server dropped (CursorNotFound after its idle
		// timeout, QueryPlanKilled, CursorKilled: the snapshot and the
		// poll scans reopen theirs after the last document handed out)
		// pass with time; everything else fails the task.
		for _, code := range []int{6, 7, 43, 89, 91, 175, 189, 237, 262, 9001, 10107, 11600, 11602, 13435, 13436} {
			if se.HasErrorCode(code) {
				return sdk.Retriable(err)
			}
		}
		if se.HasErrorLabel("RetryableWriteError") || se.HasErrorLabel("ResumableChangeStreamError") {
			return sdk.Retriable(err)
		}
	}
	return err
}
