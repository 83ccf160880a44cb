package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Class names, as in Apache Kafka.
const (
	SourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	SinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	// version is Tributary's (worker.Version, what GET / reports); a test of
	// cmd/tributary keeps the two equal.
	version = "4.4.0-tributary"
)

// SourceConfig is FileStreamSourceConnector's configuration.
type SourceConfig struct {
	File      string `key:"file" optional:"" importance:"high" doc:"Source filename. If not specified, the standard input will be used"`
	Topic     string `key:"topic" importance:"high" validate:"nonempty" doc:"The topic to publish data to"`
	BatchSize int32  `key:"batch.size" default:"2000" doc:"The maximum number of records the source task can read from the file each time it is polled"`
}

// Source returns the FileStreamSource connector.
func Source() sdk.Connector {
	return sdk.SourceConnector[SourceConfig]{
		Class:        SourceClass,
		Version:      version,
		Doc:          "Reads lines from a file and produces each as a record.",
		NewTask:      func(c SourceConfig) sdk.SourceTask { return &sourceTask{cfg: c} },
		AlterOffsets: alterSourceOffsets,
		ExactlyOnce:  exactlyOnce,
	}
}

// exactlyOnce is Kafka's FileStreamSourceConnector.exactlyOnceSupport: a
// file (only ever appended to) is read again from any committed position
// and gives the same lines; standard input cannot be.
func exactlyOnce(cfg SourceConfig) sdk.ExactlyOnceSupport {
	if cfg.File == "" {
		return sdk.ExactlyOnceUnsupported
	}
	return sdk.ExactlyOnceSupported
}

// alterSourceOffsets makes Kafka's FileStreamSourceConnector checks, with
// its messages, on offsets set through the REST API: a reset (a null
// offset) is always allowed, so that stray partitions can be cleaned up;
// an offset must be a non-negative integer position in a partition naming
// a file. Whether the position fits the file is the task's business when
// it starts.
func alterSourceOffsets(_ context.Context, cfg SourceConfig, offsets []sdk.SourceOffset) error {
	if cfg.File == "" {
		return offsetRefusal("Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked.")
	}
	for _, o := range offsets {
		if o.Offset == nil {
			continue
		}
		pos, ok := o.Offset["position"]
		if !ok {
			return offsetRefusal("Offset objects should either be null or contain the key 'position'")
		}
		n, ok := pos.(int64)
		if !ok {
			return offsetRefusal("The value for the 'position' key in the offset is expected to be a Long value")
		}
		if n < 0 {
			return offsetRefusal("The value for the 'position' key in the offset should be a non-negative value")
		}
		if o.Partition == nil {
			return offsetRefusal("Partition objects cannot be null")
		}
		if _, ok := o.Partition["filename"]; !ok {
			return offsetRefusal("Partition objects should contain the key 'filename'")
		}
	}
	return nil
}

// offsetRefusal is a refusal of an offsets change, worded for the REST
// API's user as Kafka's connector words it.
type offsetRefusal string

func (r offsetRefusal) Error() string { return string(r) }

// minIdleWait and maxIdleWait bound how long Poll waits for new data
// before returning nothing: the wait starts at minIdleWait and doubles
// with each empty poll up to maxIdleWait (1 s, as Kafka's
// FileStreamSourceTask always waits), and starts again at the first line.
// A file that grows is read every 100 ms, in small batches; an idle one
// costs a read a second: at a fixed 100 ms, 1000 idle file sources on a
// worker cost 9% of a core in their plugin process for nothing.
const (
	minIdleWait = 100 * time.Millisecond
	maxIdleWait = time.Second
)

type sourceTask struct {
	cfg      SourceConfig
	tc       sdk.SourceTaskContext
	part     sdk.Partition
	f        *os.File
	r        *bufio.Reader
	pos      int64  // position after the last emitted line
	pending  []byte // partial line read past pos
	warned   bool
	startPos int64
	idle     time.Duration // the last empty poll's wait
}

func (t *sourceTask) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	t.tc = tc
	t.part = sdk.Partition{"filename": t.cfg.File}
	off, err := tc.Offset(ctx, t.part)
	if err != nil {
		return fmt.Errorf("file source: read offset: %w", err)
	}
	if off != nil {
		p, ok := off.Int64("position")
		if !ok {
			return fmt.Errorf("file source: stored offset %v has no integer position", off)
		}
		t.startPos = p
	}
	return nil
}

func (t *sourceTask) open() (bool, error) {
	if t.f != nil {
		return true, nil
	}
	if t.cfg.File == "" {
		t.f = os.Stdin
	} else {
		f, err := os.Open(t.cfg.File)
		if errors.Is(err, fs.ErrNotExist) {
			if !t.warned {
				t.tc.Logger().Warn("couldn't find file; waiting for it to be created", "file", t.cfg.File)
				t.warned = true
			}
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("file source: open %s: %w", t.cfg.File, err)
		}
		if t.startPos > 0 {
			if _, err := f.Seek(t.startPos, io.SeekStart); err != nil {
				f.Close()
				return false, fmt.Errorf("file source: seek %s to %d: %w", t.cfg.File, t.startPos, err)
			}
		}
		t.f = f
	}
	t.pos = t.startPos
	t.r = bufio.NewReaderSize(t.f, 64<<10)
	return true, nil
}

func (t *sourceTask) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	ok, err := t.open()
	if err != nil || !ok {
		wait(ctx, time.Second)
		return nil, err
	}
	// Like Kafka's task, which returns a batch once it holds batch.size
	// records, so that 0 or less means one record at a time.
	limit := min(max, int(t.cfg.BatchSize))
	if limit < 1 {
		limit = 1
	}
	var recs []sdk.SourceRecord
	for len(recs) < limit {
		chunk, err := t.r.ReadSlice('\n')
		t.pending = append(t.pending, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return recs, fmt.Errorf("file source: read %s: %w", t.cfg.File, err)
		}
		t.pos += int64(len(t.pending))
		line := bytes.TrimSuffix(bytes.TrimSuffix(t.pending, []byte{'\n'}), []byte{'\r'})
		recs = append(recs, sdk.SourceRecord{
			Partition: t.part, Offset: sdk.Offset{"position": t.pos}, Topic: t.cfg.Topic,
			ValueSchema: schema.String, Value: string(line), Timestamp: time.Now(),
		})
		t.pending = t.pending[:0]
	}
	if len(recs) > 0 {
		t.idle = 0
		return recs, nil
	}
	t.idle = min(2*t.idle, maxIdleWait)
	if t.idle < minIdleWait {
		t.idle = minIdleWait
	}
	wait(ctx, t.idle)
	return recs, nil
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (t *sourceTask) Close(context.Context) error {
	if t.f != nil && t.f != os.Stdin {
		if err := t.f.Close(); err != nil {
			return fmt.Errorf("file source: close %s: %w", t.cfg.File, err)
		}
	}
	return nil
}
