package convert

import (
	"strconv"
	"testing"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// avroRawConfigs are the AvroConverter settings that change what a value
// is written as: a value left encoded must be written exactly as its
// decoded form under each.
func avroRawConfigs(t testing.TB, url string) []Converter {
	var out []Converter
	for _, cfg := range []map[string]string{
		{},
		{"enhanced.avro.schema.support": "true"},
		{"connect.meta.data": "false"},
	} {
		cfg["schema.registry.url"] = url
		for _, isKey := range []bool{false, true} {
			c, err := NewAvro(isKey, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
	}
	return out
}

// avroRawCases are the golden cases of both converters' tests and a
// Debezium change event.
func avroRawCases(t *testing.T) []goldenCase {
	cases := append(goldenCases(), schemalessCases()...)
	for name, c := range avroGoldenCases(t) {
		cases = append(cases, goldenCase{name: name, s: c.s, v: c.v})
	}
	env, ev := lakeEnvelope()
	return append(cases, goldenCase{name: "lake_envelope", s: env, v: ev})
}

// TestAvroRaw: for every golden case and setting, the Avro written from a
// value left in the wire encoding equals the Avro written from the decoded
// value (itself checked against Confluent's serializer in TestAvroGoldens).
func TestAvroRaw(t *testing.T) {
	convs := avroRawConfigs(t, newFakeRegistry(t).URL)
	cases := avroRawCases(t)
	compareRaw(t, encodeValues(t, cases), convs, func(i int) string { return cases[i].name })
	compareRaw(t, encodeValuesWith(t, &wire.Encoder{ValueLengths: true}, cases), convs, func(i int) string { return cases[i].name + " (length)" })
}

// FuzzAvroRaw: whatever batch decodes, its values are written identically
// from the encoding and from their decoded form.
func FuzzAvroRaw(f *testing.F) {
	cases := append(goldenCases(), schemalessCases()...)
	f.Add(encodeValues(f, cases))
	for _, tc := range cases {
		f.Add(encodeValuesWith(f, &wire.Encoder{ValueLengths: true}, []goldenCase{tc}))
	}
	reg := newFakeRegistryB(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		compareRaw(t, data, avroRawConfigs(t, reg.URL), func(i int) string { return "record " + strconv.Itoa(i) })
	})
}
