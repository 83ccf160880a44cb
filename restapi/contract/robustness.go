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
		{"name too long", []Step{
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"` + longName + `","config":` + sourceConfig + `}`,
				Want:      Expect{Status: 400, Body: anyError400},
				Kafka:     &Expect{Status: 201, Body: `"{{object}}"`},
				Deviation: "names are limited to 1,024 bytes (Kafka Connect has no limit, and a worker dies on a name of 32,768 bytes)"},
			{Method: http.MethodDelete, Path: "/connectors/" + longName,
				Want:  Expect{Status: 404, Body: `{"error_code":404,"message":"Connector ` + longName + ` not found"}`},
				Kafka: &Expect{Status: 204, NoBody: true}},
		}},
		{"paths decoded once", []Step{
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
		{"path not UTF-8", []Step{
			{Method: http.MethodPut, Path: "/connectors/%FF/config", Body: sourceConfig,
				Want: Expect{Status: 400, Body: `{"error_code":400,"message":"Bad UTF-8 encoding"}`}, Kafka: &Expect{Status: 400, AnyContentType: true},
				Deviation: "the 400 has Kafka Connect's JSON error body, not Jetty's HTML page"},
			{Method: http.MethodPut, Path: "/connectors/%C3%28/config", Body: sourceConfig,
				Want: Expect{Status: 400, Body: `{"error_code":400,"message":"Bad UTF-8 encoding"}`}, Kafka: &Expect{Status: 400, AnyContentType: true},
				Deviation: "the 400 has Kafka Connect's JSON error body, not Jetty's HTML page"},
			jettyRefuses(http.MethodGet, "/connectors/${name}%FF", "Bad UTF-8 encoding"),
			jettyRefuses(http.MethodGet, "/admin/loggers/%FF", "Bad UTF-8 encoding"),
		}},
		{"name with control characters", []Step{
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
	}
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
