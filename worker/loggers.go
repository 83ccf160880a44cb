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

func (d *driver) Loggers(ctx context.Context) (map[string]LoggerLevel, error) {
	all := d.loggers.Levels()
	out := make(map[string]LoggerLevel, len(all))
	for n, l := range all {
		out[n] = LoggerLevel{Level: l.Level, LastModified: l.LastModified}
	}
	return out, nil
}

func (d *driver) Logger(ctx context.Context, name string) (LoggerLevel, error) {
	l, ok := d.loggers.Level(name)
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
func (d *driver) SetLogLevel(ctx context.Context, name, level, scope string) ([]string, error) {
	if _, ok := loglevel.ParseLevel(level); !ok {
		return nil, Errorf(KindNotFound, "invalid log level '%s'.", level)
	}
	lvl := strings.ToUpper(strings.TrimSpace(level))
	if scope == "cluster" {
		if err := d.backendsReady(); err != nil {
			return nil, err
		}
		return nil, d.configs.PutLoggerLevel(ctx, name, lvl)
	}
	changed, err := d.loggers.SetLevel(name, lvl)
	if err != nil {
		return nil, Errorf(KindNotFound, "invalid log level '%s'.", level)
	}
	d.logger.Info("log level set", "namespace", name, "level", lvl, "loggers", changed)
	return changed, nil
}
