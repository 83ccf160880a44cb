package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpListsEveryBenchmark: tributary-bench --help names every
// benchmark, not only the broker benchmark's flags (issue 21).
func TestHelpListsEveryBenchmark(t *testing.T) {
	var out bytes.Buffer
	if code := runBench(context.Background(), []string{"--help"}, &out, &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"tributary-bench broker", "tributary-bench connect", "tributary-bench cluster", "tributary-bench rest", "tributary-bench many", "tributary-bench mirror", "--help"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not mention %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	runBench(context.Background(), []string{"broker", "--help"}, &out, &out)
	if !strings.Contains(out.String(), "--records N") {
		t.Errorf("broker --help lacks the broker's flags:\n%s", out.String())
	}
}
