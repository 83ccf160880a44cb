package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	t.Parallel()
	var s Set
	if got := s.Scrub("nothing yet s3cret"); got != "nothing yet s3cret" {
		t.Fatal(got)
	}
	s.Add("s3cret", "s3cret-longer", "", "abc")
	if got := s.Scrub("a s3cret-longer and s3cret, abc"); got != "a [hidden] and [hidden], abc" {
		t.Fatalf("got %q", got)
	}
	var nilSet *Set
	if nilSet.Scrub("x") != "x" {
		t.Fatal("nil set")
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var s Set
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), &s)).With("dsn", "postgres://u:pa55word@h/db", "logger", "dev.pa55word")
	s.Add("pa55word") // after the logger was made
	log.WithGroup("g").Info("login as u with pa55word failed", "err", errors.New("auth pa55word"), "n", 3, slog.Group("inner", "v", "pa55word"))
	out := buf.String()
	if strings.Count(out, "pa55word") != 1 || !strings.Contains(out, "logger=dev.pa55word") || strings.Count(out, Hidden) != 4 || !strings.Contains(out, "g.n=3") {
		t.Fatalf("log line: %s", out)
	}
}
