package contract

import (
	"embed"
	"encoding/json"
	"net/http"
	"strings"
)

// recorded holds answers recorded from Kafka Connect 4.4 (with the FileStream
// connectors, JsonConverter as the worker's key and value converter) and
// made templates where the two products must differ: plugin versions are
// "{{string}}", and the recommended classes of a transform type, which
// Tributary does not have yet, "{{array}}". A validate file holds the
// request body and the answer.
//
//go:embed testdata/*.json
var recorded embed.FS

// recordedAnswer returns a recorded answer; for a validate recording also
// the request body.
func recordedAnswer(file string) (body, answer string) {
	b, err := recorded.ReadFile("testdata/" + file)
	if err != nil {
		panic("contract: " + err.Error()) // a file of this package is missing
	}
	var v struct {
		Body   json.RawMessage `json:"body"`
		Answer json.RawMessage `json:"answer"`
	}
	if json.Unmarshal(b, &v) == nil && v.Answer != nil {
		return string(v.Body), string(v.Answer)
	}
	return "", string(b)
}

// recordedValidate is the step of a recorded validate exchange.
func recordedValidate(path, file string) Step {
	body, answer := recordedAnswer(file)
	s := send(http.MethodPut, path, body, 200, answer)
	s.Kafka = &Expect{Status: 200, Body: openConverterChoices(answer)}
	s.Deviation = "none in Tributary: the reference Kafka Connect also has Debezium's jars (for the Postgres tests), and recommends their converters besides Kafka's"
	return s
}

// openConverterChoices makes the recommended values of the converter keys
// in a validate answer a "{{contains}}" list: the converters Kafka Connect
// recommends are every one on its class path, and the reference worker's
// holds more jars than the FileStream connectors'.
func openConverterChoices(answer string) string {
	dec := json.NewDecoder(strings.NewReader(answer))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		panic("contract: a recorded validate answer is not JSON: " + err.Error())
	}
	configs, _ := all["configs"].([]any)
	for _, c := range configs {
		value, _ := c.(map[string]any)["value"].(map[string]any)
		name, _ := value["name"].(string)
		rec, _ := value["recommended_values"].([]any)
		if strings.HasSuffix(name, "converter") && len(rec) > 0 {
			value["recommended_values"] = append([]any{"{{contains}}"}, rec...)
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		panic("contract: " + err.Error())
	}
	return string(b)
}

// refusedOffsets is the answer to an offsets change the connector refuses:
// a 400 with the connector's message (Kafka Connect: a 500 with it).
func refusedOffsets(body, message string) Step {
	msg := `{"error_code":400,"message":"` + message + `"}`
	return Step{Method: http.MethodPatch, Path: "/connectors/${name}/offsets", Body: body,
		Want:      Expect{Status: 400, Body: msg},
		Kafka:     &Expect{Status: 500, Body: `{"error_code":500,"message":"` + message + `"}`},
		Deviation: "a connector's refusal of an offsets change is a 400 (Kafka Connect: 500), with the connector's message"}
}

// parityCases are the exchanges where third-party clients found Tributary
// answering differently from Kafka Connect 4.4 (issue 21).
func parityCases() []Case {
	const file = `{"filename":"${dir}/${name}.in"}`
	_, sourceDefs := recordedAnswer("config-FileStreamSource.json")
	_, sinkDefs := recordedAnswer("config-FileStreamSink.json")
	return []Case{
		{Name: "plugin config definitions", Steps: []Step{
			// Every key Kafka Connect 4.4 defines, the common ones included,
			// in its order (by class and by alias).
			get("/connector-plugins/FileStreamSource/config", 200, sourceDefs),
			get("/connector-plugins/org.apache.kafka.connect.file.FileStreamSourceConnector/config", 200, sourceDefs),
			get("/connector-plugins/FileStreamSink/config", 200, sinkDefs),
		}},
		{Name: "validate like kafka connect", Steps: []Step{
			// The common keys with the worker's converters as defaults,
			// the plugin.version keys (KIP-891), connector.class and the
			// result's name as given.
			recordedValidate("/connector-plugins/FileStreamSource/config/validate", "validate-source.json"),
			// Converters named in the config have their settings
			// validated under their prefix; values of the wrong type are
			// null; LIST values are rendered trimmed.
			recordedValidate("/connector-plugins/FileStreamSinkConnector/config/validate", "validate-sink-converters.json"),
		}},
		{Name: "primitive converters", Steps: []Step{
			get("/connector-plugins?connectorsOnly=false", 200, `["{{contains}}",
				{"class":"org.apache.kafka.connect.converters.BooleanConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.converters.DoubleConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.converters.FloatConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.converters.IntegerConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.converters.LongConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.converters.ShortConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.converters.ByteArrayConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.json.JsonConverter","type":"converter","version":"{{string}}"},
				{"class":"org.apache.kafka.connect.storage.StringConverter","type":"converter","version":"{{string}}"}]`),
			get("/connector-plugins/IntegerConverter/config", 200, `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order_in_group":-1,"width":"NONE","display_name":"converter.type","dependents":[]}]`),
			get("/connector-plugins/org.apache.kafka.connect.converters.BooleanConverter/config", 200, `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order_in_group":-1,"width":"NONE","display_name":"converter.type","dependents":[]}]`),
		}},
		{Name: "transforms", Steps: []Step{
			// Kafka Connect's answer for a transform class it cannot find.
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"connector.class":"FileStreamSource","topic":"t","transforms":"a","transforms.a.type":"com.example.NoSuchTransform"}}`, 400,
				`{"error_code":400,"message":"Connector configuration is invalid and contains the following 1 error(s):\nInvalid value com.example.NoSuchTransform for configuration transforms.a.type: Class com.example.NoSuchTransform could not be found.\nYou can also find the above list of errors at the endpoint `+"`/connector-plugins/{connectorType}/config/validate`"+`"}`),
			get("/connectors/${name}", 404, connNotFound),
			recordedValidate("/connector-plugins/FileStreamSource/config/validate", "validate-transforms.json"),
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"connector.class":"FileStreamSource","topic":"t","transforms":"route","transforms.route.type":"org.apache.kafka.connect.transforms.RegexRouter","transforms.route.regex":"(.*)","transforms.route.replacement":"$1-x"}}`, 201,
				`"{{object}}"`),
		}},
		{Name: "loggers by namespace", Steps: []Step{
			// Every logger is listed, the connectors' class loggers too.
			get("/admin/loggers", 200, `{"{{more}}":true,"root":{"level":"{{string}}","last_modified":"{{any}}"},
				"org.apache.kafka.connect.file.FileStreamSourceTask":{"level":"{{string}}","last_modified":"{{any}}"},
				"org.apache.kafka.connect.file.FileStreamSinkConnector":{"level":"{{string}}","last_modified":"{{any}}"}}`),
			get("/admin/loggers/org.apache.kafka.connect.file.FileStreamSinkTask", 200, `{"level":"{{string}}","last_modified":"{{any}}"}`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect.file", `{"level":"INFO"}`, 200, `"{{array}}"`),
			// A namespace: every logger it changed, itself included.
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect.file", `{"level":"DEBUG"}`, 200,
				`["org.apache.kafka.connect.file","org.apache.kafka.connect.file.FileStreamSinkConnector","org.apache.kafka.connect.file.FileStreamSinkTask",
				  "org.apache.kafka.connect.file.FileStreamSourceConnector","org.apache.kafka.connect.file.FileStreamSourceTask"]`),
			get("/admin/loggers/org.apache.kafka.connect.file", 200, `{"level":"DEBUG","last_modified":"{{number}}"}`),
			get("/admin/loggers/org.apache.kafka.connect.file.FileStreamSourceTask", 200, `{"level":"DEBUG","last_modified":"{{number}}"}`),
			// Nothing to change: an empty list.
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect.file", `{"level":"debug"}`, 200, `[]`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect.file.FileStreamSinkTask", `{"level":"WARN"}`, 200,
				`["org.apache.kafka.connect.file.FileStreamSinkTask"]`),
			get("/admin/loggers/org.apache.kafka.connect.file.FileStreamSinkTask", 200, `{"level":"WARN","last_modified":"{{number}}"}`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect.file", `{"level":"INFO"}`, 200, `"{{array}}"`),
		}},
		{Name: "versions agree", Steps: []Step{
			// The first-party plugins report the worker's version.
			{Method: http.MethodGet, Path: "/", Want: Expect{Status: 200, Body: `{"version":"4.4.0-tributary","commit":"{{string}}","kafka_cluster_id":"{{string}}"}`},
				Kafka: &Expect{Status: 200, Body: `{"version":"4.4.0","commit":"{{string}}","kafka_cluster_id":"{{string}}"}`}, Deviation: "Tributary's version is the Kafka Connect version it follows, marked -tributary"},
			{Method: http.MethodGet, Path: "/connector-plugins", Want: Expect{Status: 200, Body: `["{{contains}}",
				{"class":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"4.4.0-tributary"},
				{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"4.4.0-tributary"}]`},
				Kafka: &Expect{Status: 200, Body: `["{{contains}}",
				{"class":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"4.4.0"},
				{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"4.4.0"}]`},
				Deviation: "Tributary's version is the Kafka Connect version it follows, marked -tributary"},
		}},
		{Name: "wrong json types named in json", Steps: []Step{
			// What JSON was expected, never a Go type name.
			{Method: http.MethodPost, Path: "/connectors", Body: `[]`,
				Want:  Expect{Status: 400, Body: `{"error_code":400,"message":"Cannot deserialize JSON array: the body must be an object"}`},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a body of the wrong JSON type is a 400 (Kafka Connect: 500)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":[]}`,
				Want:  Expect{Status: 400, Body: `{"error_code":400,"message":"Cannot deserialize field \"config\": JSON array is not an object"}`},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a body of the wrong JSON type is a 400 (Kafka Connect: 500)"},
			get("/connectors/${name}", 404, connNotFound),
		}},
		{Name: "source offsets asked of the connector", Steps: steps(createSource(), []Step{
			send(http.MethodPut, "/connectors/${name}/stop", "", 204, ""),
			poll(get("/connectors/${name}/status", 200, status("source", "STOPPED"))),
			get("/connectors/${name}/offsets", 200, `{"offsets":[]}`),
			// FileStreamSourceConnector.alterOffsets' checks, word for word.
			refusedOffsets(`{"offsets":[{"partition":`+file+`,"offset":{"wrong":1}}]}`,
				`Offset objects should either be null or contain the key 'position'`),
			refusedOffsets(`{"offsets":[{"partition":`+file+`,"offset":{"position":"5"}}]}`,
				`The value for the 'position' key in the offset is expected to be a Long value`),
			refusedOffsets(`{"offsets":[{"partition":`+file+`,"offset":{"position":5.5}}]}`,
				`The value for the 'position' key in the offset is expected to be a Long value`),
			refusedOffsets(`{"offsets":[{"partition":`+file+`,"offset":{"position":-1}}]}`,
				`The value for the 'position' key in the offset should be a non-negative value`),
			refusedOffsets(`{"offsets":[{"partition":{"file":"x"},"offset":{"position":1}}]}`,
				`Partition objects should contain the key 'filename'`),
			// Refused changes changed nothing.
			get("/connectors/${name}/offsets", 200, `{"offsets":[]}`),
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[{"partition":`+file+`,"offset":{"position":9007199254740993}}]}`, 200,
				`{"message":"The offsets for this connector have been altered successfully"}`),
			// Kafka Connect reads the offsets topic back asynchronously.
			poll(get("/connectors/${name}/offsets", 200, `{"offsets":[{"partition":`+file+`,"offset":{"position":9007199254740993}}]}`)),
			// A null offset is always allowed (cleaning up stray partitions).
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[{"partition":{"garbage":true},"offset":null}]}`, 200,
				`{"message":"The offsets for this connector have been altered successfully"}`),
			send(http.MethodDelete, "/connectors/${name}/offsets", "", 200, `{"message":"The offsets for this connector have been reset successfully"}`),
			poll(get("/connectors/${name}/offsets", 200, `{"offsets":[]}`)),
			// Reading stdin (no file), the connector refuses any change,
			// a reset included.
			send(http.MethodPost, "/connectors", `{"name":"${name}-2","config":{"connector.class":"FileStreamSource","topic":"t"},"initial_state":"STOPPED"}`, 201, `"{{object}}"`),
			poll(get("/connectors/${name}-2/status", 200, `{"name":"${name}-2","connector":`+connState("STOPPED")+`,"tasks":[],"type":"source"}`)),
			{Method: http.MethodPatch, Path: "/connectors/${name}-2/offsets", Body: `{"offsets":[{"partition":` + file + `,"offset":{"position":1}}]}`,
				Want:      Expect{Status: 400, Body: `{"error_code":400,"message":"Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."}`},
				Kafka:     &Expect{Status: 500, Body: `{"error_code":500,"message":"Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."}`},
				Deviation: "a connector's refusal of an offsets change is a 400 (Kafka Connect: 500), with the connector's message"},
			{Method: http.MethodDelete, Path: "/connectors/${name}-2/offsets",
				Want:      Expect{Status: 400, Body: `{"error_code":400,"message":"Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."}`},
				Kafka:     &Expect{Status: 500, Body: `{"error_code":500,"message":"Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."}`},
				Deviation: "a connector's refusal of an offsets change is a 400 (Kafka Connect: 500), with the connector's message"},
		})},
	}
}
