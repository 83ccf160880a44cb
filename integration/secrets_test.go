package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestSecretsNeverLeak runs a Postgres source whose database password
// comes from a file through Kafka's FileConfigProvider (${file:…}), and
// connectors whose failures quote that password: a Postgres source whose
// database name is the password (Postgres's error quotes it, at
// validation), a FileStreamSink whose file path holds it (the task fails
// at start, its error quoting the path). The password must then appear in
// no record of any topic (config, status, offsets, data), no REST answer
// (configs, validations, statuses and their traces, errors) and no line
// of the worker's output, which carries its plugins' too; the config
// keeps the reference, and rest.hide.secrets hides a literal secret.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const password = "Pg-Secret-9271"
	pg := harness.StartPostgresT(t)
	id := pgID("sec")
	pg.Exec(t, fmt.Sprintf(`CREATE ROLE cdc LOGIN REPLICATION SUPERUSER PASSWORD '%s';
		CREATE TABLE %s (id int PRIMARY KEY, name text);
		INSERT INTO %s SELECT i, 'n' || i FROM generate_series(1, 10) i`, password, id, id))
	secrets := t.TempDir()
	secretsFile := filepath.Join(secrets, "db.properties")
	if err := os.WriteFile(secretsFile, []byte("pg-password="+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, id, map[string]string{
		"config.providers":                          "file",
		"config.providers.file.class":               "org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.file.param.allowed.paths": secrets,
		"rest.hide.secrets":                         "true",
	}))
	ref := "${file:" + secretsFile + ":pg-password}"

	// Every REST answer is kept, to be searched at the end.
	var answers bytes.Buffer
	r := rest{t, w.URL()}
	call := func(method, path string, body any) (int, []byte) {
		code, out := r.do(method, path, body)
		fmt.Fprintf(&answers, "%s %s %d %s\n", method, path, code, out)
		return code, out
	}

	src := pgConnectorConfig(pg, id, "public."+id)
	src["database.user"], src["database.password"], src["name"] = "cdc", ref, "pg"
	if code, out := call("PUT", "/connector-plugins/PostgresConnector/config/validate", src); code != 200 || !bytes.Contains(out, []byte(`"error_count":0`)) {
		t.Fatalf("validate: %d %s", code, out)
	}
	if code, out := call("POST", "/connectors", map[string]any{"name": "pg", "config": src}); code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	r.waitState("pg", "RUNNING", 1)
	cdc := filepath.Join(dir, "cdc.txt")
	call("POST", "/connectors", map[string]any{"name": "cdc-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": cdc, "topics": id + ".public." + id,
		// A literal secret, hidden by rest.hide.secrets.
		"consumer.override.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="Literal-Pass-5512";`}})
	waitLines(t, cdc, 10, 2*time.Minute)

	// The stored config keeps the reference; the literal secret is hidden.
	_, out := call("GET", "/connectors/pg/config", nil)
	if !bytes.Contains(out, []byte(ref)) {
		t.Errorf("GET config does not show the reference: %s", out)
	}
	_, out = call("GET", "/connectors/cdc-sink/config", nil)
	if !bytes.Contains(out, []byte(`"consumer.override.sasl.jaas.config":"[hidden]"`)) {
		t.Errorf("GET config shows a literal secret: %s", out)
	}
	call("GET", "/connectors?expand=info&expand=status", nil)
	call("GET", "/connectors/pg/tasks", nil)

	// The Postgres driver's error quotes the password (as a database
	// name): validation answers 400 without it.
	bad := pgConnectorConfig(pg, id+"b", "public."+id)
	bad["database.user"], bad["database.password"], bad["database.dbname"], bad["name"] = "cdc", ref, ref, "pg-bad"
	code, out := call("POST", "/connectors", map[string]any{"name": "pg-bad", "config": bad})
	t.Logf("a database named by the secret: %d %s", code, out)
	if code != 400 || !bytes.Contains(out, []byte("does not exist")) {
		t.Errorf("a database named by the secret: %d %s", code, out)
	}
	call("PUT", "/connector-plugins/PostgresConnector/config/validate", bad)

	// A task whose start fails with an error quoting the password.
	call("POST", "/connectors", map[string]any{"name": "file-bad", "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": id + ".public." + id,
		"file": filepath.Join(dir, "no-such-dir", "${file:"+secretsFile+":pg-password}", "out.txt")}})
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, out := call("GET", "/connectors/file-bad/status", nil)
		var st statusBody
		json.Unmarshal(out, &st)
		if len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED" {
			t.Logf("trace: %.300s", st.Tasks[0].Trace)
			if !strings.Contains(st.Tasks[0].Trace, "no-such-dir") {
				t.Errorf("trace: %s", st.Tasks[0].Trace)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("file-bad did not fail: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	call("GET", "/connectors/file-bad/tasks/0/status", nil)

	// Nothing holds the password: REST answers, topics, the worker's
	// output (its plugins' included).
	if bytes.Contains(answers.Bytes(), []byte(password)) || bytes.Contains(answers.Bytes(), []byte("Literal-Pass-5512")) {
		t.Errorf("a REST answer shows a secret:\n%s", grepLines(answers.String(), password, "Literal-Pass-5512"))
	}
	if n, hits := topicsHolding(t, bootstrap, password); hits != "" {
		t.Errorf("topics hold the password:\n%s", hits)
	} else {
		t.Logf("searched %d records of every topic", n)
	}
	logs, err := os.ReadFile(w.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logs, []byte(password)) {
		t.Errorf("the worker's output shows the password:\n%s", grepLines(string(logs), password))
	}
	if !bytes.Contains(logs, []byte("[hidden]")) {
		t.Errorf("no [hidden] in the worker's output: was the failure logged at all?")
	}
}

// grepLines returns the lines of s holding any of words.
func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// topicsHolding reads every record of every topic of the cluster and
// returns how many it read and those whose key, value or headers hold
// word.
func topicsHolding(t *testing.T, bootstrap, word string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int32]kgo.Offset{}
	left := 0
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			if want[o.Topic] == nil {
				want[o.Topic] = map[int32]kgo.Offset{}
			}
			want[o.Topic][o.Partition] = kgo.NewOffset().AtStart()
			left += int(o.Offset)
		}
	})
	rd, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumePartitions(want))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var hits []string
	n := 0
	// Until every record is read, or nothing comes for two seconds (a
	// compacted topic has fewer records than its end offset).
	for idle := 0; n < left && idle < 4 && ctx.Err() == nil; {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := rd.PollFetches(pctx)
		pcancel()
		if fs.NumRecords() == 0 {
			idle++
		} else {
			idle = 0
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			var hdrs []byte
			for _, h := range r.Headers {
				hdrs = append(hdrs, h.Value...)
			}
			if bytes.Contains(r.Key, []byte(word)) || bytes.Contains(r.Value, []byte(word)) || bytes.Contains(hdrs, []byte(word)) {
				hits = append(hits, fmt.Sprintf("%s[%d]@%d %s=%s", r.Topic, r.Partition, r.Offset, r.Key, r.Value))
			}
		})
	}
	return n, strings.Join(hits, "\n")
}
