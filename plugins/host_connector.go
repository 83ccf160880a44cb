package plugins

import (
	"context"
	"fmt"
	"sync"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

type hostConnector struct {
	taskProc
	stream  pluginpb.Plugin_RunConnectorClient
	sendMu  sync.Mutex
	configs chan *pluginpb.TaskConfigs
	events  chan ConnectorEvent
	callMu  sync.Mutex
}

func (c *hostConnector) send(m *pluginpb.ConnectorHostMessage) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.Send(m)
}

// StartConnector implements Loader.
func (h *Host) StartConnector(ctx context.Context, class, name string, config map[string]string) (Connector, error) {
	pi, err := h.find(class)
	if err != nil {
		return nil, err
	}
	c := &hostConnector{configs: make(chan *pluginpb.TaskConfigs, 1), events: make(chan ConnectorEvent, 16)}
	sctx, err := c.open(ctx, h, pi.Spec.Class, name, pi.Command, h.cfg.Logger.With("connector", name), "connector "+name)
	if err != nil {
		return nil, err
	}
	if c.stream, err = c.p.rpc.RunConnector(sctx); err != nil {
		return nil, c.abandon(c.p.wrap(fmt.Errorf("plugins: %s: open stream: %w", c.what, err)))
	}
	if err := c.send(&pluginpb.ConnectorHostMessage{Msg: &pluginpb.ConnectorHostMessage_Start{Start: &pluginpb.ConnectorStart{
		Class: pi.Spec.Class, Connector: name, Config: config}}}); err != nil {
		return nil, c.abandon(c.p.wrap(fmt.Errorf("plugins: %s: start: %w", c.what, err)))
	}
	go c.recvLoop()
	if err := c.awaitStart(ctx, nil); err != nil {
		return nil, err
	}
	c.watchMetrics(sctx, name, -1)
	return c, nil
}

func (c *hostConnector) recvLoop() {
	defer close(c.done)
	defer close(c.events)
	emit := func(e ConnectorEvent) {
		select {
		case c.events <- e:
		default:
			c.logger.Warn("connector event dropped: nobody reads Events", "reconfigure", e.Reconfigure, "error", e.Err)
		}
	}
	for {
		m, err := c.stream.Recv()
		if err != nil {
			if c.ended() {
				c.reportStart(c.terminal())
				return
			}
			select {
			case <-c.stopCh:
				c.markStopped(nil)
				c.reportStart(ErrStopped)
			default:
				e := c.crashed(err)
				c.fail(e)
				c.reportStart(e)
				emit(ConnectorEvent{Err: e})
			}
			return
		}
		switch x := m.GetMsg().(type) {
		case *pluginpb.ConnectorPluginMessage_Started:
			c.reportStart(nil)
		case *pluginpb.ConnectorPluginMessage_TaskConfigs:
			c.configs <- x.TaskConfigs
		case *pluginpb.ConnectorPluginMessage_Reconfigure:
			emit(ConnectorEvent{Reconfigure: true})
		case *pluginpb.ConnectorPluginMessage_Failure:
			e := taskError(x.Failure)
			if !c.isStarted {
				c.fail(e)
				c.reportStart(e)
				continue
			}
			emit(ConnectorEvent{Err: e})
		case *pluginpb.ConnectorPluginMessage_Stopped:
			var closeErr error
			if f := x.Stopped.GetError(); f != nil {
				closeErr = taskError(f)
			}
			c.markStopped(closeErr)
		}
	}
}

func (c *hostConnector) Events() <-chan ConnectorEvent { return c.events }

func (c *hostConnector) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if err := c.send(&pluginpb.ConnectorHostMessage{Msg: &pluginpb.ConnectorHostMessage_TaskConfigs{
		TaskConfigs: &pluginpb.TaskConfigsRequest{MaxTasks: int32(maxTasks)}}}); err != nil {
		return nil, fmt.Errorf("plugins: %s: task configs: %w", c.what, err)
	}
	select {
	case r := <-c.configs:
		if f := r.GetError(); f != nil {
			return nil, taskError(f)
		}
		out := make([]map[string]string, len(r.GetConfigs()))
		for i, tc := range r.GetConfigs() {
			out[i] = tc.GetValues()
			if out[i] == nil {
				out[i] = map[string]string{}
			}
		}
		return out, nil
	case <-c.done:
		return nil, c.terminal()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *hostConnector) Stop(ctx context.Context) error {
	return c.stop(ctx, func() error {
		return c.send(&pluginpb.ConnectorHostMessage{Msg: &pluginpb.ConnectorHostMessage_Stop{Stop: &pluginpb.Stop{}}})
	}, nil)
}
