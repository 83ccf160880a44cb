package sr

import (
	"container/list"
	"time"
)

// DefaultLatestCacheSize is how many subjects' latest versions a Client
// keeps when Config.LatestCacheSize is not set: Confluent's
// latest.cache.size default.
const DefaultLatestCacheSize = 1000

// latestCache holds subjects' latest versions, as Confluent's serdes and
// CachedSchemaRegistryClient do: an entry expires ttl after it was
// written (never when ttl is negative), and past size entries the least
// recently used goes. It reads no clock and does no I/O: the caller
// passes the current time, and guards it with its own lock.
type latestCache struct {
	ttl   time.Duration // > 0: expire after write; < 0: never
	size  int
	order *list.List // of *latestEntry, most recently used first
	items map[string]*list.Element
}

type latestEntry struct {
	subject string
	ss      SubjectSchema
	written time.Time
}

// newLatestCache returns a cache, or nil when ttl is zero (nothing is
// cached: every call asks the registry). size < 1 means
// DefaultLatestCacheSize.
func newLatestCache(ttl time.Duration, size int) *latestCache {
	if ttl == 0 {
		return nil
	}
	if size < 1 {
		size = DefaultLatestCacheSize
	}
	return &latestCache{ttl: ttl, size: size, order: list.New(), items: map[string]*list.Element{}}
}

// get returns subject's cached latest version if it has not expired at
// now; an expired entry is dropped.
func (c *latestCache) get(subject string, now time.Time) (SubjectSchema, bool) {
	if c == nil {
		return SubjectSchema{}, false
	}
	el, ok := c.items[subject]
	if !ok {
		return SubjectSchema{}, false
	}
	e := el.Value.(*latestEntry)
	if c.ttl > 0 && !now.Before(e.written.Add(c.ttl)) {
		c.order.Remove(el)
		delete(c.items, subject)
		return SubjectSchema{}, false
	}
	c.order.MoveToFront(el)
	return e.ss, true
}

// put caches ss as subject's latest version, written at now, evicting the
// least recently used entry when the cache is full.
func (c *latestCache) put(subject string, ss SubjectSchema, now time.Time) {
	if c == nil {
		return
	}
	if el, ok := c.items[subject]; ok {
		el.Value = &latestEntry{subject: subject, ss: ss, written: now}
		c.order.MoveToFront(el)
		return
	}
	for c.order.Len() >= c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*latestEntry).subject)
	}
	c.items[subject] = c.order.PushFront(&latestEntry{subject: subject, ss: ss, written: now})
}

// invalidate drops subject's cached latest version (a new version was
// registered under it).
func (c *latestCache) invalidate(subject string) {
	if c == nil {
		return
	}
	if el, ok := c.items[subject]; ok {
		c.order.Remove(el)
		delete(c.items, subject)
	}
}
