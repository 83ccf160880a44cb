package worker

import (
	"context"
	"strings"

	"github.com/tributary-dev/tributary/internal/loglevel"
)

// The /admin/loggers endpoints. Loggers are named as in Kafka Connect:
// Tributary's by Go package (dev.tributary.worker, dev.tributary.worker.task,
// dev.tributary.plugins, …), a connector's by its class and its tasks' by
// their task class (org.apache.kafka.connect.file.FileStreamSourceTask);
// a level set on a name applies to every logger whose name starts with it.

func (h *herder) Loggers(ctx context.Context) (map[string]LoggerLevel, error) {
	all := h.loggers.Levels()
	out := make(map[string]LoggerLevel, len(all))
	for n, l := range all {
		out[n] = LoggerLevel{Level: l.Level, LastModified: l.LastModified}
	}
	return out, nil
}

func (h *herder) Logger(ctx context.Context, name string) (LoggerLevel, error) {
	l, ok := h.loggers.Level(name)
	if !ok {
		// Kafka Connect answers 404 for a logger that does not exist yet
		// (Log4j makes loggers on first use, as here).
		return LoggerLevel{}, Errorf(KindNotFound, "Logger %s not found.", name)
	}
	return LoggerLevel{Level: l.Level, LastModified: l.LastModified}, nil
}

// SetLogLevel sets the level of name and of every logger under it: on this
// worker (scope worker), returning the loggers it changed; or, scope
// cluster, on every worker of the group through the config topic, as Kafka
// Connect does (the answer has no list then).
func (h *herder) SetLogLevel(ctx context.Context, name, level, scope string) ([]string, error) {
	if _, ok := loglevel.ParseLevel(level); !ok {
		return nil, Errorf(KindNotFound, "invalid log level '%s'.", level)
	}
	lvl := strings.ToUpper(strings.TrimSpace(level))
	if scope == "cluster" {
		return nil, h.do(ctx, func(ctx context.Context) error { return h.configs.PutLoggerLevel(ctx, name, lvl) })
	}
	changed, err := h.loggers.SetLevel(name, lvl)
	if err != nil {
		return nil, Errorf(KindNotFound, "invalid log level '%s'.", level)
	}
	h.logger.Info("log level set", "namespace", name, "level", lvl, "loggers", changed)
	return changed, nil
}
