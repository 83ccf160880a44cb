package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// logWriter receives one output stream of a plugin, re-emits each line
// through the host logger (JSON lines from the SDK keep their level,
// message and attributes) and keeps it in the tail it shares with the
// process's other streams, for failure traces.
type logWriter struct {
	logs   procLogs
	stream string
	tail   *logTail

	mu   sync.Mutex
	part []byte
}

const (
	// maxLineBytes bounds a line re-emitted in the log: an endless line is
	// emitted in pieces of this size.
	maxLineBytes = 64 << 10
	// tailBytes bounds what a tail keeps of a plugin's output: a failure
	// trace must fit in a status record, and every plugin process has one.
	tailBytes = 64 << 10
	// tailLineBytes bounds one line in a tail: a longer one is cut, with a
	// marker.
	tailLineBytes = 4 << 10
)

// newLogWriter returns a writer for one stream of a plugin; its lines go to
// tail, or to a tail of its own if tail is nil.
func newLogWriter(logs procLogs, stream string, tail *logTail) *logWriter {
	if tail == nil {
		tail = &logTail{}
	}
	return &logWriter{logs: logs, stream: stream, tail: tail}
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		line, i := p, bytes.IndexByte(p, '\n')
		if i >= 0 {
			line = p[:i]
		}
		if room := maxLineBytes - len(w.part); len(line) >= room { // an endless line: emit what we have
			w.part = append(w.part, line[:room]...)
			w.flush()
			p = p[room:]
			continue
		}
		w.part = append(w.part, line...)
		if i < 0 {
			break
		}
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush emits the line in w.part.
func (w *logWriter) flush() {
	line := string(bytes.TrimRight(w.part, "\r"))
	if cap(w.part) > 4<<10 {
		w.part = nil // do not keep a long line's buffer
	} else {
		w.part = w.part[:0]
	}
	if line != "" {
		w.emit(line)
	}
}

func (w *logWriter) emit(line string) {
	w.tail.add(line)
	if strings.HasPrefix(line, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if msg, ok := m["msg"].(string); ok {
				level := slog.LevelInfo
				if s, ok := m["level"].(string); ok {
					_ = level.UnmarshalText([]byte(s))
				}
				// The loggers of the line's connector stamp its name; a
				// line of a shared process that names no connector the host
				// knows keeps the name it carries.
				logs, routed := w.logs, w.logs.routes == nil
				if c, ok := m["connector"].(string); ok && w.logs.routes != nil {
					logs, routed = w.logs.routes.find(c, w.logs)
				}
				attrs := make([]slog.Attr, 0, len(m))
				for k, v := range m {
					switch k {
					case "msg", "level", "time":
						continue
					case "connector":
						if routed {
							continue
						}
					}
					attrs = append(attrs, slog.Any(k, v))
				}
				logger := logs.conn
				if _, ok := m["task"]; ok {
					logger = logs.task
				}
				logger.LogAttrs(context.Background(), level, msg, attrs...)
				return
			}
		}
	}
	logs := w.logs
	if w.logs.routes != nil {
		logs = w.logs.routes.only(logs)
	}
	logs.conn.LogAttrs(context.Background(), slog.LevelInfo, line, slog.String("plugin_stream", w.stream))
}

// logRoutes maps the connectors a shared plugin process hosts to their
// loggers: the SDK names the connector on every line a connector or task
// logs, and the host re-emits the line through that connector's loggers
// (named after its class, with its name), as a process of its own would.
type logRoutes struct {
	mu     sync.Mutex
	byName map[string]*routeEntry
}

type routeEntry struct {
	logs procLogs
	n    int // holds that added it
}

// add routes connector's lines to logs until as many removes.
func (r *logRoutes) add(connector string, logs procLogs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]*routeEntry{}
	}
	e := r.byName[connector]
	if e == nil {
		e = &routeEntry{}
		r.byName[connector] = e
	}
	e.logs = logs
	e.n++
}

// remove undoes one add.
func (r *logRoutes) remove(connector string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.byName[connector]; e != nil {
		if e.n--; e.n <= 0 {
			delete(r.byName, connector)
		}
	}
}

// find returns connector's loggers and true, or def and false when the
// process hosts no connector of that name (any more).
func (r *logRoutes) find(connector string, def procLogs) (procLogs, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.byName[connector]; e != nil {
		return e.logs, true
	}
	return def, false
}

// only returns the loggers of the one connector the process hosts, else
// def: a line that names no connector (a plugin's own print, a Go crash's
// stack) is the connector's when there is only one to blame.
func (r *logRoutes) only(def procLogs) procLogs {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.byName) == 1 {
		for _, e := range r.byName {
			return e.logs
		}
	}
	return def
}

// Tail returns the end of the plugin's output, oldest line first.
func (w *logWriter) Tail() string { return w.tail.String() }

// waitQuiet waits until no line arrived for d (or max elapsed), so that a
// dying plugin's last words are in the tail.
func (w *logWriter) waitQuiet(d, max time.Duration) { w.tail.waitQuiet(d, max) }

// logTail keeps the last lines of a plugin's output, at most tailBytes in
// all (with the newlines between them); a line longer than tailLineBytes is
// kept cut.
type logTail struct {
	mu    sync.Mutex
	lines []string
	size  int // bytes in lines, and a newline each
	added int // lines ever added
}

func (t *logTail) add(line string) {
	line = cutLine(line, tailLineBytes)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.added++
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > tailBytes+1 && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines[0] = "" // let it go before the array is reallocated
		t.lines = t.lines[1:]
	}
}

// String returns the lines kept, oldest first.
func (t *logTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

func (t *logTail) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
}

func (t *logTail) waitQuiet(d, max time.Duration) {
	deadline := time.Now().Add(max)
	last := -1
	for time.Now().Before(deadline) {
		n := t.count()
		if n == last {
			return
		}
		last = n
		time.Sleep(d)
	}
}

// cutLine returns s if it has at most n bytes, else its first n bytes or
// fewer (whole UTF-8 characters) and a marker saying how much was cut.
func cutLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf(" …[%d bytes cut]", len(s)-i)
}
