package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/restapitest"
)

// testWorker serves the real REST handlers over the fake herder and counts
// the requests it gets.
type testWorker struct {
	url      string
	requests atomic.Int64
}

func newTestWorker(t *testing.T) *testWorker {
	t.Helper()
	w := &testWorker{}
	h := restapi.New(restapitest.NewHerder(), restapi.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.requests.Add(1)
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

// cli runs "tributary connectors args..." through main's entry point.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"connectors"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// ok runs the command against w and fails the test unless it exits 0.
func (w *testWorker) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := cli(t, append(args, "--url", w.url)...)
	if code != 0 {
		t.Fatalf("connectors %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	return out
}

// decode parses the command's JSON output into v.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const lines = `{"name": "lines", "config": {"connector.class": "FileStreamSource", "file": "/etc/hosts", "topic": "hosts"}}`

type status struct {
	Name      string `json:"name"`
	Connector struct {
		State string `json:"state"`
	} `json:"connector"`
	Tasks []struct {
		ID    int    `json:"id"`
		State string `json:"state"`
	} `json:"tasks"`
}

func (w *testWorker) state(t *testing.T, name string) status {
	t.Helper()
	var st status
	decode(t, w.ok(t, "status", name), &st)
	return st
}

func TestConnectorsCreateAndRead(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	file := writeFile(t, "lines.json", lines)

	out := w.ok(t, "create", "-f", file)
	var info struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
		Type   string            `json:"type"`
	}
	decode(t, out, &info)
	if info.Name != "lines" || info.Type != "source" || info.Config["topic"] != "hosts" {
		t.Fatalf("create answered %s", out)
	}
	if !strings.Contains(out, "\n  \"name\": \"lines\"") {
		t.Errorf("output is not indented JSON: %s", out)
	}

	var names []string
	decode(t, w.ok(t, "list"), &names)
	if len(names) != 1 || names[0] != "lines" {
		t.Fatalf("list: %v", names)
	}
	var expanded map[string]map[string]json.RawMessage
	decode(t, w.ok(t, "list", "--expand", "status", "--expand", "info"), &expanded)
	if e := expanded["lines"]; e["status"] == nil || e["info"] == nil {
		t.Fatalf("list --expand status --expand info: %v", expanded)
	}
	decode(t, w.ok(t, "list", "--expand=status"), &expanded)
	if e := expanded["lines"]; e["status"] == nil || e["info"] != nil {
		t.Fatalf("list --expand=status: %v", expanded)
	}

	decode(t, w.ok(t, "get", "lines"), &info)
	if info.Name != "lines" || info.Config["file"] != "/etc/hosts" {
		t.Fatalf("get: %+v", info)
	}
	var config map[string]string
	decode(t, w.ok(t, "config", "lines"), &config)
	if config["connector.class"] != "FileStreamSource" || config["name"] != "lines" {
		t.Fatalf("config: %v", config)
	}
	if st := w.state(t, "lines"); st.Connector.State != "RUNNING" || len(st.Tasks) != 1 {
		t.Fatalf("status: %+v", st)
	}
	var tasks []map[string]any
	decode(t, w.ok(t, "tasks", "lines"), &tasks)
	if len(tasks) != 1 {
		t.Fatalf("tasks: %v", tasks)
	}

	// A duplicate is the worker's 409, exit 1.
	code, _, errs := cli(t, "create", "--url", w.url, "-f", file)
	if code != 1 || errs != "tributary connectors create: Connector lines already exists (HTTP 409)\n" {
		t.Fatalf("duplicate create: exit %d, stderr %q", code, errs)
	}
	// So is an unknown connector's 404.
	code, _, errs = cli(t, "get", "nope", "--url", w.url)
	if code != 1 || !strings.Contains(errs, "nope") || !strings.HasSuffix(errs, "(HTTP 404)\n") {
		t.Fatalf("get unknown: exit %d, stderr %q", code, errs)
	}
}

func TestConnectorsCreateFromStdin(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	var out, errb bytes.Buffer
	cmd := connectorsCommandWith(strings.NewReader(lines))
	if code := cmd.run(context.Background(), []string{"create", "-f", "-", "--url", w.url}, &out, &errb); code != 0 {
		t.Fatalf("create from stdin: exit %d, stderr %q", code, errb.String())
	}
	if st := w.state(t, "lines"); st.Name != "lines" {
		t.Fatalf("status: %+v", st)
	}
}

func TestConnectorsPut(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	// put creates when the connector does not exist ...
	flat := writeFile(t, "flat.json", `{"connector.class": "FileStreamSink", "topics": "a", "tasks.max": 2}`)
	w.ok(t, "put", "sink", "-f", flat)
	if st := w.state(t, "sink"); len(st.Tasks) != 2 {
		t.Fatalf("status after put: %+v", st)
	}
	// ... and replaces the config when it does; the {"name","config"}
	// shape sends its "config".
	wrapped := writeFile(t, "wrapped.json", `{"name": "sink", "config": {"connector.class": "FileStreamSink", "topics": "b", "tasks.max": "3"}}`)
	w.ok(t, "put", "-f", wrapped, "sink")
	var config map[string]string
	decode(t, w.ok(t, "config", "sink"), &config)
	if config["topics"] != "b" || config["tasks.max"] != "3" {
		t.Fatalf("config after put: %v", config)
	}
	// A file naming another connector is refused before anything is sent.
	other := writeFile(t, "other.json", `{"name": "other", "config": {"connector.class": "FileStreamSink", "topics": "c"}}`)
	if code, _, errs := cli(t, "put", "sink", "-f", other, "--url", w.url); code != 1 || !strings.Contains(errs, `names connector "other", not "sink"`) {
		t.Fatalf("put with another name: exit %d, stderr %q", code, errs)
	}
	decode(t, w.ok(t, "config", "sink"), &config)
	if config["topics"] != "b" {
		t.Fatalf("config changed by a refused put: %v", config)
	}
	// An invalid config is the worker's 400.
	bad := writeFile(t, "bad.json", `{"connector.class": "FileStreamSink"}`)
	code, _, errs := cli(t, "put", "sink", "--file", bad, "--url", w.url)
	if code != 1 || !strings.Contains(errs, "Must configure one of topics or topics.regex") || !strings.HasSuffix(errs, "(HTTP 400)\n") {
		t.Fatalf("put invalid: exit %d, stderr %q", code, errs)
	}
}

// TestConnectorsApply: apply creates what is missing, updates what exists,
// can run again, and stops at the first refused file.
func TestConnectorsApply(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	sink := writeFile(t, "sink.json", `{"name": "sink", "config": {"connector.class": "FileStreamSink", "topics": "a"}}`)
	if out := w.ok(t, "apply", "-f", writeFile(t, "lines.json", lines), "-f", sink); out != "connector \"lines\": created (HTTP 201)\nconnector \"sink\": created (HTTP 201)\n" {
		t.Fatalf("first apply printed %q", out)
	}
	changed := writeFile(t, "sink2.json", `{"name": "sink", "config": {"connector.class": "FileStreamSink", "topics": "b"}}`)
	if out := w.ok(t, "apply", "--file", changed); out != "connector \"sink\": updated (HTTP 200)\n" {
		t.Fatalf("second apply printed %q", out)
	}
	var config map[string]string
	decode(t, w.ok(t, "config", "sink"), &config)
	if config["topics"] != "b" {
		t.Fatalf("config after apply: %v", config)
	}
	bad := writeFile(t, "bad.json", `{"name": "bad", "config": {"connector.class": "FileStreamSink"}}`)
	third := writeFile(t, "third.json", `{"name": "third", "config": {"connector.class": "FileStreamSink", "topics": "c"}}`)
	code, _, errs := cli(t, "apply", "-f", bad, "-f", third, "--url", w.url)
	if code != 1 || !strings.Contains(errs, `connector "bad"`) || !strings.Contains(errs, "(HTTP 400)") {
		t.Fatalf("apply of an invalid config: exit %d, stderr %q", code, errs)
	}
	var names []string
	decode(t, w.ok(t, "list"), &names)
	if strings.Join(names, ",") != "lines,sink" {
		t.Fatalf("connectors after a refused apply: %v", names)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"apply"}, "missing -f FILE"},
		{[]string{"create", "-f", sink, "-f", sink}, "give one -f FILE"},
		{[]string{"apply", "-f", writeFile(t, "flat.json", `{"connector.class": "FileStreamSink", "topics": "a"}`)}, `no "config" object`},
		{[]string{"apply", "-f", writeFile(t, "noname.json", `{"config": {"connector.class": "FileStreamSink", "topics": "a"}}`)}, `no "name"`},
	} {
		if code, _, errs := cli(t, append(c.args, "--url", w.url)...); code == 0 || !strings.Contains(errs, c.says) {
			t.Errorf("%q: exit %d, stderr %q, want it to say %q", c.args, code, errs, c.says)
		}
	}
}

func TestConnectorsLifecycle(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	// A name that needs escaping in a path.
	const name = "lines;a b?#"
	w.ok(t, "create", "-f", writeFile(t, "c.json", `{"name": "lines;a b?#", "config": {"connector.class": "FileStreamSource", "topic": "t"}}`))

	if out := w.ok(t, "pause", name); out != "connector \"lines;a b?#\": pause requested (HTTP 202)\n" {
		t.Fatalf("pause: %q", out)
	}
	if st := w.state(t, name); st.Connector.State != "PAUSED" {
		t.Fatalf("after pause: %+v", st)
	}
	w.ok(t, "resume", name)
	if st := w.state(t, name); st.Connector.State != "RUNNING" {
		t.Fatalf("after resume: %+v", st)
	}

	// Plain restart: 204, a confirmation line.
	if out := w.ok(t, "restart", name); out != "connector \"lines;a b?#\": restart requested (HTTP 204)\n" {
		t.Fatalf("restart: %q", out)
	}
	// With flags after NAME: 202 with the restart plan.
	var st status
	decode(t, w.ok(t, "restart", name, "--include-tasks"), &st)
	if st.Connector.State != "RESTARTING" || len(st.Tasks) != 1 || st.Tasks[0].State != "RESTARTING" {
		t.Fatalf("restart --include-tasks: %+v", st)
	}
	decode(t, w.ok(t, "restart", "--include-tasks", "--only-failed", name), &st)
	if st.Connector.State != "RUNNING" || st.Tasks[0].State != "RUNNING" {
		t.Fatalf("restart --include-tasks --only-failed (nothing failed): %+v", st)
	}

	// Offsets can be read, and after stop altered (not by this CLI).
	if out := w.ok(t, "stop", name); !strings.Contains(out, "stop requested") {
		t.Fatalf("stop: %q", out)
	}
	if st := w.state(t, name); st.Connector.State != "STOPPED" || len(st.Tasks) != 0 {
		t.Fatalf("after stop: %+v", st)
	}
	var offsets struct {
		Offsets []any `json:"offsets"`
	}
	out := w.ok(t, "offsets", name)
	decode(t, out, &offsets)
	if offsets.Offsets == nil || len(offsets.Offsets) != 0 {
		t.Fatalf("offsets: %s", out)
	}

	if out := w.ok(t, "delete", name); out != "connector \"lines;a b?#\": deleted (HTTP 204)\n" {
		t.Fatalf("delete: %q", out)
	}
	var names []string
	decode(t, w.ok(t, "list"), &names)
	if len(names) != 0 {
		t.Fatalf("list after delete: %v", names)
	}
	code, _, errs := cli(t, "delete", name, "--url", w.url)
	if code != 1 || !strings.HasSuffix(errs, "(HTTP 404)\n") {
		t.Fatalf("second delete: exit %d, stderr %q", code, errs)
	}
}

func TestConnectorsPlugins(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	type plugin struct {
		Class string `json:"class"`
		Type  string `json:"type"`
	}
	var connectors, all []plugin
	decode(t, w.ok(t, "plugins"), &connectors)
	decode(t, w.ok(t, "plugins", "--all"), &all)
	for _, p := range connectors {
		if p.Type != "source" && p.Type != "sink" {
			t.Errorf("plugins lists a %s: %v", p.Type, p)
		}
	}
	if len(connectors) != 2 || len(all) <= len(connectors) {
		t.Fatalf("plugins %v, plugins --all %v", connectors, all)
	}
}

func TestConnectorsBadFiles(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t)
	for _, tc := range []struct {
		sub, content, want string
	}{
		{"create", "{\"name\": \"x\",\n  \"config\": {,}}", "not valid JSON (line 2, column 14)"},
		{"create", `["a"]`, "a JSON array, not an object"},
		{"create", ``, "empty; want a JSON object"},
		{"create", `null`, "a JSON null, not an object"},
		{"create", `{"a": 1} {}`, "not valid JSON"},
		{"create", `{"connector.class": "FileStreamSink", "topics": "a"}`, `no "config" object`},
		{"put", `"text"`, "a JSON string, not an object"},
	} {
		file := writeFile(t, "pg-to-s3.json", tc.content)
		args := []string{tc.sub, "-f", file, "--url", w.url}
		if tc.sub == "put" {
			args = append(args, "x")
		}
		code, out, errs := cli(t, args...)
		if code != 1 || out != "" || !strings.HasPrefix(errs, "tributary connectors "+tc.sub+": "+file+": ") ||
			!strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.sub, tc.content, code, out, errs, tc.want)
		}
	}
	code, _, errs := cli(t, "create", "-f", filepath.Join(t.TempDir(), "missing.json"), "--url", w.url)
	if code != 1 || !strings.Contains(errs, "missing.json") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
	if n := w.requests.Load(); n != 0 {
		t.Fatalf("%d requests sent for bad files", n)
	}
}

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

func TestConnectorsConnectionError(t *testing.T) {
	t.Parallel()
	u := closedURL(t)
	code, out, errs := cli(t, "list", "--url", u)
	if code != 1 || out != "" || !strings.Contains(errs, "cannot reach a worker at "+u) ||
		!strings.Contains(errs, "--url") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestConnectorsURLFromEnvironment(t *testing.T) {
	w := newTestWorker(t)
	t.Setenv(connectURLEnv, w.url)
	if code, out, errs := cli(t, "list"); code != 0 || out != "[]\n" {
		t.Fatalf("TRIBUTARY_URL: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	closed := closedURL(t)
	t.Setenv(connectURLEnv, closed)
	if code, out, errs := cli(t, "list", "--url", w.url); code != 0 || out != "[]\n" {
		t.Fatalf("--url over TRIBUTARY_URL: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := cli(t, "list"); code != 1 || !strings.Contains(errs, closed) {
		t.Fatalf("TRIBUTARY_URL closed: exit %d, stderr %q", code, errs)
	}
}

func TestConnectURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flag, env, want string }{
		{"", "", "http://127.0.0.1:8083"},
		{"", "http://connect:8083/", "http://connect:8083"},
		{"https://a:1", "http://b:2", "https://a:1"},
		{"localhost:9000", "", "http://localhost:9000"},
		{"http://proxy/connect/", "", "http://proxy/connect"},
	} {
		if got, err := connectURL(tc.flag, tc.env); err != nil || got != tc.want {
			t.Errorf("connectURL(%q, %q) = %q, %v; want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://a", "http://", "http://a:1/?x=1"} {
		if got, err := connectURL(bad, ""); err == nil {
			t.Errorf("connectURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestConnectorsHelpAndUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"get", "--help"}} {
		code, out, errs := cli(t, args...)
		if code != 0 || errs != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
		for _, s := range connectorsSubs {
			if !strings.Contains(out, "\n  "+s.name+" ") {
				t.Errorf("%v: help does not mention %s", args, s.name)
			}
		}
		for _, s := range []string{"--url", "TRIBUTARY_URL", "http://127.0.0.1:8083", "--expand", "--include-tasks", "--only-failed", "--all", "tributary connectors create -f pg-to-s3.json"} {
			if !strings.Contains(out, s) {
				t.Errorf("%v: help does not mention %s", args, s)
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"help", "connectors"}, &out, &errb); code != 0 || out.String() != connectorsHelp {
		t.Errorf("tributary help connectors: exit %d", code)
	}
	if code, out, _ := cli(t); code != 2 || out != connectorsHelp {
		t.Errorf("no subcommand: exit %d, stdout %q", code, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `tributary connectors: unknown subcommand "frobnicate" (see --help)`},
		{[]string{"--url", "http://x"}, "tributary connectors: missing subcommand (see --help)"},
		{[]string{"get"}, "tributary connectors get: missing the connector NAME (see --help)"},
		{[]string{"get", "a", "b"}, `tributary connectors get: unexpected argument "b" (see --help)`},
		{[]string{"list", "--all"}, "tributary connectors list: flag --all does not apply to list (see --help)"},
		{[]string{"list", "--expand", "tasks"}, `tributary connectors list: --expand "tasks": want status or info (see --help)`},
		{[]string{"create"}, "tributary connectors create: missing -f FILE (see --help)"},
		{[]string{"put", "x", "-f"}, "tributary connectors put: flag needs an argument: -f (see --help)"},
		{[]string{"status", "--bogus", "x"}, "tributary connectors status: flag provided but not defined: -bogus (see --help)"},
		{[]string{"pause", "x", "--url", "ftp://a"}, `tributary connectors pause: --url: invalid URL "ftp://a": the scheme must be http or https`},
	} {
		code, out, errs := cli(t, tc.args...)
		if code != 2 || out != "" || errs != tc.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

func TestSplitFlags(t *testing.T) {
	t.Parallel()
	var opts connectorsFlags
	fs := opts.flagSet()
	flags, pos := splitFlags(fs, []string{"restart", "a", "--include-tasks", "--url", "http://x", "-f", "-", "--only-failed=true", "--", "-b"})
	if strings.Join(flags, " ") != "--include-tasks --url http://x -f - --only-failed=true" || strings.Join(pos, " ") != "restart a -b" {
		t.Fatalf("flags %q, positional %q", flags, pos)
	}
}

func TestConnectorsCredentials(t *testing.T) {
	dir := t.TempDir()
	netrc := filepath.Join(dir, "netrc")
	os.WriteFile(netrc, []byte("machine other login x password y\nmachine 127.0.0.1 login alice password alice-secret\ndefault login d password dp\n"), 0o600)
	for name, tc := range map[string]struct {
		flags          connectorsFlags
		environ        []string
		user, password string
		err            string
	}{
		"flags":          {connectorsFlags{user: "bob", password: "pw"}, nil, "bob", "pw", ""},
		"user:password":  {connectorsFlags{user: "bob:p:w"}, nil, "bob", "p:w", ""},
		"environment":    {connectorsFlags{}, []string{"TRIBUTARY_USER=eve", "TRIBUTARY_PASSWORD=epw"}, "eve", "epw", ""},
		"netrc":          {connectorsFlags{netrc: netrc}, nil, "alice", "alice-secret", ""},
		"NETRC":          {connectorsFlags{}, []string{"NETRC=" + netrc}, "alice", "alice-secret", ""},
		"no netrc":       {connectorsFlags{}, []string{"HOME=" + dir}, "", "", ""},
		"no password":    {connectorsFlags{user: "bob"}, nil, "", "", "no password"},
		"missing netrc":  {connectorsFlags{netrc: filepath.Join(dir, "nope")}, nil, "", "", "netrc"},
		"missing cacert": {connectorsFlags{cacert: filepath.Join(dir, "nope")}, nil, "", "", "--cacert"},
	} {
		c, err := newRESTClient(&tc.flags, "https://127.0.0.1:8443", tc.environ)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", name, err, tc.err)
			}
			continue
		}
		if err != nil || c.user != tc.user || c.password != tc.password {
			t.Errorf("%s: %+v %v", name, c, err)
		}
	}
}
