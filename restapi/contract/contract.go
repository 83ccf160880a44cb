// Package contract is the executable specification of Tributary's Kafka
// Connect REST API: a table of request sequences with the status codes,
// headers and JSON body shapes expected back. Run plays the table against
// any base URL, so the very same cases run against the restapi package with
// a fake herder, against a live Tributary worker and against a live Kafka
// Connect 4.4 worker (with the FileStream connectors installed). Where
// Tributary deliberately answers differently from Kafka Connect (a 400
// where Kafka Connect answers 500 to a malformed body, …), a step carries
// the Kafka Connect answer in Kafka and the reason in Deviation.
//
// Expected bodies are JSON templates:
//
//   - ${name}, ${base}, ${dir} are replaced before matching (connector
//     name of the case, base URL, a scratch directory);
//   - "{{any}}" matches any value, "{{string}}", "{{number}}",
//     "{{array}}", "{{object}}" any value of that JSON type;
//   - "{{optional}}" as an object member's value matches that member
//     being absent or having any value;
//   - "{{oneof:A|B}}" matches the string A or the string B;
//   - "{{re:EXPR}}" matches a string that the regular expression EXPR
//     (RE2 syntax, anchored at both ends) matches;
//   - objects must have exactly the expected members, unless the object
//     has the member "{{more}}": true;
//   - arrays must match element by element, unless the first element is
//     "{{contains}}": then each remaining element must match some element
//     of the actual array.
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Target says whose answers to expect.
type Target int

// Targets.
const (
	// Tributary expects Tributary's answers (the default).
	Tributary Target = iota
	// KafkaConnect expects Kafka Connect 4.4's answers: a step's Kafka
	// expectation replaces its own where it has one.
	KafkaConnect
)

// Expect is what a step expects back.
type Expect struct {
	Status int
	// Body is a JSON template; "" means the body is not checked.
	Body string
	// NoBody requires an empty body.
	NoBody bool
	// Headers are required header values (templates).
	Headers map[string]string
	// NoContentType: the answer has a body but no Content-Type header
	// (Kafka Connect's 404/405 for unknown paths and methods). Otherwise a
	// non-empty body must be application/json.
	NoContentType bool
	// AnyContentType: the answer's body may be of any type and is not
	// checked (Jetty's HTML error pages, which Kafka Connect answers to
	// paths it refuses before they reach its REST resources).
	AnyContentType bool
	// Note names the answer where a step accepts several (KafkaRace), in
	// the count of answers a repeated case logs.
	Note string
}

// Step is one request and what it must answer.
type Step struct {
	Method string
	Path   string // template, may hold a query
	Body   string // raw body (template); sent as application/json unless ContentType is set
	// ContentType overrides the request Content-Type; "-" sends none.
	ContentType string
	// Poll retries the step until it matches or Config.PollTimeout passes
	// (Kafka Connect applies state changes asynchronously).
	Poll bool
	Want Expect
	// Kafka is Kafka Connect's answer where it differs from Tributary's;
	// Deviation says why Tributary differs.
	Kafka     *Expect
	Deviation string
	// KafkaRace lists Kafka Connect's other answers to a step whose answer
	// depends on a race inside Kafka Connect (the case says which race,
	// from its source): accepted from Kafka Connect only, beside Kafka (or
	// Want). Tributary must give Want every time.
	KafkaRace []Expect
	// Immediate sends the step once, right after the previous step's
	// answer, and takes its first answer: it is not retried while the
	// worker rebalances (what a client that acts at once gets).
	Immediate bool
}

// Case is a named sequence of steps. Each case gets its own connector name
// (${name}); connectors a case creates are deleted when it ends.
type Case struct {
	Name  string
	Steps []Step
	// Repeat plays the steps this many times in a row (0: once), each
	// round with a connector name of its own (${name} ends in -<round>).
	// For each Immediate step the case logs how often each answer came.
	Repeat int
	// Live: the case is about what a running worker does right after a
	// write (its herder's timing), which a fake herder does not model;
	// Config.SkipLive leaves it out.
	Live bool
}

// Config says where and how to run the table.
type Config struct {
	BaseURL string       // without a trailing slash
	Client  *http.Client // nil: a client with a 30 s timeout
	Target  Target
	// Prefix makes connector names unique per run (default "contract").
	Prefix string
	// Dir is a scratch directory for connector files (default os.TempDir()).
	Dir string
	// PollTimeout bounds polling steps (default 60 s).
	PollTimeout time.Duration
	// Cases restricts the run to cases whose name contains one of these.
	Cases []string
	// SkipLive leaves out the Live cases (a fake herder).
	SkipLive bool
}

// Run plays every case as a subtest of t.
func Run(t *testing.T, cfg Config) {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "contract"
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	if cfg.PollTimeout == 0 {
		cfg.PollTimeout = 60 * time.Second
	}
	for _, c := range Cases() {
		if len(cfg.Cases) > 0 && !containsAny(c.Name, cfg.Cases) || c.Live && cfg.SkipLive {
			continue
		}
		t.Run(c.Name, func(t *testing.T) { runCase(t, cfg, c) })
	}
}

// runCase plays a case's steps, Repeat times if it says so.
func runCase(t *testing.T, cfg Config, c Case) {
	base := cfg.Prefix + "-" + slug(c.Name)
	rounds := max(c.Repeat, 1)
	// answers counts, for each Immediate step, the answers by Note.
	answers := make([]map[string]int, len(c.Steps))
	defer func() {
		for i, s := range c.Steps {
			if !s.Immediate || c.Repeat == 0 {
				continue
			}
			keys := make([]string, 0, len(answers[i]))
			for k := range answers[i] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%d× %s", answers[i][k], k))
			}
			t.Logf("step %d, %s %s, right after the step before it, in %d rounds: %s", i+1, s.Method, s.Path, rounds, strings.Join(parts, ", "))
		}
	}()
	for round := 1; round <= rounds; round++ {
		name := base
		if c.Repeat > 0 {
			name += "-" + strconv.Itoa(round)
		}
		vars := map[string]string{
			"${name}": name,
			"${base}": cfg.BaseURL,
			"${dir}":  filepath.ToSlash(cfg.Dir),
		}
		t.Cleanup(func() { cleanup(cfg, name) })
		for i, s := range c.Steps {
			want := []Expect{s.Want}
			if cfg.Target == KafkaConnect {
				if s.Kafka != nil {
					want[0] = *s.Kafka
				}
				want = append(want, s.KafkaRace...)
			}
			got, err := runStep(cfg, s, want, vars)
			if err != nil {
				dev := ""
				if s.Deviation != "" {
					dev = " (deviation: " + s.Deviation + ")"
				}
				at := ""
				if c.Repeat > 0 {
					at = fmt.Sprintf(" (round %d of %d)", round, rounds)
				}
				t.Fatalf("step %d%s: %s %s%s: %v", i+1, at, s.Method, expand(s.Path, vars), dev, err)
			}
			if answers[i] == nil {
				answers[i] = map[string]int{}
			}
			answers[i][describe(want[got])]++
		}
	}
}

// describe names an expected answer in the counts of a repeated case.
func describe(e Expect) string {
	if e.Note != "" {
		return fmt.Sprintf("%d (%s)", e.Status, e.Note)
	}
	return strconv.Itoa(e.Status)
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// cleanup deletes the case's connectors (name and name-2), ignoring errors.
func cleanup(cfg Config, name string) {
	for _, n := range []string{name, name + "-2", "  " + name + "  "} {
		req, err := http.NewRequest(http.MethodDelete, cfg.BaseURL+"/connectors/"+strings.TrimSpace(n), nil)
		if err != nil {
			continue
		}
		if resp, err := cfg.Client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// runStep sends the step (repeatedly if it polls) and checks the answer
// against the expectations want, returning the index of the one it
// matched.
func runStep(cfg Config, s Step, want []Expect, vars map[string]string) (int, error) {
	deadline := time.Now().Add(cfg.PollTimeout)
	retryDeadline := time.Now().Add(10 * time.Second)
	for {
		got, err := tryStep(cfg, s, want, vars)
		if err == nil || s.Immediate || time.Now().After(deadline) {
			return got, err
		}
		// Polling steps wait for a state; any step is retried while the
		// worker answers that a rebalance is under way (Kafka Connect's
		// 409, or its 500 "a rebalance is expected" right after a config
		// change), as Kafka Connect's own clients do.
		var te transientError
		if !s.Poll && !(errors.As(err, &te) && time.Now().Before(retryDeadline)) {
			return got, err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// transientError is an answer a client retries: the worker is rebalancing.
type transientError struct{ error }

func isRebalancing(status int, body []byte) bool {
	return status == http.StatusConflict ||
		(status == http.StatusInternalServerError && bytes.Contains(body, []byte("rebalance")))
}

// tryStep sends the step once and returns the index of the expectation
// its answer matches (the first one's error when it matches none).
func tryStep(cfg Config, s Step, want []Expect, vars map[string]string) (int, error) {
	var body io.Reader
	if s.Body != "" {
		body = strings.NewReader(expand(s.Body, vars))
	}
	req, err := http.NewRequest(s.Method, cfg.BaseURL+expand(s.Path, vars), body)
	if err != nil {
		return 0, err
	}
	switch {
	case s.ContentType == "-":
	case s.ContentType != "":
		req.Header.Set("Content-Type", s.ContentType)
	case s.Body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	// A connection per request: Kafka Connect's Jetty closes the
	// connection after the 400 of a path it refuses, and a request sent
	// on it meanwhile fails with EOF.
	req.Close = true
	resp, err := cfg.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("read body: %w", err)
	}
	var first error
	for i, w := range want {
		err := Check(resp, got, w, vars)
		if err == nil {
			return i, nil
		}
		if first == nil {
			first = err
		}
	}
	if len(want) > 1 {
		first = fmt.Errorf("%w (nor any of the %d other answers accepted)", first, len(want)-1)
	}
	if resp.StatusCode != want[0].Status && isRebalancing(resp.StatusCode, got) {
		return 0, transientError{first}
	}
	return 0, first
}

// Check compares an answer with an expectation.
func Check(resp *http.Response, body []byte, want Expect, vars map[string]string) error {
	if resp.StatusCode != want.Status {
		return fmt.Errorf("status %d, want %d; body %s", resp.StatusCode, want.Status, clip(body))
	}
	for k, v := range want.Headers {
		if got := resp.Header.Get(k); got != expand(v, vars) {
			return fmt.Errorf("header %s = %q, want %q", k, got, expand(v, vars))
		}
	}
	if want.NoBody && len(body) > 0 {
		return fmt.Errorf("want no body, got %s", clip(body))
	}
	if want.AnyContentType {
		return nil
	}
	if len(body) > 0 {
		ct := resp.Header.Get("Content-Type")
		if want.NoContentType {
			if ct != "" {
				return fmt.Errorf("Content-Type %q, want none", ct)
			}
		} else if !strings.HasPrefix(ct, "application/json") {
			return fmt.Errorf("Content-Type %q, want application/json", ct)
		}
	}
	if want.Body == "" {
		return nil
	}
	var exp, act any
	if err := json.Unmarshal([]byte(expand(want.Body, vars)), &exp); err != nil {
		return fmt.Errorf("bad template %s: %v", want.Body, err)
	}
	if err := json.Unmarshal(body, &act); err != nil {
		return fmt.Errorf("body is not JSON (%v): %s", err, clip(body))
	}
	if err := Match(act, exp, "$"); err != nil {
		return fmt.Errorf("%v\nbody: %s", err, clip(body))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(bytes.TrimSpace(b))
}

// Match reports where actual differs from the template exp (see the
// package doc for the template language).
func Match(actual, exp any, path string) error {
	if s, ok := exp.(string); ok && strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") {
		ok := false
		switch s {
		case "{{any}}", "{{optional}}":
			ok = true
		case "{{string}}":
			_, ok = actual.(string)
		case "{{number}}":
			_, ok = actual.(float64)
		case "{{array}}":
			_, ok = actual.([]any)
		case "{{object}}":
			_, ok = actual.(map[string]any)
		default:
			a, isString := actual.(string)
			switch {
			case strings.HasPrefix(s, "{{oneof:"):
				ok = isString && containsString(strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "{{oneof:"), "}}"), "|"), a)
			case strings.HasPrefix(s, "{{re:"):
				re, err := regexp.Compile(`^(?:` + strings.TrimSuffix(strings.TrimPrefix(s, "{{re:"), "}}") + `)$`)
				if err != nil {
					return fmt.Errorf("%s: bad placeholder %s: %v", path, s, err)
				}
				ok = isString && re.MatchString(a)
			default:
				return fmt.Errorf("%s: unknown placeholder %s", path, s)
			}
		}
		if !ok {
			return fmt.Errorf("%s: %s, want %s", path, short(actual), s)
		}
		return nil
	}
	switch e := exp.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s, want an object", path, short(actual))
		}
		more := e["{{more}}"] == true
		keys := make([]string, 0, len(e))
		for k := range e {
			if k != "{{more}}" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, present := a[k]
			if !present {
				if e[k] == "{{optional}}" {
					continue
				}
				return fmt.Errorf("%s: missing member %q", path, k)
			}
			if err := Match(av, e[k], path+"."+k); err != nil {
				return err
			}
		}
		if !more {
			for k := range a {
				if _, ok := e[k]; !ok {
					return fmt.Errorf("%s: unexpected member %q", path, k)
				}
			}
		}
		return nil
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return fmt.Errorf("%s: %s, want an array", path, short(actual))
		}
		if len(e) > 0 && e[0] == "{{contains}}" {
		next:
			for i, ee := range e[1:] {
				for _, av := range a {
					if Match(av, ee, path) == nil {
						continue next
					}
				}
				return fmt.Errorf("%s: no element matches template element %d %s", path, i, short(ee))
			}
			return nil
		}
		if len(a) != len(e) {
			return fmt.Errorf("%s: %d elements, want %d", path, len(a), len(e))
		}
		for i := range e {
			if err := Match(a[i], e[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	default:
		if actual != exp {
			return fmt.Errorf("%s: %s, want %s", path, short(actual), short(exp))
		}
		return nil
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func short(v any) string {
	b, _ := json.Marshal(v)
	return clip(b)
}
