package s3

import "github.com/tributary-dev/tributary/sdk/schema"

// renderJSON appends v, of schema s (nil for a schemaless value), as Kafka's
// JsonConverter with schemas.enable=false writes it (Confluent's JsonFormat);
// decimalFormat is BASE64 or NUMERIC (json.decimal.format).
func renderJSON(dst []byte, s *schema.Schema, v any, decimalFormat string) ([]byte, error) {
	return schema.AppendJSON(dst, s, v, schema.JSONOptions{DecimalFormat: decimalFormat})
}
