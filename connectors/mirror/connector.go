package mirror

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tributary-dev/tributary/sdk"
)

// version is Tributary's (worker.Version), as every first-party connector
// reports it.
const version = "4.4.0-tributary"

// Class names of the connectors, Kafka's.
const (
	SourceClass     = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	CheckpointClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	HeartbeatClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
)

// Connectors returns the three MirrorMaker 2 connectors.
func Connectors() []sdk.Connector {
	return []sdk.Connector{SourceConnector(), CheckpointConnector(), HeartbeatConnector()}
}

// instance is the part of a connector that runs: its Run loop and
// TaskConfigs, with the raw configuration (the client prefixes are not
// fields of the config struct).
type instance interface {
	taskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error)
	run(ctx context.Context, cc sdk.ConnectorContext) error
	close()
}

// connector wraps an sdk.SourceConnector (which gives the spec and the
// validation of the typed keys) with the raw configuration its instances
// and tasks need.
type connector[C any] struct {
	sdk.SourceConnector[C]
	newInstance func(cfg C, raw map[string]string, name string) (instance, error)
	newTask     func(cfg C, raw map[string]string) (sdk.SourceTask, error)
	eos         func(raw map[string]string) sdk.ExactlyOnceSupport
}

// Start implements sdk.Connector.
func (c connector[C]) Start(ctx context.Context, config map[string]string, cc sdk.ConnectorContext) (sdk.RunningConnector, error) {
	cfg, err := sdk.ParseConfig[C](config)
	if err != nil {
		return nil, err
	}
	if v, ok := any(&cfg).(sdk.Validator); ok {
		if errs := v.Validate(); len(errs) > 0 {
			return nil, errors.Join(asErrors(errs)...)
		}
	}
	if err := refuseTransforms(config); err != nil {
		return nil, err
	}
	inst, err := c.newInstance(cfg, config, config["name"])
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &running{inst: inst, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		err := sdk.SafeCall(func() error { return inst.run(runCtx, cc) })
		if err != nil && runCtx.Err() == nil {
			cc.RaiseError(err)
		}
	}()
	return r, nil
}

// NewSourceTask implements sdk.SourcePlugin.
func (c connector[C]) NewSourceTask(config map[string]string) (sdk.SourceTask, error) {
	cfg, err := sdk.ParseConfig[C](config)
	if err != nil {
		return nil, err
	}
	if err := refuseTransforms(config); err != nil {
		return nil, err
	}
	return c.newTask(cfg, config)
}

// ExactlyOnceSupport implements sdk.ExactlyOnceDeclarer.
func (c connector[C]) ExactlyOnceSupport(_ context.Context, config map[string]string) (sdk.ExactlyOnceSupport, error) {
	if c.eos == nil {
		return sdk.ExactlyOnceSupported, nil
	}
	return c.eos(config), nil
}

// CanDefineTransactionBoundaries implements sdk.ExactlyOnceDeclarer.
func (c connector[C]) CanDefineTransactionBoundaries(context.Context, map[string]string) (bool, error) {
	return false, nil
}

func asErrors(fes []sdk.FieldError) []error {
	out := make([]error, len(fes))
	for i, fe := range fes {
		out[i] = fe
	}
	return out
}

// refuseTransforms refuses transformations and errors.tolerance=all: a
// record an SMT drops or reroutes, or one skipped on error, breaks the upstream-to-downstream offset mapping the offset
// syncs are made of, and a consumer failing over could skip records.
func refuseTransforms(config map[string]string) error {
	if strings.TrimSpace(config["transforms"]) != "" {
		return errors.New("mirror connectors copy records byte for byte and do not take transforms (remove the transforms key): a dropped or rerouted record would make the offset syncs wrong")
	}
	if strings.TrimSpace(config["errors.tolerance"]) == "all" {
		return errors.New("mirror connectors do not take errors.tolerance=all: a record skipped on error would make the offset syncs wrong")
	}
	return nil
}

type running struct {
	inst   instance
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func (r *running) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	var out []map[string]string
	err := sdk.SafeCall(func() error {
		var err error
		out, err = r.inst.taskConfigs(ctx, maxTasks)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(out) > maxTasks {
		return nil, fmt.Errorf("mirror: %d task configs for tasks.max=%d", len(out), maxTasks)
	}
	return out, nil
}

func (r *running) Stop(ctx context.Context) error {
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return fmt.Errorf("mirror: connector did not stop: %w", ctx.Err())
	}
	r.once.Do(r.inst.close)
	return nil
}

// taskConfig is the connector's raw config plus the task's keys.
func taskConfig(raw map[string]string, extra map[string]string) map[string]string {
	m := copyMap(raw)
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// offsetOf reads an integer offset field of a partition or offset map
// (JSON numbers arrive as float64 or json.Number).
func intField(m map[string]any, k string) (int64, bool) {
	return sdk.Offset(m).Int64(k)
}

// validateOffsetShapes checks offsets given through the REST API, as
// Kafka's MirrorUtils.validateSourcePartitionString and
// validateSourceOffset do: the partition keys, and for checkpoints and
// heartbeats only offset 0.
func validateOffsetShapes(offsets []sdk.SourceOffset, keys []string, intKey string, zeroOnly bool) error {
	for _, o := range offsets {
		for _, k := range keys {
			v, ok := o.Partition[k]
			if !ok {
				return kafkaError(fmt.Sprintf("Partition must contain '%s'", k))
			}
			if k == intKey {
				if _, ok := intField(o.Partition, k); !ok {
					return kafkaError(fmt.Sprintf("Failed to parse %s from partition %v", k, o.Partition))
				}
			} else if s, ok := v.(string); !ok || s == "" {
				return kafkaError(fmt.Sprintf("Partition must contain a non-empty string '%s'", k))
			}
		}
		if o.Offset == nil {
			continue
		}
		n, ok := intField(o.Offset, "offset")
		if !ok {
			return kafkaError(fmt.Sprintf("Offset must contain an integer 'offset', got %v", o.Offset))
		}
		if zeroOnly && n != 0 {
			return kafkaError(fmt.Sprintf("Offset must be 0, got %d", n))
		}
		if n < 0 {
			return kafkaError(fmt.Sprintf("Offset must not be negative, got %d", n))
		}
	}
	return nil
}

// kafkaError is an error with Kafka's own (capitalised) message.
type kafkaError string

func (e kafkaError) Error() string { return string(e) }
