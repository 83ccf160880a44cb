package postgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Signals, with Debezium's names and formats. A signal has an id, a type
// (the action) and data (a JSON object). Three channels carry them:
//
//   - source: rows inserted into signal.data.collection, read from the
//     replication stream (so a signal takes effect at its place in the
//     change stream);
//   - kafka: records on signal.kafka.topic whose key is topic.prefix and
//     whose value is {"id": ..., "type": ..., "data": {...}};
//   - file: the same JSON objects, one a line, in signal.file.
//
// Every signal is acted on by the stream's goroutine, the only owner of the
// incremental snapshot's state. A malformed signal is logged with the
// reason and changes nothing.

// Signal types (Debezium's action names).
const (
	sigExecuteSnapshot = "execute-snapshot"
	sigStopSnapshot    = "stop-snapshot"
	sigPauseSnapshot   = "pause-snapshot"
	sigResumeSnapshot  = "resume-snapshot"
	sigLog             = "log"
	sigWindowOpen      = "snapshot-window-open"
	sigWindowClose     = "snapshot-window-close"
)

// Snapshot types of execute-snapshot and stop-snapshot.
const (
	snapshotIncremental = "incremental"
	snapshotBlocking    = "blocking"
)

// signalRecord is a signal as a channel delivers it.
type signalRecord struct {
	id, typ, data string
	channel       string
	// ack, when set, is called once the signal was acted on (the kafka
	// channel commits its position).
	ack func()
}

// condition is an additional condition of execute-snapshot: a filter for
// the tables its pattern matches, SQL of a WHERE clause (incremental
// snapshots; blocking ones accept it too) or, for a blocking snapshot, a
// whole SELECT statement that replaces the table, as Debezium has it.
type condition struct {
	pattern *regexp.Regexp
	filter  string
}

// signal is a parsed signal.
type signal struct {
	id, typ string
	// execute-snapshot and stop-snapshot:
	snapshotType string
	collections  []string
	conditions   []condition
	surrogateKey string
	// log:
	message string
}

// signalData is the data of a signal, as JSON.
type signalData struct {
	DataCollections      json.RawMessage `json:"data-collections"`
	Type                 *string         `json:"type"`
	AdditionalConditions []struct {
		DataCollection string `json:"data-collection"`
		Filter         string `json:"filter"`
	} `json:"additional-conditions"`
	SurrogateKey string `json:"surrogate-key"`
	Message      string `json:"message"`
}

// parseSignal checks a signal and returns what it asks for; the error says
// why a malformed one is ignored.
func parseSignal(r signalRecord) (signal, error) {
	s := signal{id: r.id, typ: r.typ}
	var d signalData
	if strings.TrimSpace(r.data) != "" {
		dec := json.NewDecoder(strings.NewReader(r.data))
		if err := dec.Decode(&d); err != nil {
			return s, fmt.Errorf("data %q is not a JSON object of a signal: %v", truncate(r.data, 200), err)
		}
	}
	switch r.typ {
	case sigExecuteSnapshot, sigStopSnapshot:
		s.snapshotType = snapshotIncremental
		if d.Type != nil {
			s.snapshotType = strings.ToLower(*d.Type)
		}
		if s.snapshotType != snapshotIncremental && s.snapshotType != snapshotBlocking {
			return s, fmt.Errorf("snapshot type %q is neither incremental nor blocking", *d.Type)
		}
		if len(d.DataCollections) > 0 && string(d.DataCollections) != "null" {
			if err := json.Unmarshal(d.DataCollections, &s.collections); err != nil {
				return s, fmt.Errorf("data-collections must be an array of strings: %s", truncate(string(d.DataCollections), 200))
			}
		}
		for i, c := range s.collections {
			c = strings.TrimSpace(c)
			if _, err := regexp.Compile(c); err != nil {
				return s, fmt.Errorf("data-collections entry %q is not a regular expression: %v", c, err)
			}
			s.collections[i] = c
		}
		if r.typ == sigExecuteSnapshot && len(s.collections) == 0 {
			return s, errors.New("data-collections is missing or empty")
		}
		for _, ac := range d.AdditionalConditions {
			re, err := regexp.Compile("(?i)^(?:" + ac.DataCollection + ")$")
			if err != nil || ac.DataCollection == "" {
				return s, fmt.Errorf("additional-conditions data-collection %q is not a regular expression", ac.DataCollection)
			}
			if strings.TrimSpace(ac.Filter) == "" {
				return s, fmt.Errorf("additional-conditions for %q has no filter", ac.DataCollection)
			}
			s.conditions = append(s.conditions, condition{pattern: re, filter: ac.Filter})
		}
		s.surrogateKey = strings.TrimSpace(d.SurrogateKey)
	case sigPauseSnapshot, sigResumeSnapshot, sigWindowOpen, sigWindowClose:
	case sigLog:
		if d.Message == "" {
			return s, errors.New("log signal without a message")
		}
		s.message = d.Message
	default:
		return s, fmt.Errorf("type %q is not a signal this connector knows (execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot, log)", r.typ)
	}
	return s, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// signalJSON is a signal as the kafka and file channels carry it.
type signalJSON struct {
	ID   json.RawMessage `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// decodeSignalJSON reads a signal of the kafka or file channel; fallbackID
// names it when it has no id.
func decodeSignalJSON(b []byte, fallbackID string) (signalRecord, error) {
	var j signalJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return signalRecord{}, fmt.Errorf("not a JSON signal: %v", err)
	}
	if j.Type == "" {
		return signalRecord{}, errors.New(`no "type"`)
	}
	r := signalRecord{id: fallbackID, typ: j.Type}
	if len(j.ID) > 0 && string(j.ID) != "null" {
		var id string
		if err := json.Unmarshal(j.ID, &id); err != nil {
			r.id = string(j.ID)
		} else {
			r.id = id
		}
	}
	if len(j.Data) > 0 && string(j.Data) != "null" {
		r.data = string(j.Data)
	}
	return r, nil
}

// fileChannel reads signal.file every signal.poll.interval.ms and empties it
// (as Debezium's file channel does).
type fileChannel struct {
	path     string
	interval time.Duration
	logger   *slog.Logger
}

func (f *fileChannel) run(ctx context.Context, out chan<- signalRecord) {
	f.logger.Info("file signal channel reading", "file", f.path, "interval", f.interval.String())
	t := time.NewTicker(f.interval)
	defer t.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) || err == nil && len(b) == 0 {
			continue
		}
		if err != nil {
			f.logger.Warn("cannot read the signal file", "file", f.path, "error", err)
			continue
		}
		if err := os.Truncate(f.path, 0); err != nil {
			f.logger.Warn("cannot empty the signal file: its signals are not acted on until it can be", "file", f.path, "error", err)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			n++
			r, err := decodeSignalJSON(line, "file-"+strconv.Itoa(n))
			if err != nil {
				f.logger.Warn("signal ignored", "channel", "file", "line", truncate(string(line), 200), "error", err)
				continue
			}
			r.channel = "file"
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}
}

// kafkaChannel reads partition 0 of signal.kafka.topic, from the position
// its consumer group (signal.kafka.groupId) committed, and commits a
// signal's position once the stream has acted on it. Records whose key is
// not topic.prefix are for other connectors and skipped.
type kafkaChannel struct {
	bootstrap []string
	topic     string
	group     string
	key       string
	logger    *slog.Logger
}

func (k *kafkaChannel) run(ctx context.Context, out chan<- signalRecord) {
	for {
		err := k.consume(ctx, out)
		if ctx.Err() != nil {
			return
		}
		k.logger.Warn("kafka signal channel failed: retrying in 5 s", "topic", k.topic, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

func (k *kafkaChannel) consume(ctx context.Context, out chan<- signalRecord) error {
	admin, err := kgo.NewClient(kgo.SeedBrokers(k.bootstrap...))
	if err != nil {
		return fmt.Errorf("kafka signal channel: %w", err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	start := kgo.NewOffset().AtStart()
	offs, err := adm.FetchOffsets(ctx, k.group)
	if err != nil {
		return fmt.Errorf("kafka signal channel: committed offsets of group %s: %w", k.group, err)
	}
	if o, ok := offs.Lookup(k.topic, 0); ok && o.Err == nil && o.At >= 0 {
		start = kgo.NewOffset().At(o.At)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.bootstrap...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.topic: {0: start}}),
		kgo.FetchMaxWait(time.Second))
	if err != nil {
		return fmt.Errorf("kafka signal channel: %w", err)
	}
	defer cl.Close()
	k.logger.Info("kafka signal channel reading", "topic", k.topic, "group", k.group)
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.Canceled) {
				k.logger.Debug("kafka signal channel fetch", "error", e.Err)
			}
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
		for _, r := range recs {
			commit := func() {
				var o kadm.Offsets
				o.Add(kadm.Offset{Topic: r.Topic, Partition: r.Partition, At: r.Offset + 1, LeaderEpoch: -1})
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				if _, err := adm.CommitOffsets(cctx, k.group, o); err != nil {
					k.logger.Warn("kafka signal channel: commit of the signal's position failed", "offset", r.Offset, "error", err)
				}
			}
			if string(r.Key) != k.key {
				k.logger.Info("signal skipped: its key is not this connector's topic.prefix", "channel", "kafka", "key", string(r.Key), "topic.prefix", k.key)
				commit()
				continue
			}
			sr, err := decodeSignalJSON(r.Value, "kafka-"+strconv.FormatInt(r.Offset, 10))
			if err != nil {
				k.logger.Warn("signal ignored", "channel", "kafka", "offset", r.Offset, "value", truncate(string(r.Value), 200), "error", err)
				commit()
				continue
			}
			sr.channel, sr.ack = "kafka", commit
			select {
			case out <- sr:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}
