package kafkarest

import (
	"strings"
	"testing"
)

func TestValidateJSON(t *testing.T) {
	schema, err := decodeNumbers([]byte(`{"type":"object","required":["n"],"additionalProperties":false,
	 "properties":{"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":["string","null"],"maxLength":3},
	 "c":{"enum":["a","b"]},"xs":{"type":"array","items":{"type":"number"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{`{"n":1}`, `{"n":10,"s":null,"c":"b","xs":[1,2.5]}`, `{"n":2.0,"s":"abc"}`} {
		v, _ := decodeNumbers([]byte(ok))
		if err := validateJSON(schema, v, "value"); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for in, want := range map[string]string{
		`[]`:                   "want type",
		`{}`:                   "value.n: required",
		`{"n":1.5}`:            "value.n: want type",
		`{"n":11}`:             "above the maximum",
		`{"n":-1}`:             "below the minimum",
		`{"n":1,"s":"abcd"}`:   "longer than",
		`{"n":1,"c":"z"}`:      "enum",
		`{"n":1,"xs":["1"]}`:   "value.xs[0]: want type",
		`{"n":1,"other":true}`: "not an allowed property",
	} {
		v, _ := decodeNumbers([]byte(in))
		if err := validateJSON(schema, v, "value"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}
