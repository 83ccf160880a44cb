// Package schema is Kafka Connect's data model in Go: typed schemas
// (primitives, arrays, maps, structs; optional fields and defaults; the
// logical types Decimal, Date, Time and Timestamp) and Struct values checked
// against them.
//
// Values map to Go types as follows:
//
//	INT8 int8, INT16 int16, INT32 int32, INT64 int64
//	FLOAT32 float32, FLOAT64 float64, BOOLEAN bool
//	STRING string, BYTES []byte
//	ARRAY []any, MAP map[string]any (STRING keys) or map[any]any
//	STRUCT *Struct
//	Decimal *big.Int (the unscaled value; the scale is the schema's)
//	Date, Time, Timestamp time.Time
//
// A value without a schema ("schemaless", like JsonConverter with
// schemas.enable=false) may be nil, any of the primitive Go types above,
// []any, map[string]any or map[any]any.
//
// AppendJSON renders any value as Kafka's JsonConverter writes it
// (schemaless or with the schema/payload envelope), and json.Marshal of a
// *Struct gives its fields the same way.
//
// Sketch:
//
//	var tick = schema.StructOf("example.Tick").
//		Field("seq", schema.Int64).
//		Field("at", schema.Timestamp).
//		Field("note", schema.OptionalString).
//		Build()
//
//	v := schema.NewStruct(tick).Set("seq", int64(7)).Set("at", time.Now())
//	if err := v.Validate(); err != nil { ... }
//	line, err := schema.AppendJSON(nil, tick, v, schema.JSONOptions{})
//	// {"seq":7,"at":1767225600000,"note":null}
package schema
