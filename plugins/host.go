package plugins

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// Config configures a Host.
type Config struct {
	// PluginPath lists directories holding plugin executables (Kafka
	// Connect's plugin.path). Each executable file directly in a directory,
	// or one level down, is a plugin.
	PluginPath []string
	// Builtin lists the command lines serving the first-party connectors,
	// usually BuiltinCommands(); empty for none.
	Builtin [][]string
	// Logger receives plugin logs (with connector and task attributes) and
	// the host's own. Default: slog.Default().
	Logger *slog.Logger
	// CacheDir, if set, persists discovered specifications by binary hash so
	// that a restarted worker does not start every plugin again.
	CacheDir string
	// StartTimeout bounds a plugin's start-up (handshake and task Open).
	// Default 1 minute.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits for a graceful stop before killing
	// the plugin, when the caller's context has no earlier deadline.
	// Default 5 s (Kafka Connect's task.shutdown.graceful.timeout.ms).
	StopTimeout time.Duration
	// Batch bounds the record batches source plugins send.
	Batch BatchLimits
	// NoSharedMemory has source plugins send every batch through the gRPC
	// stream. By default (on Linux) they send batches through memory they
	// share with the host (see sdk/protocol/shm), and the stream carries only
	// where each batch lies.
	NoSharedMemory bool
	// noValueLengths has source plugins write record values without their
	// lengths, as plugins built with an older SDK do (for tests).
	noValueLengths bool
	// MetricsInterval is how often plugins send a snapshot of the metrics
	// their tasks and connectors register (sdk.Metrics); default 1 s,
	// negative: never.
	MetricsInterval time.Duration
	// ProtocolVersions the host offers, preferred first; default: the
	// current one and every older one it still speaks. Offering fewer pins
	// plugins to an older protocol (while a fleet of hosts is upgraded);
	// a plugin that speaks none of them is refused with both lists.
	ProtocolVersions []int
	// Isolation chooses which connectors share a plugin process (the
	// worker's plugin.isolation): IsolationPlugin, the default, runs every
	// connector of one plugin executable in one process; IsolationConnector
	// gives each connector a process of its own.
	Isolation Isolation
}

// Isolation says which connector instances and tasks of a worker share a
// plugin process. Whatever it is, a plugin process never hosts another
// executable's code, and its crash never takes the worker down: it fails
// exactly the connectors and tasks it hosted, which restart as any failed
// task does.
type Isolation string

const (
	// IsolationPlugin runs every connector instance and task of one plugin
	// executable on a worker in one process (a stream each): the memory a
	// process costs is paid once per plugin, not once per connector, and
	// a process crash fails the tasks of every connector of that plugin
	// on the worker.
	IsolationPlugin Isolation = "plugin"
	// IsolationConnector runs each connector (its instance and its tasks
	// on the worker) in a process of its own: a crash fails only that
	// connector, and each connector costs a process.
	IsolationConnector Isolation = "connector"
)

// ParseIsolation reads a plugin.isolation setting ("" is the default,
// IsolationPlugin).
func ParseIsolation(s string) (Isolation, error) {
	switch i := Isolation(strings.ToLower(strings.TrimSpace(s))); i {
	case "":
		return IsolationPlugin, nil
	case IsolationPlugin, IsolationConnector:
		return i, nil
	}
	return "", fmt.Errorf("plugins: isolation %q is neither %q nor %q", s, IsolationPlugin, IsolationConnector)
}

// BatchLimits bound one record batch: it is sent when it holds MaxRecords
// records or MaxBytes bytes, when a Poll returned fewer records than asked,
// or Linger after its first record.
type BatchLimits struct {
	MaxRecords int
	MaxBytes   int
	Linger     time.Duration
}

func (c *Config) validate() error {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Logger = loglevel.Named(c.Logger, "dev.tributary.plugins")
	if c.StartTimeout <= 0 {
		c.StartTimeout = time.Minute
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 5 * time.Second
	}
	if c.Batch.MaxRecords <= 0 {
		c.Batch.MaxRecords = 2000
	}
	if c.Batch.MaxBytes <= 0 {
		c.Batch.MaxBytes = 1 << 20
	}
	if c.Batch.MaxBytes > pluginpb.MaxMessageSize/2 {
		return fmt.Errorf("plugins: batch max bytes %d above the message limit", c.Batch.MaxBytes)
	}
	if c.Batch.Linger <= 0 {
		c.Batch.Linger = 5 * time.Millisecond
	}
	if c.MetricsInterval == 0 {
		c.MetricsInterval = time.Second
	}
	if len(c.ProtocolVersions) == 0 {
		for v := pluginpb.ProtocolVersion; v >= pluginpb.OldestProtocolVersion; v-- {
			c.ProtocolVersions = append(c.ProtocolVersions, v)
		}
	}
	iso, err := ParseIsolation(string(c.Isolation))
	if err != nil {
		return err
	}
	c.Isolation = iso
	return nil
}

// BuiltinPrefix begins the names of the executables that serve the
// first-party connectors (cmd/tributary-connector-*: basic, postgres,
// mongodb, s3), installed beside tributary. They are not a mode of the
// tributary binary, nor one binary together: Go runs the init of every
// package a binary links in each process it starts, so a worker that
// linked the connectors, or a FileStream plugin that linked the drivers
// and the Parquet writer, paid for them at start.
const BuiltinPrefix = "tributary-connector-"

// BuiltinCommands returns the commands that serve the first-party
// connectors: the executables named BuiltinPrefix… in the directory of
// the running binary, else those of the first PATH directory that holds
// any (as for `go run ./cmd/tributary`, whose binary lives in a temporary
// directory).
func BuiltinCommands() ([][]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("plugins: locate the running binary: %w", err)
	}
	for _, dir := range append([]string{filepath.Dir(exe)}, filepath.SplitList(os.Getenv("PATH"))...) {
		if dir == "" {
			continue
		}
		entries, _ := os.ReadDir(dir) // an unreadable PATH entry holds none
		var cmds [][]string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), BuiltinPrefix) {
				continue
			}
			p, err := filepath.Abs(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
				cmds = append(cmds, []string{p})
			}
		}
		if len(cmds) > 0 {
			return cmds, nil
		}
	}
	return nil, fmt.Errorf("plugins: no executable of the first-party connectors (%s*) beside %s nor on PATH (build them with tributary: go build -o DIR/ ./cmd/...)",
		BuiltinPrefix, exe)
}

// PluginInfo is one discovered connector and the command serving it.
type PluginInfo struct {
	Spec    sdk.Spec
	Command []string
	// Hash is the SHA-256 of the executable.
	Hash string
}

// Host is the process-based Loader.
type Host struct {
	cfg Config

	mu      sync.Mutex
	plugins []PluginInfo
	cache   map[string][]sdk.Spec // by binary hash

	procsMu sync.Mutex
	procs   map[string]*sharedProc // by command (and connector, with IsolationConnector)
}

// sharedProc is the plugin process that serves, on this host, every
// connector instance and task of one plugin executable (IsolationPlugin)
// or of one connector (IsolationConnector), each on its own stream. It
// lives while any of them runs; a process that exited is launched again by
// the next acquire.
type sharedProc struct {
	mu   sync.Mutex // held while (re)launching p
	p    *proc
	refs int // guarded by Host.procsMu
	// routes, for a process that may host several connectors, sends each
	// line of its output to the loggers of the connector the line names.
	routes *logRoutes
}

// procRef is one task's or connector instance's hold on a shared process.
type procRef struct {
	h         *Host
	key       string
	e         *sharedProc
	p         *proc
	connector string // the connector whose log route the hold adds, or ""
	once      sync.Once
}

// acquire returns a hold on the running process that serves class's
// connector for argv on this host (the plugin's process, or the
// connector's own, as Config.Isolation says), launching it if there is
// none or it exited. Every successful acquire must be paired with one
// release.
func (h *Host) acquire(ctx context.Context, class, connector string, argv []string) (*procRef, error) {
	logs := h.pluginLogs(class, "connector", connector)
	if h.cfg.Isolation == IsolationConnector {
		return h.acquireKey(ctx, connector+"\x00"+class+"\x00"+strings.Join(argv, "\x00"), argv, logs, nil)
	}
	return h.acquirePlugin(ctx, argv, &logRoute{connector: connector, logs: logs})
}

// acquirePlugin returns a hold on the process shared by every connector of
// the executable argv runs. rt (nil for none) routes the lines of its
// connector to its loggers for as long as the hold lasts.
func (h *Host) acquirePlugin(ctx context.Context, argv []string, rt *logRoute) (*procRef, error) {
	base := h.cfg.Logger.With("plugin", filepath.Base(argv[0]))
	logs := procLogs{conn: base, task: base, routes: &logRoutes{}}
	return h.acquireKey(ctx, "\x00plugin\x00"+strings.Join(argv, "\x00"), argv, logs, rt)
}

// logRoute sends the lines of a process's output that name connector to
// logs.
type logRoute struct {
	connector string
	logs      procLogs
}

// acquireKey is acquire for the process shared under key, launched with
// logs if it must be. When logs has routes (a process that may host several
// connectors), the process's entry keeps the first such set for its life,
// and rt (if not nil) is added to it for as long as the hold lasts.
func (h *Host) acquireKey(ctx context.Context, key string, argv []string, logs procLogs, rt *logRoute) (*procRef, error) {
	h.procsMu.Lock()
	e := h.procs[key]
	if e == nil {
		e = &sharedProc{routes: logs.routes}
		h.procs[key] = e
	}
	e.refs++
	h.procsMu.Unlock()
	ref := &procRef{h: h, key: key, e: e}
	logs.routes = e.routes
	if e.routes != nil && rt != nil {
		e.routes.add(rt.connector, rt.logs)
		ref.connector = rt.connector
	}

	e.mu.Lock()
	if e.p != nil && !e.p.client.Exited() {
		ref.p = e.p
		e.mu.Unlock()
		return ref, nil
	}
	if e.p != nil {
		e.p.kill() // releases the dead process's client
		e.p = nil
	}
	p, err := h.launch(ctx, argv, logs)
	if err == nil {
		e.p, ref.p = p, p
	}
	e.mu.Unlock() // before release, which takes it with the last reference
	if err != nil {
		ref.release()
		return nil, err
	}
	return ref, nil
}

// release drops the hold; the last one stops the process. Idempotent.
func (r *procRef) release() {
	r.once.Do(func() {
		h, e := r.h, r.e
		if r.connector != "" {
			e.routes.remove(r.connector)
		}
		h.procsMu.Lock()
		e.refs--
		last := e.refs == 0
		if last && h.procs[r.key] == e {
			delete(h.procs, r.key)
		}
		h.procsMu.Unlock()
		if last {
			e.mu.Lock()
			if e.p != nil {
				e.p.kill()
			}
			e.mu.Unlock()
		}
	})
}

// sole reports whether this is the only hold on the process: a hung task
// may then be killed with its process; otherwise killing it would take the
// other tasks and connectors the process serves down too.
func (r *procRef) sole() bool {
	r.h.procsMu.Lock()
	defer r.h.procsMu.Unlock()
	return r.e.refs == 1
}

// retire takes the process out of service for new holds: a task abandoned
// in it (a call that never returned) stays behind in it, so new tasks get
// a fresh process, and this one ends with the last of the holds it has.
func (r *procRef) retire() {
	r.h.procsMu.Lock()
	defer r.h.procsMu.Unlock()
	if r.h.procs[r.key] == r.e {
		delete(r.h.procs, r.key)
	}
}

var _ Loader = (*Host)(nil)

// NewHost discovers the plugins and returns a Host.
func NewHost(ctx context.Context, cfg Config) (*Host, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, cache: map[string][]sdk.Spec{}, procs: map[string]*sharedProc{}}
	if err := h.Discover(ctx); err != nil {
		return nil, err
	}
	// Name the loggers of every connector found, so that they are listed
	// (and can be set) before a connector runs, as a Java connector's are
	// once its classes are loaded.
	for _, s := range h.Specs() {
		h.pluginLogs(s.Class)
	}
	return h, nil
}

// Discover (re)scans the builtin commands and plugin.path. Each executable
// is started once and asked for its specification; results are cached by
// the executable's SHA-256, in memory and in CacheDir. A plugin that fails
// to start is logged and skipped; plugins claiming the same names are
// settled by resolveNames.
func (h *Host) Discover(ctx context.Context) error {
	cmds := slices.Clone(h.cfg.Builtin)
	for _, dir := range h.cfg.PluginPath {
		exes, err := findExecutables(dir, h.cfg.Logger)
		if err != nil {
			return err
		}
		for _, e := range exes {
			cmds = append(cmds, []string{e})
		}
	}
	var found []PluginInfo
	for i, cmd := range cmds {
		hash, err := fileHash(cmd[0])
		if err != nil {
			return err
		}
		specs, err := h.specsFor(ctx, cmd, hash)
		if err != nil {
			h.cfg.Logger.Error("plugin skipped: could not read its specification", "path", cmd[0], "error", err)
			continue
		}
		for _, s := range specs {
			found = append(found, PluginInfo{Spec: s, Command: cmd, Hash: hash})
		}
		if builtin := i < len(h.cfg.Builtin); !builtin {
			h.cfg.Logger.Info("plugin loaded from plugin.path", "path", cmd[0], "plugins", specSummary(specs))
		}
	}
	found = resolveNames(found, h.cfg.Logger)
	h.mu.Lock()
	h.plugins = found
	h.mu.Unlock()
	return nil
}

// specSummary lists specs as "class (type, version)" for the log.
func specSummary(specs []sdk.Spec) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = fmt.Sprintf("%s (%s, version %s)", s.Class, s.Type, s.Version)
	}
	return strings.Join(parts, ", ")
}

// resolveNames settles plugins that claim the same names, as Kafka Connect
// does rather than refusing to start: of several plugins with one class,
// the highest version is kept (the first found on a tie: the built-in
// commands, then plugin.path in order); an alias that is another plugin's
// class, or that two plugins share, is dropped for all of them, so that
// each stays reachable by its class name. Each choice is logged.
func resolveNames(found []PluginInfo, logger *slog.Logger) []PluginInfo {
	best := map[string]int{} // class → index in found of the one kept
	for i, p := range found {
		j, dup := best[p.Spec.Class]
		if !dup {
			best[p.Spec.Class] = i
			continue
		}
		keep, drop := j, i
		if compareVersions(p.Spec.Version, found[j].Spec.Version) > 0 {
			keep, drop = i, j
			best[p.Spec.Class] = i
		}
		logger.Warn("plugin class served twice: keeping the higher version", "class", p.Spec.Class,
			"kept", found[keep].Command[0], "kept_version", found[keep].Spec.Version,
			"ignored", found[drop].Command[0], "ignored_version", found[drop].Spec.Version)
	}
	var out []PluginInfo
	uses := map[string]int{} // name → plugins kept that answer to it
	classes := map[string]bool{}
	for i, p := range found {
		if best[p.Spec.Class] != i {
			continue
		}
		out = append(out, p)
		classes[p.Spec.Class] = true
		for _, a := range slices.Compact(slices.Sorted(slices.Values(p.Spec.Aliases))) {
			uses[a]++
		}
	}
	for i := range out {
		s := &out[i].Spec
		var kept []string
		for _, a := range s.Aliases {
			if a == s.Class || (!classes[a] && uses[a] == 1) {
				kept = append(kept, a)
				continue
			}
			logger.Warn("ambiguous plugin alias ignored: use the class name", "alias", a, "class", s.Class, "path", out[i].Command[0])
		}
		s.Aliases = kept
	}
	return out
}

// compareVersions orders plugin versions by their numbers ("1.10.0" after
// "1.9.2"), then as strings.
func compareVersions(a, b string) int {
	na, nb := versionNumbers(a), versionNumbers(b)
	for i := range min(len(na), len(nb)) {
		if c := cmp.Compare(na[i], nb[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(na), len(nb)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func versionNumbers(v string) []uint64 {
	var out []uint64
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			n = math.MaxUint64
		}
		out = append(out, n)
	}
	return out
}

// findExecutables lists the plugin executables of one plugin.path entry:
// those in the directory and in its subdirectories, or the entry itself
// when it is an executable file. A missing entry is logged and skipped, as
// Kafka Connect does; so is a file that is not executable.
func findExecutables(dir string, logger *slog.Logger) ([]string, error) {
	var out []string
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		logger.Warn("plugin.path entry does not exist: skipped", "path", dir)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("plugins: plugin.path entry %s: %w", dir, err)
	case !st.IsDir():
		if !isExecutable(dir, logger) {
			return nil, nil
		}
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plugins: read plugin.path entry %s: %w", dir, err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			sub, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("plugins: read %s: %w", p, err)
			}
			for _, s := range sub {
				if isExecutable(filepath.Join(p, s.Name()), logger) {
					out = append(out, filepath.Join(p, s.Name()))
				}
			}
			continue
		}
		if isExecutable(p, logger) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// isExecutable reports whether p is a regular file someone may execute; a
// regular file that is not is logged (a plugin copied without its mode
// bits would otherwise vanish without a word).
func isExecutable(p string, logger *slog.Logger) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if st.Mode().Perm()&0o111 == 0 {
		logger.Info("file in plugin.path is not executable: skipped (chmod +x it if it is a plugin)", "path", p)
		return false
	}
	return true
}

func fileHash(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("plugins: hash %s: %w", p, err)
	}
	defer f.Close()
	hh := sha256.New()
	if _, err := io.Copy(hh, f); err != nil {
		return "", fmt.Errorf("plugins: hash %s: %w", p, err)
	}
	return hex.EncodeToString(hh.Sum(nil)), nil
}

// specifyTimeout bounds starting an executable found by discovery and
// reading its specification.
const specifyTimeout = 15 * time.Second

func (h *Host) specsFor(ctx context.Context, cmd []string, hash string) ([]sdk.Spec, error) {
	if len(cmd) > 1 {
		// One executable run with other arguments may serve other
		// connectors: they are part of the key.
		sum := sha256.Sum256([]byte(hash + "\x00" + strings.Join(cmd[1:], "\x00")))
		hash = hex.EncodeToString(sum[:])
	}
	h.mu.Lock()
	specs, ok := h.cache[hash]
	h.mu.Unlock()
	if ok {
		return specs, nil
	}
	cacheFile := ""
	if h.cfg.CacheDir != "" {
		cacheFile = filepath.Join(h.cfg.CacheDir, hash+".json")
		if b, err := os.ReadFile(cacheFile); err == nil && json.Unmarshal(b, &specs) == nil {
			h.mu.Lock()
			h.cache[hash] = specs
			h.mu.Unlock()
			return specs, nil
		}
	}
	// An executable that is no plugin never completes the handshake: it
	// costs discovery this long, not the start timeout of tasks.
	ctx, cancel := context.WithTimeout(ctx, min(h.cfg.StartTimeout, specifyTimeout))
	defer cancel()
	p, err := h.launch(ctx, cmd, h.pluginLogs("", "plugin", filepath.Base(cmd[0])))
	if err != nil {
		return nil, err
	}
	defer p.kill()
	resp, err := p.rpc.Specify(ctx, &pluginpb.SpecifyRequest{})
	if err != nil {
		return nil, p.wrap(fmt.Errorf("plugins: specify %s: %w", cmd[0], err))
	}
	if err := json.Unmarshal(resp.GetSpecsJson(), &specs); err != nil {
		return nil, fmt.Errorf("plugins: specification of %s: %w", cmd[0], err)
	}
	h.mu.Lock()
	h.cache[hash] = specs
	h.mu.Unlock()
	if cacheFile != "" {
		if err := os.MkdirAll(h.cfg.CacheDir, 0o755); err == nil {
			tmp := cacheFile + ".tmp"
			if err := os.WriteFile(tmp, resp.GetSpecsJson(), 0o644); err == nil {
				_ = os.Rename(tmp, cacheFile)
			}
		}
	}
	return specs, nil
}

// Plugins lists the discovered connectors with their commands.
func (h *Host) Plugins() []PluginInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]PluginInfo(nil), h.plugins...)
}

// Specs implements Loader.
func (h *Host) Specs() []sdk.Spec {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]sdk.Spec, len(h.plugins))
	for i, p := range h.plugins {
		out[i] = p.Spec
	}
	return out
}

// Location implements Locator: Classpath for the built-in connectors, the
// file URL of the executable for a plugin from plugin.path ("" for a class
// it does not serve).
func (h *Host) Location(class string) string {
	p, err := h.find(class)
	if err != nil {
		return ""
	}
	for _, b := range h.cfg.Builtin {
		if slices.Equal(p.Command, b) {
			return Classpath
		}
	}
	abs, err := filepath.Abs(p.Command[0])
	if err != nil {
		abs = p.Command[0]
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// Spec implements Loader.
func (h *Host) Spec(class string) (sdk.Spec, error) {
	p, err := h.find(class)
	return p.Spec, err
}

func (h *Host) find(class string) (PluginInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	specs := make([]sdk.Spec, len(h.plugins))
	for i, p := range h.plugins {
		specs[i] = p.Spec
	}
	i, err := findSpec(specs, class)
	if err != nil {
		return PluginInfo{}, err
	}
	return h.plugins[i], nil
}

// Validate implements Loader. It starts a short-lived plugin process.
func (h *Host) Validate(ctx context.Context, class string, config map[string]string) (sdk.ConfigInfos, error) {
	pi, err := h.find(class)
	if err != nil {
		return sdk.ConfigInfos{}, err
	}
	p, done, err := h.validator(ctx, pi)
	if err != nil {
		return sdk.ConfigInfos{}, err
	}
	defer done()
	resp, err := p.rpc.Validate(ctx, &pluginpb.ValidateRequest{Class: pi.Spec.Class, Config: config})
	if err != nil {
		return sdk.ConfigInfos{}, p.wrap(fmt.Errorf("plugins: validate %s: %w", class, plainError(err)))
	}
	var infos sdk.ConfigInfos
	if err := json.Unmarshal(resp.GetConfigInfosJson(), &infos); err != nil {
		return sdk.ConfigInfos{}, fmt.Errorf("plugins: validation result of %s: %w", class, err)
	}
	return infos, nil
}

// proc is one running plugin process.
type proc struct {
	client  *plugin.Client
	cmd     *exec.Cmd
	rpc     pluginpb.PluginClient
	version int // the negotiated protocol version
	// stderr receives the plugin's stderr (fd 2); its tail also holds what
	// go-plugin forwards of os.Stdout and os.Stderr (SyncStdout and
	// SyncStderr), which the SDK points at fd 2 once it serves.
	stderr  *logWriter
	events  *hclogSink
	sockDir string // where the plugin creates its socket; removed by kill
}

type grpcClientPlugin struct {
	plugin.NetRPCUnsupportedPlugin
}

func (grpcClientPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("plugins: the host side serves nothing")
}

func (grpcClientPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewPluginClient(c), nil
}

// launch starts a plugin process and completes the handshake.
// procLogs are the loggers a plugin process's output goes to: lines of a
// task (those with a task attribute) to task, the others to conn. A
// process that hosts several connectors has routes: a line naming a
// connector goes to that connector's loggers instead.
type procLogs struct {
	conn, task *slog.Logger
	routes     *logRoutes
}

// TaskClass is the name of the task class of a connector class, as Kafka
// Connect tools see it in task configs (task.class) and as the logger of
// the connector's tasks is named: the class without its "Connector"
// suffix, and "Task".
func TaskClass(connectorClass string) string {
	return strings.TrimSuffix(connectorClass, "Connector") + "Task"
}

// pluginLogs returns the loggers of a plugin process serving class (""
// when not known yet), with attrs: loggers named after the connector
// class and its task class, as a Java connector's classes name theirs.
func (h *Host) pluginLogs(class string, attrs ...any) procLogs {
	if class == "" {
		l := h.cfg.Logger.With(attrs...)
		return procLogs{conn: l, task: l}
	}
	return procLogs{
		conn: loglevel.Named(h.cfg.Logger, class).With(attrs...),
		task: loglevel.Named(h.cfg.Logger, TaskClass(class)).With(attrs...),
	}
}

func (h *Host) launch(ctx context.Context, argv []string, logs procLogs) (*proc, error) {
	// The plugin creates its socket in a directory of its own, which kill
	// removes: go-plugin would leave it in $TMPDIR when the plugin crashes
	// or is killed (it removes a directory of its own only with a
	// RunnerFunc, not with Cmd).
	sockDir, err := os.MkdirTemp("", "tributary-plugin-")
	if err != nil {
		return nil, fmt.Errorf("plugins: start %s: socket directory: %w", argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = parentDeathAttr()
	// The environment is set here (SkipHostEnv) so that this directory wins
	// over one the worker's own environment may name.
	cmd.Env = append(os.Environ(), plugin.EnvUnixSocketDir+"="+sockDir)
	versioned := map[int]plugin.PluginSet{}
	for _, v := range h.cfg.ProtocolVersions {
		versioned[v] = plugin.PluginSet{pluginpb.PluginName: grpcClientPlugin{}}
	}
	tail := &logTail{}
	p := &proc{cmd: cmd, stderr: newLogWriter(logs, "stderr", tail), events: &hclogSink{}, sockDir: sockDir}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  uint(h.cfg.ProtocolVersions[0]),
			MagicCookieKey:   pluginpb.MagicCookieKey,
			MagicCookieValue: pluginpb.MagicCookieValue,
		},
		VersionedPlugins: versioned,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(pluginpb.MaxMessageSize), grpc.MaxCallSendMsgSize(pluginpb.MaxMessageSize)),
			grpc.WithInitialWindowSize(pluginpb.WindowSize), grpc.WithInitialConnWindowSize(pluginpb.WindowSize),
			grpc.WithWriteBufferSize(pluginpb.BufferSize), grpc.WithReadBufferSize(pluginpb.BufferSize),
		},
		Logger:       hclog.New(&hclog.LoggerOptions{Output: p.events, JSONFormat: true, Level: hclog.Info}),
		Stderr:       p.stderr,
		SyncStdout:   newLogWriter(logs, "stdout", tail),
		SyncStderr:   newLogWriter(logs, "stderr", tail),
		SkipHostEnv:  true,
		StartTimeout: h.cfg.StartTimeout,
	})
	type result struct {
		rpc pluginpb.PluginClient
		err error
	}
	done := make(chan result, 1)
	go func() {
		cp, err := p.client.Client()
		if err != nil {
			done <- result{nil, err}
			return
		}
		raw, err := cp.Dispense(pluginpb.PluginName)
		if err != nil {
			done <- result{nil, err}
			return
		}
		rpc, ok := raw.(pluginpb.PluginClient)
		if !ok {
			done <- result{nil, fmt.Errorf("dispensed %T", raw)}
			return
		}
		done <- result{rpc, nil}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			p.stderr.waitQuiet(20*time.Millisecond, time.Second)
			p.kill()
			return nil, p.wrap(fmt.Errorf("plugins: start %s: %w", strings.Join(argv, " "), r.err))
		}
		p.rpc = r.rpc
		p.version = p.client.NegotiatedVersion()
		return p, nil
	case <-ctx.Done():
		p.kill()
		<-done
		return nil, fmt.Errorf("plugins: start %s: %w", argv[0], ctx.Err())
	}
}

// plainError turns the error a plugin returned through gRPC into its own
// message, without gRPC's "rpc error: code = Unknown desc =" (a panic in a
// connector's Validate is the connector's message, not a transport's).
// Transport errors (the plugin gone, a deadline) are left as they are.
func plainError(err error) error {
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unknown {
		return errors.New(s.Message())
	}
	return err
}

// killGrace bounds how long kill waits for a plugin to exit before it
// kills the plugin's process group: a process the plugin started that keeps
// its stdout or stderr open would otherwise hold the wait for as long as it
// lives (an executable in plugin.path that is no plugin, say a script that
// runs a server).
const killGrace = 5 * time.Second

// outputGrace bounds how long kill waits after the group kill. go-plugin's
// Kill returns only once the plugin's stdout and stderr are closed: a
// process outside the plugin's group (one that called setsid) that keeps
// them open holds it for as long as it lives, which must not hang the
// worker.
const outputGrace = 3 * time.Second

// kill stops the plugin: gracefully, else by killing it and its process
// group. It returns within killGrace and outputGrace; past them it leaves
// go-plugin's Kill behind (a goroutine, until the output is closed) with
// the plugin itself killed.
func (p *proc) kill() {
	defer func() {
		if p.sockDir != "" {
			_ = os.RemoveAll(p.sockDir)
		}
	}()
	done := make(chan struct{})
	go func() { defer close(done); p.client.Kill() }()
	select {
	case <-done:
		return
	case <-time.After(killGrace):
	}
	// Through go-plugin's lock: a start that timed out may still be
	// running, and it sets p.cmd.Process.
	pid, _ := strconv.Atoi(p.client.ID())
	if pid > 0 {
		killGroup(pid)
	}
	select {
	case <-done:
		return
	case <-time.After(outputGrace):
	}
	if pid > 0 {
		_ = p.cmd.Process.Kill()
	}
	p.stderr.logs.conn.Error("plugin killed, but its output is held open by a process outside its process group: not waiting for it (a process the plugin started left its group; it keeps running)",
		"path", p.cmd.Path, "pid", pid)
}

// pid returns the plugin's process id, or 0, once launch returned p.
func (p *proc) pid() int {
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Bounds of the failure wrap makes of a process's end: its message (the
// line of the output it quotes is bounded apart) and its trace. Both go
// into a status record.
const (
	maxMessageBytes = 2 << 10
	maxQuotedBytes  = 512
	maxTraceBytes   = 64 << 10
)

// wrap adds the process's exit status and the tail of its output to err:
// a *sdk.TaskError whose trace is the message, then the end of the tail
// (at most maxTraceBytes in all).
func (p *proc) wrap(err error) error {
	tail := p.stderr.Tail()
	if st := p.events.exitStatus(); st != "" {
		err = fmt.Errorf("%w (plugin process exited: %s)", err, st)
	}
	if tail != "" {
		msg := cutLine(err.Error(), maxMessageBytes)
		if l := panicLine(tail); l != "" {
			msg += ": " + cutLine(l, maxQuotedBytes)
		}
		// The trace leads with the message, as a Java trace leads with its
		// exception: the tail may be any log line the plugin wrote last.
		return &sdk.TaskError{Message: msg, Trace: msg + "\n\n" + lastLines(tail, maxTraceBytes-len(msg)-2)}
	}
	return err
}

// lastLines returns the end of s, at most n bytes: the whole lines that
// fit, or the end of the last one.
func lastLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	whole := s[len(s)-n-1] == '\n'
	s = s[len(s)-n:]
	if whole {
		return s
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// dumpAndKill asks a hung plugin for its goroutine stacks (SIGQUIT makes a
// Go program print them and exit) and kills it.
func (p *proc) dumpAndKill() {
	if p.cmd.Process != nil && !p.client.Exited() {
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		deadline := time.Now().Add(2 * time.Second)
		for !p.client.Exited() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		p.stderr.waitQuiet(20*time.Millisecond, time.Second)
	}
	p.kill()
}

// panicLine returns the "panic: …" or "fatal error: …" line of a Go crash
// in s, or the last line of s that is not JSON, or "".
func panicLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return l
		}
	}
	if l := strings.TrimSpace(lines[len(lines)-1]); !strings.HasPrefix(l, "{") {
		return l
	}
	return ""
}

// hclogSink receives go-plugin's own log (JSON) and keeps the exit status
// it reports.
type hclogSink struct {
	mu     sync.Mutex
	status string
}

func (s *hclogSink) Write(b []byte) (int, error) {
	for _, line := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["@message"] != "plugin process exited" {
			continue
		}
		s.mu.Lock()
		if e, ok := m["error"].(string); ok {
			s.status = e
		} else {
			s.status = "exit status 0"
		}
		s.mu.Unlock()
	}
	return len(b), nil
}

func (s *hclogSink) exitStatus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}
