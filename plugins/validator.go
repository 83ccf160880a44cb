package plugins

import (
	"context"
	"strings"
)

// validator returns a plugin process of pi's command to validate a config
// with, and the function to call when done. Validation is stateless, so
// the Validate calls that run at the same time share one process (a burst
// of connector creates would otherwise start a process per request); the
// last one to finish stops it. With IsolationPlugin that process is the
// plugin's, which its running connectors already keep up: a create then
// starts no process at all.
func (h *Host) validator(ctx context.Context, pi PluginInfo) (*proc, func(), error) {
	var ref *procRef
	var err error
	if h.cfg.Isolation == IsolationConnector {
		ref, err = h.acquireKey(ctx, "\x00validate\x00"+strings.Join(pi.Command, "\x00"), pi.Command, h.pluginLogs(pi.Spec.Class, "plugin", pi.Spec.Class), nil)
	} else {
		ref, err = h.acquirePlugin(ctx, pi.Command, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	return ref.p, ref.release, nil
}
