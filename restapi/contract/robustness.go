package contract

import (
	"net/http"
	"strconv"
	"strings"
)

// robustnessCases pin down what one request must never do to a worker
// (issue 23): brick it, reach the wrong connector, or answer 500 to bad
// input. Each step carries Kafka Connect 4.4's answer where it differs.
func robustnessCases() []Case {
	longName := "${name}-" + strings.Repeat("x", 1024)
	return []Case{
		{Name: "name too long", Steps: []Step{
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"` + longName + `","config":` + sourceConfig + `}`,
				Want:      Expect{Status: 400, Body: anyError400},
				Kafka:     &Expect{Status: 201, Body: `"{{object}}"`},
				Deviation: "names are limited to 1,024 bytes (Kafka Connect has no limit, and a worker dies on a name of 32,768 bytes)"},
			{Method: http.MethodDelete, Path: "/connectors/" + longName,
				Want:  Expect{Status: 404, Body: `{"error_code":404,"message":"Connector ` + longName + ` not found"}`},
				Kafka: &Expect{Status: 204, NoBody: true}},
		}},
		{Name: "paths decoded once", Steps: []Step{
			jettyRefuses(http.MethodDelete, "/connectors/${name}%252Fx", "Ambiguous URI path encoding"),
			jettyRefuses(http.MethodGet, "/connectors/${name}%2Fx/status", "Ambiguous URI path separator"),
			jettyRefuses(http.MethodGet, "/connectors/${name}%2fx", "Ambiguous URI path separator"),
			jettyRefuses(http.MethodGet, "/connectors/%2e%2e/connectors", "Ambiguous URI path segment"),
			jettyRefuses(http.MethodGet, "/connectors//${name}", "Ambiguous URI empty segment"),
			jettyRefuses(http.MethodGet, "/connectors/${name}%5Cx", "Suspicious Path Character"),
			jettyRefuses(http.MethodGet, "/connectors/${name}%0Ax/status", "Suspicious Path Character"),
			get("/connectors/${name}%41", 404, `{"error_code":404,"message":"Connector ${name}A not found"}`),
			get("/connectors/${name}%3Bx", 404, `{"error_code":404,"message":"Connector ${name};x not found"}`),
			get("/connectors/${name};x/status", 404, `{"error_code":404,"message":"No status found for connector ${name}"}`),
			// A name its own Location could not address is refused (Kafka
			// Connect creates it; then every request for it is a 400).
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}%41","config":` + sourceConfig + `}`,
				Want:      Expect{Status: 400, Body: `{"error_code":400,"message":"Connector configuration is invalid and contains the following 1 error(s):\nInvalid value ${name}%41 for configuration name: String may not contain '/', '\\' or '%', nor be '.' or '..': no URL could name the connector (/connectors/{name})\nYou can also find the above list of errors at the endpoint ` + "`/connector-plugins/{connectorType}/config/validate`" + `"}`},
				Kafka:     &Expect{Status: 201, Headers: map[string]string{"Location": "${base}/connectors/${name}%41"}, Body: `"{{object}}"`},
				Deviation: "names with '/', '\\', '%' or only dots are refused: no URL reaches them in Kafka Connect (its Location decodes to another name, the escaped path is refused)"},
			get("/connectors/${name}%41", 404, `{"error_code":404,"message":"Connector ${name}A not found"}`),
			jettyRefuses(http.MethodGet, "/connectors/${name}%2541", "Ambiguous URI path encoding"),
			jettyRefuses(http.MethodDelete, "/connectors/${name}%2541", "Ambiguous URI path encoding"),
		}},
		{Name: "path not UTF-8", Steps: []Step{
			{Method: http.MethodPut, Path: "/connectors/%FF/config", Body: sourceConfig,
				Want: Expect{Status: 400, Body: `{"error_code":400,"message":"Bad UTF-8 encoding"}`}, Kafka: &Expect{Status: 400, AnyContentType: true},
				Deviation: "the 400 has Kafka Connect's JSON error body, not Jetty's HTML page"},
			{Method: http.MethodPut, Path: "/connectors/%C3%28/config", Body: sourceConfig,
				Want: Expect{Status: 400, Body: `{"error_code":400,"message":"Bad UTF-8 encoding"}`}, Kafka: &Expect{Status: 400, AnyContentType: true},
				Deviation: "the 400 has Kafka Connect's JSON error body, not Jetty's HTML page"},
			jettyRefuses(http.MethodGet, "/connectors/${name}%FF", "Bad UTF-8 encoding"),
			jettyRefuses(http.MethodGet, "/admin/loggers/%FF", "Bad UTF-8 encoding"),
		}},
		{Name: "name with control characters", Steps: []Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}\nx","config":`+sourceConfig+`}`, 400, `{"error_code":400,"message":"`+
				configInvalid(`Invalid value ${name}\nx for configuration name: String may not contain control sequences but had the following ASCII chars: 10`)+`"}`),
			// The name is trimmed first, as Java's String.trim does (the tab
			// goes, U+0085 stays).
			send(http.MethodPost, "/connectors", `{"name":"${name}\u0000x\u0001\u007f\u0085\t","config":`+sourceConfig+`}`, 400, `{"error_code":400,"message":"`+
				configInvalid(`Invalid value ${name}\u0000x\u0001\u007f\u0085 for configuration name: String may not contain control sequences but had the following ASCII chars: 0, 1, 127, 133`)+`"}`),
			send(http.MethodPut, "/connector-plugins/FileStreamSource/config/validate", `{"connector.class":"FileStreamSource","topic":"t","name":"x\ty\u007f"}`, 200,
				`{"name":"{{string}}","error_count":1,"groups":"{{array}}","configs":["{{contains}}",
				{"definition":{"{{more}}":true,"name":"name"},"value":{"name":"name","value":"x\ty\u007f","recommended_values":[],"errors":["Invalid value x\ty\u007f for configuration name: String may not contain control sequences but had the following ASCII chars: 9, 127"],"visible":true}}]}`),
			get("/connectors/${name}", 404, connNotFound),
		}},
		{Name: "offsets shapes", Steps: steps([]Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":`+sourceConfig+`,"initial_state":"STOPPED"}`, 201, info(sourceStored, "source")),
			poll(get("/connectors/${name}/status", 200, status("source", "STOPPED"))),
			primitivesOnly(`{"offsets":[{"partition":{"filename":{"a":1}},"offset":{"position":1}}]}`, "filename", "MAP"),
			primitivesOnly(`{"offsets":[{"partition":{"filename":"f"},"offset":{"position":[1,2]}}]}`, "position", "ARRAY"),
			primitivesOnly(`{"offsets":[{"partition":{"filename":[1]},"offset":null}]}`, "filename", "ARRAY"),
			{Method: http.MethodPatch, Path: "/connectors/${name}/offsets", Body: `{"offsets":[{"partition":"str","offset":{"position":1}}]}`,
				Want:  Expect{Status: 400, Body: `{"error_code":400,"message":"Cannot deserialize field \"offsets.partition\": JSON string is not an object"}`},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a body of the wrong shape is a 400 (Kafka Connect: 500 with Jackson's message)"},
			get("/connectors/${name}/offsets", 200, `{"offsets":[]}`),
			send(http.MethodPut, "/connectors/${name}-2/config", `{"connector.class":"FileStreamSink","topics":"${name}-t","file":"${dir}/${name}.out"}`, 201, `"{{object}}"`),
			send(http.MethodPut, "/connectors/${name}-2/stop", "", 204, ""),
			poll(get("/connectors/${name}-2/status", 200, `{"name":"${name}-2","connector":`+connState("STOPPED")+`,"tasks":[],"type":"sink"}`)),
			sinkOffsetRefused(`{"kafka_topic":"${name}-t","kafka_partition":[0]}`, `{"kafka_offset":1}`, "partition", "[0]"),
			sinkOffsetRefused(`{"kafka_topic":"${name}-t","kafka_partition":0}`, `{"kafka_offset":{"a":1}}`, "offset", "{a=1}"),
			sinkOffsetRefused(`{"kafka_topic":"${name}-t","kafka_partition":0}`, `{"kafka_offset":[1,2]}`, "offset", "[1, 2]"),
			sinkOffsetRefused(`{"kafka_topic":"${name}-t","kafka_partition":0}`, `{"kafka_offset":"abc"}`, "offset", "abc"),
			get("/connectors/${name}-2/offsets", 200, `{"offsets":[]}`),
		})},
		{Name: "large config stored", Steps: []Step{
			// Kafka Connect stores a config of 1.04 MB; a body the REST API
			// accepts is stored, never a 500 MESSAGE_TOO_LARGE.
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSource","topic":"${name}-t","file":"${dir}/${name}.in","pad":"`+
				strings.Repeat("x", 1040000)+`"}`, 201, `{"name":"${name}","config":{"{{more}}":true,"connector.class":"FileStreamSource"},"tasks":[],"type":"source"}`),
			poll(get("/connectors/${name}/status", 200, status("source", "RUNNING", "0"))),
			get("/connectors/${name}/tasks", 200, `[{"id":{"connector":"${name}","task":0},"config":{"{{more}}":true,"task.class":"org.apache.kafka.connect.file.FileStreamSourceTask"}}]`),
		}},
		{Name: "reconfigure class", Steps: steps(createSource(), []Step{
			// Source to sink: the task restarts with the new class's task
			// config, never the old one (it used to fail and stay FAILED).
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSink","topics":"${name}-t","file":"${dir}/${name}.out"}`, 200,
				`{"name":"${name}","config":{"connector.class":"FileStreamSink","topics":"${name}-t","file":"${dir}/${name}.out","name":"${name}"},"tasks":"{{array}}","type":"sink"}`),
			poll(get("/connectors/${name}/tasks", 200, `[{"id":{"connector":"${name}","task":0},"config":{"{{more}}":true,"task.class":"org.apache.kafka.connect.file.FileStreamSinkTask"}}]`)),
			poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0"))),
		})},
		{Name: "error answers change nothing", Steps: steps(createSource(), []Step{
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSource"}`, 400, anyError400),
			send(http.MethodPatch, "/connectors/${name}/config", `{"topic":null}`, 400, anyError400),
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"connector.class":"FileStreamSink","topics":"x"}}`, 409,
				`{"error_code":409,"message":"Connector ${name} already exists"}`),
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSource","topic":"t","name":"other"}`, 400, anyError400),
			get("/connectors/${name}/config", 200, sourceStored),
			poll(get("/connectors/${name}/status", 200, status("source", "RUNNING", "0"))),
		})},
	}
}

// primitivesOnly is an alter-offsets request for the case's (stopped)
// source connector with an object or array inside a partition or offset.
func primitivesOnly(body, field, typ string) Step {
	msg := `{"error_code":%d,"message":"Offsets may only contain primitive types as values, but field ` + field + ` contains ` + typ + `"}`
	return Step{Method: http.MethodPatch, Path: "/connectors/${name}/offsets", Body: body,
		Want:      Expect{Status: 400, Body: strings.Replace(msg, "%d", "400", 1)},
		Kafka:     &Expect{Status: 500, Body: strings.Replace(msg, "%d", "500", 1)},
		Deviation: "a malformed offset is a 400 (Kafka Connect: 500 with the same message)"}
}

// sinkOffsetRefused is an alter-offsets request for the case's stopped
// sink (${name}-2) with a value that is not an integer.
func sinkOffsetRefused(partition, offset, what, shown string) Step {
	name := map[string]string{"partition": "partition", "offset": "offset"}[what]
	noun := map[string]string{"partition": "Partition", "offset": "Offset"}[what]
	return send(http.MethodPatch, "/connectors/${name}-2/offsets", `{"offsets":[{"partition":`+partition+`,"offset":`+offset+`}]}`, 400,
		`{"error_code":400,"message":"Failed to parse the following Kafka `+name+` value in the provided offsets: '`+shown+`'. `+noun+` values for sink connectors need to be integers."}`)
}

// configInvalid is the message of a create or update whose config has
// the errors (JSON-escaped, for a template).
func configInvalid(errs ...string) string {
	return `Connector configuration is invalid and contains the following ` + strconv.Itoa(len(errs)) + ` error(s):\n` +
		strings.Join(errs, `\n`) + `\nYou can also find the above list of errors at the endpoint ` + "`/connector-plugins/{connectorType}/config/validate`"
}

// jettyRefuses is a request Kafka Connect's Jetty answers with a 400 and
// its HTML error page; Tributary answers the same 400 with Kafka Connect's
// JSON error body carrying Jetty's message.
func jettyRefuses(method, path, message string) Step {
	return Step{Method: method, Path: path,
		Want:      Expect{Status: 400, Body: `{"error_code":400,"message":"` + message + `"}`},
		Kafka:     &Expect{Status: 400, AnyContentType: true},
		Deviation: "the 400 has Kafka Connect's JSON error body, not Jetty's HTML page"}
}
