package sdk

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// ConnectorType is "source" or "sink".
type ConnectorType string

// Connector types.
const (
	Source ConnectorType = "source"
	Sink   ConnectorType = "sink"
)

// Spec describes a connector plugin: what GET /connector-plugins lists and
// what GET /connector-plugins/{p}/config returns (Config).
type Spec struct {
	Class   string          `json:"class"`
	Aliases []string        `json:"aliases,omitempty"`
	Type    ConnectorType   `json:"type"`
	Version string          `json:"version,omitempty"`
	Doc     string          `json:"doc,omitempty"`
	Config  []ConfigKeyInfo `json:"config"`
}

// Matches reports whether name is the class or one of its aliases.
func (s *Spec) Matches(name string) bool {
	if name == s.Class {
		return true
	}
	for _, a := range s.Aliases {
		if a == name {
			return true
		}
	}
	return false
}

// Connector is what runtimes (sdk.Serve and the host's in-process loader)
// drive. Build one with SourceConnector or SinkConnector; its methods are
// not meant to be called by connector authors.
type Connector interface {
	Spec() Spec
	// Validate returns the per-key validation of config. The error is for
	// failures that belong to no key (a Check that could not run).
	Validate(ctx context.Context, config map[string]string) (ConfigInfos, error)
	// Start starts a connector instance.
	Start(ctx context.Context, config map[string]string, cc ConnectorContext) (RunningConnector, error)
}

// RunningConnector is a started connector instance.
type RunningConnector interface {
	TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error)
	Stop(ctx context.Context) error
}

// SourcePlugin is a Connector that makes source tasks.
type SourcePlugin interface {
	Connector
	NewSourceTask(config map[string]string) (SourceTask, error)
}

// SinkPlugin is a Connector that makes sink tasks.
type SinkPlugin interface {
	Connector
	NewSinkTask(config map[string]string) (SinkTask, error)
}

// connectorFuncs is the part shared by source and sink connectors.
type connectorFuncs[C any] struct {
	class, version, doc string
	aliases             []string
	typ                 ConnectorType
	taskConfigs         func(ctx context.Context, cfg C, maxTasks int) ([]C, error)
	check               func(ctx context.Context, cfg C) error
	run                 func(ctx context.Context, cfg C, cc ConnectorContext) error
	// alter asks the connector's AlterOffsets hook about change; nil when
	// the connector has none.
	alter func(ctx context.Context, cfg C, change OffsetChange) error
}

// SourceConnector defines a source connector whose configuration is the
// tagged struct C (see the package documentation for the tags). Only Class,
// Version and NewTask are required.
type SourceConnector[C any] struct {
	// Class is the name users put in connector.class, e.g.
	// "com.example.TickerSourceConnector". The simple name and the simple
	// name without a "Connector" suffix are added as aliases, as Kafka
	// Connect does.
	Class   string
	Aliases []string
	Version string
	Doc     string
	// NewTask makes a task from its parsed configuration.
	NewTask func(cfg C) SourceTask
	// TaskConfigs splits the work into at most maxTasks task
	// configurations. Default: one task with the connector's configuration.
	TaskConfigs func(ctx context.Context, cfg C, maxTasks int) ([]C, error)
	// Check, if set, runs at validation once every key is valid, e.g. to
	// try a connection. Return FieldErrors to attach errors to keys.
	Check func(ctx context.Context, cfg C) error
	// Run, if set, runs for the connector's lifetime (ctx is cancelled on
	// stop), e.g. to watch the source for new tables and call
	// cc.RequestTaskReconfiguration. A non-nil error other than ctx's
	// fails the connector.
	Run func(ctx context.Context, cfg C, cc ConnectorContext) error
	// AlterOffsets, if set, decides on changes to the offsets of a stopped
	// instance made through the REST API (PATCH and DELETE
	// /connectors/{name}/offsets) before anything is written: Kafka
	// Connect's SourceConnector.alterOffsets. cfg is the instance's stored
	// configuration; offsets holds the new offset of each partition, a nil
	// Offset for a partition being reset (a DELETE resets them all). Integral
	// numbers arrive as int64, others as float64, as Kafka Connect's
	// JsonConverter reads them. Return nil to accept the change, an error to
	// refuse it (its message is the API's answer, nothing is written), or
	// ErrOffsetsUnsupported if no change may ever be made. Without the hook
	// every change is written, and the answer warns that offsets the
	// connector keeps outside Kafka are not changed.
	AlterOffsets func(ctx context.Context, cfg C, offsets []SourceOffset) error
	// ExactlyOnce, if set, says whether the connector delivers exactly once
	// with cfg (Kafka Connect's SourceConnector.exactlyOnceSupport,
	// KIP-618); the worker asks when exactly.once.support=required. Nil:
	// the connector does not say (ExactlyOnceUndeclared), and such a
	// connector cannot be created with exactly.once.support=required.
	ExactlyOnce func(cfg C) ExactlyOnceSupport
	// TransactionBoundaries, if set, says whether the connector's tasks
	// define their own transaction boundaries with cfg, through
	// TransactionContextOf (canDefineTransactionBoundaries); the worker
	// asks when transaction.boundary=connector. Nil: they do not.
	TransactionBoundaries func(cfg C) bool
}

// SinkConnector defines a sink connector; see SourceConnector.
type SinkConnector[C any] struct {
	Class       string
	Aliases     []string
	Version     string
	Doc         string
	NewTask     func(cfg C) SinkTask
	TaskConfigs func(ctx context.Context, cfg C, maxTasks int) ([]C, error)
	Check       func(ctx context.Context, cfg C) error
	Run         func(ctx context.Context, cfg C, cc ConnectorContext) error
	// AlterOffsets is SourceConnector.AlterOffsets for a sink (Kafka
	// Connect's SinkConnector.alterOffsets): offsets maps each partition to
	// its new committed offset (the next to consume), nil for a partition
	// being reset.
	AlterOffsets func(ctx context.Context, cfg C, offsets map[TopicPartition]*int64) error
}

func (c SourceConnector[C]) funcs() connectorFuncs[C] {
	f := connectorFuncs[C]{c.Class, c.Version, c.Doc, c.Aliases, Source, c.TaskConfigs, c.Check, c.Run, nil}
	if hook := c.AlterOffsets; hook != nil {
		f.alter = func(ctx context.Context, cfg C, ch OffsetChange) error { return hook(ctx, cfg, ch.Source) }
	}
	return f
}

func (c SinkConnector[C]) funcs() connectorFuncs[C] {
	f := connectorFuncs[C]{c.Class, c.Version, c.Doc, c.Aliases, Sink, c.TaskConfigs, c.Check, c.Run, nil}
	if hook := c.AlterOffsets; hook != nil {
		f.alter = func(ctx context.Context, cfg C, ch OffsetChange) error { return hook(ctx, cfg, ch.Sink) }
	}
	return f
}

// Spec implements Connector. It panics if C is not a valid config struct,
// which the first test of the connector reveals.
func (c SourceConnector[C]) Spec() Spec { return c.funcs().spec() }

// Validate implements Connector.
func (c SourceConnector[C]) Validate(ctx context.Context, config map[string]string) (ConfigInfos, error) {
	return c.funcs().validate(ctx, config)
}

// Start implements Connector.
func (c SourceConnector[C]) Start(ctx context.Context, config map[string]string, cc ConnectorContext) (RunningConnector, error) {
	return c.funcs().start(ctx, config, cc)
}

// ApproveOffsets implements OffsetApprover.
func (c SourceConnector[C]) ApproveOffsets(ctx context.Context, config map[string]string, change OffsetChange) (bool, error) {
	return c.funcs().approveOffsets(ctx, config, change)
}

// NewSourceTask implements SourcePlugin.
func (c SourceConnector[C]) NewSourceTask(config map[string]string) (SourceTask, error) {
	if c.NewTask == nil {
		return nil, fmt.Errorf("sdk: connector %s has no NewTask", c.Class)
	}
	cfg, err := ParseConfig[C](config)
	if err != nil {
		return nil, err
	}
	return c.NewTask(cfg), nil
}

// Spec implements Connector.
func (c SinkConnector[C]) Spec() Spec { return c.funcs().spec() }

// Validate implements Connector.
func (c SinkConnector[C]) Validate(ctx context.Context, config map[string]string) (ConfigInfos, error) {
	return c.funcs().validate(ctx, config)
}

// Start implements Connector.
func (c SinkConnector[C]) Start(ctx context.Context, config map[string]string, cc ConnectorContext) (RunningConnector, error) {
	return c.funcs().start(ctx, config, cc)
}

// ApproveOffsets implements OffsetApprover.
func (c SinkConnector[C]) ApproveOffsets(ctx context.Context, config map[string]string, change OffsetChange) (bool, error) {
	return c.funcs().approveOffsets(ctx, config, change)
}

// NewSinkTask implements SinkPlugin.
func (c SinkConnector[C]) NewSinkTask(config map[string]string) (SinkTask, error) {
	if c.NewTask == nil {
		return nil, fmt.Errorf("sdk: connector %s has no NewTask", c.Class)
	}
	cfg, err := ParseConfig[C](config)
	if err != nil {
		return nil, err
	}
	return c.NewTask(cfg), nil
}

func (f connectorFuncs[C]) def() *configDef {
	d, err := defineConfig(reflect.TypeFor[C]())
	if err != nil {
		panic(fmt.Sprintf("sdk: connector %s: %v", f.class, err))
	}
	return d
}

// DefaultAliases returns Kafka Connect's aliases of a class name: the simple
// name and, if it ends in "Connector", the simple name without it.
func DefaultAliases(class string) []string {
	simple := class[strings.LastIndex(class, ".")+1:]
	var out []string
	if simple != class {
		out = append(out, simple)
	}
	if s, ok := strings.CutSuffix(simple, "Connector"); ok && s != "" {
		out = append(out, s)
	}
	return out
}

func (f connectorFuncs[C]) spec() Spec {
	aliases := append([]string(nil), f.aliases...)
	for _, a := range DefaultAliases(f.class) {
		dup := false
		for _, b := range aliases {
			dup = dup || a == b
		}
		if !dup {
			aliases = append(aliases, a)
		}
	}
	return Spec{Class: f.class, Aliases: aliases, Type: f.typ, Version: f.version, Doc: f.doc, Config: f.def().keyInfos()}
}

func (f connectorFuncs[C]) validate(ctx context.Context, config map[string]string) (ConfigInfos, error) {
	d := f.def()
	var cfg C
	infos := d.parseInto(reflect.ValueOf(&cfg), config)
	if buildInfos(f.class, infos).ErrorCount == 0 {
		var errs []FieldError
		if v, ok := any(&cfg).(Validator); ok {
			errs = v.Validate()
		}
		if len(errs) == 0 && f.check != nil {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := safeCall(func() error { return f.check(cctx, cfg) })
			cancel()
			if err != nil {
				fes := fieldErrors(err)
				if fes == nil {
					return ConfigInfos{}, fmt.Errorf("sdk: %s check: %w", f.class, err)
				}
				errs = fes
			}
		}
		if un := addFieldErrors(infos, errs); len(un) > 0 {
			return ConfigInfos{}, fmt.Errorf("sdk: %s: errors for undefined keys: %v", f.class, un)
		}
	}
	return buildInfos(f.class, infos), nil
}

// fieldErrors extracts FieldErrors from err (possibly joined).
func fieldErrors(err error) []FieldError {
	var out []FieldError
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case FieldError:
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				walk(inner)
			}
		}
	}
	walk(err)
	return out
}

type runningConnector[C any] struct {
	f      connectorFuncs[C]
	def    *configDef
	cfg    C
	raw    map[string]string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (f connectorFuncs[C]) start(ctx context.Context, config map[string]string, cc ConnectorContext) (RunningConnector, error) {
	cfg, err := ParseConfig[C](config)
	if err != nil {
		return nil, err
	}
	rc := &runningConnector[C]{f: f, def: f.def(), cfg: cfg, raw: config}
	if f.run != nil {
		// The connector outlives the Start call: it is stopped by Stop.
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		rc.cancel = cancel
		rc.wg.Add(1)
		go func() {
			defer rc.wg.Done()
			err := safeCall(func() error { return f.run(runCtx, cfg, cc) })
			if err != nil && runCtx.Err() == nil {
				cc.RaiseError(err)
			}
		}()
	}
	return rc, nil
}

func (rc *runningConnector[C]) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	cfgs := []C{rc.cfg}
	if rc.f.taskConfigs != nil {
		err := safeCall(func() error {
			var err error
			cfgs, err = rc.f.taskConfigs(ctx, rc.cfg, maxTasks)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if len(cfgs) > maxTasks {
		return nil, fmt.Errorf("sdk: %s returned %d task configs for tasks.max=%d", rc.f.class, len(cfgs), maxTasks)
	}
	// A task config is the connector's raw config plus the keys the split
	// changed: like Kafka's connectors, which hand their raw properties to
	// their tasks, a key the split left alone keeps its raw value, and an
	// unset key with a default is not added.
	base := rc.def.format(reflect.ValueOf(rc.cfg))
	out := make([]map[string]string, len(cfgs))
	for i := range cfgs {
		m := make(map[string]string, len(rc.raw)+len(rc.def.fields))
		for k, v := range rc.raw {
			m[k] = v
		}
		for k, v := range rc.def.format(reflect.ValueOf(cfgs[i])) {
			if bv, ok := base[k]; ok && bv == v {
				continue
			}
			m[k] = v
		}
		out[i] = m
	}
	return out, nil
}

func (rc *runningConnector[C]) Stop(ctx context.Context) error {
	if rc.cancel != nil {
		rc.cancel()
	}
	done := make(chan struct{})
	go func() { rc.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sdk: connector %s did not stop: %w", rc.f.class, ctx.Err())
	}
}
