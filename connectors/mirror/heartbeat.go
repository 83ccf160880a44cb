package mirror

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// HeartbeatConnector returns MirrorHeartbeatConnector: one task writing a
// heartbeat to the topic heartbeats of the target every
// emit.heartbeats.interval.seconds. MirrorSourceConnector copies it on to
// other clusters, which shows the flow works end to end.
func HeartbeatConnector() sdk.Connector {
	base := sdk.SourceConnector[HeartbeatConfig]{
		Class: HeartbeatClass, Version: version,
		Doc: "Emit heartbeats to the target cluster (MirrorMaker 2).",
		AlterOffsets: func(_ context.Context, _ HeartbeatConfig, offs []sdk.SourceOffset) error {
			return validateOffsetShapes(offs, []string{"sourceClusterAlias", "targetClusterAlias"}, "", true)
		},
	}
	return connector[HeartbeatConfig]{
		SourceConnector: base,
		newInstance: func(cfg HeartbeatConfig, raw map[string]string, name string) (instance, error) {
			h := &heartbeatInstance{cfg: cfg, raw: raw}
			h.clients = clients{cfg: &h.cfg.CommonConfig, raw: raw, name: name}
			var err error
			if h.target, err = h.clients.admin("target", "target-admin"); err != nil {
				return nil, err
			}
			return h, nil
		},
		newTask: func(cfg HeartbeatConfig, _ map[string]string) (sdk.SourceTask, error) {
			return &heartbeatTask{cfg: cfg}, nil
		},
	}
}

type heartbeatInstance struct {
	cfg     HeartbeatConfig
	raw     map[string]string
	clients clients
	target  *kadm.Client
}

func (h *heartbeatInstance) close() { h.clients.close() }

func (h *heartbeatInstance) taskConfigs(_ context.Context, maxTasks int) ([]map[string]string, error) {
	if !h.cfg.Enabled || !h.cfg.EmitHeartbeats || h.cfg.EmitHeartbeatsSec < 0 || maxTasks < 1 {
		return nil, nil
	}
	return []map[string]string{taskConfig(h.raw, map[string]string{"task.index": "0"})}, nil
}

func (h *heartbeatInstance) run(ctx context.Context, cc sdk.ConnectorContext) error {
	if h.cfg.Enabled && h.cfg.EmitHeartbeats {
		actx, cancel := context.WithTimeout(ctx, h.cfg.adminTimeout())
		if err := createCompactedTopic(actx, h.target, HeartbeatsTopic, h.cfg.HeartbeatsRF, cc.Logger()); err != nil && ctx.Err() == nil {
			cc.Logger().Warn("heartbeats topic", "error", err)
		}
		cancel()
	}
	<-ctx.Done()
	return nil
}

type heartbeatTask struct {
	cfg    HeartbeatConfig
	next   time.Time
	logger *slog.Logger
}

func (t *heartbeatTask) Open(_ context.Context, tc sdk.SourceTaskContext) error {
	t.logger = tc.Logger()
	t.next = time.Now()
	return nil
}

func (t *heartbeatTask) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	select {
	case <-ctx.Done():
		return nil, nil
	case <-time.After(time.Until(t.next)):
	}
	now := time.Now()
	t.next = now.Add(max(time.Duration(t.cfg.EmitHeartbeatsSec)*time.Second, 10*time.Millisecond))
	hb := Heartbeat{Source: t.cfg.SourceAlias, Target: t.cfg.TargetAlias, Timestamp: now.UnixMilli()}
	zero := int32(0)
	return []sdk.SourceRecord{{
		Partition: sdk.Partition{"sourceClusterAlias": hb.Source, "targetClusterAlias": hb.Target},
		Offset:    sdk.Offset{"offset": int64(0)},
		Topic:     HeartbeatsTopic, KafkaPartition: &zero,
		KeySchema: schema.Bytes, Key: hb.Key(),
		ValueSchema: schema.Bytes, Value: hb.Value(),
		Timestamp: time.UnixMilli(hb.Timestamp),
	}}, nil
}

func (t *heartbeatTask) Close(context.Context) error { return nil }
