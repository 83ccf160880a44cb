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
	out := Validation(testSpec(sdk.Sink), testConverters, config, plugin)
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
	if err := ValidationError(out); err == nil || !strings.Contains(err.Error(), "only one topic") {
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

// A sink's dead letter queue may not be a topic it reads (the error is on
// topics or topics.regex, as Kafka Connect 4.4 lists it), and a client
// override the client refuses is an error on its key (Kafka Connect's
// messages).
func TestValidateDeadLetterQueueAndOverrides(t *testing.T) {
	for _, tc := range []struct {
		config map[string]string
		key    string
		want   string
	}{
		{map[string]string{"topics": "a, dlq", "errors.deadletterqueue.topic.name": "dlq"}, "topics",
			"The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"},
		{map[string]string{"topics.regex": "d.*", "errors.deadletterqueue.topic.name": "dlq"}, "topics.regex",
			"The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the connector"},
		{map[string]string{"topics.regex": "d", "errors.deadletterqueue.topic.name": "dlq"}, "", ""}, // whole names only
		{map[string]string{"topics": "a", "consumer.override.auto.offset.reset": "bogus"}, "consumer.override.auto.offset.reset",
			"Invalid value bogus for configuration consumer.override.auto.offset.reset: must be earliest, latest or none"},
	} {
		config := map[string]string{"connector.class": "X", "name": "s"}
		for k, v := range tc.config {
			config[k] = v
		}
		out := Validation(testSpec(sdk.Sink), testConverters, config, sdk.ConfigInfos{Name: "X"})
		errs := out.Errors()
		if tc.key == "" {
			if out.ErrorCount != 0 {
				t.Errorf("%v: errors %v", tc.config, errs)
			}
			continue
		}
		if out.ErrorCount != 1 || len(errs[tc.key]) != 1 || errs[tc.key][0] != tc.want {
			t.Errorf("%v: errors %v, want %s: %s", tc.config, errs, tc.key, tc.want)
		}
	}
}

// TestTransformsRefused: until the worker has transforms, every transform
// or predicate alias is listed as Kafka Connect 4.4 lists it and refused
// with its message for a class it cannot find (issue 21), so a create
// fails instead of running with the transforms ignored.
func TestTransformsRefused(t *testing.T) {
	config := map[string]string{"connector.class": "X", "name": "s", "topic": "t",
		"transforms": "route, b", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"predicates": "p", "predicates.p.type": "com.example.NoSuchPredicate"}
	out := Validation(testSpec(sdk.Source), testConverters, config, sdk.ConfigInfos{})
	want := map[string]string{
		"transforms.route.type": "Invalid value org.apache.kafka.connect.transforms.RegexRouter for configuration transforms.route.type: Class org.apache.kafka.connect.transforms.RegexRouter could not be found.",
		"transforms.b.type":     `Missing required configuration "transforms.b.type" which has no default value.`,
		"predicates.p.type":     "Invalid value com.example.NoSuchPredicate for configuration predicates.p.type: Class com.example.NoSuchPredicate could not be found.",
	}
	errs := out.Errors()
	for k, msg := range want {
		if len(errs[k]) != 1 || errs[k][0] != msg {
			t.Errorf("%s: errors %q, want %q", k, errs[k], msg)
		}
	}
	if out.ErrorCount != len(want) {
		t.Errorf("error_count %d, want %d", out.ErrorCount, len(want))
	}
	var names []string
	for _, c := range out.Configs {
		if strings.Contains(c.Definition.Name, ".plugin.version") && strings.HasPrefix(c.Definition.Name, "transforms.") {
			names = append(names, c.Definition.Name)
		}
	}
	if strings.Join(names, ",") != "transforms.route.plugin.version,transforms.b.plugin.version" {
		t.Errorf("plugin.version keys %v", names)
	}
	g := strings.Join(out.Groups, ",")
	if !strings.HasSuffix(g, "Transforms: route,Transforms: b,Predicates: p") {
		t.Errorf("groups %s", g)
	}
	err := ValidationError(out)
	if err == nil || KindOf(err) != KindBadRequest || !strings.Contains(err.Error(), "Class org.apache.kafka.connect.transforms.RegexRouter could not be found.") {
		t.Fatalf("validationError = %v", err)
	}
	// No transforms: nothing added.
	delete(config, "transforms")
	delete(config, "predicates")
	if out := Validation(testSpec(sdk.Source), testConverters, config, sdk.ConfigInfos{}); out.ErrorCount != 0 {
		t.Fatalf("without transforms: %v", out.Errors())
	}
}

func testSpec(t sdk.ConnectorType) sdk.Spec { return sdk.Spec{Class: "X", Type: t, Version: "1.0"} }

var testConverters = Converters{Key: StringConverter, Value: JSONConverter}
