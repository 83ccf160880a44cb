package worker

import (
	"encoding/json"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/convert"
)

// converterConfigs are the config definitions Kafka Connect 4.4 serves for
// its converters at GET /connector-plugins/{plugin}/config (recorded from
// it, with order_in_group under the name sdk.ConfigKeyInfo gives it; the
// REST contract test compares them with Kafka Connect's).
var converterConfigs = map[string]string{
	JSONConverter:         `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order":-1,"width":"NONE","display_name":"converter.type","dependents":[]},{"name":"schemas.enable","type":"BOOLEAN","required":false,"default_value":"true","importance":"HIGH","documentation":"Include schemas within each of the serialized values and keys.","group":"Schemas","order":0,"width":"MEDIUM","display_name":"Enable Schemas","dependents":[]},{"name":"schemas.cache.size","type":"INT","required":false,"default_value":"1000","importance":"HIGH","documentation":"The maximum number of schemas that can be cached in this converter instance.","group":"Schemas","order":1,"width":"MEDIUM","display_name":"Schema Cache Size","dependents":[]},{"name":"schema.content","type":"STRING","required":false,"default_value":null,"importance":"HIGH","documentation":"When set, this is used as the schema for all messages, and the schemas within each of the message will be ignored.Otherwise, the schema will be included in the content of each message. This configuration applies only 'schemas.enable' is true, and it exclusively affects the sink connector.","group":"Schemas","order":2,"width":"MEDIUM","display_name":"Schema Content","dependents":[]},{"name":"decimal.format","type":"STRING","required":false,"default_value":"BASE64","importance":"LOW","documentation":"Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'","group":"Serialization","order":0,"width":"MEDIUM","display_name":"Decimal Format","dependents":[]},{"name":"replace.null.with.default","type":"BOOLEAN","required":false,"default_value":"true","importance":"LOW","documentation":"Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.","group":"Serialization","order":1,"width":"MEDIUM","display_name":"Replace null with default","dependents":[]}]`,
	StringConverter:       `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order":-1,"width":"NONE","display_name":"converter.type","dependents":[]},{"name":"converter.encoding","type":"STRING","required":false,"default_value":"UTF-8","importance":"HIGH","documentation":"The name of the Java character set to use for encoding strings as byte arrays.","group":null,"order":-1,"width":"MEDIUM","display_name":"Encoding","dependents":[]}]`,
	ByteArrayConverter:    converterTypeOnly,
	SimpleHeaderConverter: `[]`,
	// Kafka's primitive converters (NumberConverterConfig,
	// BooleanConverterConfig): converter.type only.
	convert.BooleanClass: converterTypeOnly,
	convert.DoubleClass:  converterTypeOnly,
	convert.FloatClass:   converterTypeOnly,
	convert.IntegerClass: converterTypeOnly,
	convert.LongClass:    converterTypeOnly,
	convert.ShortClass:   converterTypeOnly,
}

const converterTypeOnly = `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order":-1,"width":"NONE","display_name":"converter.type","dependents":[]}]`

// ConverterConfig returns the config definitions of a converter by its
// class, simple name, or simple name without "Converter" (Kafka Connect's
// aliases).
func ConverterConfig(plugin string) ([]sdk.ConfigKeyInfo, bool) {
	for class, defs := range converterConfigs {
		simple := class[strings.LastIndex(class, ".")+1:]
		if plugin != class && plugin != simple && plugin != strings.TrimSuffix(simple, "Converter") {
			continue
		}
		var out []sdk.ConfigKeyInfo
		if err := json.Unmarshal([]byte(defs), &out); err != nil {
			panic("worker: converter config of " + class + ": " + err.Error()) // a constant above is broken
		}
		if out == nil {
			out = []sdk.ConfigKeyInfo{}
		}
		return out, true
	}
	return nil, false
}
