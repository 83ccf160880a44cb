package s3

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// uploadJob is one rotation of a Kafka partition: the closed files to
// upload, in order, and the offset that is durable once they are.
type uploadJob struct {
	w       *tpWriter
	gen     int
	outs    []*output
	durable int64
	err     error
}

// uploader uploads rotated files in a goroutine of its own, one job after
// the other, while the task goes on encoding the next files. At most one
// job waits while another uploads: a task that encodes faster than the
// store takes waits in Put.
type uploader struct {
	ifAbsent bool
	jobs     chan *uploadJob
	pending  sync.WaitGroup
	mu       sync.Mutex
	finished []*uploadJob
	done     chan struct{}
}

func newUploader(ifAbsent bool) *uploader {
	u := &uploader{ifAbsent: ifAbsent, jobs: make(chan *uploadJob, 1), done: make(chan struct{})}
	go u.run()
	return u
}

func (u *uploader) run() {
	defer close(u.done)
	for job := range u.jobs {
		m, topic := job.w.m, job.w.tp.Topic
		for _, o := range job.outs {
			began, size := time.Now(), o.sp.written
			if err := o.upload(u.ifAbsent); err != nil {
				job.err = fmt.Errorf("s3 sink: upload %s: %w", o.key, err)
				m.failed(topic)
				break
			}
			records := 0
			if o.value {
				records = o.n
			}
			m.uploaded(topic, records, size, time.Since(began))
		}
		if job.err != nil {
			for _, o := range job.outs {
				o.sp.release()
			}
		}
		u.mu.Lock()
		u.finished = append(u.finished, job)
		u.mu.Unlock()
		u.pending.Done()
	}
}

func (u *uploader) enqueue(ctx context.Context, job *uploadJob) error {
	u.pending.Add(1)
	select {
	case u.jobs <- job:
		return nil
	case <-ctx.Done():
		u.pending.Done()
		return fmt.Errorf("s3 sink: stopped while waiting to upload: %w", ctx.Err())
	}
}

// results returns the jobs finished since the last call.
func (u *uploader) results() []*uploadJob {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.finished
	u.finished = nil
	return out
}

// wait blocks until every job handed over is finished (or ctx ends).
func (u *uploader) wait(ctx context.Context) error {
	idle := make(chan struct{})
	go func() { u.pending.Wait(); close(idle) }()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends the goroutine once the jobs handed over are done (their
// uploads fail fast when the task's context is cancelled).
func (u *uploader) stop() {
	close(u.jobs)
	<-u.done
}
