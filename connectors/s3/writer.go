package s3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// output is one object being written: the values, keys or headers file of
// an open file.
type output struct {
	key    string
	value  bool // the value file (its records count as uploaded)
	format format
	sp     *spool
	rw     recordWriter // made with the first record's schema
	schema *schema.Schema
	n      int
	closed bool
	done   bool
}

func (o *output) write(v any, s *schema.Schema) error {
	if o.rw == nil {
		rw, err := o.format.newWriter(o.sp, s)
		if err != nil {
			return err
		}
		o.rw, o.schema = rw, s
	} else if s != o.schema && !schema.Equal(s, o.schema) {
		return fmt.Errorf("s3: %s: schema changed within a file (%s, then %s)", o.key, o.schema, s)
	}
	o.n++
	return o.rw.write(v)
}

func (o *output) memory() int {
	m := o.sp.memory()
	if o.rw != nil && !o.closed {
		m += o.rw.buffered()
	}
	return m
}

func (o *output) shed() error {
	if o.rw != nil && !o.closed {
		if err := o.rw.flushBuffered(); err != nil {
			return err
		}
	}
	return o.sp.shed()
}

// close finishes the encoding of the file (trailers, footers) into its
// spool; a file without records makes no object.
func (o *output) close() error {
	if o.n == 0 || o.closed {
		return nil
	}
	if err := o.rw.close(); err != nil {
		return err
	}
	o.closed = true
	return nil
}

// upload makes the closed file durable in the store; an object already
// there (a conditional create that found it) counts as done.
func (o *output) upload(ifAbsent bool) error {
	if o.n == 0 || o.done {
		return nil
	}
	if err := o.sp.finish(ifAbsent); err != nil && !errors.Is(err, errExists) {
		return err
	}
	o.done = true
	o.sp.release()
	return nil
}

// openFile is the set of objects a Kafka partition writes for one encoded
// partition between two rotations.
type openFile struct {
	value, keys, headers *output
}

func (f *openFile) outputs() []*output {
	var out []*output
	for _, o := range []*output{f.keys, f.headers, f.value} {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

func (f *openFile) memory() int {
	m := 0
	for _, o := range f.outputs() {
		m += o.memory()
	}
	return m
}

func (f *openFile) release() {
	for _, o := range f.outputs() {
		o.sp.release()
	}
}

// writers holds what every partition writer shares.
type writers struct {
	cfg         *Config
	st          store
	part        *partitioner
	values      format
	keys        format
	headers     format
	compat      compatibility
	onNull      string
	partSize    int
	spillDir    string
	conditional bool
	up          *uploader
	m           *sinkMetrics
}

// tpWriter writes the records of one Kafka partition: Confluent's
// TopicPartitionWriter. Its files rotate together (flush.size counts the
// partition's records, whatever their encoded partition), so every
// rotation is a point from which a replay rebuilds the same files.
type tpWriter struct {
	*writers
	tp    sdk.TopicPartition
	files map[string]*openFile
	// schemas is the current value schema by encoded partition.
	schemas map[string]*schema.Schema
	count   int
	base    int64 // timestamp of the first record since the rotation
	hasBase bool
	current string // encoded partition of the last record
	last    int64  // offset of the last record handled (-1: none)
	// durable is the offset up to which every record is in finished
	// objects (or was skipped), -1 while unknown.
	durable       int64
	first         int64 // first offset handled since assignment
	nextScheduled int64
	// inflight counts the rotations handed to the uploader and not yet
	// done; gen tells the results of abandoned files from current ones.
	inflight  int
	gen       int
	afterJobs int64 // durable once the in-flight uploads are done
}

func newTPWriter(ws *writers, tp sdk.TopicPartition, nowMs int64) *tpWriter {
	w := &tpWriter{writers: ws, tp: tp, files: map[string]*openFile{}, schemas: map[string]*schema.Schema{},
		last: -1, durable: -1, first: -1}
	w.setNextScheduled(nowMs)
	return w
}

func (w *tpWriter) setNextScheduled(nowMs int64) {
	if w.cfg.ScheduleMs <= 0 {
		return
	}
	zone, _ := loadZone(w.cfg.Timezone)
	now := time.UnixMilli(nowMs).In(zone)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, zone).UnixMilli()
	w.nextScheduled = day + ((nowMs-day)/w.cfg.ScheduleMs+1)*w.cfg.ScheduleMs
}

// fileKey is Confluent's object key: topics.dir, the partitioned path, and
// <topic>+<partition>+<zero-padded start offset><ext>.
func (w *tpWriter) fileKey(encoded string, start int64, ext string) string {
	off := strconv.FormatInt(start, 10)
	if pad := int(w.cfg.ZeroPad) - len(off); pad > 0 {
		off = strings.Repeat("0", pad) + off
	}
	name := w.tp.Topic + w.cfg.FileDelim + strconv.Itoa(int(w.tp.Partition)) + w.cfg.FileDelim + off + ext
	suffix := w.part.path(w.tp.Topic, encoded) + w.cfg.DirDelim + name
	if strings.TrimSpace(w.cfg.TopicsDir) == "" {
		return suffix
	}
	return w.cfg.TopicsDir + w.cfg.DirDelim + suffix
}

func (w *tpWriter) newOutput(ctx context.Context, key string, f format) *output {
	return &output{key: key, format: f, sp: newSpool(ctx, w.st, key, w.partSize, w.spillDir)}
}

func (w *tpWriter) file(ctx context.Context, encoded string, start int64) *openFile {
	if f, ok := w.files[encoded]; ok {
		return f
	}
	f := &openFile{}
	f.value = w.newOutput(ctx, w.fileKey(encoded, start, w.values.ext()), w.values)
	f.value.value = true
	if w.cfg.StoreKeys {
		f.keys = w.newOutput(ctx, w.fileKey(encoded, start, ".keys"+w.keys.ext()), w.keys)
	}
	if w.cfg.StoreHdrs {
		f.headers = w.newOutput(ctx, w.fileKey(encoded, start, ".headers"+w.headers.ext()), w.headers)
	}
	w.files[encoded] = f
	return f
}

// errFatal marks a record the configuration refuses (the task fails).
type errFatal struct{ error }

// write handles one record; it may rotate (upload) files first or after.
func (w *tpWriter) write(ctx context.Context, r *sdk.SinkRecord, nowMs int64) error {
	if r.Offset <= w.last {
		return nil // delivered again: already held
	}
	if w.first < 0 {
		w.first = r.Offset
	}
	tombstone := r.Value == nil
	if tombstone {
		switch w.onNull {
		case "ignore":
			w.last = r.Offset
			if w.count == 0 {
				if w.inflight == 0 {
					w.durable = r.Offset + 1
				} else {
					w.afterJobs = r.Offset + 1
				}
			}
			return nil
		case "fail":
			return errFatal{fmt.Errorf("s3: record %s+%d has a null value and behavior.on.null.values=fail (set it to ignore or write)", r.Topic, r.Offset)}
		}
	}
	var ts int64
	var encoded string
	var err error
	if w.part.extract != nil && !tombstone {
		if ts, err = w.part.extract(r, nowMs); err != nil {
			return errFatal{err}
		}
		if !w.hasBase {
			w.base, w.hasBase = ts, true
		}
	}
	if tombstone {
		encoded = w.cfg.TombstoneDir
	} else if encoded, err = w.part.encode(r, ts); err != nil {
		return errFatal{err}
	}
	cur := r.ValueSchema
	for !tombstone {
		var ok bool
		if cur, ok = w.schemas[encoded]; !ok {
			w.schemas[encoded] = r.ValueSchema
			cur = r.ValueSchema
		}
		change, err := w.compat.shouldChange(r.ValueSchema, cur)
		if err != nil {
			return errFatal{err}
		}
		if change && w.count > 0 {
			if err := w.commit(ctx, rotateSchema); err != nil {
				return err
			}
			w.schemas[encoded] = r.ValueSchema
			w.base, w.hasBase = ts, w.part.extract != nil
			continue
		}
		if reason := w.rotateOnTime(encoded, ts, nowMs); reason != "" {
			if err := w.commit(ctx, reason); err != nil {
				return err
			}
			w.setNextScheduled(nowMs)
			w.base, w.hasBase = ts, w.part.extract != nil
			continue
		}
		break
	}
	f := w.file(ctx, encoded, r.Offset)
	if !tombstone {
		v, err := project(r.Value, r.ValueSchema, cur)
		if err != nil {
			return errFatal{err}
		}
		if err := f.value.write(v, cur); err != nil {
			return errFatal{err}
		}
	}
	if f.keys != nil {
		if err := f.keys.write(r.Key, r.KeySchema); err != nil {
			return errFatal{err}
		}
	}
	if f.headers != nil {
		if err := f.headers.write(headersView(r.Headers), headersSchema); err != nil {
			return errFatal{err}
		}
	}
	w.current = encoded
	w.last = r.Offset
	w.count++
	if w.count >= int(w.cfg.FlushSize) {
		return w.commit(ctx, rotateFlushSize)
	}
	return nil
}

// rotateOnTime returns why the files rotate before a record of ts whose
// encoded partition is encoded, "" when they do not.
func (w *tpWriter) rotateOnTime(encoded string, ts, nowMs int64) string {
	if w.count <= 0 {
		return ""
	}
	if w.cfg.RotateMs > 0 && w.part.extract != nil && (ts-w.base >= w.cfg.RotateMs || encoded != w.current) {
		return rotateInterval
	}
	if w.cfg.ScheduleMs > 0 && nowMs >= w.nextScheduled {
		return rotateSchedule
	}
	return ""
}

// tick is called without records (from Flush): scheduled rotation, and
// rotate.interval.ms by wall clock.
func (w *tpWriter) tick(ctx context.Context, nowMs int64) error {
	if w.count == 0 {
		return nil
	}
	scheduled := w.cfg.ScheduleMs > 0 && nowMs >= w.nextScheduled
	wall := w.cfg.RotateMs > 0 && w.part.wallclock && nowMs-w.base >= w.cfg.RotateMs
	if !scheduled && !wall {
		return nil
	}
	reason := rotateSchedule
	if !scheduled {
		reason = rotateWallclock
	}
	if err := w.commit(ctx, reason); err != nil {
		return err
	}
	w.setNextScheduled(nowMs)
	return nil
}

// commit rotates the partition's files: each is closed, and they go to the
// uploader together (keys and headers objects before the values object, in
// the order of their encoded partitions); once uploaded, everything up to
// the last record is durable.
func (w *tpWriter) commit(ctx context.Context, reason string) error {
	w.m.rotated(w.tp.Topic, reason)
	names := make([]string, 0, len(w.files))
	for n := range w.files {
		names = append(names, n)
	}
	slices.Sort(names)
	var outs []*output
	for _, n := range names {
		for _, o := range w.files[n].outputs() {
			if err := o.close(); err != nil {
				return errFatal{err}
			}
			if o.n > 0 {
				outs = append(outs, o)
			}
		}
	}
	job := &uploadJob{w: w, gen: w.gen, outs: outs, durable: w.last + 1}
	if err := w.up.enqueue(ctx, job); err != nil {
		return err
	}
	w.inflight++
	clear(w.files)
	clear(w.schemas)
	w.count, w.hasBase, w.current = 0, false, ""
	return nil
}

// done applies the outcome of an upload of this partition's files.
func (w *tpWriter) done(job *uploadJob) {
	if job.gen != w.gen {
		return // files abandoned since: a replay rewrites them
	}
	w.inflight--
	w.durable = max(w.durable, job.durable)
	if w.inflight == 0 && w.afterJobs > w.durable {
		w.durable = w.afterJobs
	}
}

// abandon drops the open files (a revoke, a failure): nothing of them is
// reported durable, and a replay rewrites them.
func (w *tpWriter) abandon() {
	for _, f := range w.files {
		f.release()
	}
	w.gen++
	w.inflight, w.afterJobs = 0, 0
	clear(w.files)
	clear(w.schemas)
	w.count, w.hasBase, w.current = 0, false, ""
}

// resumeOffset is where delivery must start again after abandon.
func (w *tpWriter) resumeOffset() int64 {
	if w.durable >= 0 {
		return w.durable
	}
	return w.first
}

// headersSchema is the schema of a headers file's records: the record's
// headers as key/value pairs, values rendered as text (JSON for
// non-strings).
var headersSchema = schema.StructOf("io.confluent.connect.s3.Headers").
	Field("headers", schema.ArrayOf(schema.StructOf("io.confluent.connect.s3.Header").
		Field("key", schema.String).
		Field("value", schema.OptionalString).Build())).
	Build()

func headersView(hs []sdk.Header) *schema.Struct {
	elem := headersSchema.Fields[0].Schema.ValueSchema
	arr := make([]any, len(hs))
	for i, h := range hs {
		st := schema.NewStruct(elem).Set("key", h.Key)
		switch v := h.Value.(type) {
		case nil:
		case string:
			st.Set("value", v)
		default:
			b, err := renderJSON(nil, h.Schema, v, "BASE64")
			if err != nil {
				b = fmt.Append(nil, v)
			}
			st.Set("value", string(b))
		}
		arr[i] = st
	}
	return schema.NewStruct(headersSchema).Set("headers", arr)
}
