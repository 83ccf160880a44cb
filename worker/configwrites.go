package worker

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
)

// Connector config writes (create, update, patch, delete) do not run on
// the herder loop: each takes its connector's name lock, checks the config
// snapshot, writes to the config topic and waits until the store has read
// its own record back. Writes of different connectors go on at once, and
// their records come back in the same fetches; the loop reconciles what
// runs from the snapshot when the store signals the change. A burst of
// creates therefore waits neither for the loop nor for the connectors it
// is starting, and /health (a request on the loop) keeps answering.

// configWriteTimeout bounds a config write once it is under way: the
// request's own deadline no longer applies then, so that the answer
// reports what the write did (an error answer must not hide a write that
// happened).
const configWriteTimeout = 60 * time.Second

// nameLocks serializes the config writes of each connector name.
type nameLocks struct {
	mu    sync.Mutex
	locks map[string]*nameLock
}

type nameLock struct {
	ch   chan struct{} // holds a token while locked
	refs int
}

// lock takes name's lock, or fails when ctx ends first; the returned
// function releases it.
func (n *nameLocks) lock(ctx context.Context, name string) (func(), error) {
	n.mu.Lock()
	if n.locks == nil {
		n.locks = map[string]*nameLock{}
	}
	l := n.locks[name]
	if l == nil {
		l = &nameLock{ch: make(chan struct{}, 1)}
		n.locks[name] = l
	}
	l.refs++
	n.mu.Unlock()
	release := func() {
		n.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(n.locks, name)
		}
		n.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// errTimedOutUnchanged is the answer to a write whose request ended before
// it could start.
func (h *herder) errTimedOutUnchanged() error {
	return Errorf(KindInternal, "Request timed out before the write could start; nothing was changed. The worker is currently %s", h.stage.Load())
}

// writeFailed is the answer to a config write that failed once started:
// the record may have been stored or not (a broker that did not answer).
func writeFailed(name string, err error) error {
	if KindOf(err) != KindInternal {
		return err // refused before anything was written (too large, …)
	}
	return &Error{Kind: KindInternal, Err: err, Message: fmt.Sprintf(
		"Writing to the config topic failed, and the change may or may not have been stored (GET /connectors/%s/config shows which): %v", name, err)}
}

func (h *herder) PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string) (bool, ConnectorInfo, error) {
	if err := h.backendsReady(); err != nil {
		return false, ConnectorInfo{}, err
	}
	target := ""
	switch strings.ToUpper(strings.TrimSpace(initialState)) {
	case "", "RUNNING":
	case "PAUSED":
		target = TargetPaused
	case "STOPPED":
		target = TargetStopped
	default:
		return false, ConnectorInfo{}, Errorf(KindBadRequest, "Invalid initial state %s; must be one of RUNNING, PAUSED or STOPPED", initialState)
	}
	config = maps.Clone(config)
	config["name"] = name
	if err := h.validateForWrite(ctx, config); err != nil {
		return false, ConnectorInfo{}, err
	}
	unlock, err := h.writes.lock(ctx, name)
	if err != nil {
		return false, ConnectorInfo{}, h.errTimedOutUnchanged()
	}
	defer unlock()
	return h.putConfigLocked(ctx, name, config, allowReplace, target)
}

// validateForWrite is Kafka Connect's validation before a config write: a
// config with errors is a 400 with their list.
func (h *herder) validateForWrite(ctx context.Context, config map[string]string) error {
	infos, _, err := h.validate(ctx, config)
	if err != nil {
		return err
	}
	return ValidationError(infos)
}

// putConfigLocked writes a validated config; name's lock is held.
func (h *herder) putConfigLocked(ctx context.Context, name string, config map[string]string, allowReplace bool, target string) (bool, ConnectorInfo, error) {
	cs, exists := h.snapshot()[name]
	if exists && !allowReplace {
		return false, ConnectorInfo{}, ErrConnectorExists(name)
	}
	if err := h.mustLead(); err != nil {
		return false, ConnectorInfo{}, err
	}
	if ctx.Err() != nil {
		return false, ConnectorInfo{}, h.errTimedOutUnchanged()
	}
	if exists {
		target = "" // the initial state is for creations only
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), configWriteTimeout)
	defer cancel()
	if err := h.configs.PutConnectorConfig(wctx, name, config, target); err != nil {
		return false, ConnectorInfo{}, writeFailed(name, err)
	}
	cs.Config = config
	info := h.info(name, cs)
	if !exists {
		info.Tasks = []TaskID{} // tasks come once the connector runs
	}
	return !exists, info, nil
}

func (h *herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error) {
	if _, err := h.lookup(name); err != nil {
		return ConnectorInfo{}, err
	}
	unlock, err := h.writes.lock(ctx, name)
	if err != nil {
		return ConnectorInfo{}, h.errTimedOutUnchanged()
	}
	defer unlock()
	cs, err := h.lookup(name) // again, under the lock: the config to patch
	if err != nil {
		return ConnectorInfo{}, err
	}
	next := maps.Clone(cs.Config)
	for k, v := range patch {
		if v == nil {
			delete(next, k)
		} else {
			next[k] = *v
		}
	}
	next["name"] = name
	if err := h.validateForWrite(ctx, next); err != nil {
		return ConnectorInfo{}, err
	}
	_, info, err := h.putConfigLocked(ctx, name, next, true, "")
	return info, err
}

func (h *herder) DeleteConnector(ctx context.Context, name string) error {
	if err := h.backendsReady(); err != nil {
		return err
	}
	unlock, err := h.writes.lock(ctx, name)
	if err != nil {
		return h.errTimedOutUnchanged()
	}
	defer unlock()
	if _, ok := h.snapshot()[name]; !ok {
		return ErrUnknownConnector(name)
	}
	if err := h.mustLead(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return h.errTimedOutUnchanged()
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), configWriteTimeout)
	defer cancel()
	if err := h.configs.DeleteConnector(wctx, name); err != nil {
		return writeFailed(name, err)
	}
	return nil
}
