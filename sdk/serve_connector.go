package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

type connectorContext struct {
	logger  *slog.Logger
	send    func(*pluginpb.ConnectorPluginMessage) error
	metrics *Metrics
}

func (c *connectorContext) Logger() *slog.Logger { return c.logger }

// Metrics is the connector's registry (MetricsOf).
func (c *connectorContext) Metrics() *Metrics { return c.metrics }

func (c *connectorContext) RequestTaskReconfiguration() {
	if err := c.send(&pluginpb.ConnectorPluginMessage{Msg: &pluginpb.ConnectorPluginMessage_Reconfigure{Reconfigure: &pluginpb.Reconfigure{}}}); err != nil {
		c.logger.Warn("reconfiguration request not sent", "error", err)
	}
}

func (c *connectorContext) RaiseError(err error) {
	if sendErr := c.send(&pluginpb.ConnectorPluginMessage{Msg: &pluginpb.ConnectorPluginMessage_Failure{Failure: failure(err)}}); sendErr != nil {
		c.logger.Warn("connector error not sent", "error", err, "send_error", sendErr)
	}
}

// RunConnector runs one connector instance for the life of the stream.
func (s *server) RunConnector(stream pluginpb.Plugin_RunConnectorServer) error {
	first, err := stream.Recv()
	if err != nil {
		return fmt.Errorf("sdk: connector: waiting for start: %w", err)
	}
	start := first.GetStart()
	if start == nil {
		return errors.New("sdk: connector: first message is not start")
	}
	var sendMu sync.Mutex
	send := func(m *pluginpb.ConnectorPluginMessage) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(m)
	}
	cc := &connectorContext{logger: s.logger.With("connector", start.GetConnector()), send: send, metrics: NewMetrics()}
	c, err := s.find(start.GetClass())
	if err != nil {
		cc.RaiseError(err)
		return nil
	}
	ctx := stream.Context()
	var rc RunningConnector
	if err := safeCall(func() error { rc, err = c.Start(ctx, start.GetConfig(), cc); return err }); err != nil {
		cc.RaiseError(err)
		return nil
	}
	stopMetrics := s.metrics.add(start.GetConnector(), -1, cc.metrics)
	defer stopMetrics()
	stop := func() error {
		stopMetrics() // watchers get the last values before the end
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return safeCall(func() error { return rc.Stop(sctx) })
	}
	if err := send(&pluginpb.ConnectorPluginMessage{Msg: &pluginpb.ConnectorPluginMessage_Started{Started: &pluginpb.Started{}}}); err != nil {
		_ = stop()
		return nil
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			_ = stop()
			return nil
		}
		switch x := m.GetMsg().(type) {
		case *pluginpb.ConnectorHostMessage_TaskConfigs:
			var cfgs []map[string]string
			resp := &pluginpb.TaskConfigs{}
			if err := safeCall(func() error {
				var err error
				cfgs, err = rc.TaskConfigs(ctx, int(x.TaskConfigs.GetMaxTasks()))
				return err
			}); err != nil {
				resp.Error = failure(err)
			}
			for _, c := range cfgs {
				resp.Configs = append(resp.Configs, &pluginpb.TaskConfig{Values: c})
			}
			if err := send(&pluginpb.ConnectorPluginMessage{Msg: &pluginpb.ConnectorPluginMessage_TaskConfigs{TaskConfigs: resp}}); err != nil {
				_ = stop()
				return nil
			}
		case *pluginpb.ConnectorHostMessage_Stop:
			stopped := &pluginpb.Stopped{}
			if err := stop(); err != nil {
				stopped.Error = failure(err)
			}
			return send(&pluginpb.ConnectorPluginMessage{Msg: &pluginpb.ConnectorPluginMessage_Stopped{Stopped: stopped}})
		}
	}
}
