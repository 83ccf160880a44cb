package contract

import (
	"net/http"
	"slices"
	"strings"
)

// Connector configs the cases use (Kafka's FileStream connectors).
const (
	sourceConfig = `{"connector.class":"FileStreamSource","topic":"${name}-t","file":"${dir}/${name}.in"}`
	sourceStored = `{"connector.class":"FileStreamSource","topic":"${name}-t","file":"${dir}/${name}.in","name":"${name}"}`
	sinkConfig   = `{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","topics":"${name}-t","file":"${dir}/${name}.out","tasks.max":"2"}`
	sinkStored   = `{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","topics":"${name}-t","file":"${dir}/${name}.out","tasks.max":"2","name":"${name}"}`
)

// Templates of recurring bodies.
const (
	notFound404  = `{"error_code":404,"message":"HTTP 404 Not Found"}`
	notAllowed   = `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`
	anyError400  = `{"error_code":400,"message":"{{string}}"}`
	anyError500  = `{"error_code":500,"message":"{{string}}"}`
	connNotFound = `{"error_code":404,"message":"Connector ${name} not found"}`
	unknownConn  = `{"error_code":404,"message":"Unknown connector ${name}"}`
	notStopped   = `{"error_code":400,"message":"Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint"}`
	stateTmpl    = `{"state":"%s","worker_id":"{{string}}","version":"{{optional}}"}`
	taskTmpl     = `{"id":%s,"state":"%s","worker_id":"{{string}}","version":"{{optional}}"}`
)

func connState(s string) string { return strings.Replace(stateTmpl, "%s", s, 1) }
func taskState(id, s string) string {
	return strings.Replace(strings.Replace(taskTmpl, "%s", id, 1), "%s", s, 1)
}

// status is the template of a status body.
func status(typ, state string, tasks ...string) string {
	ts := make([]string, len(tasks))
	for i, id := range tasks {
		ts[i] = taskState(id, state)
	}
	return `{"name":"${name}","connector":` + connState(state) + `,"tasks":[` + strings.Join(ts, ",") + `],"type":"` + typ + `"}`
}

// unordered makes a status template accept its tasks in any order.
func unordered(status string) string {
	return strings.Replace(status, `"tasks":[`, `"tasks":["{{contains}}",`, 1)
}

// info is the template of a ConnectorInfo body.
func info(config, typ string, tasks ...string) string {
	ts := make([]string, len(tasks))
	for i, id := range tasks {
		ts[i] = `{"connector":"${name}","task":` + id + `}`
	}
	return `{"name":"${name}","config":` + config + `,"tasks":[` + strings.Join(ts, ",") + `],"type":"` + typ + `"}`
}

func get(path string, status int, body string) Step {
	return Step{Method: http.MethodGet, Path: path, Want: Expect{Status: status, Body: body}}
}

func poll(s Step) Step { s.Poll = true; return s }

func send(method, path, body string, status int, want string) Step {
	s := Step{Method: method, Path: path, Body: body, Want: Expect{Status: status, Body: want}}
	if want == "" && (status == http.StatusNoContent || status == http.StatusAccepted) {
		s.Want.NoBody = true
	}
	return s
}

// createSource creates the case's source connector and waits until it runs.
func createSource() []Step {
	return []Step{
		{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":` + sourceConfig + `}`,
			Want: Expect{Status: 201, Headers: map[string]string{"Location": "${base}/connectors/${name}"}, Body: info(sourceStored, "source")}},
		poll(get("/connectors/${name}/status", 200, status("source", "RUNNING", "0"))),
	}
}

// createSink creates the case's sink connector (2 tasks) and waits until it
// runs.
func createSink() []Step {
	return []Step{
		send(http.MethodPut, "/connectors/${name}/config", sinkConfig, 201, info(sinkStored, "sink")),
		poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0", "1"))),
	}
}

func steps(groups ...[]Step) []Step {
	var out []Step
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// Cases returns the contract table.
func Cases() []Case {
	return append([]Case{
		{Name: "root", Steps: []Step{
			get("/", 200, `{"version":"{{string}}","commit":"{{string}}","kafka_cluster_id":"{{string}}"}`),
		}},
		{Name: "health", Steps: []Step{
			get("/health", 200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`),
		}},
		{Name: "unknown path and method", Steps: []Step{
			{Method: http.MethodGet, Path: "/nope", Want: Expect{Status: 404, Body: notFound404},
				Kafka: &Expect{Status: 404, Body: notFound404, NoContentType: true}, Deviation: "Tributary always sends Content-Type: application/json with a body"},
			{Method: http.MethodDelete, Path: "/", Want: Expect{Status: 405, Body: notAllowed},
				Kafka: &Expect{Status: 405, Body: notAllowed, NoContentType: true}, Deviation: "Tributary always sends Content-Type: application/json with a body"},
			{Method: http.MethodPost, Path: "/connectors/${name}/status", Want: Expect{Status: 405, Body: notAllowed},
				Kafka: &Expect{Status: 405, Body: notAllowed, NoContentType: true}, Deviation: "Tributary always sends Content-Type: application/json with a body"},
			get("/connectors/${name}/tasks/x/status", 404, notFound404),
		}},
		{Name: "create get delete", Steps: steps(createSource(), []Step{
			get("/connectors", 200, `["{{contains}}","${name}"]`),
			get("/connectors/", 200, `["{{contains}}","${name}"]`),
			get("/connectors/${name}", 200, info(sourceStored, "source", "0")),
			get("/connectors/${name}/config", 200, sourceStored),
			get("/connectors/${name}/tasks", 200, `[{"id":{"connector":"${name}","task":0},"config":{"connector.class":"FileStreamSource","topic":"${name}-t","file":"${dir}/${name}.in","name":"${name}","task.class":"org.apache.kafka.connect.file.FileStreamSourceTask"}}]`),
			get("/connectors/${name}/tasks/0/status", 200, taskState("0", "RUNNING")),
			get("/connectors/${name}/tasks/7/status", 404, `{"error_code":404,"message":"No status found for task ${name}-7"}`),
			send(http.MethodDelete, "/connectors/${name}", "", 204, ""),
			poll(get("/connectors/${name}", 404, connNotFound)),
			send(http.MethodDelete, "/connectors/${name}", "", 404, connNotFound),
		})},
		{Name: "expand", Steps: steps(createSource(), []Step{
			get("/connectors?expand=status", 200, `{"{{more}}":true,"${name}":{"status":`+status("source", "RUNNING", "0")+`}}`),
			get("/connectors?expand=info", 200, `{"{{more}}":true,"${name}":{"info":`+info(sourceStored, "source", "0")+`}}`),
			get("/connectors?expand=status&expand=info", 200, `{"{{more}}":true,"${name}":{"status":`+status("source", "RUNNING", "0")+`,"info":`+info(sourceStored, "source", "0")+`}}`),
			get("/connectors?expand=bogus", 200, `{"{{more}}":true,"${name}":{}}`),
		})},
		{Name: "create duplicate", Steps: steps(createSource(), []Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":`+sourceConfig+`}`, 409, `{"error_code":409,"message":"Connector ${name} already exists"}`),
		})},
		{Name: "create trims name", Steps: []Step{
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"  ${name}  ","config":` + sourceConfig + `}`,
				Want: Expect{Status: 201, Headers: map[string]string{"Location": "${base}/connectors/${name}"}, Body: info(sourceStored, "source")}},
			get("/connectors/${name}/config", 200, sourceStored),
		}},
		{Name: "create name mismatch", Steps: []Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"name":"other","connector.class":"FileStreamSource","topic":"t"}}`, 400,
				`{"error_code":400,"message":"Connector name configuration (other) doesn't match connector name in the URL (${name})"}`),
		}},
		{Name: "create without name", Steps: []Step{
			send(http.MethodPost, "/connectors", `{"config":`+sourceConfig+`}`, 400,
				`{"error_code":400,"message":"Connector configuration is invalid and contains the following 1 error(s):\nInvalid value  for configuration name: String may not be empty\nYou can also find the above list of errors at the endpoint `+"`/connector-plugins/{connectorType}/config/validate`"+`"}`),
			send(http.MethodPost, "/connectors", `{"name":"  ","config":`+sourceConfig+`}`, 400,
				`{"error_code":400,"message":"Connector configuration is invalid and contains the following 1 error(s):\nInvalid value  for configuration name: String may not be empty\nYou can also find the above list of errors at the endpoint `+"`/connector-plugins/{connectorType}/config/validate`"+`"}`),
		}},
		{Name: "create invalid config", Steps: []Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"connector.class":"FileStreamSource"}}`, 400,
				`{"error_code":400,"message":"Connector configuration is invalid and contains the following 1 error(s):\nMissing required configuration \"topic\" which has no default value.\nYou can also find the above list of errors at the endpoint `+"`/connector-plugins/{connectorType}/config/validate`"+`"}`),
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"connector.class":"NoSuchConnector"}}`, 400, anyError400),
			get("/connectors/${name}", 404, connNotFound),
		}},
		{Name: "create coerces scalars", Steps: []Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":{"connector.class":"FileStreamSource","topic":"${name}-t","tasks.max":1,"batch.size":2000}}`, 201,
				info(`{"connector.class":"FileStreamSource","topic":"${name}-t","tasks.max":"1","batch.size":"2000","name":"${name}"}`, "source")),
			get("/connectors/${name}/config", 200, `{"connector.class":"FileStreamSource","topic":"${name}-t","tasks.max":"1","batch.size":"2000","name":"${name}"}`),
		}},
		{Name: "create initial state", Steps: []Step{
			send(http.MethodPost, "/connectors", `{"name":"${name}","config":`+sourceConfig+`,"initial_state":"STOPPED"}`, 201, info(sourceStored, "source")),
			poll(get("/connectors/${name}/status", 200, status("source", "STOPPED"))),
			send(http.MethodPost, "/connectors", `{"name":"${name}-2","config":{"connector.class":"FileStreamSource","topic":"t"},"initial_state":"PAUSED"}`, 201, `"{{object}}"`),
			// Created PAUSED, a connector has no tasks until resumed.
			poll(get("/connectors/${name}-2/status", 200, `{"name":"${name}-2","connector":`+connState("PAUSED")+`,"tasks":[],"type":"source"}`)),
			send(http.MethodPut, "/connectors/${name}-2/resume", "", 202, ""),
			poll(get("/connectors/${name}-2/status", 200, `{"name":"${name}-2","connector":`+connState("RUNNING")+`,"tasks":[`+taskState("0", "RUNNING")+`],"type":"source"}`)),
		}},
		{Name: "create bad bodies", Steps: []Step{
			{Method: http.MethodPost, Path: "/connectors", Body: `{bad`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "malformed JSON is a 400 (Kafka Connect: 500)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `null`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a null body is a 400 (Kafka Connect: 500, NullPointerException)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `[]`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a body of the wrong JSON type is a 400 (Kafka Connect: 500)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}"}`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a create without config is a 400 (Kafka Connect: 500, NullPointerException)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":{"connector.class":"FileStreamSource","topic":"t","x":{"a":1}}}`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "an object as a config value is a 400 (Kafka Connect: 500)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":` + sourceConfig + `,"initial_state":"BOGUS"}`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "an unknown initial_state is a 400 (Kafka Connect: 500)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":` + sourceConfig + `,"extra":1}`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "an unknown member is a 400 (Kafka Connect: 500)"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":{"connector.class":"FileStreamSource","topic":"t","n":null}}`, Want: Expect{Status: 400, Body: anyError400}},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":` + sourceConfig + `}`, ContentType: "text/plain",
				Want:  Expect{Status: 415, Body: `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}`},
				Kafka: &Expect{Status: 415, Body: `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}`, NoContentType: true}, Deviation: "Tributary always sends Content-Type: application/json with a body"},
			{Method: http.MethodPost, Path: "/connectors", Body: `{"name":"${name}","config":` + sourceConfig + `}`, ContentType: "-",
				Want: Expect{Status: 415, Body: `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}`}},
			get("/connectors/${name}", 404, connNotFound),
		}},
		{Name: "body too large", Steps: []Step{
			{Method: http.MethodPut, Path: "/connector-plugins/FileStreamSource/config/validate",
				Body: `{"connector.class":"FileStreamSource","topic":"t","big":"` + strings.Repeat("x", 1100*1024) + `"}`,
				Want: Expect{Status: 400, Body: anyError400}, Kafka: &Expect{Status: 200, Body: `"{{object}}"`},
				Deviation: "bodies over 1 MiB are a 400 (Kafka Connect has no limit)"},
		}},
		{Name: "put config", Steps: []Step{
			send(http.MethodPut, "/connectors/${name}/config", sinkConfig, 201, info(sinkStored, "sink")),
			poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0", "1"))),
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSink","topics":"${name}-t","tasks.max":"1"}`, 200,
				`{"name":"${name}","config":{"connector.class":"FileStreamSink","topics":"${name}-t","tasks.max":"1","name":"${name}"},"tasks":"{{array}}","type":"sink"}`),
			get("/connectors/${name}/config", 200, `{"connector.class":"FileStreamSink","topics":"${name}-t","tasks.max":"1","name":"${name}"}`),
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSink","topics":"t","name":"other"}`, 400,
				`{"error_code":400,"message":"Connector name configuration (other) doesn't match connector name in the URL (${name})"}`),
			{Method: http.MethodPut, Path: "/connectors/${name}/config", Body: `{"connector.class":`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "malformed JSON is a 400 (Kafka Connect: 500)"},
			send(http.MethodPut, "/connectors/${name}/config", `{"connector.class":"FileStreamSink","topics":"t","tasks.max":"x"}`, 400, anyError400),
			get("/connectors/${name}/config", 200, `{"connector.class":"FileStreamSink","topics":"${name}-t","tasks.max":"1","name":"${name}"}`),
		}},
		{Name: "patch config", Steps: steps(createSink(), []Step{
			send(http.MethodPatch, "/connectors/${name}/config", `{"tasks.max":null,"batch":"7"}`, 200,
				`{"name":"${name}","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","topics":"${name}-t","file":"${dir}/${name}.out","batch":"7","name":"${name}"},"tasks":"{{array}}","type":"sink"}`),
			get("/connectors/${name}/config", 200, `{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","topics":"${name}-t","file":"${dir}/${name}.out","batch":"7","name":"${name}"}`),
			send(http.MethodPatch, "/connectors/${name}-2/config", `{"tasks.max":null}`, 404, `{"error_code":404,"message":"Connector ${name}-2 not found"}`),
			{Method: http.MethodPatch, Path: "/connectors/${name}/config", Body: `[1]`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "a body of the wrong JSON type is a 400 (Kafka Connect: 500)"},
		})},
		{Name: "unknown connector", Steps: []Step{
			get("/connectors/${name}", 404, connNotFound),
			get("/connectors/${name}/config", 404, connNotFound),
			get("/connectors/${name}/status", 404, `{"error_code":404,"message":"No status found for connector ${name}"}`),
			get("/connectors/${name}/tasks", 404, connNotFound),
			get("/connectors/${name}/tasks/0/status", 404, `{"error_code":404,"message":"No status found for task ${name}-0"}`),
			get("/connectors/${name}/offsets", 404, connNotFound),
			get("/connectors/${name}/topics", 200, `{"${name}":{"topics":[]}}`),
			send(http.MethodPut, "/connectors/${name}/pause", "", 404, unknownConn),
			send(http.MethodPut, "/connectors/${name}/resume", "", 404, unknownConn),
			send(http.MethodPut, "/connectors/${name}/stop", "", 404, unknownConn),
			send(http.MethodPost, "/connectors/${name}/restart", "", 404, `{"error_code":404,"message":"Unknown connector: ${name}"}`),
			send(http.MethodPost, "/connectors/${name}/restart?includeTasks=true", "", 404, `{"error_code":404,"message":"Unknown connector: ${name}"}`),
			send(http.MethodPost, "/connectors/${name}/tasks/0/restart", "", 404, `{"error_code":404,"message":"Unknown connector: ${name}"}`),
			send(http.MethodDelete, "/connectors/${name}/offsets", "", 404, connNotFound),
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}]}`, 404, connNotFound),
			send(http.MethodPut, "/connectors/${name}/topics/reset", "", 202, ""),
		}},
		{Name: "restart", Steps: steps(createSink(), []Step{
			send(http.MethodPost, "/connectors/${name}/restart", "", 204, ""),
			send(http.MethodPost, "/connectors/${name}/restart?includeTasks=yes", "", 204, ""),
			poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0", "1"))),
			// Kafka Connect does not sort the tasks of a restart answer.
			send(http.MethodPost, "/connectors/${name}/restart?includeTasks=true", "", 202, unordered(status("sink", "RESTARTING", "0", "1"))),
			poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0", "1"))),
			send(http.MethodPost, "/connectors/${name}/restart?includeTasks=true&onlyFailed=true", "", 202, unordered(status("sink", "RUNNING", "0", "1"))),
			send(http.MethodPost, "/connectors/${name}/tasks/1/restart", "", 204, ""),
			send(http.MethodPost, "/connectors/${name}/tasks/9/restart", "", 404, `{"error_code":404,"message":"Unknown task: ${name}-9"}`),
		})},
		{Name: "pause resume stop", Steps: steps(createSink(), []Step{
			send(http.MethodPut, "/connectors/${name}/pause", "", 202, ""),
			poll(get("/connectors/${name}/status", 200, status("sink", "PAUSED", "0", "1"))),
			send(http.MethodPut, "/connectors/${name}/pause", "", 202, ""),
			send(http.MethodPut, "/connectors/${name}/resume", "", 202, ""),
			poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0", "1"))),
			send(http.MethodPut, "/connectors/${name}/stop", "", 204, ""),
			poll(get("/connectors/${name}/status", 200, status("sink", "STOPPED"))),
			get("/connectors/${name}/tasks", 200, `[]`),
			get("/connectors/${name}", 200, info(sinkStored, "sink")),
			send(http.MethodPut, "/connectors/${name}/resume", "", 202, ""),
			poll(get("/connectors/${name}/status", 200, status("sink", "RUNNING", "0", "1"))),
		})},
		{Name: "tasks-config", Steps: steps(createSource(), []Step{
			{Method: http.MethodGet, Path: "/connectors/${name}/tasks-config",
				Want:  Expect{Status: 200, Body: `{"${name}-0":{"connector.class":"FileStreamSource","topic":"${name}-t","file":"${dir}/${name}.in","name":"${name}","task.class":"org.apache.kafka.connect.file.FileStreamSourceTask"}}`},
				Kafka: &Expect{Status: 404, Body: notFound404, NoContentType: true}, Deviation: "deprecated tasks-config (removed in Kafka Connect 4.0) is still served"},
		})},
		{Name: "topics", Steps: steps(createSource(), []Step{
			get("/connectors/${name}/topics", 200, `{"${name}":{"topics":"{{array}}"}}`),
			send(http.MethodPut, "/connectors/${name}/topics/reset", "", 202, ""),
		})},
		{Name: "offsets", Steps: steps(createSink(), []Step{
			get("/connectors/${name}/offsets", 200, `{"offsets":[]}`),
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[{"partition":{"kafka_topic":"${name}-t","kafka_partition":0},"offset":{"kafka_offset":5}}]}`, 400, notStopped),
			send(http.MethodDelete, "/connectors/${name}/offsets", "", 400, notStopped),
			send(http.MethodPut, "/connectors/${name}/stop", "", 204, ""),
			poll(get("/connectors/${name}/status", 200, status("sink", "STOPPED"))),
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[]}`, 400, `{"error_code":400,"message":"Partitions / offsets need to be provided for an alter offsets request"}`),
			send(http.MethodPatch, "/connectors/${name}/offsets", `{}`, 400, `{"error_code":400,"message":"Partitions / offsets need to be provided for an alter offsets request"}`),
			{Method: http.MethodPatch, Path: "/connectors/${name}/offsets", Body: `{"offsets":`, Want: Expect{Status: 400, Body: anyError400},
				Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "malformed JSON is a 400 (Kafka Connect: 500)"},
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[{"partition":{"kafka_topic":"${name}-t","kafka_partition":0},"offset":{"kafka_offset":5}}]}`, 200,
				`{"message":"The offsets for this connector have been altered successfully"}`),
			get("/connectors/${name}/offsets", 200, `{"offsets":[{"partition":{"kafka_topic":"${name}-t","kafka_partition":0},"offset":{"kafka_offset":5}}]}`),
			send(http.MethodDelete, "/connectors/${name}/offsets", "", 200, `{"message":"The offsets for this connector have been reset successfully"}`),
			get("/connectors/${name}/offsets", 200, `{"offsets":[]}`),
		})},
		{Name: "plugins", Steps: []Step{
			get("/connector-plugins", 200, `["{{contains}}",
				{"class":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"{{optional}}"},
				{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"{{optional}}"}]`),
			get("/connector-plugins?connectorsOnly=false", 200, `["{{contains}}",
				{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"{{optional}}"},
				{"class":"org.apache.kafka.connect.transforms.InsertField$Value","type":"transformation","version":"{{optional}}"},
				{"class":"org.apache.kafka.connect.transforms.predicates.TopicNameMatches","type":"predicate","version":"{{optional}}"},
				{"class":"org.apache.kafka.connect.json.JsonConverter","type":"converter","version":"{{optional}}"}]`),
			// A transformation's config definition, as Kafka Connect 4.4
			// serves it.
			get("/connector-plugins/org.apache.kafka.connect.transforms.RegexRouter/config", 200, `[
				{"name":"regex","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"Regular expression to use for matching.","group":null,"order_in_group":-1,"width":"NONE","display_name":"regex","dependents":[]},
				{"name":"replacement","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"Replacement string.","group":null,"order_in_group":-1,"width":"NONE","display_name":"replacement","dependents":[]}]`),
			get("/connector-plugins/FileStreamSource/config", 200, `["{{contains}}",
				{"name":"topic","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"{{string}}","group":null,"order_in_group":-1,"width":"NONE","display_name":"topic","dependents":[]},
				{"name":"batch.size","type":"INT","required":false,"default_value":"2000","importance":"LOW","documentation":"{{string}}","group":null,"order_in_group":-1,"width":"NONE","display_name":"batch.size","dependents":[]}]`),
			get("/connector-plugins/org.apache.kafka.connect.file.FileStreamSourceConnector/config", 200, `["{{contains}}",
				{"name":"topic","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"{{string}}","group":null,"order_in_group":-1,"width":"NONE","display_name":"topic","dependents":[]}]`),
			get("/connector-plugins/NoSuchPlugin/config", 404, `{"error_code":404,"message":"Unknown plugin NoSuchPlugin."}`),
			// Converters' config definitions, as Kafka Connect 4.4 serves
			// them (by class and by alias).
			get("/connector-plugins/JsonConverter/config", 200, `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order_in_group":-1,"width":"NONE","display_name":"converter.type","dependents":[]},{"name":"schemas.enable","type":"BOOLEAN","required":false,"default_value":"true","importance":"HIGH","documentation":"Include schemas within each of the serialized values and keys.","group":"Schemas","order_in_group":0,"width":"MEDIUM","display_name":"Enable Schemas","dependents":[]},{"name":"schemas.cache.size","type":"INT","required":false,"default_value":"1000","importance":"HIGH","documentation":"The maximum number of schemas that can be cached in this converter instance.","group":"Schemas","order_in_group":1,"width":"MEDIUM","display_name":"Schema Cache Size","dependents":[]},{"name":"schema.content","type":"STRING","required":false,"default_value":null,"importance":"HIGH","documentation":"When set, this is used as the schema for all messages, and the schemas within each of the message will be ignored.Otherwise, the schema will be included in the content of each message. This configuration applies only 'schemas.enable' is true, and it exclusively affects the sink connector.","group":"Schemas","order_in_group":2,"width":"MEDIUM","display_name":"Schema Content","dependents":[]},{"name":"decimal.format","type":"STRING","required":false,"default_value":"BASE64","importance":"LOW","documentation":"Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'","group":"Serialization","order_in_group":0,"width":"MEDIUM","display_name":"Decimal Format","dependents":[]},{"name":"replace.null.with.default","type":"BOOLEAN","required":false,"default_value":"true","importance":"LOW","documentation":"Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.","group":"Serialization","order_in_group":1,"width":"MEDIUM","display_name":"Replace null with default","dependents":[]}]`),
			get("/connector-plugins/org.apache.kafka.connect.storage.StringConverter/config", 200, `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order_in_group":-1,"width":"NONE","display_name":"converter.type","dependents":[]},{"name":"converter.encoding","type":"STRING","required":false,"default_value":"UTF-8","importance":"HIGH","documentation":"The name of the Java character set to use for encoding strings as byte arrays.","group":null,"order_in_group":-1,"width":"MEDIUM","display_name":"Encoding","dependents":[]}]`),
			get("/connector-plugins/org.apache.kafka.connect.converters.ByteArrayConverter/config", 200, `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW","documentation":"How this converter will be used.","group":null,"order_in_group":-1,"width":"NONE","display_name":"converter.type","dependents":[]}]`),
			get("/connector-plugins/org.apache.kafka.connect.storage.SimpleHeaderConverter/config", 200, `[]`),
		}},
		{Name: "validate", Steps: []Step{
			send(http.MethodPut, "/connector-plugins/FileStreamSource/config/validate", `{"connector.class":"FileStreamSource","topic":"t"}`, 200,
				`{"name":"{{string}}","error_count":1,"groups":["{{contains}}","Common"],"configs":["{{contains}}",
				{"definition":{"name":"name","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"{{string}}","group":"Common","order_in_group":1,"width":"{{string}}","display_name":"{{string}}","dependents":[]},
				 "value":{"name":"name","value":null,"recommended_values":[],"errors":["Missing required configuration \"name\" which has no default value."],"visible":true}},
				{"definition":{"{{more}}":true,"name":"topic"},"value":{"name":"topic","value":"t","recommended_values":[],"errors":[],"visible":true}}]}`),
			send(http.MethodPut, "/connector-plugins/FileStreamSourceConnector/config/validate", `{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","topic":"t","name":"x"}`, 200,
				`{"name":"{{string}}","error_count":0,"groups":"{{array}}","configs":"{{array}}"}`),
			send(http.MethodPut, "/connector-plugins/FileStreamSource/config/validate", `{"connector.class":"FileStreamSink","topics":"t"}`, 400,
				`{"error_code":400,"message":"Included connector type FileStreamSink does not match request type FileStreamSource"}`),
			{Method: http.MethodPut, Path: "/connector-plugins/FileStreamSource/config/validate", Body: `{"topic":"t"}`,
				Want:      Expect{Status: 400, Body: `{"error_code":400,"message":"Connector config contains no connector type"}`},
				Kafka:     &Expect{Status: 500, Body: `{"error_code":500,"message":"org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Connector config contains no connector type"}`},
				Deviation: "a validate request without connector.class is a 400 (Kafka Connect 4.4 wraps its BadRequestException into a 500)"},
			{Method: http.MethodPut, Path: "/connector-plugins/NoSuchPlugin/config/validate", Body: `{"connector.class":"NoSuchPlugin"}`,
				Want: Expect{Status: 400, Body: anyError400}, Kafka: &Expect{Status: 500, Body: anyError500},
				Deviation: "an unknown plugin is a 400 (Kafka Connect 4.4 wraps its BadRequestException into a 500)"},
			{Method: http.MethodPut, Path: "/connector-plugins/FileStreamSource/config/validate", Body: `{"connector.class":"FileStreamSource",`,
				Want: Expect{Status: 400, Body: anyError400}, Kafka: &Expect{Status: 500, Body: anyError500}, Deviation: "malformed JSON is a 400 (Kafka Connect: 500)"},
		}},
		{Name: "loggers", Steps: []Step{
			get("/admin/loggers", 200, `{"{{more}}":true,"root":{"level":"{{string}}","last_modified":"{{any}}"}}`),
			get("/admin/loggers/root", 200, `{"level":"{{string}}","last_modified":"{{any}}"}`),
			get("/admin/loggers/no.such.logger.${name}", 404, `{"error_code":404,"message":"Logger no.such.logger.${name} not found."}`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect", `{"level":"DEBUG"}`, 200, `["{{contains}}","org.apache.kafka.connect"]`),
			get("/admin/loggers/org.apache.kafka.connect", 200, `{"level":"DEBUG","last_modified":"{{number}}"}`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect?scope=bogus", `{"level":"info","extra":"ignored"}`, 200, `["{{contains}}","org.apache.kafka.connect"]`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect?scope=cluster", `{"level":"INFO"}`, 204, ""),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect", `{}`, 400, `{"error_code":400,"message":"Desired 'level' parameter was not specified in request."}`),
			send(http.MethodPut, "/admin/loggers/org.apache.kafka.connect", `{"level":"LOUD"}`, 404, `{"error_code":404,"message":"invalid log level 'LOUD'."}`),
			{Method: http.MethodPost, Path: "/admin/loggers", Want: Expect{Status: 405, Body: notAllowed},
				Kafka: &Expect{Status: 405, Body: notAllowed, NoContentType: true}, Deviation: "Tributary always sends Content-Type: application/json with a body"},
		}},
	}, slices.Concat(parityCases(), robustnessCases(), unknownClassCases(), afterCreateCases())...)
}
