package mongodb

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// feedBatchMax is the most documents a reader passes in one batch.
const feedBatchMax = 256

// snapshotFeed copies the collections of a snapshotPlan, as many at once
// as the plan allows: one goroutine a collection being read, each passing
// its documents in _id order, in batches, over one channel. Only the
// caller of next touches the plan, so the plan says what was handed out.
//
// A reader that fails sends its error and ends; next returns the error
// once, and its next call starts the collection again after the last
// document handed out. close stops the readers and waits for them.
type snapshotFeed struct {
	plan   *snapshotPlan
	client *mongo.Client
	fetch  int32

	ctx    context.Context // the readers'; cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ch     chan feedBatch

	cur feedBatch // the batch being handed out
	pos int       // next document of cur
}

// feedBatch is what a reader sends: documents of the plan's collection i,
// or its end, or the error that ended it.
type feedBatch struct {
	i    int
	docs []bson.Raw
	end  bool
	err  error
}

// snapItem is what next hands out: a document of the plan's collection i
// (doc), the end of collection i (end), or the end of the snapshot (done).
type snapItem struct {
	i    int
	doc  bson.Raw
	end  bool
	done bool
}

// newSnapshotFeed starts nothing yet: the first next starts the readers.
// The readers' context keeps ctx's values but not its cancellation.
func newSnapshotFeed(ctx context.Context, client *mongo.Client, fetch int32, plan *snapshotPlan) *snapshotFeed {
	f := &snapshotFeed{plan: plan, client: client, fetch: fetch, ch: make(chan feedBatch, plan.threads)}
	f.ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return f
}

// next returns the next item of the snapshot, waiting for a reader if none
// is at hand.
func (f *snapshotFeed) next(ctx context.Context) (snapItem, error) {
	for {
		if f.pos < len(f.cur.docs) {
			doc := f.cur.docs[f.pos]
			f.pos++
			after, err := idDoc(doc)
			if err != nil {
				return snapItem{}, fmt.Errorf("mongodb: snapshot of %s: %w", f.plan.colls[f.cur.i].ns, err)
			}
			f.plan.read(f.cur.i, after)
			return snapItem{i: f.cur.i, doc: doc}, nil
		}
		if f.plan.done() {
			return snapItem{done: true}, nil
		}
		for _, i := range f.plan.start() {
			f.wg.Add(1)
			go f.read(i, f.plan.colls[i].ns, f.plan.colls[i].after)
		}
		select {
		case <-ctx.Done():
			return snapItem{}, ctx.Err()
		case b := <-f.ch:
			f.cur, f.pos = b, 0
			switch {
			case b.err != nil:
				f.plan.stopped(b.i)
				return snapItem{}, b.err
			case b.end:
				f.plan.finish(b.i)
				return snapItem{i: b.i, end: true}, nil
			}
		}
	}
}

// read is the reader of one collection, from after its _id in after.
func (f *snapshotFeed) read(i int, ns namespace, after bson.Raw) {
	defer f.wg.Done()
	send := func(b feedBatch) bool {
		b.i = i
		select {
		case f.ch <- b:
			return true
		case <-f.ctx.Done():
			return false
		}
	}
	r, err := newSnapshotReader(f.client, f.fetch, ns, after)
	if err != nil {
		send(feedBatch{err: err})
		return
	}
	defer r.close(context.WithoutCancel(f.ctx))
	var docs []bson.Raw
	for {
		doc, err := r.next(f.ctx)
		if doc == nil || err != nil {
			if len(docs) > 0 && !send(feedBatch{docs: docs}) {
				return
			}
			send(feedBatch{err: err, end: err == nil})
			return
		}
		docs = append(docs, bytes.Clone(doc))
		// A batch goes as soon as the server's is handed out, so that the
		// task works on it while the reader waits for the next one.
		if len(docs) >= feedBatchMax || r.buffered() == 0 {
			if !send(feedBatch{docs: docs}) {
				return
			}
			docs = nil
		}
	}
}

// close stops the readers and waits until they are gone.
func (f *snapshotFeed) close() {
	f.cancel()
	f.wg.Wait()
}
