package plugins

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestResolveNames: two versions of one plugin, and plugins whose aliases
// clash, are settled as Kafka Connect settles them (the higher version; an
// ambiguous alias dropped, every class still reachable), with a warning
// each, instead of keeping the worker from starting.
func TestResolveNames(t *testing.T) {
	info := func(class, version, path string, aliases ...string) PluginInfo {
		return PluginInfo{Spec: sdk.Spec{Class: class, Version: version, Aliases: aliases}, Command: []string{path}}
	}
	found := []PluginInfo{
		info("org.apache.kafka.connect.file.FileStreamSinkConnector", "4.4.0", "/builtin", "FileStreamSink", "FileStreamSinkConnector"),
		info("com.example.Counter", "1.9.2", "/pp/counter-1.9/counter", "Counter"),
		info("com.example.Counter", "1.10.0", "/pp/counter-1.10/counter", "Counter"),
		info("com.example.Counter", "1.10.0", "/pp/counter-copy/counter", "Counter"),
		info("org.other.FileStreamSinkConnector", "0.1", "/pp/other/sink", "FileStreamSinkConnector", "OtherSink"),
		info("org.other.Clash", "1", "/pp/clash/c", "com.example.Counter"),
	}
	var logs bytes.Buffer
	out := resolveNames(found, slog.New(slog.NewTextHandler(&logs, nil)))
	got := map[string]PluginInfo{}
	for _, p := range out {
		if _, dup := got[p.Spec.Class]; dup {
			t.Fatalf("class %s kept twice", p.Spec.Class)
		}
		got[p.Spec.Class] = p
	}
	if len(got) != 4 {
		t.Fatalf("kept %d classes, want 4: %+v", len(got), out)
	}
	if c := got["com.example.Counter"]; c.Command[0] != "/pp/counter-1.10/counter" || !slices.Equal(c.Spec.Aliases, []string{"Counter"}) {
		t.Errorf("Counter: kept %s %v, want the first 1.10.0 with its alias", c.Command[0], c.Spec.Aliases)
	}
	if a := got["org.apache.kafka.connect.file.FileStreamSinkConnector"].Spec.Aliases; !slices.Equal(a, []string{"FileStreamSink"}) {
		t.Errorf("built-in sink aliases %v, want FileStreamSink only (FileStreamSinkConnector is ambiguous)", a)
	}
	if a := got["org.other.FileStreamSinkConnector"].Spec.Aliases; !slices.Equal(a, []string{"OtherSink"}) {
		t.Errorf("other sink aliases %v, want OtherSink", a)
	}
	if a := got["org.other.Clash"].Spec.Aliases; len(a) != 0 {
		t.Errorf("an alias that is another plugin's class was kept: %v", a)
	}
	specs := make([]sdk.Spec, len(out))
	for i, p := range out {
		specs[i] = p.Spec
	}
	if i, err := findSpec(specs, "com.example.Counter"); err != nil || out[i].Spec.Class != "com.example.Counter" {
		t.Errorf("com.example.Counter resolves to %v, %v", i, err)
	}
	for _, want := range []string{"keeping the higher version", "ambiguous plugin alias ignored", "alias=FileStreamSinkConnector"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	// The first found was mutated in place? The input slice keeps its aliases.
	if len(found[0].Spec.Aliases) != 2 {
		t.Errorf("resolveNames changed its input: %v", found[0].Spec.Aliases)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.2", 1}, {"1.0", "1.0.1", -1}, {"2.0.0", "2.0.0", 0}, {"", "0.1", -1},
	} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestPlainError: a connector's error that came through gRPC reads as the
// connector's message; a transport error keeps its status.
func TestPlainError(t *testing.T) {
	if got := plainError(status.Error(codes.Unknown, "validate: panic: boom")); got.Error() != "validate: panic: boom" {
		t.Errorf("Unknown: %q", got)
	}
	gone := status.Error(codes.Unavailable, "connection refused")
	if got := plainError(gone); got != gone {
		t.Errorf("Unavailable: %q", got)
	}
	plain := errors.New("x")
	if got := plainError(plain); got != plain {
		t.Errorf("plain: %q", got)
	}
}
