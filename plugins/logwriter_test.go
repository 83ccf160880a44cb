package plugins

import (
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

// A plugin writing long lines keeps a bounded tail: in all, per line, and
// per line re-emitted in the log; no long line's buffer stays behind.
func TestLogTailBounded(t *testing.T) {
	logger, logs := newCapture()
	w := newLogWriter(procLogs{logger, logger}, "stderr", nil)
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
	stderr := newLogWriter(procLogs{logger, logger}, "stderr", nil)
	stdout := newLogWriter(procLogs{logger, logger}, "stdout", stderr.tail)
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
	w := newLogWriter(procLogs{slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)}, "stderr", nil)
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
