package main

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/internal/properties"
)

// TestServerFlagsAfterFile: flags may come after the properties file, as in
// the worker's --help example and Kafka's scripts.
func TestServerFlagsAfterFile(t *testing.T) {
	for _, args := range [][]string{
		{"w.properties", "--override", "a=1", "--log-level", "debug", "--override", "b=2"},
		{"--override", "a=1", "w.properties", "--log-level=debug", "--override", "b=2"},
		{"--override", "a=1", "--log-level", "debug", "--override", "b=2", "w.properties"},
	} {
		var f serverFlags
		rest, code, ok := f.parse("worker", "", args, io.Discard, io.Discard)
		if !ok || code != 0 {
			t.Fatalf("%q: code %d", args, code)
		}
		if !slices.Equal(rest, []string{"w.properties"}) || !slices.Equal([]string(f.overrides), []string{"a=1", "b=2"}) || f.level != "debug" {
			t.Errorf("%q: positional %q, overrides %q, level %q", args, rest, f.overrides, f.level)
		}
	}
	var f serverFlags
	if rest, _, ok := f.parse("worker", "", []string{"a", "--override", "x=1", "b"}, io.Discard, io.Discard); !ok || !slices.Equal(rest, []string{"a", "b"}) {
		t.Errorf("two files: %q, %v", rest, ok)
	}
	if _, code, ok := f.parse("worker", "", []string{"w.properties", "--bogus"}, io.Discard, io.Discard); ok || code != 2 {
		t.Errorf("a bad flag after the file: ok %v, code %d", ok, code)
	}
}

// TestDevSettings: dev's worker defaults are replaced by a properties file,
// then by --override, and a malformed override is refused.
func TestDevSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dev.properties")
	if err := os.WriteFile(file, []byte("value.converter.schemas.enable=true\ngroup.id=from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	props := properties.Properties{"value.converter.schemas.enable": "false", "group.id": "tributary-dev", "key.converter": "k"}
	if err := devSettings(props, file, []string{"group.id=from-flag"}); err != nil {
		t.Fatal(err)
	}
	want := properties.Properties{"value.converter.schemas.enable": "true", "group.id": "from-flag", "key.converter": "k"}
	if !maps.Equal(props, want) {
		t.Errorf("settings %v, want %v", props, want)
	}
	if err := devSettings(props, "", []string{"no-equals-sign"}); err == nil || !strings.Contains(err.Error(), "--override") {
		t.Errorf("malformed override: %v, want an --override error", err)
	}
}
