package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func connectorsCommand() command { return connectorsCommandWith(os.Stdin) }

// connectorsCommandWith is connectorsCommand reading "-f -" from stdin.
func connectorsCommandWith(stdin io.Reader) command {
	return command{name: "connectors", summary: "manage a worker's connectors through its REST API",
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return runConnectors(ctx, args, stdin, stdout, stderr)
		}}
}

// Defaults of the connectors command.
const (
	// defaultConnectURL is where 'tributary dev' and a default worker serve
	// the REST API.
	defaultConnectURL = "http://127.0.0.1:8083"
	// connectURLEnv names the environment variable that overrides
	// defaultConnectURL (--url overrides both).
	connectURLEnv = "TRIBUTARY_URL"
	// connectTimeout bounds one request, connection included: more than
	// the worker's own 90 s limit (Kafka Connect's), so that a slow create
	// is answered by the worker, not abandoned by the CLI.
	connectTimeout = 100 * time.Second
	// maxResponseBytes bounds how much of a response body is read.
	maxResponseBytes = 16 << 20
	// maxFileBytes bounds a -f file; the REST API itself refuses bodies
	// over 1 MiB by default.
	maxFileBytes = 16 << 20
)

const connectorsHelp = `Usage: tributary connectors <subcommand> [NAME] [flags]

Manages the connectors of a running worker through its REST API (Kafka
Connect's: the same requests curl would send). Answers are printed as indented
JSON; requests the worker answers without a body print a one-line
confirmation.

Subcommands:
  list [--expand status|info]   list connector names; with --expand, a map of
                                name to its status and/or info (the flag may be
                                given twice)
  get NAME                      a connector's name, config, tasks and type
  config NAME                   a connector's config
  status NAME                   the state of a connector and of its tasks
  tasks NAME                    a connector's task configs
  create -f FILE                create a connector; FILE is Kafka Connect's
                                {"name": "...", "config": {...}}
  apply -f FILE [-f FILE]...    create each connector FILE names, or replace its
                                config if it exists (PUT .../config): the same
                                files as create, safe to run again
  put NAME -f FILE              create or replace a connector's config; FILE is
                                a flat config map, or the {"name", "config"}
                                shape create takes (its "config" is sent)
  delete NAME                   delete a connector
  pause NAME                    pause a connector and its tasks
  resume NAME                   resume a paused or stopped connector
  stop NAME                     stop a connector and shut its tasks down (its
                                offsets can then be altered or reset)
  restart NAME [--include-tasks] [--only-failed]
                                restart a connector, and with --include-tasks
                                its tasks; --only-failed restarts only the
                                failed ones
  offsets NAME                  a connector's committed offsets
  plugins [--all]               the installed connector plugins; with --all
                                also converters, transforms and predicates

Flags (--url and the security flags apply to every subcommand; flags may come
before or after NAME):
  --url URL          the worker's REST API (default http://127.0.0.1:8083)
  --user USER[:PASSWORD]
                     HTTP basic credentials (Kafka Connect's basic-auth
                     extension); also TRIBUTARY_USER, else the netrc entry of
                     the worker's host (~/.netrc, $NETRC, --netrc-file)
  --password PASS    the password of --user; also TRIBUTARY_PASSWORD (better
                     than the command line, which other users can see)
  --netrc-file FILE  read credentials from FILE instead of ~/.netrc
  --cacert FILE      trust the CA certificates (PEM) of FILE for an https URL
  --cert FILE        a client certificate (PEM; with its key unless --key)
                     for a worker that requires one (ssl.client.auth)
  --key FILE         the client certificate's private key (PEM)
  -f, --file FILE    the JSON file to send (create, put; apply takes several);
                     - reads standard input
  --expand WHAT      list: status or info (repeatable)
  --include-tasks    restart: also restart the connector's tasks
  --only-failed      restart: only the connector and tasks that have failed
  --all              plugins: every plugin type, not only connectors
  -h, --help         show this help

The worker's URL is --url when given, else the TRIBUTARY_URL environment
variable when set, else http://127.0.0.1:8083 (where 'tributary dev' serves
it). A URL without a scheme gets http://. Connector names are sent URL-escaped.

A 401 ("User cannot access the resource.") means the worker requires
credentials: give --user and --password (or TRIBUTARY_USER and
TRIBUTARY_PASSWORD, or a netrc entry).

Exit status: 0 on success; 1 when the worker answers with an error (its
message and HTTP status go to stderr) or cannot be reached; 2 for a wrong
command line.

Examples:
  tributary connectors list --expand status
  tributary connectors create -f pg-to-s3.json
  tributary connectors apply -f postgres-source.json -f s3-sink.json
  tributary connectors status pg-to-s3
  tributary connectors put pg-to-s3 -f pg-to-s3.json
  tributary connectors restart pg-to-s3 --include-tasks --only-failed
  tributary connectors stop pg-to-s3 && tributary connectors offsets pg-to-s3
  TRIBUTARY_URL=http://connect-1:8083 tributary connectors plugins --all
  tributary connectors delete pg-to-s3 --url http://10.0.0.5:8083
`

// connectorsSub describes one subcommand of "tributary connectors".
type connectorsSub struct {
	name     string
	named    bool     // takes a connector NAME
	flags    []string // flags it accepts besides --url
	method   string
	suffix   string // path after /connectors/NAME (or the whole path when !named)
	done     string // confirmation printed for an answer without a body
	needFile bool   // -f is required
}

var connectorsSubs = []connectorsSub{
	{name: "list", flags: []string{"expand"}, method: http.MethodGet, suffix: "/connectors"},
	{name: "get", named: true, method: http.MethodGet},
	{name: "config", named: true, method: http.MethodGet, suffix: "/config"},
	{name: "status", named: true, method: http.MethodGet, suffix: "/status"},
	{name: "tasks", named: true, method: http.MethodGet, suffix: "/tasks"},
	{name: "create", flags: []string{"f", "file"}, method: http.MethodPost, suffix: "/connectors", needFile: true},
	{name: "apply", flags: []string{"f", "file"}, method: http.MethodPut, needFile: true},
	{name: "put", named: true, flags: []string{"f", "file"}, method: http.MethodPut, suffix: "/config", needFile: true},
	{name: "delete", named: true, method: http.MethodDelete, done: "deleted"},
	{name: "pause", named: true, method: http.MethodPut, suffix: "/pause", done: "pause requested"},
	{name: "resume", named: true, method: http.MethodPut, suffix: "/resume", done: "resume requested"},
	{name: "stop", named: true, method: http.MethodPut, suffix: "/stop", done: "stop requested"},
	{name: "restart", named: true, flags: []string{"include-tasks", "only-failed"}, method: http.MethodPost, suffix: "/restart", done: "restart requested"},
	{name: "offsets", named: true, method: http.MethodGet, suffix: "/offsets"},
	{name: "plugins", flags: []string{"all"}, method: http.MethodGet, suffix: "/connector-plugins"},
}

// connectorsFlags holds every flag of the command; connectorsSub.flags says
// which apply to which subcommand.
type connectorsFlags struct {
	url          string
	user         string
	password     string
	netrc        string
	cacert       string
	cert         string
	key          string
	files        multiFlag
	expand       multiFlag
	includeTasks bool
	onlyFailed   bool
	all          bool
}

func (f *connectorsFlags) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("connectors", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.url, "url", "", "")
	fs.StringVar(&f.user, "user", "", "")
	fs.StringVar(&f.password, "password", "", "")
	fs.StringVar(&f.netrc, "netrc-file", "", "")
	fs.StringVar(&f.cacert, "cacert", "", "")
	fs.StringVar(&f.cert, "cert", "", "")
	fs.StringVar(&f.key, "key", "", "")
	fs.Var(&f.files, "f", "")
	fs.Var(&f.files, "file", "")
	fs.Var(&f.expand, "expand", "")
	fs.BoolVar(&f.includeTasks, "include-tasks", false, "")
	fs.BoolVar(&f.onlyFailed, "only-failed", false, "")
	fs.BoolVar(&f.all, "all", false, "")
	return fs
}

// splitFlags separates args into flags (with their values) and positional
// arguments, so that flags may follow NAME as well as precede it. A flag
// that takes a value takes the next argument unless written --flag=value;
// everything after "--" is positional. Unknown flags are kept among the
// flags for fs.Parse to report.
func splitFlags(fs *flag.FlagSet, args []string) (flags, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(positional, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, positional
}

func runConnectors(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, connectorsHelp)
		return 2
	}
	var opts connectorsFlags
	fs := opts.flagSet()
	flags, pos := splitFlags(fs, args)
	prefix := "tributary connectors"
	var sub *connectorsSub
	if len(pos) > 0 {
		if pos[0] == "help" {
			fmt.Fprint(stdout, connectorsHelp)
			return 0
		}
		if i := slices.IndexFunc(connectorsSubs, func(s connectorsSub) bool { return s.name == pos[0] }); i >= 0 {
			sub = &connectorsSubs[i]
			prefix += " " + sub.name
		}
	}
	if err := fs.Parse(flags); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, connectorsHelp)
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prefix, err)
		return 2
	}
	if sub == nil {
		if len(pos) == 0 {
			fmt.Fprintf(stderr, "%s: missing subcommand (see --help)\n", prefix)
		} else {
			fmt.Fprintf(stderr, "%s: unknown subcommand %q (see --help)\n", prefix, pos[0])
		}
		return 2
	}
	if msg := checkConnectorsArgs(sub, fs, &opts, pos[1:]); msg != "" {
		fmt.Fprintf(stderr, "%s: %s (see --help)\n", prefix, msg)
		return 2
	}
	base, err := connectURL(opts.url, os.Getenv(connectURLEnv))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	client, err := newRESTClient(&opts, base, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	name := ""
	if sub.named {
		name = pos[1]
	}

	path := sub.suffix
	if sub.named {
		path = "/connectors/" + url.PathEscape(name) + sub.suffix
	}
	query := url.Values{}
	for _, e := range opts.expand {
		query.Add("expand", e)
	}
	if sub.name == "restart" {
		query.Set("includeTasks", fmt.Sprint(opts.includeTasks))
		query.Set("onlyFailed", fmt.Sprint(opts.onlyFailed))
	}
	if opts.all {
		query.Set("connectorsOnly", "false")
	}
	if sub.name == "apply" {
		return applyConnectors(ctx, client, base, opts.files, stdin, stdout, stderr)
	}
	var body []byte
	if sub.needFile {
		body, err = readConnectorFile(opts.files[0], stdin, sub.name == "put", name)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
			return 1
		}
	}

	target := base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	status, resp, err := connectRequest(ctx, client, sub.method, target, body)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prefix, describeConnectError(ctx, base, err))
		return 1
	}
	if status < 200 || status > 299 {
		fmt.Fprintf(stderr, "%s: %s (HTTP %d)\n", prefix, errorMessage(status, resp), status)
		return 1
	}
	if len(bytes.TrimSpace(resp)) == 0 {
		done := sub.done
		if done == "" {
			done = "done"
		}
		if name != "" {
			fmt.Fprintf(stdout, "connector %q: %s (HTTP %d)\n", name, done, status)
		} else {
			fmt.Fprintf(stdout, "%s (HTTP %d)\n", done, status)
		}
		return 0
	}
	var out bytes.Buffer
	if json.Indent(&out, resp, "", "  ") != nil {
		out.Reset()
		out.Write(resp) // not JSON: print it as it came
	}
	if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteByte('\n')
	}
	_, _ = stdout.Write(out.Bytes())
	return 0
}

// checkConnectorsArgs checks the positional arguments (after the
// subcommand) and the flags given against what sub takes; it returns a
// one-line reason, or "" when the command line is fine.
func checkConnectorsArgs(sub *connectorsSub, fs *flag.FlagSet, opts *connectorsFlags, args []string) string {
	var msg string
	fs.Visit(func(f *flag.Flag) {
		if msg == "" && !slices.Contains(globalConnectorsFlags, f.Name) && !slices.Contains(sub.flags, f.Name) {
			dashes := "--"
			if len(f.Name) == 1 {
				dashes = "-"
			}
			msg = fmt.Sprintf("flag %s%s does not apply to %s", dashes, f.Name, sub.name)
		}
	})
	if msg != "" {
		return msg
	}
	want := 0
	if sub.named {
		want = 1
	}
	switch {
	case len(args) < want:
		return "missing the connector NAME"
	case len(args) > want:
		return fmt.Sprintf("unexpected argument %q", args[want])
	case sub.named && args[0] == "":
		return "the connector NAME is empty"
	case sub.needFile && len(opts.files) == 0:
		return "missing -f FILE"
	case sub.needFile && sub.name != "apply" && len(opts.files) > 1:
		return "give one -f FILE (apply takes several)"
	}
	for _, e := range opts.expand {
		if e != "status" && e != "info" {
			return fmt.Sprintf("--expand %q: want status or info", e)
		}
	}
	return ""
}

// connectURL picks the worker's base URL: the --url flag, else the
// environment variable's value, else defaultConnectURL. It adds http:// to a
// URL without a scheme and drops a trailing slash.
func connectURL(flagValue, envValue string) (string, error) {
	raw, from := defaultConnectURL, "default URL"
	switch {
	case flagValue != "":
		raw, from = flagValue, "--url"
	case envValue != "":
		raw, from = envValue, connectURLEnv
	}
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s: invalid URL %q: %v", from, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%s: invalid URL %q: the scheme must be http or https", from, raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%s: invalid URL %q: no host", from, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%s: invalid URL %q: give only scheme, host, port and an optional path prefix", from, raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// readConnectorFile reads a -f file ("-": stdin) and checks that
// it is a JSON object. For create (!flat) the object must have Kafka
// Connect's {"name", "config"} shape and is sent as it is. For put (flat) a
// flat config map is sent as it is, and of an object in the {"name",
// "config"} shape only its "config" member is sent, after checking that its
// "name", if any, is name (the NAME put was given).
func readConnectorFile(file string, stdin io.Reader, flat bool, name string) ([]byte, error) {
	var r io.Reader
	label := file
	if file == "-" {
		r, label = stdin, "standard input"
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %v", label, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", label, maxFileBytes>>20)
	}
	obj, err := jsonObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	config, wrapped := obj["config"]
	wrapped = wrapped && isJSONObject(config)
	if flat {
		if wrapped {
			var inFile string
			if raw, ok := obj["name"]; ok && json.Unmarshal(raw, &inFile) == nil && inFile != name {
				return nil, fmt.Errorf("%s: names connector %q, not %q", label, inFile, name)
			}
			return config, nil
		}
		return data, nil
	}
	if !wrapped {
		return nil, fmt.Errorf(`%s: want {"name": "...", "config": {...}}, but there is no "config" object (for a flat config map, use: tributary connectors put NAME -f FILE)`, label)
	}
	return data, nil
}

// jsonObject parses data as one JSON object, with an error that says where
// the JSON is malformed.
func jsonObject(data []byte) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty; want a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := lineCol(data, se.Offset)
			return nil, fmt.Errorf("not valid JSON (line %d, column %d): %v", line, col, se)
		case errors.As(err, &te) && te.Field == "":
			return nil, fmt.Errorf("a JSON %s, not an object", te.Value)
		default:
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
	}
	if obj == nil {
		return nil, errors.New("a JSON null, not an object")
	}
	return obj, nil
}

// isJSONObject reports whether raw is a JSON object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

// connectRequest sends one request to the REST API and returns the status
// and at most maxResponseBytes of the body.
func connectRequest(ctx context.Context, c *restClient, method, target string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > maxResponseBytes {
		return 0, nil, fmt.Errorf("the answer is larger than %d MiB", maxResponseBytes>>20)
	}
	return resp.StatusCode, data, nil
}

// describeConnectError words a failed request: which URL was tried and how
// to point the command at a worker.
func describeConnectError(ctx context.Context, base string, err error) string {
	if ctx.Err() != nil {
		return "interrupted"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Sprintf("no answer from the worker at %s within %s", base, connectTimeout)
		}
		return fmt.Sprintf("cannot reach a worker at %s: %v (start one, e.g. 'tributary dev', or point --url or %s at one)", base, ue.Err, connectURLEnv)
	}
	return fmt.Sprintf("worker at %s: %v", base, err)
}

// errorMessage extracts the message of Kafka Connect's error body
// {"error_code": N, "message": "..."}; any other body is shown as it is
// (shortened), and an empty one as the status text.
func errorMessage(status int, body []byte) string {
	var e struct {
		Message *string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != nil && *e.Message != "" {
		return *e.Message
	}
	s := strings.Join(strings.Fields(string(body)), " ")
	if status == http.StatusUnauthorized {
		// Kafka Connect's basic-auth answer, not JSON.
		return s + " (the worker requires credentials: --user and --password, TRIBUTARY_USER and TRIBUTARY_PASSWORD, or a netrc entry)"
	}
	if s == "" {
		return http.StatusText(status)
	}
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// applyConnectors creates or updates the connector of each file (Kafka
// Connect's {"name", "config"} shape) with PUT /connectors/NAME/config, in
// order, and stops at the first failure. It returns the exit code.
func applyConnectors(ctx context.Context, client *restClient, base string, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, file := range files {
		name, config, err := readNamedConnectorFile(file, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "tributary connectors apply: %v\n", err)
			return 1
		}
		status, resp, err := connectRequest(ctx, client, http.MethodPut, base+"/connectors/"+url.PathEscape(name)+"/config", config)
		if err != nil {
			fmt.Fprintf(stderr, "tributary connectors apply: %s\n", describeConnectError(ctx, base, err))
			return 1
		}
		switch status {
		case http.StatusCreated:
			fmt.Fprintf(stdout, "connector %q: created (HTTP %d)\n", name, status)
		case http.StatusOK:
			fmt.Fprintf(stdout, "connector %q: updated (HTTP %d)\n", name, status)
		default:
			fmt.Fprintf(stderr, "tributary connectors apply: connector %q (%s): %s (HTTP %d)\n", name, file, errorMessage(status, resp), status)
			return 1
		}
	}
	return 0
}

// readNamedConnectorFile reads a file in create's {"name", "config"} shape
// and returns the name and the config object.
func readNamedConnectorFile(file string, stdin io.Reader) (string, []byte, error) {
	data, err := readConnectorFile(file, stdin, false, "")
	if err != nil {
		return "", nil, err
	}
	var c struct {
		Name   string          `json:"name"`
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return "", nil, fmt.Errorf("%s: %v", file, err)
	}
	if c.Name == "" {
		return "", nil, fmt.Errorf(`%s: no "name": apply needs {"name": "...", "config": {...}}`, file)
	}
	return c.Name, c.Config, nil
}

// globalConnectorsFlags apply to every subcommand.
var globalConnectorsFlags = []string{"url", "user", "password", "netrc-file", "cacert", "cert", "key"}

// restClient is the HTTP client of the connectors command and the basic
// credentials it sends.
type restClient struct {
	http           *http.Client
	user, password string
}

// newRESTClient builds the command's client: TLS with --cacert and
// --cert/--key for an https URL; credentials from --user/--password, else
// TRIBUTARY_USER/TRIBUTARY_PASSWORD, else the netrc entry of the URL's host.
func newRESTClient(f *connectorsFlags, base string, environ []string) (*restClient, error) {
	env := func(k string) string {
		for _, kv := range slices.Backward(environ) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	c := &restClient{user: f.user, password: f.password}
	if c.user == "" {
		c.user = env("TRIBUTARY_USER")
	}
	if u, p, ok := strings.Cut(c.user, ":"); ok {
		c.user, c.password = u, p
	}
	if c.password == "" {
		c.password = env("TRIBUTARY_PASSWORD")
	}
	u, _ := url.Parse(base)
	if c.user == "" {
		file := f.netrc
		if file == "" {
			file = env("NETRC")
		}
		if file == "" {
			if home := env("HOME"); home != "" {
				file = filepath.Join(home, ".netrc")
			}
		}
		if file != "" {
			user, pass, err := netrcLookup(file, u.Hostname(), f.netrc != "")
			if err != nil {
				return nil, err
			}
			c.user, c.password = user, pass
		}
	} else if c.password == "" && f.password == "" {
		return nil, fmt.Errorf("--user %s: no password (give --password, TRIBUTARY_PASSWORD or --user USER:PASSWORD)", c.user)
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.cacert != "" {
		b, err := os.ReadFile(f.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", f.cacert)
		}
		tlsCfg.RootCAs = pool
	}
	if f.cert != "" || f.key != "" {
		key := f.key
		if key == "" {
			key = f.cert
		}
		if f.cert == "" {
			return nil, errors.New("--key needs --cert")
		}
		cert, err := tls.LoadX509KeyPair(f.cert, key)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	return &restClient{http: &http.Client{Transport: tr}, user: c.user, password: c.password}, nil
}

// netrcLookup returns the login and password of host's entry in a netrc
// file (else of its default entry); a missing file is no entry unless
// required.
func netrcLookup(file, host string, required bool) (string, string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		if !required && errors.Is(err, os.ErrNotExist) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("netrc: %w", err)
	}
	var user, pass, defUser, defPass string
	var cur string // the machine of the entry being read; "\x00" for default
	fields := strings.Fields(string(b))
	for i := 0; i < len(fields); i++ {
		next := func() string {
			if i+1 < len(fields) {
				i++
				return fields[i]
			}
			return ""
		}
		switch fields[i] {
		case "machine":
			cur = next()
		case "default":
			cur = "\x00"
		case "login":
			v := next()
			if cur == host {
				user = v
			} else if cur == "\x00" {
				defUser = v
			}
		case "password":
			v := next()
			if cur == host {
				pass = v
			} else if cur == "\x00" {
				defPass = v
			}
		case "account", "macdef":
			next()
		}
	}
	if user != "" {
		return user, pass, nil
	}
	return defUser, defPass, nil
}
