package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file writes JSON the way Kafka Connect's internal JsonConverter
// (schemas.enable=false, Jackson underneath) writes it, through the SDK's
// one Java-compatible JSON writer (schema.AppendJSON), so that the bytes of
// keys — which decide partition placement and compaction identity — and
// values match a Java worker's. Map keys are written in sorted order
// (Java's order depends on the Map implementation the connector used;
// sorted is what a LinkedHashMap built in key order gives).

// appendJSON appends the schemaless JsonConverter encoding of v.
func appendJSON(b []byte, v any) ([]byte, error) {
	return schema.AppendJSON(b, nil, v, schema.JSONOptions{})
}

// decodeJSON parses a schemaless JSON value: integers become int64 (so an
// LSN stays exact), other numbers float64, objects map[string]any.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return fixNumbers(v), nil
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
		return x
	}
	return v
}
