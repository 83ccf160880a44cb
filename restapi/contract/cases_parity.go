package contract

import "net/http"

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
	return []Case{
		{"source offsets asked of the connector", steps(createSource(), []Step{
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
			get("/connectors/${name}/offsets", 200, `{"offsets":[{"partition":`+file+`,"offset":{"position":9007199254740993}}]}`),
			// A null offset is always allowed (cleaning up stray partitions).
			send(http.MethodPatch, "/connectors/${name}/offsets", `{"offsets":[{"partition":{"garbage":true},"offset":null}]}`, 200,
				`{"message":"The offsets for this connector have been altered successfully"}`),
			send(http.MethodDelete, "/connectors/${name}/offsets", "", 200, `{"message":"The offsets for this connector have been reset successfully"}`),
			get("/connectors/${name}/offsets", 200, `{"offsets":[]}`),
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
