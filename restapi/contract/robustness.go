package contract

import (
	"net/http"
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
	}
}
