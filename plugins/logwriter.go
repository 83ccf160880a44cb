package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// logWriter receives a plugin's stderr, re-emits each line through the host
// logger (JSON lines from the SDK keep their level, message and attributes)
// and keeps the last lines for failure traces.
type logWriter struct {
	logger *slog.Logger
	stream string

	mu    sync.Mutex
	part  []byte
	tail  []string
	lines int
}

const tailLines = 200

func newLogWriter(logger *slog.Logger, stream string) *logWriter {
	return &logWriter{logger: logger, stream: stream}
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := string(bytes.TrimRight(w.part[:i], "\r"))
		w.part = w.part[i+1:]
		if line != "" {
			w.emit(line)
		}
	}
	if len(w.part) > 64<<10 { // an endless line: emit what we have
		w.emit(string(w.part))
		w.part = w.part[:0]
	}
	return len(p), nil
}

func (w *logWriter) emit(line string) {
	w.lines++
	w.tail = append(w.tail, line)
	if len(w.tail) > tailLines {
		w.tail = w.tail[len(w.tail)-tailLines:]
	}
	if strings.HasPrefix(line, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if msg, ok := m["msg"].(string); ok {
				level := slog.LevelInfo
				if s, ok := m["level"].(string); ok {
					_ = level.UnmarshalText([]byte(s))
				}
				attrs := make([]slog.Attr, 0, len(m))
				for k, v := range m {
					switch k {
					case "msg", "level", "time", "connector":
						continue
					}
					attrs = append(attrs, slog.Any(k, v))
				}
				w.logger.LogAttrs(context.Background(), level, msg, attrs...)
				return
			}
		}
	}
	w.logger.LogAttrs(context.Background(), slog.LevelInfo, line, slog.String("plugin_stream", w.stream))
}

// Tail returns the last lines written, oldest first.
func (w *logWriter) Tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.tail, "\n")
}

// waitQuiet waits until no line arrived for d (or max elapsed), so that a
// dying plugin's last words are in the tail.
func (w *logWriter) waitQuiet(d, max time.Duration) {
	deadline := time.Now().Add(max)
	last := -1
	for time.Now().Before(deadline) {
		w.mu.Lock()
		n := w.lines
		w.mu.Unlock()
		if n == last {
			return
		}
		last = n
		time.Sleep(d)
	}
}
