package worker

import (
	"context"
	"log/slog"
	"slices"
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
	out := Validation(testSpec(sdk.Sink), testConverters, config, plugin, ClientOverrides{})
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
	h := newDriver(Config{}, slog.New(slog.DiscardHandler), nil, "w1", nil)
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
		out := Validation(testSpec(sdk.Sink), testConverters, config, sdk.ConfigInfos{Name: "X"}, ClientOverrides{})
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

// TestValidateTransforms: the transforms and predicates settings are
// validated with the common keys, each alias in a group of its own, with
// Kafka Connect's messages, and a duplicate alias is an error of the list
// itself; a create with any of them is refused.
func TestValidateTransforms(t *testing.T) {
	config := map[string]string{"connector.class": "X", "name": "s", "topic": "t",
		"transforms": "route,bad,route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex": "(.*)", "transforms.bad.type": "com.example.NoSuchTransform",
		"predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "t.*"}
	out := Validation(testSpec(sdk.Source), testConverters, config, sdk.ConfigInfos{}, ClientOverrides{})
	want := map[string][]string{
		"transforms":                   {"Invalid value [route, bad, route] for configuration transforms: Duplicate alias provided."},
		"transforms.route.replacement": {`Missing required configuration "transforms.route.replacement" which has no default value.`},
		"transforms.bad.type":          {"Invalid value com.example.NoSuchTransform for configuration transforms.bad.type: Class com.example.NoSuchTransform could not be found."},
	}
	errs := out.Errors()
	for k, msgs := range want {
		if !slices.Equal(errs[k], msgs) {
			t.Errorf("%s: errors %q, want %q", k, errs[k], msgs)
		}
	}
	if out.ErrorCount != 3 {
		t.Errorf("error_count %d, want 3: %v", out.ErrorCount, errs)
	}
	g := strings.Join(out.Groups, ",")
	if !strings.HasSuffix(g, "Transforms: route,Transforms: bad,Predicates: p") {
		t.Errorf("groups %s", g)
	}
	var keys []string
	for _, c := range out.Configs {
		if strings.HasPrefix(c.Definition.Name, "predicates.p.") {
			keys = append(keys, c.Definition.Name)
		}
	}
	if strings.Join(keys, ",") != "predicates.p.type,predicates.p.plugin.version,predicates.p.pattern" {
		t.Errorf("predicate keys %v", keys)
	}
	if err := ValidationError(out); err == nil || !strings.Contains(err.Error(), "contains the following 3 error(s)") {
		t.Errorf("create: %v", err)
	}

	// A valid chain adds no error.
	delete(config, "transforms.bad.type")
	config["transforms"] = "route"
	config["transforms.route.replacement"] = "x-$1"
	if out := Validation(testSpec(sdk.Source), testConverters, config, sdk.ConfigInfos{}, ClientOverrides{}); out.ErrorCount != 0 {
		t.Errorf("valid chain: %v", out.Errors())
	}
}

func testSpec(t sdk.ConnectorType) sdk.Spec { return sdk.Spec{Class: "X", Type: t, Version: "1.0"} }

var testConverters = Converters{Key: StringConverter, Value: JSONConverter}
