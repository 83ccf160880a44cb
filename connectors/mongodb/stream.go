package mongodb

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-dev/tributary/sdk"
)

// Offsets of the change-stream modes, in Debezium's shape: partition
// {"server_id": <topic.prefix>}, offset {"sec", "ord", "resume_token"
// (base64 BSON), ["lsid", "txnNumber"], ["initsync": true]}. While a
// snapshot runs, Tributary adds where it got to: "snapshot_collection"
// (<db>.<coll>) and "snapshot_after" (base64 BSON {"_id": …}), and with
// snapshot.max.threads above 1 the other collections' positions
// (snapplan.go).
const (
	offSec           = "sec"
	offOrd           = "ord"
	offToken         = "resume_token"
	offInitSync      = "initsync"
	offLsid          = "lsid"
	offTxnNumber     = "txnNumber"
	offSnapshotColl  = "snapshot_collection"
	offSnapshotAfter = "snapshot_after"
)

// streamer runs the change-stream modes.
type streamer struct {
	t    *task
	part sdk.Partition

	start position // the stream position the snapshot hands over at
	snap  *snapshotFeed
	peek  []sdk.SourceRecord // read events held back to learn which is last
	last  position           // position of the last record handed out

	cs           *mongo.ChangeStream
	joiner       splitJoiner
	idleOffsetAt time.Time
	heartbeatAt  time.Time
	idleToken    bson.Raw
	snapshotDone bool               // initial_only: nothing to stream
	pending      []sdk.SourceRecord // records for the next poll
	// scanned holds the collections' RowsScanned series.
	scanned map[string]*sdk.Gauge
}

func newStreamer(ctx context.Context, t *task) (*streamer, error) {
	s := &streamer{t: t, part: sdk.Partition{"server_id": t.cfg.TopicPrefix}}
	off, err := t.tc.Offset(ctx, s.part)
	if err != nil {
		return nil, fmt.Errorf("mongodb: read offset: %w", err)
	}
	mode := t.cfg.SnapshotMode
	switch {
	case off == nil && (mode == SnapshotNoData || mode == SnapshotNever):
		t.log.Info("no stored offset and snapshot.mode=" + mode + ": streaming changes from now on, without a snapshot")
		if t.cfg.StartOpTime < 0 {
			// Store the position at once, so that a restart before the
			// first change resumes from here, not from a later "now".
			if s.last, err = s.takePosition(ctx); err != nil {
				return nil, err
			}
			s.pending = []sdk.SourceRecord{{Partition: s.part, Offset: s.last.offset()}}
		}
	case off == nil:
		return s, s.beginSnapshot(ctx)
	default:
		pos, err := positionFromOffset(off)
		if err != nil {
			return nil, err
		}
		s.start, s.last = pos, pos
		if b, _ := off[offInitSync].(bool); b {
			return s, s.resumeSnapshot(ctx, off)
		}
		if mode == SnapshotAlways {
			return s, s.beginSnapshot(ctx)
		}
		t.m.SnapshotSkipped()
		if mode == SnapshotInitialOnly {
			s.snapshotDone = true
			t.log.Info("snapshot.mode=initial_only and the snapshot is complete: nothing to do")
		}
	}
	return s, nil
}

// positionFromOffset reads a stored offset (Debezium's or Tributary's).
func positionFromOffset(off sdk.Offset) (position, error) {
	var p position
	if tok, ok := off.String(offToken); ok && tok != "" {
		raw, err := parseToken(tok)
		if err != nil {
			return p, fmt.Errorf("mongodb: stored resume token %q: %w", tok, err)
		}
		p.token = raw
	}
	sec, ok1 := off.Int64(offSec)
	ord, ok2 := off.Int64(offOrd)
	if ok1 && ok2 && sec > 0 {
		p.t, p.i, p.hasTime = uint32(sec), uint32(ord), true
	}
	return p, nil
}

// offset is the stored form of a stream position.
func (p position) offset() sdk.Offset {
	o := sdk.Offset{}
	if p.hasTime {
		o[offSec], o[offOrd] = int64(p.t), int64(p.i)
	}
	if p.token != nil {
		o[offToken] = tokenString(p.token)
	}
	return o
}

// tokenTime reads the cluster time out of a resume token's _data (a hex
// string whose first byte is 130 followed by the 64-bit timestamp).
func tokenTime(tok bson.Raw) (t, i uint32, ok bool) {
	data, ok := tok.Lookup("_data").StringValueOK()
	if !ok || len(data) < 18 {
		return 0, 0, false
	}
	b, err := hex.DecodeString(data[:18])
	if err != nil || b[0] != 130 {
		return 0, 0, false
	}
	ts := binary.BigEndian.Uint64(b[1:9])
	return uint32(ts >> 32), uint32(ts), true
}

// watchOptions returns the change stream's pipeline and options.
func (s *streamer) watch(ctx context.Context, from position) (*mongo.ChangeStream, error) {
	cfg := &s.t.cfg
	user, err := parsePipeline(cfg.CursorPipeline)
	if err != nil {
		return nil, fmt.Errorf("mongodb: cursor.pipeline: %w", err)
	}
	pipeline := cfg.changeStreamPipeline(s.t.f.matchStage(), user)
	opts := options.ChangeStream().SetMaxAwaitTime(cfg.CursorMaxAwait)
	if cfg.fullDocument() {
		if cfg.FullUpdateType == "post_image" {
			opts.SetFullDocument(options.WhenAvailable)
		} else {
			opts.SetFullDocument(options.UpdateLookup)
		}
	}
	if cfg.preImages() {
		opts.SetFullDocumentBeforeChange(options.WhenAvailable)
	}
	switch {
	case from.token != nil:
		opts.SetResumeAfter(from.token)
	case from.hasTime:
		opts.SetStartAtOperationTime(&bson.Timestamp{T: from.t, I: from.i})
	case cfg.StartOpTime >= 0:
		opts.SetStartAtOperationTime(&bson.Timestamp{T: uint32(cfg.StartOpTime)})
	}
	switch cfg.CaptureScope {
	case "database":
		return s.t.client.Database(cfg.CaptureTarget).Watch(ctx, pipeline, opts)
	case "collection":
		db, coll, _ := strings.Cut(cfg.CaptureTarget, ".")
		return s.t.client.Database(db).Collection(coll).Watch(ctx, pipeline, opts)
	}
	return s.t.client.Watch(ctx, pipeline, opts)
}

// takePosition reads the change stream's current position.
func (s *streamer) takePosition(ctx context.Context) (position, error) {
	var pos position
	cs, err := s.watch(ctx, position{})
	if err != nil {
		return pos, s.streamError(ctx, fmt.Errorf("mongodb: open a change stream to take its position: %w", err))
	}
	defer cs.Close(context.WithoutCancel(ctx))
	if cs.TryNext(ctx) {
		// A change arrived already: the position is after it (a snapshot
		// taken next sees its effect).
		ev, err := parseChangeEvent(cs.Current)
		if err != nil {
			return pos, err
		}
		pos = position{t: ev.clusterT, i: ev.clusterI, hasTime: ev.hasTime, token: slices.Clone(ev.token)}
	} else if err := cs.Err(); err != nil {
		return pos, s.streamError(ctx, fmt.Errorf("mongodb: read the change stream's position: %w", err))
	} else if tok := cs.ResumeToken(); tok != nil {
		pos.token = slices.Clone(tok)
		pos.t, pos.i, pos.hasTime = tokenTime(pos.token)
	}
	return pos, nil
}

// beginSnapshot takes the stream position first (so that the stream
// resumes from before the snapshot: no change is missed), then starts
// copying the collections.
func (s *streamer) beginSnapshot(ctx context.Context) error {
	pos, err := s.takePosition(ctx)
	if err != nil {
		return err
	}
	s.start, s.last = pos, pos
	nss, err := s.t.collections(ctx)
	if err != nil {
		return transient(ctx, err)
	}
	nss = slices.DeleteFunc(nss, func(n namespace) bool { return !s.t.f.snapshotted(n.String()) })
	s.t.log.Info("snapshot begins", "collections", len(nss), "threads", s.t.cfg.SnapshotMaxThreads, "resume_token", tokenDisplay(pos.token))
	s.snapshotStarted(ctx, newSnapshotPlan(nss, s.t.cfg.SnapshotMaxThreads))
	return nil
}

// snapshotStarted starts copying the collections of plan.
func (s *streamer) snapshotStarted(ctx context.Context, plan *snapshotPlan) {
	names := make([]string, len(plan.colls))
	for j, c := range plan.colls {
		names[j] = c.ns.String()
	}
	s.t.m.SnapshotStarted(names)
	s.t.m.SetRemainingTables(plan.remaining())
	if s.snap != nil {
		s.snap.close()
	}
	s.snap = newSnapshotFeed(ctx, s.t.client, s.t.cfg.SnapshotFetchSize, plan)
}

// resumeSnapshot goes on with a snapshot a restart interrupted.
func (s *streamer) resumeSnapshot(ctx context.Context, off sdk.Offset) error {
	nss, err := s.t.collections(ctx)
	if err != nil {
		return transient(ctx, err)
	}
	nss = slices.DeleteFunc(nss, func(n namespace) bool { return !s.t.f.snapshotted(n.String()) })
	plan, err := resumePlan(nss, s.t.cfg.SnapshotMaxThreads, off)
	if err != nil {
		return err
	}
	s.t.log.Info("resuming the interrupted snapshot", "progress", plan.String())
	s.snapshotStarted(ctx, plan)
	return nil
}

// rowsOf is the RowsScanned series of a collection.
func (s *streamer) rowsOf(ns namespace) *sdk.Gauge {
	if s.t.m == nil {
		return nil
	}
	if s.scanned == nil {
		s.scanned = map[string]*sdk.Gauge{}
	}
	g := s.scanned[ns.String()]
	if g == nil {
		g = s.t.m.TableRows("mongodb", s.t.cfg.TopicPrefix, ns.String())
		s.scanned[ns.String()] = g
	}
	return g
}

func tokenDisplay(tok bson.Raw) string {
	if tok == nil {
		return "(none)"
	}
	return tok.String()
}

func (s *streamer) poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	if len(s.pending) > 0 {
		recs := s.pending
		s.pending = nil
		return recs, nil
	}
	if s.snap != nil {
		return s.pollSnapshot(ctx, max)
	}
	if s.snapshotDone {
		wait(ctx, time.Second)
		return nil, nil
	}
	return s.pollStream(ctx, max)
}

// pollSnapshot returns the next read events. The last event of the
// snapshot has source.snapshot "last"; to know which it is, the last event
// of a batch is held back until the next document is known. The record
// that ends the snapshot (an offset without an event) goes out once there
// is room for it.
func (s *streamer) pollSnapshot(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	recs := append(make([]sdk.SourceRecord, 0, max), s.peek...)
	s.peek = nil
	plan := s.snap.plan
	for len(recs) < max && !plan.done() {
		it, err := s.snap.next(ctx)
		if err != nil {
			s.t.m.disconnected(true)
			if len(recs) > 0 {
				s.peek = recs[len(recs)-1:]
				return recs[:len(recs)-1], nil // the error comes again
			}
			return nil, transient(ctx, err)
		}
		if it.done {
			break
		}
		if it.end {
			if m := s.t.m; m != nil {
				m.SetRemainingTables(plan.remaining())
			}
			continue
		}
		ns := plan.colls[it.i].ns
		var r sdk.SourceRecord
		if err := s.readRecord(it.doc, ns, &r); err != nil {
			return nil, err
		}
		recs = append(recs, r)
		s.t.m.SnapshotRow(s.rowsOf(ns))
	}
	if !plan.done() {
		if len(recs) > 0 {
			s.peek = []sdk.SourceRecord{recs[len(recs)-1]}
			recs = recs[:len(recs)-1]
		}
		return recs, nil
	}
	if n := len(recs); n > 0 {
		setSnapshotLast(&recs[n-1])
	}
	if len(recs) >= max {
		return recs, nil // the end of the snapshot goes with the next poll
	}
	// The snapshot is complete: its last record's offset leaves the
	// snapshot (the stream resumes from the start position).
	s.snap.close()
	s.snap = nil
	s.t.m.SnapshotCompleted()
	recs = append(recs, sdk.SourceRecord{Partition: s.part, Offset: s.start.offset()}) // offset only
	s.t.log.Info("snapshot complete; streaming changes from its start position", "resume_token", tokenDisplay(s.start.token))
	if s.t.cfg.SnapshotMode == SnapshotInitialOnly {
		s.snapshotDone = true
	}
	return recs, nil
}

func (s *streamer) readRecord(doc bson.Raw, ns namespace, r *sdk.SourceRecord) error {
	c := s.t.env.collection(ns.db, ns.coll)
	if err := s.t.env.readRecord(c, doc, &sourceInfo{pos: s.start, snapshot: snapTrue}, "r", r); err != nil {
		return err
	}
	off := s.start.offset()
	off[offInitSync] = true
	s.snap.plan.storeProgress(off)
	r.Partition, r.Offset = s.part, off
	return nil
}

// pollStream returns the next change events.
func (s *streamer) pollStream(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	if s.cs == nil {
		cs, err := s.watch(ctx, s.last)
		if err != nil {
			return nil, s.streamError(ctx, fmt.Errorf("mongodb: open the change stream: %w", err))
		}
		s.cs = cs
		s.t.m.SetConnected(true)
		s.idleToken = nil
	}
	var recs []sdk.SourceRecord
	for len(recs) < max {
		if !s.cs.TryNext(ctx) {
			break
		}
		raw := s.cs.Current
		ev, err := parseChangeEvent(raw)
		if err != nil {
			return nil, fmt.Errorf("mongodb: %w", err)
		}
		if ev.fragment != 0 {
			// Fragments are kept across reads: copy them out of the
			// cursor's buffer.
			if ev, err = parseChangeEvent(slices.Clone(raw)); err != nil {
				return nil, err
			}
		}
		whole, ok, err := s.joiner.add(ev)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		recs, err = s.appendEvent(recs, &whole)
		if err != nil {
			return nil, err
		}
		if s.cs.RemainingBatchLength() == 0 {
			break // return what arrived rather than wait for more
		}
	}
	if err := s.cs.Err(); err != nil {
		s.cs.Close(context.WithoutCancel(ctx))
		s.cs = nil
		if len(recs) > 0 {
			return recs, nil // the error comes again at the next read
		}
		return nil, s.streamError(ctx, fmt.Errorf("mongodb: change stream: %w", err))
	}
	if ctx.Err() != nil {
		s.cs.Close(context.WithoutCancel(ctx))
		s.cs = nil
		return recs, nil
	}
	if len(recs) == 0 && !s.joiner.pending() {
		recs = s.idle()
	}
	return recs, nil
}

// appendEvent adds the records of a change event: the event (and a
// tombstone after a delete), each with the event's position as offset.
func (s *streamer) appendEvent(recs []sdk.SourceRecord, ev *changeEvent) ([]sdk.SourceRecord, error) {
	pos := position{t: ev.clusterT, i: ev.clusterI, hasTime: ev.hasTime, token: slices.Clone(ev.token)}
	off := pos.offset()
	if ev.lsid != nil && ev.hasTxn {
		w := jsonWriter{mode: modeStrict}
		if err := w.document(ev.lsid, nil); err == nil {
			off[offLsid], off[offTxnNumber] = string(w.buf), ev.txnNumber
		}
	}
	s.last = pos
	if !s.t.f.collection(ev.db, ev.coll) {
		s.t.m.Filtered()
		return append(recs, sdk.SourceRecord{Partition: s.part, Offset: off}), nil
	}
	var r sdk.SourceRecord
	ok, err := s.t.env.changeRecord(ev, &r)
	if err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	if !ok {
		return append(recs, sdk.SourceRecord{Partition: s.part, Offset: off}), nil
	}
	if m := s.t.m; m != nil {
		m.Event(opOf(ev.op))
		// Handed out with this poll: its lag is a MilliSecondsBehindSource sample.
		switch {
		case ev.wallTime != 0:
			m.Queued(time.UnixMilli(ev.wallTime))
		case ev.hasTime:
			m.Queued(time.Unix(int64(ev.clusterT), 0))
		default:
			m.Queued(time.Time{})
		}
		m.Delivered()
	}
	r.Partition, r.Offset = s.part, off
	if ev.wallTime != 0 {
		r.Timestamp = time.UnixMilli(ev.wallTime)
	}
	recs = append(recs, r)
	if ev.op == "delete" && s.t.cfg.Tombstones {
		recs = append(recs, sdk.SourceRecord{Partition: s.part, Offset: off, Topic: r.Topic,
			KeySchema: r.KeySchema, Key: r.Key, Timestamp: r.Timestamp})
	}
	return recs, nil
}

// idle advances the stored offset to the stream's latest resume token
// while no event arrives (so a restart does not resume from far back in
// the oplog), and sends Debezium's heartbeat record every
// heartbeat.interval.ms.
func (s *streamer) idle() []sdk.SourceRecord {
	tok := s.cs.ResumeToken()
	if tok == nil || bytes.Equal(tok, s.idleToken) || (s.last.token != nil && bytes.Equal(tok, s.last.token)) {
		return nil
	}
	now := time.Now()
	hb := s.t.cfg.HeartbeatInterval > 0 && now.Sub(s.heartbeatAt) >= s.t.cfg.HeartbeatInterval
	if !hb && now.Sub(s.idleOffsetAt) < time.Second {
		return nil
	}
	pos := position{token: slices.Clone(tok)}
	pos.t, pos.i, pos.hasTime = tokenTime(pos.token)
	s.last, s.idleToken, s.idleOffsetAt = pos, pos.token, now
	r := sdk.SourceRecord{Partition: s.part, Offset: pos.offset()}
	if hb {
		s.heartbeatAt = now
		k, v := s.t.env.heartbeat("")
		r.Topic = s.t.cfg.HeartbeatPrefix + "." + s.t.cfg.TopicPrefix
		r.KeySchema, r.Key, r.ValueSchema, r.Value = heartbeatKeySchema, k, heartbeatValueSchema, v
	}
	return []sdk.SourceRecord{r}
}

// Server error codes of a resume point that left the oplog.
const (
	codeChangeStreamHistoryLost = 286
	codeChangeStreamFatal       = 280
	codeCappedPositionLost      = 136
)

// historyLost reports whether err says the change stream cannot resume
// from the stored position because the oplog no longer holds it.
func historyLost(err error) bool {
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	if se.HasErrorCode(codeChangeStreamHistoryLost) || se.HasErrorCode(codeCappedPositionLost) {
		return true
	}
	return se.HasErrorCode(codeChangeStreamFatal) && strings.Contains(strings.ToLower(err.Error()), "resume")
}

// streamError decides what a change stream error means: a lost resume
// position takes a new snapshot (snapshot.mode=when_needed) or fails the
// task with what to do; passing errors are retried.
func (s *streamer) streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	s.t.m.SetConnected(false)
	s.t.m.disconnected(false)
	if !historyLost(err) {
		return transient(ctx, err)
	}
	if s.t.cfg.SnapshotMode == SnapshotWhenNeeded {
		s.t.log.Warn("the stored resume token is no longer in the oplog; snapshot.mode=when_needed: taking a new snapshot", "resume_token", tokenDisplay(s.last.token), "error", err)
		s.last = position{}
		if serr := s.beginSnapshot(ctx); serr != nil {
			return serr
		}
		return sdk.Retriable(fmt.Errorf("mongodb: resume token lost; new snapshot started"))
	}
	return fmt.Errorf("%w; the stored resume token %s is no longer in the oplog (ChangeStreamHistoryLost): the changes since then cannot be streamed. "+
		"To recover, take a new snapshot: set snapshot.mode=when_needed (it re-snapshots by itself when this happens), "+
		"or stop the connector, delete its offsets (DELETE /connectors/<name>/offsets) and resume it, or create it under a new name; "+
		"to prevent it, make the oplog cover the connector's longest downtime (replSetResizeOplog, oplogMinRetentionHours)", err, tokenDisplay(s.last.token))
}

func (s *streamer) close(ctx context.Context) {
	if s.cs != nil {
		s.cs.Close(ctx)
		s.cs = nil
	}
	if s.snap != nil {
		s.snap.close()
	}
}
