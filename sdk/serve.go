package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// Version is the SDK version reported to hosts.
const Version = "0.1.0"

// protocolVersions are the plugin protocol versions this SDK speaks.
var protocolVersions = []int{pluginpb.ProtocolVersion}

// Serve serves the given connectors as a plugin process and never returns:
// call it from main and do nothing else there. Nothing may be written to
// stdout before Serve (stdout carries go-plugin's handshake); log with the
// Logger of the task or connector context, which writes JSON lines to stderr
// that the host re-emits in its own log with connector and task attributes.
// Once Serve runs, os.Stdout and os.Stderr both write to the real stderr:
// the host logs those lines too, and the last of them (up to 64 KiB) are
// the trace of a failure the process's end causes, so a line written just
// before os.Exit says why.
//
// The process exits when the host closes the connection, and also when the
// host dies without closing it (Serve watches its parent process).
func Serve(connectors ...Connector) {
	os.Exit(serveMain(os.Stderr, connectors))
}

// DefaultMemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// of a plugin process per running task (at least one) when neither
// GOMEMLIMIT nor GOGC is set in its environment: the tasks a host runs in
// one process (a connector's, or every connector's of the plugin on that
// worker) share it. With many idle tasks the limit is far above the heap
// and GOGC's default governs. A task's live heap is a few batches; without a limit
// the Go runtime lets a small process grow to twice its live heap plus what
// it has not yet returned to the OS. The limit is soft: a connector that
// needs more gets it, at the cost of more frequent collections.
const DefaultMemoryLimit = 32 << 20

// managesMemoryLimit reports whether the SDK sets the memory limit: not
// when the environment tunes the collector itself.
func managesMemoryLimit() bool {
	return os.Getenv("GOMEMLIMIT") == "" && os.Getenv("GOGC") == ""
}

// taskRunning counts a task in or out (delta ±1) and scales the memory
// limit with the number of running tasks.
func (s *server) taskRunning(delta int64) {
	n := s.tasks.Add(delta)
	if s.manageMemory {
		debug.SetMemoryLimit(DefaultMemoryLimit * max(1, n))
	}
}

func serveMain(stderr *os.File, connectors []Connector) int {
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := checkHostVersions(os.Getenv("PLUGIN_PROTOCOL_VERSIONS")); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	if os.Getenv(pluginpb.MagicCookieKey) != pluginpb.MagicCookieValue {
		fmt.Fprintln(stderr, "This binary is a Tributary connector plugin: it is started by a Tributary worker, found under plugin.path, not run by hand.")
		return 1
	}
	srv, err := newServer(logger, connectors)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	if srv.manageMemory = managesMemoryLimit(); srv.manageMemory {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watchParent(ctx, logger, os.Getppid(), 200*time.Millisecond)

	versioned := map[int]plugin.PluginSet{}
	for _, v := range protocolVersions {
		versioned[v] = plugin.PluginSet{pluginpb.PluginName: &grpcPlugin{srv: srv}}
	}
	stdio := &stdioRestorer{stderr: stderr}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  uint(pluginpb.ProtocolVersion),
			MagicCookieKey:   pluginpb.MagicCookieKey,
			MagicCookieValue: pluginpb.MagicCookieValue,
		},
		VersionedPlugins: versioned,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(pluginpb.MaxMessageSize), grpc.MaxSendMsgSize(pluginpb.MaxMessageSize),
				grpc.InitialWindowSize(pluginpb.WindowSize), grpc.InitialConnWindowSize(pluginpb.WindowSize),
				grpc.WriteBufferSize(pluginpb.BufferSize), grpc.ReadBufferSize(pluginpb.BufferSize),
				grpc.ForceServerCodecV2(srv.codec),
				grpc.ChainUnaryInterceptor(stdio.unary), grpc.ChainStreamInterceptor(stdio.stream))
			return grpc.NewServer(opts...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{Output: stderr, JSONFormat: true, Level: hclog.Warn}),
	})
	return 0
}

// stdioRestorer points os.Stdout and os.Stderr back at the real stderr
// (fd 2) at the first call the gRPC server receives. go-plugin's Serve
// replaces them with pipes that it forwards to the host through the
// connection: what a plugin writes there just before it exits is lost with
// the process, while what reaches fd 2 is read by the host to the end.
// Stdout goes to stderr too: the real stdout carries the handshake, and the
// host discards what follows it. Serve swaps them after it built the gRPC
// server and before it starts serving, so the first call (whichever of
// go-plugin's own or the plugin protocol's) comes after the swap; the Once
// orders the calls' goroutines after the restore. What is written between
// the two is forwarded through the connection, which the host logs too.
type stdioRestorer struct {
	stderr *os.File
	once   sync.Once
}

func (r *stdioRestorer) restore() {
	r.once.Do(func() {
		os.Stdout = r.stderr
		os.Stderr = r.stderr
	})
}

func (r *stdioRestorer) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	r.restore()
	return handler(ctx, req)
}

func (r *stdioRestorer) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	r.restore()
	return handler(srv, ss)
}

// checkHostVersions refuses to serve a host that speaks none of our
// protocol versions, with a message the host shows to the user.
func checkHostVersions(env string) error {
	if env == "" {
		return nil
	}
	var host []int
	for _, s := range strings.Split(env, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("tributary plugin: host sent invalid protocol versions %q", env)
		}
		host = append(host, v)
	}
	for _, v := range host {
		if slices.Contains(protocolVersions, v) {
			return nil
		}
	}
	return fmt.Errorf("tributary plugin: incompatible plugin protocol: the host speaks versions %v, this plugin (sdk %s) speaks %v; upgrade the older of the two", host, Version, protocolVersions)
}

// watchParent exits the process when the parent (the host) dies: go-plugin
// does not notice a host killed with SIGKILL until it writes to a closed
// pipe, so an idle plugin would be orphaned.
func watchParent(ctx context.Context, logger *slog.Logger, ppid int, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != ppid {
				logger.Warn("host process is gone; plugin exiting", "host_pid", ppid)
				os.Exit(3)
			}
		}
	}
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv *server
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterPluginServer(s, p.srv)
	return nil
}

func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("sdk: the plugin side has no client")
}

// server implements the plugin protocol over a set of connectors.
type server struct {
	pluginpb.UnimplementedPluginServer
	logger     *slog.Logger
	connectors []Connector
	specs      []Spec

	codec *pluginpb.Codec // sends batches without copying them

	manageMemory bool         // set the memory limit per running task
	tasks        atomic.Int64 // running source and sink tasks

	metrics metricsRegistry // the running tasks' and connectors' own metrics
}

func newServer(logger *slog.Logger, connectors []Connector) (*server, error) {
	s := &server{logger: logger, connectors: connectors, codec: pluginpb.NewCodec()}
	for _, c := range connectors {
		var spec Spec
		if err := safeCall(func() error { spec = c.Spec(); return nil }); err != nil {
			return nil, fmt.Errorf("sdk: invalid connector: %w", err)
		}
		if spec.Class == "" {
			return nil, errors.New("sdk: a connector has no Class")
		}
		s.specs = append(s.specs, spec)
	}
	return s, nil
}

func (s *server) find(class string) (Connector, error) {
	for i := range s.specs {
		if s.specs[i].Matches(class) {
			return s.connectors[i], nil
		}
	}
	return nil, fmt.Errorf("sdk: this plugin has no connector %q", class)
}

func (s *server) Specify(context.Context, *pluginpb.SpecifyRequest) (*pluginpb.SpecifyResponse, error) {
	b, err := json.Marshal(s.specs)
	if err != nil {
		return nil, fmt.Errorf("sdk: encode specs: %w", err)
	}
	return &pluginpb.SpecifyResponse{SpecsJson: b, SdkVersion: Version}, nil
}

func (s *server) Validate(ctx context.Context, req *pluginpb.ValidateRequest) (*pluginpb.ValidateResponse, error) {
	c, err := s.find(req.GetClass())
	if err != nil {
		return nil, err
	}
	var infos ConfigInfos
	err = safeCall(func() error {
		var err error
		infos, err = c.Validate(ctx, req.GetConfig())
		return err
	})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(infos)
	if err != nil {
		return nil, fmt.Errorf("sdk: encode validation: %w", err)
	}
	resp := &pluginpb.ValidateResponse{ConfigInfosJson: b}
	if req.GetExactlyOnceSupport() || req.GetTransactionBoundaries() {
		resp.ExactlyOnce = exactlyOnceAnswer(ctx, c, req)
	}
	return resp, nil
}

// exactlyOnceAnswer asks c the exactly-once questions req asks.
func exactlyOnceAnswer(ctx context.Context, c Connector, req *pluginpb.ValidateRequest) *pluginpb.ExactlyOnceAnswer {
	a := &pluginpb.ExactlyOnceAnswer{}
	d, ok := c.(ExactlyOnceDeclarer)
	if !ok {
		return a // undeclared, no boundaries of its own
	}
	if req.GetExactlyOnceSupport() {
		var s ExactlyOnceSupport
		err := safeCall(func() error { var err error; s, err = d.ExactlyOnceSupport(ctx, req.GetConfig()); return err })
		switch {
		case err != nil:
			a.SupportError = failure(err)
		case s == ExactlyOnceSupported:
			a.Support = pluginpb.ExactlyOnceSupport_EXACTLY_ONCE_SUPPORTED
		case s == ExactlyOnceUnsupported:
			a.Support = pluginpb.ExactlyOnceSupport_EXACTLY_ONCE_UNSUPPORTED
		}
	}
	if req.GetTransactionBoundaries() {
		err := safeCall(func() error {
			var err error
			a.TransactionBoundaries, err = d.CanDefineTransactionBoundaries(ctx, req.GetConfig())
			return err
		})
		if err != nil {
			a.TransactionBoundariesError = failure(err)
		}
	}
	return a
}

// failure converts an error to the protocol's Failure.
// taskStream is what beginTask needs of a source or sink task's stream.
type taskStream[In interface{ GetStart() *pluginpb.TaskStart }, Out any] interface {
	Recv() (In, error)
	Send(Out) error
}

// startedTask is a task stream past its start message.
type startedTask[Out, T any] struct {
	start  *pluginpb.TaskStart
	info   TaskInfo
	logger *slog.Logger
	task   T
	send   func(Out) error   // serialized: the stream allows one sender
	fail   func(error) error // logs err and sends it as the task's Failure
}

// beginTask reads a task stream's start message, finds the connector and
// creates the task with newTask (kind, "source" or "sink", names it in
// errors). A nil result ends the stream with the returned error: the start
// did not arrive, or the failure to create the task was sent.
func beginTask[In interface{ GetStart() *pluginpb.TaskStart }, Out, T any](s *server, kind string,
	stream taskStream[In, Out], failureMsg func(*pluginpb.Failure) Out,
	newTask func(Connector, *pluginpb.TaskStart) (T, error)) (*startedTask[Out, T], error) {
	first, err := stream.Recv()
	if err != nil {
		return nil, fmt.Errorf("sdk: %s task: waiting for start: %w", kind, err)
	}
	start := first.GetStart()
	if start == nil {
		return nil, fmt.Errorf("sdk: %s task: first message is not start", kind)
	}
	t := &startedTask[Out, T]{start: start, info: TaskInfo{Connector: start.GetConnector(), Task: int(start.GetTask())}}
	t.logger = s.logger.With("connector", t.info.Connector, "task", t.info.Task)
	var sendMu sync.Mutex
	t.send = func(m Out) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(m)
	}
	t.fail = func(err error) error {
		t.logger.Error(kind+" task failed", "error", err)
		return t.send(failureMsg(failure(err)))
	}
	c, err := s.find(start.GetClass())
	if err == nil {
		err = safeCall(func() error { t.task, err = newTask(c, start); return err })
	}
	if err != nil {
		return nil, t.fail(err)
	}
	return t, nil
}

func failure(err error) *pluginpb.Failure {
	f := &pluginpb.Failure{Message: err.Error(), Trace: err.Error(), Retriable: IsRetriable(err)}
	var pe *PanicError
	if errors.As(err, &pe) {
		f.Trace = pe.Error() + "\n\n" + pe.Stack
	}
	return f
}
