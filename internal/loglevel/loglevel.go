// Package loglevel names the product's loggers and changes their levels
// while it runs, the way Kafka Connect's /admin/loggers changes Log4j's:
// loggers have dotted names (Tributary's by Go package, dev.tributary.worker.task;
// a connector's by its class, org.apache.kafka.connect.file.FileStreamSourceTask),
// a level set on a name applies to every logger whose name starts with it,
// and a logger without a level of its own has its nearest dotted
// ancestor's, or the root's.
//
// A Registry wraps one slog.Handler, which it hands every record that
// passes the level of the logger it was logged to (so that handler should
// let every level through):
//
//	reg := loglevel.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: loglevel.All}), slog.LevelInfo)
//	log := reg.Logger("dev.tributary.worker")
//	taskLog := loglevel.Named(log.With("connector", name), "dev.tributary.worker.task")
//	changed, err := reg.SetLevel("dev.tributary", "DEBUG")
//
// Named works on any logger: on one that does not come from a Registry it
// returns the logger unchanged, so code that names its loggers runs as
// well with a plain slog.Logger (in tests).
package loglevel

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RootName is the root logger's name, as Log4j spells it.
const RootName = "root"

// Levels beyond slog's four, for Log4j's names.
const (
	// All lets every record through.
	All   = slog.Level(math.MinInt32)
	trace = slog.LevelDebug - 4
	fatal = slog.LevelError + 4
	off   = slog.Level(math.MaxInt32)
)

// levels maps Log4j's level names to slog levels.
var levels = map[string]slog.Level{
	"ALL": All, "TRACE": trace, "DEBUG": slog.LevelDebug, "INFO": slog.LevelInfo,
	"WARN": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": fatal, "OFF": off,
}

// ParseLevel reads a Log4j level name (any case).
func ParseLevel(name string) (slog.Level, bool) {
	l, ok := levels[strings.ToUpper(strings.TrimSpace(name))]
	return l, ok
}

// LevelName is the Log4j name of l: the name of the highest level at or
// below it.
func LevelName(l slog.Level) string {
	best, name := All, "ALL"
	for n, v := range levels {
		if v <= l && v >= best {
			best, name = v, n
		}
	}
	return name
}

// Level is a logger's level as Kafka Connect reports it: its name and
// when it was last set through SetLevel (Unix milliseconds; nil if never).
type Level struct {
	Level        string
	LastModified *int64
}

// Registry holds the loggers and their levels. It is safe for concurrent
// use.
type Registry struct {
	base slog.Handler
	now  func() time.Time

	mu      sync.Mutex
	loggers map[string]*entry // every logger made or named so far, root included
}

// entry is one named logger.
type entry struct {
	name      string
	effective atomic.Int64 // the slog level that applies
	// Guarded by Registry.mu:
	set          *slog.Level // its own level; nil: inherited
	lastModified *int64
}

// New returns a Registry whose loggers hand their records to h, with the
// root logger at root.
func New(h slog.Handler, root slog.Level) *Registry {
	r := &Registry{base: h, now: time.Now, loggers: map[string]*entry{}}
	e := &entry{name: RootName, set: &root}
	e.effective.Store(int64(root))
	r.loggers[RootName] = e
	return r
}

// Logger returns the logger called name (made on first use, as Log4j's).
func (r *Registry) Logger(name string) *slog.Logger {
	return slog.New(r.handler(name, nil))
}

// Named returns a logger like l (its attributes and groups kept) under
// name, if l comes from a Registry; otherwise l itself.
func Named(l *slog.Logger, name string) *slog.Logger {
	h, ok := l.Handler().(*handler)
	if !ok {
		return l
	}
	return slog.New(h.reg.handler(name, h.ops))
}

// entryLocked returns the logger called name, making it.
func (r *Registry) entryLocked(name string) *entry {
	if e, ok := r.loggers[name]; ok {
		return e
	}
	e := &entry{name: name}
	e.effective.Store(int64(r.inheritedLocked(name)))
	r.loggers[name] = e
	return e
}

// inheritedLocked is the level a logger without its own gets: its nearest
// dotted ancestor's that has one, or the root's.
func (r *Registry) inheritedLocked(name string) slog.Level {
	for n := name; ; {
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			return *r.loggers[RootName].set
		}
		n = n[:i]
		if e, ok := r.loggers[n]; ok && e.set != nil {
			return *e.set
		}
	}
}

func (r *Registry) handler(name string, ops []op) *handler {
	r.mu.Lock()
	e := r.entryLocked(name)
	r.mu.Unlock()
	inner := r.base.WithAttrs([]slog.Attr{slog.String("logger", name)})
	for _, o := range ops {
		inner = o.apply(inner)
	}
	return &handler{reg: r, e: e, inner: inner, ops: ops}
}

// Levels lists every logger (root included) with its level: Kafka
// Connect's GET /admin/loggers.
func (r *Registry) Levels() map[string]Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Level, len(r.loggers))
	for n, e := range r.loggers {
		out[n] = e.levelLocked()
	}
	return out
}

// Level returns the level of the logger called name; false if there is no
// such logger.
func (r *Registry) Level(name string) (Level, bool) {
	if strings.EqualFold(name, RootName) {
		name = RootName
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.loggers[name]
	if !ok {
		return Level{}, false
	}
	return e.levelLocked(), true
}

func (e *entry) levelLocked() Level {
	return Level{Level: LevelName(slog.Level(e.effective.Load())), LastModified: e.lastModified}
}

// ErrLevel is wrapped by SetLevel's error for a level name it does not know.
var ErrLevel = fmt.Errorf("loglevel: unknown level")

// SetLevel sets level (a Log4j name: TRACE, DEBUG, INFO, WARN, ERROR,
// FATAL, OFF or ALL) on the logger called namespace, making it if needed,
// and on every logger whose name starts with namespace ("root": every
// logger), as Kafka Connect does. It returns the loggers whose level it
// changed, sorted: one already at that level is left alone.
func (r *Registry) SetLevel(namespace, level string) ([]string, error) {
	lvl, ok := ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrLevel, level)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	root := strings.EqualFold(namespace, RootName)
	if root {
		namespace = RootName
	}
	r.entryLocked(namespace)
	// Each logger is compared with its level before the change: one that
	// is at the level already is left alone (it keeps inheriting).
	var changed []*entry
	for n, e := range r.loggers {
		if (root || strings.HasPrefix(n, namespace)) && slog.Level(e.effective.Load()) != lvl {
			changed = append(changed, e)
		}
	}
	now := r.now().UnixMilli()
	names := make([]string, len(changed))
	for i, e := range changed {
		l, t := lvl, now
		e.set, e.lastModified = &l, &t
		names[i] = e.name
	}
	r.refreshLocked()
	slices.Sort(names)
	return names, nil
}

// refreshLocked recomputes every logger's effective level.
func (r *Registry) refreshLocked() {
	for _, e := range r.loggers {
		l := r.inheritedLocked(e.name)
		if e.set != nil {
			l = *e.set
		}
		e.effective.Store(int64(l))
	}
}

// handler is a named logger's slog.Handler: it lets through the records
// at or above its logger's level.
type handler struct {
	reg   *Registry
	e     *entry
	inner slog.Handler // base, with the logger's name and ops applied
	ops   []op         // WithAttrs and WithGroup calls since the name, to redo under another
}

// op is a WithAttrs or WithGroup call.
type op struct {
	attrs []slog.Attr
	group string
}

func (o op) apply(h slog.Handler) slog.Handler {
	if o.group != "" {
		return h.WithGroup(o.group)
	}
	return h.WithAttrs(o.attrs)
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.Level(h.e.effective.Load()) && h.inner.Enabled(ctx, l)
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	return h.inner.Handle(ctx, rec)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	o := op{attrs: attrs}
	return &handler{reg: h.reg, e: h.e, inner: o.apply(h.inner), ops: append(slices.Clip(h.ops), o)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	o := op{group: name}
	return &handler{reg: h.reg, e: h.e, inner: o.apply(h.inner), ops: append(slices.Clip(h.ops), o)}
}
