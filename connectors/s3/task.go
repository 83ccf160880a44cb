package s3

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// sinkTask is the S3 sink task.
type sinkTask struct {
	cfg           Config
	unknown       []string // configuration keys this connector does not know
	tc            sdk.SinkTaskContext
	log           *slog.Logger
	ws            *writers
	tps           map[sdk.TopicPartition]*tpWriter
	ctx           context.Context
	cancel        context.CancelFunc
	sinceMemCheck int
	raised        int64 // what Open added to the process's soft memory limit
}

// newStore opens the store a configuration names.
func newStore(ctx context.Context, c *Config) (store, error) {
	if dir, ok := fileStoreDir(c.StoreURL); ok {
		return &fileStore{root: dir}, nil
	}
	return newS3Store(ctx, c)
}

func newWriters(ctx context.Context, c *Config) (*writers, error) {
	st, err := newStore(ctx, c)
	if err != nil {
		return nil, err
	}
	part, err := newPartitioner(c)
	if err != nil {
		return nil, err
	}
	values, err := newFormat(c.Format, c)
	if err != nil {
		return nil, err
	}
	keys, err := newFormat(c.KeysFormat, c)
	if err != nil {
		return nil, err
	}
	headers, err := newFormat(c.HdrsFormat, c)
	if err != nil {
		return nil, err
	}
	return &writers{cfg: c, st: st, part: part, values: values, keys: keys, headers: headers,
		compat: compatibility(strings.ToUpper(c.Compat)), onNull: strings.ToLower(c.OnNull),
		partSize: int(c.PartSize), spillDir: os.TempDir(), conditional: c.Conditional}, nil
}

func (t *sinkTask) Open(ctx context.Context, tc sdk.SinkTaskContext) error {
	t.tc, t.log = tc, tc.Logger()
	if len(t.unknown) > 0 {
		t.log.Warn("s3 sink: configuration keys this connector does not use are ignored", "keys", strings.Join(t.unknown, ","))
	}
	// Uploads outlive a Put or Flush call's context only as far as the task
	// lives: Close cancels them.
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	ws, err := newWriters(t.ctx, &t.cfg)
	if err != nil {
		return err
	}
	t.ws = ws
	ws.m = newSinkMetrics(sdk.MetricsOf(tc))
	ws.up = newUploader(t.cfg.Conditional && deterministic(&t.cfg, ws.part))
	t.tps = map[sdk.TopicPartition]*tpWriter{}
	// The SDK gives a plugin process a small soft memory limit per task;
	// this task may legitimately hold memory.buffer.max.bytes more.
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.raised = t.cfg.MemoryMax
		debug.SetMemoryLimit(lim + t.raised)
	}
	return nil
}

// deterministic reports whether a replay rebuilds each file whole under
// the same name: file bounds do not depend on the wall clock. Only then
// may a conditional create keep the object it finds: with
// rotate.schedule.interval.ms or the Wallclock extractor, a replayed file
// can hold more records than the object already under its name (one a
// crashed task uploaded but had not committed), and keeping that object
// would lose them; those configurations overwrite, as Confluent's sink
// always does.
func deterministic(c *Config, p *partitioner) bool {
	return c.ScheduleMs <= 0 && !p.wallclock
}

func (t *sinkTask) Assigned(_ context.Context, tps []sdk.TopicPartition) error {
	now := time.Now().UnixMilli()
	for _, tp := range tps {
		if t.tps[tp] == nil {
			t.tps[tp] = newTPWriter(t.ws, tp, now)
		}
	}
	return nil
}

func (t *sinkTask) Revoked(_ context.Context, tps []sdk.TopicPartition) error {
	for _, tp := range tps {
		if w := t.tps[tp]; w != nil {
			w.abandon()
			delete(t.tps, tp)
		}
	}
	return nil
}

// memCheckEvery is how many records pass between two looks at the memory
// held by the open files.
const memCheckEvery = 64

// collect applies the outcomes of finished uploads: durable offsets
// advance, and a partition whose upload failed is consumed again.
func (t *sinkTask) collect(ctx context.Context) map[sdk.TopicPartition]bool {
	var failed map[sdk.TopicPartition]bool
	for _, job := range t.ws.up.results() {
		w := job.w
		if t.tps[w.tp] != w || job.gen != w.gen {
			continue // revoked or abandoned meanwhile
		}
		if job.err != nil {
			if failed == nil {
				failed = map[sdk.TopicPartition]bool{}
			}
			failed[w.tp] = true
			t.recover(ctx, w, job.err)
			continue
		}
		w.done(job)
	}
	return failed
}

func (t *sinkTask) Put(ctx context.Context, records []sdk.SinkRecord) error {
	now := time.Now().UnixMilli()
	failed := t.collect(ctx)
	for i := range records {
		r := &records[i]
		tp := r.TopicPartition()
		if failed[tp] {
			continue
		}
		w := t.tps[tp]
		if w == nil {
			w = newTPWriter(t.ws, tp, now)
			t.tps[tp] = w
		}
		if err := w.write(ctx, r, now); err != nil {
			var fatal errFatal
			if errors.As(err, &fatal) {
				return fatal.error
			}
			if failed == nil {
				failed = map[sdk.TopicPartition]bool{}
			}
			failed[tp] = true
			t.recover(ctx, w, err)
			continue
		}
		if t.sinceMemCheck++; t.sinceMemCheck >= memCheckEvery {
			t.sinceMemCheck = 0
			if err := t.bound(); err != nil {
				return err
			}
		}
	}
	return nil
}

// recover handles a failed upload of a partition's files: they are
// dropped and the partition is consumed again from its last durable offset,
// which rebuilds the same files; the store gets a pause first.
func (t *sinkTask) recover(ctx context.Context, w *tpWriter, err error) {
	from := w.resumeOffset()
	t.log.Error("s3 sink: writing files failed; rewinding the partition to rewrite them", "topic", w.tp.Topic, "partition", w.tp.Partition, "offset", from, "error", err)
	w.abandon()
	w.last = from - 1
	t.tc.Rewind(map[sdk.TopicPartition]int64{w.tp: from})
	pause := time.NewTimer(time.Duration(max(t.cfg.RetryBackoffMs, 100)) * time.Millisecond)
	defer pause.Stop()
	select {
	case <-ctx.Done():
	case <-pause.C:
	}
}

// bound keeps the memory held by open files under memory.buffer.max.bytes:
// while it is above, the largest open file moves its buffered bytes out
// of memory (spill file, or a multipart part once a part's worth is
// pending). Files and their contents do not change.
func (t *sinkTask) bound() error {
	type holder struct {
		f *openFile
		m int
	}
	var hs []holder
	total := 0
	for _, w := range t.tps {
		for _, f := range w.files {
			m := f.memory()
			total += m
			hs = append(hs, holder{f, m})
		}
	}
	limit := int(t.cfg.MemoryMax)
	if total <= limit {
		return nil
	}
	slices.SortFunc(hs, func(a, b holder) int { return cmp.Compare(b.m, a.m) })
	for _, h := range hs {
		if total <= limit*3/4 {
			break
		}
		for _, o := range h.f.outputs() {
			if err := o.shed(); err != nil {
				return fmt.Errorf("s3 sink: free memory: %w", err)
			}
		}
		total += h.f.memory() - h.m
	}
	return nil
}

// Flush reports, per partition, the offset up to which every record is in
// finished objects: the worker commits only that (Kafka Connect's
// preCommit, as Confluent's sink does it). It also runs the wall-clock
// rotations.
func (t *sinkTask) Flush(ctx context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	now := time.Now().UnixMilli()
	out := make(map[sdk.TopicPartition]int64, len(offsets))
	for _, tp := range slices.SortedFunc(maps.Keys(offsets), func(a, b sdk.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	}) {
		w := t.tps[tp]
		if w == nil {
			continue
		}
		if err := w.tick(ctx, now); err != nil {
			var fatal errFatal
			if errors.As(err, &fatal) {
				return nil, fatal.error
			}
			t.recover(ctx, w, err)
		}
	}
	// Flush is where offsets are committed: wait for the uploads under
	// way, so that what they hold is reported.
	if err := t.ws.up.wait(ctx); err != nil {
		return nil, fmt.Errorf("s3 sink: waiting for uploads: %w", err)
	}
	t.collect(ctx)
	for tp := range offsets {
		w := t.tps[tp]
		if w == nil {
			continue
		}
		if w.durable >= 0 {
			out[tp] = min(w.durable, offsets[tp])
		}
	}
	return out, nil
}

// Close drops what is not uploaded (a replay rewrites it) and stops the
// uploader; it may be called more than once.
func (t *sinkTask) Close(context.Context) error {
	for _, w := range t.tps {
		w.abandon()
	}
	if t.cancel != nil {
		t.cancel()
	}
	if t.ws != nil && t.ws.up != nil {
		t.ws.up.stop()
		t.ws.up = nil
	}
	if t.raised > 0 {
		debug.SetMemoryLimit(debug.SetMemoryLimit(-1) - t.raised)
		t.raised = 0
	}
	return nil
}
