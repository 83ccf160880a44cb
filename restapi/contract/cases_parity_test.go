package contract

import (
	"encoding/json"
	"testing"
)

// TestOpenConverterChoices: against Kafka Connect, a validate answer whose
// converter keys recommend more classes than recorded (a class path with
// more jars) still matches, while Tributary's expectation stays exact.
func TestOpenConverterChoices(t *testing.T) {
	_, answer := recordedAnswer("validate-source.json")
	var actual map[string]any
	if err := json.Unmarshal([]byte(answer), &actual); err != nil {
		t.Fatal(err)
	}
	extended := 0
	for _, c := range actual["configs"].([]any) {
		v := c.(map[string]any)["value"].(map[string]any)
		if v["name"] == "key.converter" || v["name"] == "value.converter" {
			v["recommended_values"] = append(v["recommended_values"].([]any), "io.debezium.converters.BinaryDataConverter")
			extended++
		}
	}
	if extended != 2 {
		t.Fatalf("extended %d converter keys, want 2", extended)
	}
	var kafka, exact any
	if err := json.Unmarshal([]byte(openConverterChoices(answer)), &kafka); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(answer), &exact); err != nil {
		t.Fatal(err)
	}
	if err := Match(actual, kafka, "$"); err != nil {
		t.Errorf("Kafka Connect's expectation refuses more converters: %v", err)
	}
	if err := Match(actual, exact, "$"); err == nil {
		t.Error("Tributary's expectation accepts converters it does not have")
	}
	for _, c := range actual["configs"].([]any) {
		v := c.(map[string]any)["value"].(map[string]any)
		if v["name"] == "value.converter" {
			v["recommended_values"] = []any{"io.debezium.converters.BinaryDataConverter"}
		}
	}
	if err := Match(actual, kafka, "$"); err == nil {
		t.Error("Kafka Connect's expectation accepts a list without Kafka's converters")
	}
}
