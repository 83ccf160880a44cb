package loglevel

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

func newTest(t *testing.T) (*Registry, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: All, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	r := New(h, slog.LevelInfo)
	r.now = func() time.Time { return time.UnixMilli(1700000000000) }
	return r, &buf
}

func TestLevelsFollowNamespaces(t *testing.T) {
	r, buf := newTest(t)
	worker := r.Logger("dev.tributary.worker").With("worker", "w1")
	task := Named(worker, "dev.tributary.worker.task").With("connector", "c")
	src := r.Logger("org.apache.kafka.connect.file.FileStreamSourceTask")

	task.Debug("hidden")
	worker.Info("shown", "n", 1)
	if got := buf.String(); got != "level=INFO msg=shown logger=dev.tributary.worker worker=w1 n=1\n" {
		t.Fatalf("log %q", got)
	}
	buf.Reset()

	// A namespace: every logger under it, and the namespace itself, made
	// now (last, as in Kafka Connect).
	changed, err := r.SetLevel("dev.tributary", "debug")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dev.tributary", "dev.tributary.worker", "dev.tributary.worker.task"}; !slices.Equal(changed, want) {
		t.Fatalf("changed %v, want %v", changed, want)
	}
	task.Debug("now shown")
	src.Debug("still hidden")
	if got := buf.String(); got != "level=DEBUG msg=\"now shown\" logger=dev.tributary.worker.task worker=w1 connector=c\n" {
		t.Fatalf("log %q", got)
	}
	// A logger made later inherits its namespace's level.
	if l, _ := r.Level("dev.tributary.worker.store"); l.Level != "" {
		t.Fatalf("a logger nobody made is listed: %+v", l)
	}
	r.Logger("dev.tributary.worker.store")
	if l, ok := r.Level("dev.tributary.worker.store"); !ok || l.Level != "DEBUG" || l.LastModified != nil {
		t.Fatalf("new logger under the namespace: %+v %v", l, ok)
	}
	// Already at the level: left alone, not listed.
	if changed, _ := r.SetLevel("dev.tributary.worker", "DEBUG"); len(changed) != 0 {
		t.Fatalf("changed %v; nothing was at another level", changed)
	}
	all := r.Levels()
	if all["root"].Level != "INFO" || all["root"].LastModified != nil || *all["dev.tributary.worker"].LastModified != 1700000000000 ||
		all["org.apache.kafka.connect.file.FileStreamSourceTask"].Level != "INFO" {
		t.Fatalf("levels %+v", all)
	}
	// root sets every logger.
	changed, _ = r.SetLevel("ROOT", "WARN")
	if len(changed) != len(r.Levels()) || !slices.Contains(changed, "root") {
		t.Fatalf("root: changed %v of %d", changed, len(r.Levels()))
	}
	if l, _ := r.Level("root"); l.Level != "WARN" {
		t.Fatalf("root level %+v", l)
	}
	if _, err := r.SetLevel("x", "LOUD"); err == nil || !strings.Contains(err.Error(), "LOUD") {
		t.Fatalf("bad level: %v", err)
	}
}

func TestNamedPlainLogger(t *testing.T) {
	l := slog.New(slog.DiscardHandler)
	if Named(l, "x") != l {
		t.Fatal("Named changed a logger that is not the registry's")
	}
}

func TestLevelNames(t *testing.T) {
	for name, l := range levels {
		if LevelName(l) != name {
			t.Errorf("LevelName(%v) = %s, want %s", l, LevelName(l), name)
		}
	}
	if LevelName(slog.LevelInfo+1) != "INFO" {
		t.Errorf("between INFO and WARN: %s", LevelName(slog.LevelInfo+1))
	}
}
