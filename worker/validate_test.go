package worker

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
)

// TestMergeValidationKeepsPluginErrors: a sink connector that defines
// topics itself and refuses its value makes the whole validation fail,
// although the worker lists topics among its common keys (Kafka Connect
// counts both validations).
func TestMergeValidationKeepsPluginErrors(t *testing.T) {
	config := map[string]string{"connector.class": "X", "name": "s", "topics": "a,b"}
	plugin := sdk.ConfigInfos{Name: "X", Configs: []sdk.ConfigInfo{
		{Definition: sdk.ConfigKeyInfo{Name: "topics"}, Value: sdk.ConfigValueInfo{Name: "topics", Errors: []string{"only one topic"}}},
		{Definition: sdk.ConfigKeyInfo{Name: "path"}, Value: sdk.ConfigValueInfo{Name: "path"}},
	}}
	out := mergeValidation(sdk.Sink, "X", config, plugin)
	if out.ErrorCount != 1 {
		t.Fatalf("error_count %d, want 1: %+v", out.ErrorCount, out.Errors())
	}
	n := 0
	for _, c := range out.Configs {
		if c.Definition.Name == "topics" {
			n++
		}
	}
	if n != 1 || !strings.Contains(strings.Join(out.Errors()["topics"], ";"), "only one topic") {
		t.Fatalf("topics listed %d times, errors %v", n, out.Errors()["topics"])
	}
	if err := validationError(out); err == nil || !strings.Contains(err.Error(), "only one topic") {
		t.Fatalf("validationError = %v", err)
	}
}

// TestPluginCallsWhileStarting: until the plugin host is up, the plugin
// endpoints and validation answer 503 (still starting), not a panic.
func TestPluginCallsWhileStarting(t *testing.T) {
	h := newHerder(Config{}, slog.New(slog.DiscardHandler), "w1")
	h.stage.Store("starting the plugin host")
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if KindOf(err) != KindUnavailable || !strings.Contains(err.Error(), "starting the plugin host") {
			t.Errorf("%s: %v, want the 503 of a worker still starting", what, err)
		}
	}
	_, err := h.Plugins(ctx, true)
	check("Plugins", err)
	_, err = h.PluginConfig(ctx, "FileStreamSource")
	check("PluginConfig", err)
	config := map[string]string{"connector.class": "FileStreamSource", "name": "x"}
	_, err = h.ValidateConfig(ctx, "FileStreamSource", config)
	check("ValidateConfig", err)
	_, _, err = h.validate(ctx, config)
	check("validate", err)
	if got := h.connectorType(config); got != "unknown" {
		t.Errorf("connectorType = %q", got)
	}
}
