package worker

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// logLevels backs /admin/loggers. Tributary logs through one slog handler
// whose level is Root; named loggers are remembered so that GET lists what
// was set, as Kafka Connect's Log4j-backed endpoint does.
type logLevels struct {
	Root *slog.LevelVar

	mu     sync.Mutex
	levels map[string]LoggerLevel
}

func newLogLevels() *logLevels {
	l := &logLevels{Root: new(slog.LevelVar), levels: map[string]LoggerLevel{}}
	l.levels["root"] = LoggerLevel{Level: "INFO"}
	return l
}

// Kafka (Log4j) level names and their slog equivalents.
var log4jLevels = map[string]slog.Level{
	"TRACE": slog.LevelDebug - 4, "DEBUG": slog.LevelDebug, "INFO": slog.LevelInfo,
	"WARN": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": slog.LevelError + 4, "OFF": slog.LevelError + 8, "ALL": slog.LevelDebug - 8,
}

func (d *driver) Loggers(ctx context.Context) (map[string]LoggerLevel, error) {
	d.levels.mu.Lock()
	defer d.levels.mu.Unlock()
	out := make(map[string]LoggerLevel, len(d.levels.levels))
	for k, v := range d.levels.levels {
		out[k] = v
	}
	return out, nil
}

func (d *driver) Logger(ctx context.Context, name string) (LoggerLevel, error) {
	d.levels.mu.Lock()
	defer d.levels.mu.Unlock()
	if l, ok := d.levels.levels[name]; ok {
		return l, nil
	}
	// Kafka Connect answers 404 for a logger that does not exist yet (Log4j
	// creates loggers on first use; here they exist once a level is set).
	return LoggerLevel{}, Errorf(KindNotFound, "Logger %s not found.", name)
}

func (d *driver) SetLogLevel(ctx context.Context, name, level, scope string) ([]string, error) {
	lvl := strings.ToUpper(strings.TrimSpace(level))
	sl, ok := log4jLevels[lvl]
	if !ok {
		return nil, Errorf(KindNotFound, "invalid log level '%s'.", level)
	}
	now := time.Now().UnixMilli()
	d.levels.mu.Lock()
	defer d.levels.mu.Unlock()
	var affected []string
	for n := range d.levels.levels {
		if n == name || strings.HasPrefix(n, name+".") || name == "root" {
			affected = append(affected, n)
		}
	}
	if _, ok := d.levels.levels[name]; !ok {
		affected = append(affected, name)
	}
	for _, n := range affected {
		d.levels.levels[n] = LoggerLevel{Level: lvl, LastModified: &now}
	}
	// Tributary's own logs follow the most verbose level set anywhere.
	minLvl := sl
	for _, l := range d.levels.levels {
		if v, ok := log4jLevels[l.Level]; ok && v < minLvl {
			minLvl = v
		}
	}
	d.levels.Root.Set(minLvl)
	sort.Strings(affected)
	return affected, nil
}
