package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
)

// eosKeys are the keys whose validation exactly-once support decides.
var eosKeys = []string{"exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms", "offsets.storage.topic"}

// validation is a validate answer: its error count and each key's errors.
type validation struct {
	count  int
	errors map[string][]string
}

func (r rest) validate(plugin string, config map[string]string) validation {
	r.t.Helper()
	body := r.must("PUT", "/connector-plugins/"+plugin+"/config/validate", config, 200)
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &infos); err != nil {
		r.t.Fatalf("validate response: %v: %s", err, body)
	}
	v := validation{count: infos.ErrorCount, errors: map[string][]string{}}
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			v.errors[c.Value.Name] = c.Value.Errors
		}
	}
	return v
}

// TestExactlyOnceValidationKafkaConnect sends the same source connector
// configs to Kafka Connect 4.4 and to Tributary, each with
// exactly.once.source.support enabled and disabled, on one broker: the
// validate endpoint answers with the same errors on the exactly-once keys
// (a connector that cannot support exactly once with its config, a worker
// without exactly-once support, a connector that defines no transaction
// boundaries, values the keys' validators refuse), and creating such a
// connector is refused with the same 400.
func TestExactlyOnceValidationKafkaConnect(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	type pair struct{ kc, tr rest }
	workers := map[string]pair{}
	for _, mode := range []string{"enabled", "disabled"} {
		group := "eosv-" + mode
		kc := harness.KafkaConnect(t, bootstrap, harness.WithConnectGroup(group+"-kc"), harness.WithWorkerProperty("exactly.once.source.support", mode))
		props := harness.WorkerProps(t, bootstrap, group+"-tr", map[string]string{"exactly.once.source.support": mode})
		tr := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), mode), props)
		workers[mode] = pair{rest{t, kc.URL()}, rest{t, tr.URL()}}
	}
	file := filepath.Join(t.TempDir(), "in.txt")
	base := func(extra ...string) map[string]string {
		c := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "name": "f", "topic": "t", "file": file}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "<unset>" {
				delete(c, extra[i])
				continue
			}
			c[extra[i]] = extra[i+1]
		}
		return c
	}
	cases := []struct {
		name   string
		config map[string]string
		// wantErr is a key expected to have errors (with enabled), "" for
		// none; disabledErr the same with disabled.
		wantErr, disabledErr string
	}{
		{"required, supported", base("exactly.once.support", "required"), "", "exactly.once.support"},
		{"required, unsupported without a file", base("exactly.once.support", "required", "file", "<unset>"), "exactly.once.support", "exactly.once.support"},
		{"required, upper case", base("exactly.once.support", "REQUIRED", "file", "<unset>"), "exactly.once.support", "exactly.once.support"},
		{"required, the connector's config invalid", base("exactly.once.support", "required", "topic", "<unset>"), "exactly.once.support", "exactly.once.support"},
		{"requested", base("exactly.once.support", "requested", "file", "<unset>"), "", ""},
		{"not a level", base("exactly.once.support", "always"), "exactly.once.support", "exactly.once.support"},
		{"connector boundaries", base("transaction.boundary", "connector"), "transaction.boundary", "transaction.boundary"},
		{"interval boundaries", base("transaction.boundary", "Interval", "transaction.boundary.interval.ms", "500"), "", ""},
		{"not a boundary", base("transaction.boundary", "sometimes"), "transaction.boundary", "transaction.boundary"},
		{"negative interval", base("transaction.boundary.interval.ms", "-1"), "transaction.boundary.interval.ms", "transaction.boundary.interval.ms"},
		{"interval not a number", base("transaction.boundary.interval.ms", "soon"), "transaction.boundary.interval.ms", "transaction.boundary.interval.ms"},
		{"empty offsets topic", base("offsets.storage.topic", " "), "offsets.storage.topic", "offsets.storage.topic"},
		{"offsets topic", base("offsets.storage.topic", "f-offsets"), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"enabled", "disabled"} {
				w := workers[mode]
				want := tc.wantErr
				if mode == "disabled" {
					want = tc.disabledErr
				}
				kc := w.kc.validate("FileStreamSourceConnector", tc.config)
				tr := w.tr.validate("FileStreamSourceConnector", tc.config)
				for _, k := range eosKeys {
					if !slices.Equal(kc.errors[k], tr.errors[k]) {
						t.Errorf("%s: %s: Kafka Connect %q, Tributary %q", mode, k, kc.errors[k], tr.errors[k])
					}
				}
				if (want == "") != (len(tr.errors[want]) == 0) || want == "" && tr.count != 0 {
					t.Errorf("%s: errors %v, want errors on %q", mode, tr.errors, want)
				}
				if kc.count != tr.count {
					t.Errorf("%s: error_count: Kafka Connect %d %v, Tributary %d %v", mode, kc.count, kc.errors, tr.count, tr.errors)
				}
				if want != "" {
					t.Logf("%s: %s: %q", mode, want, tr.errors[want])
				}
			}
		})
	}
	// Creating a connector that cannot run with exactly-once support is
	// refused with Kafka Connect's 400, naming the errors.
	for _, mode := range []string{"enabled", "disabled"} {
		w := workers[mode]
		body := map[string]any{"name": "nofile", "config": base("exactly.once.support", "required", "file", "<unset>")}
		ks, kb := w.kc.do("POST", "/connectors", body)
		ts, tb := w.tr.do("POST", "/connectors", body)
		if ks != 400 || ts != 400 || message(kb) != message(tb) {
			t.Errorf("%s: create: Kafka Connect %d %s\nTributary %d %s", mode, ks, kb, ts, tb)
		}
	}
}

// message is the message of a Kafka Connect error body.
func message(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Sprintf("(not an error body: %s)", strings.TrimSpace(string(body)))
	}
	return e.Message
}
