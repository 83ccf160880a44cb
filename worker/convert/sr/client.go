package sr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Schema is a schema as the registry's REST API carries it.
type Schema struct {
	Schema string `json:"schema"`
	// Type is AVRO (the registry's default, sent as ""), JSON or PROTOBUF.
	Type       string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
}

// Reference names another subject's schema version a schema imports.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// SubjectSchema is a schema registered under a subject.
type SubjectSchema struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
	ID      int    `json:"id"`
	Schema
}

// Error is an error answer of the registry: the HTTP status and
// Confluent's error body ({"error_code": 40401, "message": "..."}).
type Error struct {
	Method, Path string
	Status       int
	Code         int    `json:"error_code"`
	Message      string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("sr: %s %s: HTTP %d, error code %d: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// Retriable reports whether the same request may succeed later (the
// registry answered 5xx, e.g. 50002 timeout or 50004 unknown leader).
func (e *Error) Retriable() bool { return e.Status >= 500 }

// Confluent's error codes the converters act on.
const (
	CodeSubjectNotFound = 40401
	CodeVersionNotFound = 40402
	CodeSchemaNotFound  = 40403
	CodeIncompatible    = 40901
	CodeInvalidSchema   = 42201
)

// HasCode reports whether err is an *Error with the given error code.
func HasCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Config configures a Client.
type Config struct {
	// URLs of the registry's instances; requests go to one and fail over
	// to the next when it cannot be reached.
	URLs []string
	// UserInfo is "user:password" for HTTP basic authentication; empty for
	// none.
	UserInfo string
	// BearerToken is sent as "Authorization: Bearer" when set.
	BearerToken string
	// Timeout bounds each request (default 30s).
	Timeout time.Duration
	// HTTP is the client to use (default a new http.Client).
	HTTP *http.Client
	// Logger logs fail-overs (default slog.Default()).
	Logger *slog.Logger
	// LatestTTL is how long Latest (and Version with -1) keeps a
	// subject's latest version after fetching it, as Confluent's
	// CachedSchemaRegistryClient does with latest.cache.ttl.sec. Zero (the
	// default): not cached, every call asks the registry. Negative: kept
	// until evicted. Either way a Register of a new schema under the
	// subject drops it.
	LatestTTL time.Duration
	// LatestCacheSize bounds how many subjects' latest versions are kept;
	// past it the least recently used goes (default
	// DefaultLatestCacheSize, Confluent's latest.cache.size).
	LatestCacheSize int
	// Now is the clock LatestTTL is measured with (default time.Now).
	Now func() time.Time
}

// Client talks to a schema registry and caches its answers. Use New.
type Client struct {
	urls     []*url.URL
	userInfo string
	bearer   string
	timeout  time.Duration
	http     *http.Client
	log      *slog.Logger
	next     atomic.Uint32 // index of the URL to try first

	mu       sync.Mutex
	byID     map[int]Schema
	ids      map[subjectKey]int // Register/Lookup answers
	versions map[subjectKey]int // Lookup answers
	numbered map[versionKey]SubjectSchema
	latest   *latestCache // nil: Latest is not cached
	flights  map[string]*latestFlight
	now      func() time.Time
}

type versionKey struct {
	subject string
	version int
}

type subjectKey struct {
	subject, schema, typ string
}

// New returns a client of the registry at cfg.URLs.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("sr: no schema registry URL")
	}
	c := &Client{userInfo: cfg.UserInfo, bearer: cfg.BearerToken, timeout: cfg.Timeout, http: cfg.HTTP, log: cfg.Logger,
		byID: map[int]Schema{}, ids: map[subjectKey]int{}, versions: map[subjectKey]int{},
		numbered: map[versionKey]SubjectSchema{}, latest: newLatestCache(cfg.LatestTTL, cfg.LatestCacheSize), flights: map[string]*latestFlight{}, now: cfg.Now}
	if c.now == nil {
		c.now = time.Now
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	for _, raw := range cfg.URLs {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("sr: invalid schema registry URL %q: want http(s)://host[:port][/path]", redact(raw))
		}
		u.Path = strings.TrimRight(u.Path, "/")
		c.urls = append(c.urls, u)
	}
	return c, nil
}

// redact hides the password of a URL that carries one.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndexByte(raw, '@'); i >= 0 {
		return "xxxxx" + raw[i:]
	}
	return raw
}

// NewFromConfig returns a client configured with Confluent's serializer
// settings, as ParseConfig reads them.
func NewFromConfig(config map[string]string, logger *slog.Logger) (*Client, error) {
	cfg, err := ParseConfig(config, logger)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// ParseConfig reads Confluent's serializer settings of the registry
// client: schema.registry.url (a comma-separated list, required),
// basic.auth.credentials.source (URL, the default: the user info of the
// URLs; USER_INFO: basic.auth.user.info, or its older name
// schema.registry.basic.auth.user.info), bearer.auth.credentials.source
// STATIC_TOKEN with bearer.auth.token, and http.read.timeout.ms. The
// latest cache is left to the caller (the serdes' latest.cache.* settings).
func ParseConfig(config map[string]string, logger *slog.Logger) (Config, error) {
	cfg := Config{Logger: logger}
	for _, u := range strings.Split(config["schema.registry.url"], ",") {
		if u = strings.TrimSpace(u); u != "" {
			cfg.URLs = append(cfg.URLs, u)
		}
	}
	if len(cfg.URLs) == 0 {
		return Config{}, errors.New("sr: Missing required configuration \"schema.registry.url\" which has no default value")
	}
	switch src := strings.ToUpper(strings.TrimSpace(config["basic.auth.credentials.source"])); src {
	case "", "URL":
		// The URLs' user info, taken per request below.
	case "USER_INFO":
		cfg.UserInfo = config["basic.auth.user.info"]
		if cfg.UserInfo == "" {
			cfg.UserInfo = config["schema.registry.basic.auth.user.info"]
		}
		if cfg.UserInfo == "" {
			return Config{}, errors.New("sr: basic.auth.credentials.source=USER_INFO needs basic.auth.user.info (user:password)")
		}
	case "SASL_INHERIT":
		return Config{}, errors.New("sr: basic.auth.credentials.source=SASL_INHERIT is not supported; use USER_INFO")
	default:
		return Config{}, fmt.Errorf("sr: invalid basic.auth.credentials.source %q: want URL, USER_INFO or SASL_INHERIT", src)
	}
	switch src := strings.ToUpper(strings.TrimSpace(config["bearer.auth.credentials.source"])); src {
	case "":
	case "STATIC_TOKEN":
		cfg.BearerToken = config["bearer.auth.token"]
		if cfg.BearerToken == "" {
			return Config{}, errors.New("sr: bearer.auth.credentials.source=STATIC_TOKEN needs bearer.auth.token")
		}
	default:
		return Config{}, fmt.Errorf("sr: bearer.auth.credentials.source %q is not supported; use STATIC_TOKEN", src)
	}
	if v := strings.TrimSpace(config["http.read.timeout.ms"]); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return Config{}, fmt.Errorf("sr: invalid http.read.timeout.ms %q", v)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	return cfg, nil
}

const contentType = "application/vnd.schemaregistry.v1+json"

// do sends a request to the first reachable URL and decodes a 2xx answer
// into out. It fails over to the next URL only when one cannot be reached:
// an answer, even an error, is final.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("sr: %s %s: %w", method, path, err)
		}
	}
	start := int(c.next.Load()) % len(c.urls)
	var errs []error
	for i := range c.urls {
		idx := (start + i) % len(c.urls)
		err := c.doOne(ctx, c.urls[idx], method, path, body, out)
		var rerr *Error
		if err == nil || errors.As(err, &rerr) || ctx.Err() != nil {
			return err
		}
		errs = append(errs, err)
		if len(c.urls) > 1 {
			c.next.Store(uint32(idx + 1))
			c.log.Warn("schema registry unreachable, trying the next URL", "url", c.urls[idx].Redacted(), "err", err)
		}
	}
	return errors.Join(errs...)
}

func (c *Client) doOne(ctx context.Context, base *url.URL, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *base
	u.User = nil
	target := u.String() + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return fmt.Errorf("sr: %s %s: %w", method, u.Redacted()+path, err)
	}
	req.Header.Set("Accept", contentType+", application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	switch {
	case c.bearer != "":
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	case c.userInfo != "":
		user, pass, _ := strings.Cut(c.userInfo, ":")
		req.SetBasicAuth(user, pass)
	case base.User != nil:
		pass, _ := base.User.Password()
		req.SetBasicAuth(base.User.Username(), pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The error's URL carries no user info (removed above).
		return fmt.Errorf("sr: %s %s: %w", method, u.Redacted()+path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("sr: %s %s: reading the answer: %w", method, u.Redacted()+path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Method: method, Path: path, Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Message == "" {
			// Not Confluent's body (a proxy's page, say): show its start.
			e.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
			if e.Code == 0 {
				e.Code = resp.StatusCode
			}
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("sr: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func subjectPath(subject string) string { return "/subjects/" + url.PathEscape(subject) }

// Register registers s under subject (POST /subjects/{subject}/versions)
// and returns its id; registering a schema the subject already has returns
// the existing id. The answer is cached.
func (c *Client) Register(ctx context.Context, subject string, s Schema, normalize bool) (int, error) {
	key := subjectKey{subject, s.Schema, s.Type}
	c.mu.Lock()
	id, ok := c.ids[key]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	path := subjectPath(subject) + "/versions"
	if normalize {
		path += "?normalize=true"
	}
	var out struct {
		ID int `json:"id"`
	}
	if err := c.do(ctx, http.MethodPost, path, s, &out); err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.ids[key] = out.ID
	if _, ok := c.byID[out.ID]; !ok {
		c.byID[out.ID] = s
	}
	// The subject may have a new latest version now, also for a request
	// in flight.
	c.latest.invalidate(subject)
	if f := c.flights[subject]; f != nil {
		f.stale = true
		delete(c.flights, subject)
	}
	c.mu.Unlock()
	return out.ID, nil
}

// Lookup finds s among subject's versions (POST /subjects/{subject}); an
// *Error with CodeSubjectNotFound or CodeSchemaNotFound when it is not
// there. The answer is cached.
func (c *Client) Lookup(ctx context.Context, subject string, s Schema, normalize bool) (SubjectSchema, error) {
	key := subjectKey{subject, s.Schema, s.Type}
	c.mu.Lock()
	id, ok1 := c.ids[key]
	v, ok2 := c.versions[key]
	c.mu.Unlock()
	if ok1 && ok2 {
		return SubjectSchema{Subject: subject, ID: id, Version: v, Schema: s}, nil
	}
	path := subjectPath(subject)
	if normalize {
		path += "?normalize=true"
	}
	var out SubjectSchema
	if err := c.do(ctx, http.MethodPost, path, s, &out); err != nil {
		return SubjectSchema{}, err
	}
	c.mu.Lock()
	c.ids[key] = out.ID
	c.versions[key] = out.Version
	c.mu.Unlock()
	return out, nil
}

// SchemaByID fetches the schema with the given id (GET /schemas/ids/{id});
// ids never change meaning, so the answer is cached for good.
func (c *Client) SchemaByID(ctx context.Context, id int) (Schema, error) {
	c.mu.Lock()
	s, ok := c.byID[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	if err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), nil, &s); err != nil {
		return Schema{}, err
	}
	c.mu.Lock()
	c.byID[id] = s
	c.mu.Unlock()
	return s, nil
}

// Latest returns subject's latest version (GET
// /subjects/{subject}/versions/latest). The latest version changes, so it
// is cached only as Config.LatestTTL says: not at all by default. With
// the cache on, concurrent calls for a subject that is not cached share
// one request and its answer, error included.
func (c *Client) Latest(ctx context.Context, subject string) (SubjectSchema, error) {
	c.mu.Lock()
	out, ok := c.latest.get(subject, c.now())
	if ok {
		c.mu.Unlock()
		return out, nil
	}
	var f *latestFlight
	if c.latest != nil {
		if f = c.flights[subject]; f != nil {
			c.mu.Unlock()
			select {
			case <-f.done:
				return f.ss, f.err
			case <-ctx.Done():
				return SubjectSchema{}, fmt.Errorf("sr: latest version of subject %s: %w", subject, ctx.Err())
			}
		}
		f = &latestFlight{done: make(chan struct{})}
		c.flights[subject] = f
	}
	c.mu.Unlock()
	err := c.do(ctx, http.MethodGet, subjectPath(subject)+"/versions/latest", nil, &out)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		if _, ok := c.byID[out.ID]; !ok {
			c.byID[out.ID] = out.Schema
		}
		if f == nil || !f.stale {
			c.latest.put(subject, out, c.now())
		}
	}
	if f != nil {
		if c.flights[subject] == f {
			delete(c.flights, subject)
		}
		if err == nil {
			f.ss = out
		}
		f.err = err
		close(f.done)
	}
	if err != nil {
		return SubjectSchema{}, err
	}
	return out, nil
}

// latestFlight is a request for a subject's latest version in flight,
// which concurrent callers wait for.
type latestFlight struct {
	done  chan struct{} // closed when ss, err are set
	ss    SubjectSchema
	err   error
	stale bool // the client registered under the subject meanwhile: not cached
}

// Version returns one version of subject (GET
// /subjects/{subject}/versions/{version}); -1 is the latest. A numbered
// version is cached for good, the latest as Latest caches it.
func (c *Client) Version(ctx context.Context, subject string, version int) (SubjectSchema, error) {
	if version == -1 {
		return c.Latest(ctx, subject)
	}
	key := versionKey{subject, version}
	c.mu.Lock()
	out, ok := c.numbered[key]
	c.mu.Unlock()
	if ok {
		return out, nil
	}
	if err := c.do(ctx, http.MethodGet, subjectPath(subject)+"/versions/"+strconv.Itoa(version), nil, &out); err != nil {
		return SubjectSchema{}, err
	}
	c.mu.Lock()
	c.numbered[key] = out
	c.mu.Unlock()
	return out, nil
}

// maxReferenceDepth bounds how deep references may nest.
const maxReferenceDepth = 32

// References fetches the schemas refs name, and the schemas those
// reference, transitively: the texts by reference name, as
// CompileProtobuf takes them as deps. Each version is fetched once.
func (c *Client) References(ctx context.Context, refs []Reference) (map[string]string, error) {
	out := map[string]string{}
	var visit func(refs []Reference, depth int) error
	visit = func(refs []Reference, depth int) error {
		if depth > maxReferenceDepth {
			return fmt.Errorf("sr: references nest deeper than %d", maxReferenceDepth)
		}
		for _, ref := range refs {
			if _, ok := out[ref.Name]; ok {
				continue
			}
			v, err := c.Version(ctx, ref.Subject, ref.Version)
			if err != nil {
				return fmt.Errorf("sr: reference %s (subject %s, version %d): %w", ref.Name, ref.Subject, ref.Version, err)
			}
			out[ref.Name] = v.Schema.Schema
			if err := visit(v.References, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(refs, 0); err != nil {
		return nil, err
	}
	return out, nil
}
