package file

import (
	"bufio"
	"context"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// SinkConfig is FileStreamSinkConnector's configuration (the topics to read
// are the framework's topics setting).
type SinkConfig struct {
	File string `key:"file" optional:"" importance:"high" doc:"Destination filename. If not specified, the standard output will be used"`
}

// Sink returns the FileStreamSink connector.
func Sink() sdk.Connector {
	return sdk.SinkConnector[SinkConfig]{
		Class:   SinkClass,
		Version: version,
		Doc:     "Appends the value of each record as a line to a file.",
		NewTask: func(c SinkConfig) sdk.SinkTask { return &sinkTask{cfg: c} },
		// Like Kafka's FileStreamSinkConnector: tasks.max identical tasks.
		TaskConfigs: func(_ context.Context, c SinkConfig, maxTasks int) ([]SinkConfig, error) {
			out := make([]SinkConfig, maxTasks)
			for i := range out {
				out[i] = c
			}
			return out, nil
		},
		// As Kafka's: any committed offset is fine, the sink keeps none
		// of its own.
		AlterOffsets: func(context.Context, SinkConfig, map[sdk.TopicPartition]*int64) error { return nil },
	}
}

type sinkTask struct {
	cfg SinkConfig
	f   *os.File
	w   *bufio.Writer
}

func (t *sinkTask) Open(_ context.Context, _ sdk.SinkTaskContext) error {
	if t.cfg.File == "" {
		t.f = os.Stdout
	} else {
		f, err := os.OpenFile(t.cfg.File, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("file sink: open %s: %w", t.cfg.File, err)
		}
		t.f = f
	}
	t.w = bufio.NewWriterSize(t.f, 64<<10)
	return nil
}

func (t *sinkTask) Put(_ context.Context, records []sdk.SinkRecord) error {
	for i := range records {
		t.w.WriteString(Format(records[i].Value))
		if err := t.w.WriteByte('\n'); err != nil {
			return fmt.Errorf("file sink: write %s: %w", t.cfg.File, err)
		}
	}
	return nil
}

// Flush writes buffered lines and fsyncs the file, then reports everything
// given as durable.
func (t *sinkTask) Flush(_ context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if err := t.w.Flush(); err != nil {
		return nil, fmt.Errorf("file sink: write %s: %w", t.cfg.File, err)
	}
	if t.f != os.Stdout {
		if err := t.f.Sync(); err != nil {
			return nil, fmt.Errorf("file sink: fsync %s: %w", t.cfg.File, err)
		}
	}
	return offsets, nil
}

func (t *sinkTask) Close(context.Context) error {
	if t.w == nil {
		return nil
	}
	err := t.w.Flush()
	if t.f != os.Stdout {
		if cerr := t.f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("file sink: close %s: %w", t.cfg.File, err)
	}
	return nil
}

// Format renders a value the way Kafka's FileStreamSink prints it (Java's
// toString): strings verbatim, structs as Struct{a=1,b=x}, null as "null".
func Format(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []byte:
		return string(x)
	case *big.Int:
		return x.String()
	case *schema.Struct:
		var b strings.Builder
		b.WriteString("Struct{")
		first := true
		for i, f := range x.Schema().Fields {
			fv := x.GetIndex(i)
			if fv == nil {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(f.Name)
			b.WriteByte('=')
			b.WriteString(Format(fv))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Format(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + Format(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
