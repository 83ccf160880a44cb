package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi"
)

// TestSecurityMatchesKafkaConnect starts Kafka Connect 4.4 (with its
// basic-auth extension, 4.3.1) and a Tributary worker from the same
// connect-distributed.properties settings: SASL_SSL (SCRAM-SHA-512) to the
// same Apache Kafka, the password of sasl.jaas.config from a file through
// FileConfigProvider, an HTTPS REST listener with a PKCS12 key store, and
// basic authentication from a JAAS file named by
// -Djava.security.auth.login.config in KAFKA_OPTS. The same REST exchanges
// (authorised, unauthorised, wrong password, an unknown connector, the
// validation of a connector config whose PASSWORD field is a ${file:…}
// reference) must give the same status codes and bodies.
func TestSecurityMatchesKafkaConnect(t *testing.T) {
	t.Parallel()
	k, pki := securedKafka(t)
	st := pki.Stores(t)
	pg := harness.StartPostgresT(t)
	const pgPassword = "Pg-Diff-Secret-77"
	pg.Exec(t, "CREATE ROLE diffsec LOGIN REPLICATION SUPERUSER PASSWORD '"+pgPassword+"'")
	secrets := filepath.Join(t.TempDir(), "secrets.properties")
	if err := os.WriteFile(secrets, []byte("kafka-password=bob-secret\npg-password="+pgPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	jaasFile := basicAuthFiles(t, "alice=alice-secret\n")
	access := harness.WorkerSetup{CA: pki.CA, User: "alice", Password: "alice-secret"}
	props := func(group string) map[string]string {
		sec := map[string]string{
			"security.protocol":       "SASL_SSL",
			"sasl.mechanism":          "SCRAM-SHA-512",
			"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="${file:` + secrets + `:kafka-password}";`,
			"ssl.truststore.type":     "PKCS12",
			"ssl.truststore.location": st.TrustP12,
			"ssl.truststore.password": pki.StorePassword,
		}
		p := clientSecurity(sec)
		for k, v := range map[string]string{
			"config.providers":                      "file",
			"config.providers.file.class":           "org.apache.kafka.common.config.provider.FileConfigProvider",
			"listeners":                             "https://127.0.0.1:" + strconv.Itoa(harness.FreePort(t)),
			"listeners.https.ssl.keystore.type":     "PKCS12",
			"listeners.https.ssl.keystore.location": st.ServerP12,
			"listeners.https.ssl.keystore.password": pki.StorePassword,
			"listeners.https.ssl.key.password":      pki.StorePassword,
			"rest.extension.classes":                restapi.BasicAuthExtension,
			"group.id":                              group,
			"config.storage.topic":                  group + "-configs",
			"offset.storage.topic":                  group + "-offsets",
			"status.storage.topic":                  group + "-status",
		} {
			p[k] = v
		}
		return p
	}
	kafkaOpts := "-Djava.security.auth.login.config=" + jaasFile
	var opts []harness.ConnectOption
	for k, v := range props("diffsec-kc") {
		opts = append(opts, harness.WithWorkerProperty(k, v))
	}
	kc := harness.KafkaConnect(t, k.Listener(harness.ListenerSASLSSL), append(opts,
		harness.WithConnectJVMArgs(kafkaOpts), harness.WithConnectAccess(access))...)
	bin := harness.BuildTributary(t)
	trib := harness.StartWorkerProcessWith(t, bin, filepath.Join(t.TempDir(), "w"),
		harness.WorkerProps(t, k.Listener(harness.ListenerSASLSSL), "diffsec-tr", props("diffsec-tr")),
		harness.WorkerSetup{Env: []string{"KAFKA_OPTS=" + kafkaOpts}, CA: access.CA, User: access.User, Password: access.Password})

	pgConfig := pgConnectorConfig(pg, pgID("diffsec"), "public.nothing")
	pgConfig["name"] = "pg"
	pgConfig["database.user"], pgConfig["database.password"] = "diffsec", "${file:"+secrets+":pg-password}"
	type exchange struct {
		name, method, path, user, pass string
		body                           any
	}
	client := access.Client(t)
	do := func(base string, e exchange) (int, string, string) {
		t.Helper()
		var rd io.Reader
		if e.body != nil {
			b, _ := json.Marshal(e.body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(e.method, base+e.path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if e.user != "" {
			req.SetBasicAuth(e.user, e.pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s%s: %v", e.method, base, e.path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Content-Type")
	}
	for _, e := range []exchange{
		{"authorised", "GET", "/connectors", "alice", "alice-secret", nil},
		{"no credentials", "GET", "/connectors", "", "", nil},
		{"wrong password", "GET", "/connectors", "alice", "wrong", nil},
		{"unknown user", "GET", "/connectors", "mallory", "alice-secret", nil},
		{"unknown connector", "GET", "/connectors/nope", "alice", "alice-secret", nil},
		{"create without credentials", "POST", "/connectors", "", "", map[string]any{"name": "x", "config": pgConfig}},
	} {
		kcCode, kcBody, kcType := do(kc.URL(), e)
		trCode, trBody, trType := do(trib.URL(), e)
		t.Logf("%s: Kafka Connect %d %q (%s), Tributary %d %q (%s)", e.name, kcCode, kcBody, kcType, trCode, trBody, trType)
		if kcCode != trCode || !sameBody(kcBody, trBody) || kcType != trType {
			t.Errorf("%s: Kafka Connect answers %d %s, Tributary %d %s", e.name, kcCode, kcBody, trCode, trBody)
		}
	}

	// Validation of a config whose PASSWORD field is a reference: both
	// show the reference (and log in to Postgres with what it resolves
	// to).
	v := exchange{"validate", "PUT", "/connector-plugins/PostgresConnector/config/validate", "alice", "alice-secret", pgConfig}
	kcCode, kcBody, _ := do(kc.URL(), v)
	trCode, trBody, _ := do(trib.URL(), v)
	kcPass, trPass := configValue(t, kcBody, "database.password"), configValue(t, trBody, "database.password")
	t.Logf("validate: Kafka Connect %d %s, Tributary %d %s", kcCode, kcPass, trCode, trPass)
	if kcCode != trCode || kcPass != trPass {
		t.Errorf("validate: Kafka Connect answers %d with database.password %s, Tributary %d with %s", kcCode, kcPass, trCode, trPass)
	}
	bodies := []string{kcBody, trBody}

	// The same with the password typed in: both hide it (Debezium's
	// connector answers null, Tributary's Kafka's rendering of a PASSWORD
	// value, [hidden]: the one difference, deliberate).
	literal := maps.Clone(pgConfig)
	literal["database.password"] = pgPassword
	v.body = literal
	kcCode, kcBody, _ = do(kc.URL(), v)
	trCode, trBody, _ = do(trib.URL(), v)
	kcPass, trPass = configValue(t, kcBody, "database.password"), configValue(t, trBody, "database.password")
	t.Logf("validate, literal password: Kafka Connect %d %s, Tributary %d %s", kcCode, kcPass, trCode, trPass)
	if kcCode != trCode || strings.Replace(trPass, `"value":"[hidden]"`, `"value":null`, 1) != kcPass {
		t.Errorf("validate, literal password: Kafka Connect answers %d with database.password %s, Tributary %d with %s", kcCode, kcPass, trCode, trPass)
	}
	for _, body := range append(bodies, kcBody, trBody) {
		if bytes.Contains([]byte(body), []byte(pgPassword)) {
			t.Errorf("a validation shows the password: %s", body)
		}
	}
}

// sameBody compares two answers: as JSON when both are, else as text.
func sameBody(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil {
		return fmt.Sprint(x) == fmt.Sprint(y)
	}
	return a == b
}

// configValue is the value entry of key in a validation answer, as JSON.
func configValue(t *testing.T, body, key string) string {
	t.Helper()
	var infos struct {
		Configs []struct {
			Value json.RawMessage `json:"value"`
		} `json:"configs"`
	}
	if json.Unmarshal([]byte(body), &infos) != nil {
		return "(not a validation: " + body + ")"
	}
	for _, c := range infos.Configs {
		var v map[string]any
		if json.Unmarshal(c.Value, &v) == nil && v["name"] == key {
			b, _ := json.Marshal(v) // keys sorted
			return string(b)
		}
	}
	return "(no " + key + ")"
}
