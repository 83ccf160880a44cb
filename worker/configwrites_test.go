package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/plugins"
)

// memConfigs is a config backend in memory: writes apply at once.
type memConfigs struct {
	configBackend
	mu     sync.Mutex
	snap   map[string]ConnectorSnapshot
	offset int64
	writes int
}

func (m *memConfigs) Snapshot() (map[string]ConnectorSnapshot, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.snap), m.offset
}

func (m *memConfigs) PutConnectorConfig(_ context.Context, name string, config map[string]string, target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	m.offset++
	cs := m.snap[name]
	cs.Config, cs.ConfigOffset = config, m.offset
	if target != "" {
		cs.Target = target
	}
	m.snap[name] = cs
	return nil
}

func (m *memConfigs) DeleteConnector(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	delete(m.snap, name)
	return nil
}

// writeHerder is a herder that can take config writes, with no loop
// running: the writes must not need it.
func writeHerder(t *testing.T) (*herder, *memConfigs) {
	t.Helper()
	h := newHerder(Config{}, slog.New(slog.DiscardHandler), "w1")
	l, err := plugins.NewInProcess(slog.New(slog.DiscardHandler), connectors.All()...)
	if err != nil {
		t.Fatal(err)
	}
	h.pl.Store(&pluginLoader{l})
	m := &memConfigs{snap: map[string]ConnectorSnapshot{}}
	h.configs = m
	h.apiReady.Store(true)
	h.setAssign(assignment{leader: true})
	return h, m
}

// Issue 23, case 8: creates, updates and deletes do not run on the herder
// loop (which starts connectors, a plugin process each), so that a burst
// of them waits for neither; each name's writes stay in order.
func TestConfigWritesNeedNoLoop(t *testing.T) {
	h, m := writeHerder(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := map[string]string{"connector.class": "FileStreamSource", "topic": "t"}

	var wg sync.WaitGroup
	errs := make(chan error, 55)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			created, info, err := h.PutConnectorConfig(ctx, fmt.Sprintf("c%02d", i), cfg, false, "")
			if err == nil && (!created || info.Config["name"] != fmt.Sprintf("c%02d", i)) {
				err = fmt.Errorf("created %v, info %+v", created, info)
			}
			errs <- err
		}()
	}
	// The same name at once: one create wins, the rest are 409s.
	conflicts := 0
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := h.PutConnectorConfig(ctx, "same", cfg, false, "PAUSED")
			if KindOf(err) == KindConflict {
				err = nil
				m.mu.Lock()
				conflicts++
				m.mu.Unlock()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := m.Snapshot()
	if len(snap) != 51 || conflicts != 4 || snap["same"].Target != TargetPaused {
		t.Fatalf("%d connectors (want 51), %d conflicts (want 4), same: %+v", len(snap), conflicts, snap["same"])
	}

	info, err := h.PatchConnectorConfig(ctx, "c00", map[string]*string{"topic": nil, "tasks.max": ptr("2")})
	if err == nil || KindOf(err) != KindBadRequest {
		t.Fatalf("a patch dropping a required key: %v %+v", err, info)
	}
	if _, err := h.PatchConnectorConfig(ctx, "c00", map[string]*string{"tasks.max": ptr("2")}); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteConnector(ctx, "c01"); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteConnector(ctx, "c01"); KindOf(err) != KindNotFound {
		t.Fatalf("deleting a deleted connector: %v", err)
	}
	snap, _ = m.Snapshot()
	if snap["c00"].Config["tasks.max"] != "2" || len(snap) != 50 {
		t.Fatalf("after patch and delete: %+v, %d connectors", snap["c00"], len(snap))
	}
}

// A write whose request ended before the write could start changes
// nothing, and says so; a follower writes nothing either.
func TestConfigWriteErrorsChangeNothing(t *testing.T) {
	h, m := writeHerder(t)
	cfg := map[string]string{"connector.class": "FileStreamSource", "topic": "t"}
	unlock, err := h.writes.lock(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err = h.PutConnectorConfig(ctx, "busy", cfg, false, "")
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("a create stuck behind another write of its name: %v", err)
	}
	unlock()
	h.setAssign(assignment{})
	if _, _, err := h.PutConnectorConfig(context.Background(), "f", cfg, false, ""); KindOf(err) != KindConflict {
		t.Fatalf("a follower's create: %v", err)
	}
	if m.writes != 0 {
		t.Fatalf("%d writes", m.writes)
	}
}

// A request the herder loop has taken is answered with what it did, even
// when the caller's deadline passes meanwhile: an error answer must not
// hide a change. One the loop never took is a timeout that changed
// nothing.
func TestDoAnswersWhatItDid(t *testing.T) {
	h := newHerder(Config{}, slog.New(slog.DiscardHandler), "w1")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := h.do(ctx, func(context.Context) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("a request no loop took: %v", err)
	}
	go func() {
		f := <-h.reqs
		f(context.Background())
	}()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	changed := errors.New("changed")
	err = h.do(ctx2, func(context.Context) error {
		time.Sleep(200 * time.Millisecond) // past the caller's deadline
		return changed
	})
	if !errors.Is(err, changed) {
		t.Fatalf("a request the loop took answered %v, not its own result", err)
	}
}
