package plugins

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

// A plugin writing long lines keeps a bounded tail: in all, per line, and
// per line re-emitted in the log; no long line's buffer stays behind.
func TestLogTailBounded(t *testing.T) {
	logger, logs := newCapture()
	w := newLogWriter(procLogs{conn: logger, task: logger}, "stderr", nil)
	line := strings.Repeat("L", 128<<10)
	for i := range 200 {
		b := []byte(line + "\n")
		if i == 199 {
			b = []byte(line[:100] + " the last\n")
		}
		for len(b) > 0 { // in the pieces a pipe delivers
			n := min(len(b), 32<<10)
			if _, err := w.Write(b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
	}
	tail := w.Tail()
	if len(tail) > tailBytes {
		t.Errorf("tail of %d bytes", len(tail))
	}
	if !strings.HasSuffix(tail, " the last") || !strings.Contains(tail, "L …[61440 bytes cut]\n") {
		t.Errorf("tail does not end with the last line or lacks the cut marker: …%q", tail[max(0, len(tail)-300):])
	}
	if w.tail.size > tailBytes+1 || cap(w.part) > 4<<10 {
		t.Errorf("kept %d bytes of tail and a %d-byte line buffer", w.tail.size, cap(w.part))
	}
	for _, r := range logs() {
		if len(r.Msg) > maxLineBytes {
			t.Fatalf("a log line of %d bytes", len(r.Msg))
		}
	}
	if n := len(logs()); n != 199*2+1 {
		t.Errorf("%d log lines, want two pieces of each long line and the last", n)
	}
}

// The streams of one process share its tail; each keeps its own partial
// line, and its lines are logged with its stream.
func TestLogTailSharedByStreams(t *testing.T) {
	logger, logs := newCapture()
	stderr := newLogWriter(procLogs{conn: logger, task: logger}, "stderr", nil)
	stdout := newLogWriter(procLogs{conn: logger, task: logger}, "stdout", stderr.tail)
	_, _ = stderr.Write([]byte("from fd 2, "))
	_, _ = stdout.Write([]byte("from os.Stdout\n"))
	_, _ = stderr.Write([]byte("continued\n"))
	if got, want := stderr.Tail(), "from os.Stdout\nfrom fd 2, continued"; got != want {
		t.Errorf("tail %q, want %q", got, want)
	}
	var streams []string
	for _, r := range logs() {
		streams = append(streams, r.Attrs["plugin_stream"]+": "+r.Msg)
	}
	if got := strings.Join(streams, "; "); got != "stdout: from os.Stdout; stderr: from fd 2, continued" {
		t.Errorf("logged %q", got)
	}
}

// Many short lines: the newlines count too.
func TestLogTailBoundedWithShortLines(t *testing.T) {
	w := newLogWriter(procLogs{conn: slog.New(slog.DiscardHandler), task: slog.New(slog.DiscardHandler)}, "stderr", nil)
	for range 100 << 10 {
		_, _ = w.Write([]byte("x\n"))
	}
	if n := len(w.Tail()); n > tailBytes {
		t.Errorf("tail of %d bytes", n)
	}
}

func TestCutLineAndLastLines(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	if got := cutLine(s, 5); got != "éé …[16 bytes cut]" || !utf8.ValidString(got) {
		t.Errorf("cutLine %q", got)
	}
	if got := cutLine("short", 5); got != "short" {
		t.Errorf("cutLine %q", got)
	}
	if got := lastLines("one\ntwo\nthree", 8); got != "three" {
		t.Errorf("lastLines %q", got)
	}
	if got := lastLines("one\ntwo\nthree", 9); got != "two\nthree" {
		t.Errorf("lastLines %q", got)
	}
	if got := lastLines("one\ntwo\nthree", 20); got != "one\ntwo\nthree" {
		t.Errorf("lastLines %q", got)
	}
	if got := lastLines(s, 5); got != "éé" {
		t.Errorf("lastLines %q", got)
	}
}

// A shared process's lines go to the loggers of the connector they name,
// which stamp its name once; a line naming a connector the process no
// longer hosts keeps its own; a line naming none is the plugin's, or its
// only connector's.
func TestLogRoutesByConnector(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&buf, nil))
	routes := &logRoutes{}
	procLog := base.With("plugin", "p")
	w := newLogWriter(procLogs{conn: procLog, task: procLog, routes: routes}, "stderr", nil)
	routes.add("a", procLogs{conn: base.With("logger", "A", "connector", "a"), task: base.With("logger", "ATask", "connector", "a")})
	routes.add("a", procLogs{conn: base.With("logger", "A", "connector", "a"), task: base.With("logger", "ATask", "connector", "a")})
	routes.remove("a") // one of the two holds
	routes.add("b", procLogs{conn: base.With("logger", "B", "connector", "b"), task: base.With("logger", "BTask", "connector", "b")})
	for _, l := range []string{
		`{"msg":"m1","level":"INFO","connector":"a","task":1}`,
		`{"msg":"m2","level":"WARN","connector":"a"}`,
		`{"msg":"m3","level":"INFO","connector":"gone","task":2}`,
		`panic: boom`,
	} {
		if _, err := w.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	routes.remove("a")
	// With b alone left, a line naming nobody is b's.
	if _, err := w.Write([]byte(`{"msg":"m4","connector":"a"}` + "\n" + "plain\n")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`"logger":"ATask","connector":"a","msg":"m1","task":1}`,
		`"level":"WARN","msg":"m2","logger":"A","connector":"a"}`,
		`"plugin":"p","connector":"gone","task":2}`,
		`"msg":"panic: boom","plugin":"p","plugin_stream":"stderr"}`,
		`"msg":"m4","plugin":"p","connector":"a"}`,
		`"msg":"plain","logger":"B","connector":"b","plugin_stream":"stderr"}`,
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, l := range lines {
		// Attributes of the line come in map order: compare what is fixed.
		if strings.Count(l, `"connector"`) > 1 {
			t.Errorf("line %d names the connector twice: %s", i, l)
		}
		if i != 0 && i != 2 && !strings.HasSuffix(l, want[i]) {
			t.Errorf("line %d = %s\nwant …%s", i, l, want[i])
		}
	}
	if !strings.Contains(lines[0], `"logger":"ATask","connector":"a"`) || !strings.Contains(lines[0], `"task":1`) {
		t.Errorf("line 0 = %s", lines[0])
	}
	if !strings.Contains(lines[2], `"plugin":"p"`) || !strings.Contains(lines[2], `"connector":"gone"`) {
		t.Errorf("line 2 = %s", lines[2])
	}
}
