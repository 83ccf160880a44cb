// Package redact hides secrets in text: a Set of secret values (the
// passwords of running connectors, the values their config references
// resolved to) that Scrub replaces with [hidden], and a slog.Handler that
// scrubs every record it passes on, so that a secret a plugin or a library
// quotes in an error never reaches a log line, a status trace or a REST
// answer.
//
// Values shorter than MinLength are not scrubbed from free text: hiding
// every "1" would make logs unreadable, and such values are not secrets.
// The attributes that name things (Structural: the logger, the connector,
// the task, the worker, a class) are not scrubbed either: a development
// password that is also a word of a logger's or a class's name (postgres,
// tributary) must not make the logs unreadable.
package redact

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Hidden replaces a secret, as Kafka's Password.toString.
const Hidden = "[hidden]"

// MinLength is the shortest value Scrub hides.
const MinLength = 4

// Structural are the log attributes the handler leaves as they are.
var Structural = map[string]bool{"logger": true, "connector": true, "task": true, "worker": true, "class": true}

// Set is a set of secret values, safe for concurrent use. The zero value
// is empty and ready.
type Set struct {
	mu      sync.RWMutex
	secrets map[string]bool
	r       *strings.Replacer
}

// Add adds secrets (blank and short ones are ignored).
func (s *Set) Add(secrets ...string) {
	var add []string
	s.mu.RLock()
	for _, v := range secrets {
		if len(strings.TrimSpace(v)) >= MinLength && !s.secrets[v] {
			add = append(add, v)
		}
	}
	s.mu.RUnlock()
	if len(add) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secrets == nil {
		s.secrets = map[string]bool{}
	}
	for _, v := range add {
		s.secrets[v] = true
	}
	// Longest first: a secret that contains another is hidden whole.
	all := make([]string, 0, len(s.secrets))
	for v := range s.secrets {
		all = append(all, v)
	}
	slices.SortFunc(all, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(all))
	for _, v := range all {
		pairs = append(pairs, v, Hidden)
	}
	s.r = strings.NewReplacer(pairs...)
}

// Scrub returns text with every secret of s replaced by [hidden]. A nil
// Set scrubs nothing.
func (s *Set) Scrub(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.RLock()
	r := s.r
	s.mu.RUnlock()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Len is the number of secrets.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets)
}

// NewHandler returns a handler that passes records to h with the secrets
// of s scrubbed from the message and from every attribute's value (strings,
// errors, anything formatted).
func NewHandler(h slog.Handler, s *Set) slog.Handler { return &handler{h: h, s: s} }

type handler struct {
	h slog.Handler
	s *Set
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if h.s.Len() == 0 {
		return h.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, h.s.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	if Structural[a.Key] {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.Scrub(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.s.Scrub(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.s.Scrub(x.String()))
		default:
			s := fmt.Sprint(x)
			if sc := h.s.Scrub(s); sc != s {
				return slog.String(a.Key, sc)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	// Attributes are scrubbed when each record is handled (a secret may
	// be added after the logger was made): keep them as they are here and
	// add them to each record instead.
	return &withAttrs{handler: handler{h: h.h, s: h.s}, attrs: attrs}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), s: h.s}
}

// withAttrs is a handler with attributes to scrub and add to each record.
type withAttrs struct {
	handler
	attrs []slog.Attr
}

func (h *withAttrs) Handle(ctx context.Context, r slog.Record) error {
	r2 := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r2.AddAttrs(h.attrs...)
	r.Attrs(func(a slog.Attr) bool { r2.AddAttrs(a); return true })
	return h.handler.Handle(ctx, r2)
}

func (h *withAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &withAttrs{handler: h.handler, attrs: append(slices.Clone(h.attrs), attrs...)}
}

func (h *withAttrs) WithGroup(name string) slog.Handler {
	// A group after attributes: the attributes stay outside it.
	return &withAttrs{handler: handler{h: h.h.WithAttrs(h.scrubbed()).WithGroup(name), s: h.s}}
}

func (h *withAttrs) scrubbed() []slog.Attr {
	out := make([]slog.Attr, len(h.attrs))
	for i, a := range h.attrs {
		out[i] = h.attr(a)
	}
	return out
}
