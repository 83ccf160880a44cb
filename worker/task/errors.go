package task

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/sdk"
)

// ErrorPolicy is a connector's errors.* settings: what a task does with a
// record it cannot convert. The zero value is Kafka Connect's default
// (errors.tolerance=none): the record fails the task.
type ErrorPolicy struct {
	// TolerateAll (errors.tolerance=all) skips such records: a sink
	// commits past them, a source commits their source offsets.
	TolerateAll bool
	// Log (errors.log.enable) logs each tolerated error; LogMessages
	// (errors.log.include.messages) adds the record's coordinates (a
	// sink's topic, partition, offset and timestamp; a source's topic and
	// source partition and offset).
	Log, LogMessages bool
	// DLQTopic (errors.deadletterqueue.topic.name, sinks only) receives
	// each skipped record as it was read (key, value, headers), created
	// at start with DLQReplication (…topic.replication.factor) if absent;
	// DLQContextHeaders (…context.headers.enable) adds Kafka Connect's
	// __connect.errors.* headers.
	DLQTopic          string
	DLQReplication    int16
	DLQContextHeaders bool
	// KeyConverter, ValueConverter and HeaderConverter are the classes
	// named in the __connect.errors.class.name header.
	KeyConverter, ValueConverter, HeaderConverter string
}

// Stages of Kafka Connect's error reporting (its Stage enum).
const (
	stageKeyConverter    = "KEY_CONVERTER"
	stageValueConverter  = "VALUE_CONVERTER"
	stageHeaderConverter = "HEADER_CONVERTER"
	stageTransformation  = "TRANSFORMATION"
)

// stageError is a record's error with the stage it happened in; class is
// the class that failed when not a converter (a transformation's), and
// exception the Java exception Kafka Connect would name.
type stageError struct {
	stage            string
	err              error
	class, exception string
}

// transformError is an error of the transformation chain at its stage,
// naming the transformation and the exception when the error does.
func transformError(err error) error {
	se := &stageError{stage: stageTransformation, err: err}
	if c, ok := errors.AsType[interface {
		error
		ClassName() string
	}](err); ok {
		se.class = c.ClassName()
	}
	if c, ok := errors.AsType[interface {
		error
		ExceptionClass() string
	}](err); ok {
		se.exception = c.ExceptionClass()
	}
	return se
}

// classOf is the class a record's error names: the failed
// transformation's, or the stage's converter's.
func (p *ErrorPolicy) classOf(err error) string {
	if se, ok := errors.AsType[*stageError](err); ok && se.class != "" {
		return se.class
	}
	return p.converterClass(stageOf(err))
}

// exceptionOf is the Java exception class a record's error names.
func exceptionOf(err error) string {
	if se, ok := errors.AsType[*stageError](err); ok && se.exception != "" {
		return se.exception
	}
	return "org.apache.kafka.connect.errors.DataException"
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func stageOf(err error) string {
	if se, ok := errors.AsType[*stageError](err); ok {
		return se.stage
	}
	return stageValueConverter
}

func (p *ErrorPolicy) converterClass(stage string) string {
	switch stage {
	case stageKeyConverter:
		return p.KeyConverter
	case stageHeaderConverter:
		return p.HeaderConverter
	}
	return p.ValueConverter
}

// setupDLQ creates the dead letter queue topic unless it exists, as Kafka
// Connect's DeadLetterQueueReporter does when the task starts.
func setupDLQ(ctx context.Context, cl *kgo.Client, p ErrorPolicy) error {
	if p.DLQTopic == "" {
		return nil
	}
	rf := p.DLQReplication
	if rf == 0 {
		rf = 3
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, rf, nil, p.DLQTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("could not initialize dead letter queue with topic=%s (errors.deadletterqueue.topic.replication.factor=%d): %w", p.DLQTopic, rf, err)
	}
	return nil
}

// tolerateSink handles a record the sink runner could not convert under
// errors.tolerance=all: logs it if asked, and writes it to the dead letter
// queue, waiting for the broker's acknowledgement (the record's offset is
// committed once the task's next batch is). An error means it could not
// be recorded: the task fails.
func (r *SinkRunner) tolerateSink(ctx context.Context, kr *kgo.Record, err error) error {
	p := &r.cfg.Errors
	stage := stageOf(err)
	m := r.cfg.Metrics
	m.RecordFailure()
	m.RecordSkipped()
	m.RecordError()
	if p.Log {
		m.RecordErrorLogged()
		attrs := []any{"stage", stage, "class", p.classOf(err), "err", err}
		if p.LogMessages {
			attrs = append(attrs, "topic", kr.Topic, "partition", kr.Partition, "offset", kr.Offset, "timestamp", kr.Timestamp.UnixMilli())
		}
		r.log.Error("error encountered in task; record skipped (errors.tolerance=all)", attrs...)
	}
	if p.DLQTopic == "" {
		return nil
	}
	dlq := &kgo.Record{Topic: p.DLQTopic, Key: kr.Key, Value: kr.Value, Headers: append([]kgo.RecordHeader(nil), kr.Headers...)}
	if p.DLQContextHeaders {
		add := func(k, v string) {
			dlq.Headers = append(dlq.Headers, kgo.RecordHeader{Key: "__connect.errors." + k, Value: []byte(v)})
		}
		add("topic", kr.Topic)
		add("partition", strconv.Itoa(int(kr.Partition)))
		add("offset", strconv.FormatInt(kr.Offset, 10))
		add("connector.name", r.cfg.Info.Connector)
		add("task.id", strconv.Itoa(r.cfg.Info.Task))
		add("stage", stage)
		add("class.name", p.classOf(err))
		add("exception.class.name", exceptionOf(err))
		add("exception.message", err.Error())
		add("exception.stacktrace", err.Error())
	}
	if err := r.client.ProduceSync(ctx, dlq).FirstErr(); err != nil {
		m.RecordDLQ(false)
		return fmt.Errorf("write to the dead letter queue %s: %w", p.DLQTopic, err)
	}
	m.RecordDLQ(true)
	return nil
}

// tolerateSource logs a source record the runner could not convert under
// errors.tolerance=all, if asked; its source offset is committed as if it
// had been produced, as Kafka Connect does.
func (r *SourceRunner) tolerateSource(rec *sdk.SourceRecord, err error) {
	p := &r.cfg.Errors
	m := r.cfg.Metrics
	m.RecordFailure()
	m.RecordSkipped()
	m.RecordError()
	if !p.Log {
		return
	}
	m.RecordErrorLogged()
	stage := stageOf(err)
	attrs := []any{"stage", stage, "class", p.classOf(err), "err", err}
	if p.LogMessages {
		attrs = append(attrs, "topic", rec.Topic, "source_partition", rec.Partition, "source_offset", rec.Offset)
	}
	r.log.Error("error encountered in task; record skipped (errors.tolerance=all)", attrs...)
}
