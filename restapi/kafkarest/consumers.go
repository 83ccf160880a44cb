package kafkarest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumers holds the v2 consumer instances.
type consumers struct {
	p  *Proxy
	mu sync.Mutex
	m  map[instanceKey]*instance
}

type instanceKey struct{ group, name string }

// instance is one v2 consumer instance: its own franz-go client once it
// subscribed or was assigned partitions.
type instance struct {
	key instanceKey
	cfg consumerCreate

	used time.Time // under consumers.mu

	mu       sync.Mutex // serializes the instance's requests
	closed   bool
	cl       *kgo.Client
	sub      subscription
	assigned []topicPartition // assign mode: what was assigned

	// smu guards what the group's callbacks change too.
	smu      sync.Mutex
	owned    map[topicPartition]bool  // partitions currently consumed
	pending  []*kgo.Record            // polled, not yet returned
	returned map[topicPartition]int64 // next offset after the last returned record
	// seeked holds a seek's offset until a record at or after it arrives:
	// a fetch issued before the seek may still deliver older records.
	seeked map[topicPartition]int64
}

func newConsumers(p *Proxy) *consumers {
	return &consumers{p: p, m: map[instanceKey]*instance{}}
}

// get finds an instance and marks it used.
func (c *consumers) get(r *http.Request) (*instance, *Error) {
	k := instanceKey{chi.URLParam(r, "group"), chi.URLParam(r, "instance")}
	c.mu.Lock()
	defer c.mu.Unlock()
	in, ok := c.m[k]
	if !ok {
		return nil, errInstanceNotFound
	}
	in.used = time.Now()
	return in, nil
}

// expire closes the instances unused for longer than the instance timeout.
func (c *consumers) expire(now time.Time) {
	var old []*instance
	c.mu.Lock()
	for k, in := range c.m {
		if now.Sub(in.used) > c.p.cfg.InstanceTimeout {
			old = append(old, in)
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
	for _, in := range old {
		c.p.log.Info("kafkarest: consumer instance expired", "group", in.key.group, "instance", in.key.name)
		in.close()
	}
}

func (c *consumers) closeAll() {
	c.mu.Lock()
	all := make([]*instance, 0, len(c.m))
	for k, in := range c.m {
		all = append(all, in)
		delete(c.m, k)
	}
	c.mu.Unlock()
	for _, in := range all {
		in.close()
	}
}

// close leaves the group and closes the client.
func (in *instance) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
	in.stopClient()
}

// stopClient closes the client (under in.mu).
func (in *instance) stopClient() {
	if in.cl != nil {
		in.cl.Close()
		in.cl = nil
	}
	in.sub = subscription{}
	in.assigned = nil
	in.smu.Lock()
	in.owned = map[topicPartition]bool{}
	in.pending = nil
	in.returned = map[topicPartition]int64{}
	in.seeked = map[topicPartition]int64{}
	in.smu.Unlock()
}

func (p *Proxy) routesV2Consumers(r chi.Router) {
	r.Post("/consumers/{group}", p.v2CreateConsumer)
	r.Route("/consumers/{group}/instances/{instance}", func(r chi.Router) {
		r.Delete("/", p.withInstance(p.v2DeleteConsumer))
		r.Post("/subscription", p.withInstance(p.v2Subscribe))
		r.Get("/subscription", p.withInstance(p.v2Subscription))
		r.Delete("/subscription", p.withInstance(p.v2Unsubscribe))
		r.Post("/assignments", p.withInstance(p.v2Assign))
		r.Get("/assignments", p.withInstance(p.v2Assignments))
		r.Post("/positions", p.withInstance(p.v2Seek))
		r.Post("/positions/beginning", p.withInstance(p.v2SeekEdge(true)))
		r.Post("/positions/end", p.withInstance(p.v2SeekEdge(false)))
		r.Get("/records", p.withInstance(p.v2Records))
		r.Post("/offsets", p.withInstance(p.v2Commit))
		r.Get("/offsets", p.withInstance(p.v2Committed))
	})
}

// withInstance runs h with the instance of the path, locked.
func (p *Proxy) withInstance(h func(http.ResponseWriter, *http.Request, *instance)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := p.consumers.get(r)
		if err != nil {
			v2Fail(w, err)
			return
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.closed {
			v2Fail(w, errInstanceNotFound)
			return
		}
		h(w, r, in)
	}
}

func (p *Proxy) v2CreateConsumer(w http.ResponseWriter, r *http.Request) {
	cfg, ok := readV2Body(p, w, r, parseConsumerCreate)
	if !ok {
		return
	}
	if cfg.Format.needsRegistry() && p.sr == nil {
		v2Fail(w, errRegistryMissing)
		return
	}
	if cfg.Name == "" {
		cfg.Name = "rest-consumer-" + uuid.NewString()
	}
	group := chi.URLParam(r, "group")
	k := instanceKey{group, cfg.Name}
	in := &instance{key: k, cfg: cfg, used: time.Now(), owned: map[topicPartition]bool{}, returned: map[topicPartition]int64{}, seeked: map[topicPartition]int64{}}
	c := p.consumers
	c.mu.Lock()
	if _, ok := c.m[k]; ok {
		c.mu.Unlock()
		v2Fail(w, errorf(http.StatusConflict, codeInstanceExists, msgInstanceExists))
		return
	}
	c.m[k] = in
	c.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, v2ContentType, map[string]string{
		"instance_id": cfg.Name,
		"base_uri":    fmt.Sprintf("%s://%s/consumers/%s/instances/%s", scheme, r.Host, group, cfg.Name),
	})
}

func (p *Proxy) v2DeleteConsumer(w http.ResponseWriter, _ *http.Request, in *instance) {
	p.consumers.mu.Lock()
	delete(p.consumers.m, in.key)
	p.consumers.mu.Unlock()
	in.closed = true
	in.stopClient()
	w.WriteHeader(http.StatusNoContent)
}

// resetOffset is the starting offset auto.offset.reset asks for.
func (in *instance) resetOffset() kgo.Offset {
	switch in.cfg.AutoOffsetReset {
	case "earliest":
		return kgo.NewOffset().AtStart()
	case "none":
		return kgo.NoResetOffset()
	default:
		return kgo.NewOffset().AtEnd()
	}
}

func (p *Proxy) clientOpts(in *instance) []kgo.Opt {
	opts := append([]kgo.Opt{kgo.SeedBrokers(p.cfg.Seeds...)}, p.cfg.ClientOpts...)
	opts = append(opts, kgo.ConsumeResetOffset(in.resetOffset()), kgo.ClientID("kafka-rest-"+in.key.name))
	if in.cfg.FetchMinBytes >= 0 {
		opts = append(opts, kgo.FetchMinBytes(in.cfg.FetchMinBytes))
	}
	return opts
}

func illegalState(format string, args ...any) *Error {
	return errorf(http.StatusConflict, codeIllegalState, "Illegal state: "+format, args...)
}

func (p *Proxy) v2Subscribe(w http.ResponseWriter, r *http.Request, in *instance) {
	sub, ok := readV2Body(p, w, r, parseSubscription)
	if !ok {
		return
	}
	if in.assigned != nil {
		v2Fail(w, illegalState("Subscription to topics, partitions and pattern are mutually exclusive"))
		return
	}
	in.stopClient()
	opts := p.clientOpts(in)
	opts = append(opts,
		kgo.ConsumerGroup(in.key.group),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			in.smu.Lock()
			defer in.smu.Unlock()
			for t, ps := range m {
				for _, pt := range ps {
					in.owned[topicPartition{t, pt}] = true
				}
			}
		}),
		kgo.OnPartitionsRevoked(in.dropPartitions(p)),
		kgo.OnPartitionsLost(in.dropPartitions(nil)),
	)
	if sub.Pattern != "" {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(sub.Pattern))
	} else {
		opts = append(opts, kgo.ConsumeTopics(sub.Topics...))
	}
	cl, cerr := kgo.NewClient(opts...)
	if cerr != nil {
		v2Fail(w, unprocessable("topic_pattern: %v", cerr))
		return
	}
	in.cl, in.sub = cl, sub
	w.WriteHeader(http.StatusNoContent)
}

// dropPartitions is the group callback for revoked (p non-nil: commit what
// was returned first, when auto commit is on) or lost partitions: their
// polled records that were not returned are dropped, to be fetched again
// by whoever gets them.
func (in *instance) dropPartitions(p *Proxy) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
		in.smu.Lock()
		gone := map[topicPartition]bool{}
		for t, ps := range m {
			for _, pt := range ps {
				gone[topicPartition{t, pt}] = true
				delete(in.owned, topicPartition{t, pt})
			}
		}
		in.pending = slices.DeleteFunc(in.pending, func(r *kgo.Record) bool { return gone[topicPartition{r.Topic, r.Partition}] })
		commit := map[string]map[int32]kgo.EpochOffset{}
		for tp, off := range in.returned {
			if gone[tp] {
				if commit[tp.Topic] == nil {
					commit[tp.Topic] = map[int32]kgo.EpochOffset{}
				}
				commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: off}
				delete(in.returned, tp)
			}
		}
		in.smu.Unlock()
		if p != nil && in.cfg.AutoCommit && len(commit) > 0 {
			cl.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsgOffsetCommitRequest, _ *kmsgOffsetCommitResponse, err error) {
				if err != nil {
					p.log.Warn("kafkarest: commit on revoke", "group", in.key.group, "err", err)
				}
			})
		}
	}
}

func (p *Proxy) v2Subscription(w http.ResponseWriter, _ *http.Request, in *instance) {
	topics := slices.Clone(in.sub.Topics)
	if in.sub.Pattern != "" {
		in.smu.Lock()
		for tp := range in.owned {
			if !slices.Contains(topics, tp.Topic) {
				topics = append(topics, tp.Topic)
			}
		}
		in.smu.Unlock()
		slices.Sort(topics)
	}
	if topics == nil {
		topics = []string{}
	}
	writeJSON(w, http.StatusOK, v2ContentType, map[string][]string{"topics": topics})
}

func (p *Proxy) v2Unsubscribe(w http.ResponseWriter, _ *http.Request, in *instance) {
	if in.assigned == nil {
		in.stopClient()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Proxy) v2Assign(w http.ResponseWriter, r *http.Request, in *instance) {
	parts, ok := readV2Body(p, w, r, func(b []byte) ([]topicPartition, *Error) { return parsePartitions(b, true) })
	if !ok {
		return
	}
	if in.sub.Topics != nil || in.sub.Pattern != "" {
		v2Fail(w, illegalState("Subscription to topics, partitions and pattern are mutually exclusive"))
		return
	}
	in.stopClient()
	if len(parts) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// Start where the group committed, else as auto.offset.reset says.
	committed, cerr := p.admin.FetchOffsets(r.Context(), in.key.group)
	if cerr != nil {
		v2Fail(w, cerr)
		return
	}
	start := map[string]map[int32]kgo.Offset{}
	for _, tp := range parts {
		o := in.resetOffset()
		if c, ok := committed.Lookup(tp.Topic, tp.Partition); ok && c.Err == nil && c.At >= 0 {
			o = kgo.NewOffset().At(c.At)
		}
		if start[tp.Topic] == nil {
			start[tp.Topic] = map[int32]kgo.Offset{}
		}
		start[tp.Topic][tp.Partition] = o
	}
	cl, kerr := kgo.NewClient(append(p.clientOpts(in), kgo.ConsumePartitions(start))...)
	if kerr != nil {
		v2Fail(w, kerr)
		return
	}
	in.cl, in.assigned = cl, parts
	in.smu.Lock()
	for _, tp := range parts {
		in.owned[tp] = true
	}
	in.smu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (p *Proxy) v2Assignments(w http.ResponseWriter, _ *http.Request, in *instance) {
	in.smu.Lock()
	parts := make([]topicPartition, 0, len(in.owned))
	for tp := range in.owned {
		parts = append(parts, tp)
	}
	in.smu.Unlock()
	slices.SortFunc(parts, func(a, b topicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	writeJSON(w, http.StatusOK, v2ContentType, map[string][]topicPartition{"partitions": parts})
}

// seek moves the instance's positions to offs, dropping what was polled
// there but not returned.
func (in *instance) seek(offs map[topicPartition]int64) *Error {
	if in.cl == nil {
		return illegalState("Consumer is not subscribed to any topics or assigned any partitions")
	}
	in.smu.Lock()
	for tp := range offs {
		if !in.owned[tp] {
			in.smu.Unlock()
			return illegalState("No current assignment for partition %s-%d", tp.Topic, tp.Partition)
		}
	}
	in.pending = slices.DeleteFunc(in.pending, func(r *kgo.Record) bool {
		_, ok := offs[topicPartition{r.Topic, r.Partition}]
		return ok
	})
	for tp, o := range offs {
		in.seeked[tp] = o
	}
	in.smu.Unlock()
	set := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range offs {
		if set[tp.Topic] == nil {
			set[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	in.cl.SetOffsets(set)
	return nil
}

func (p *Proxy) v2Seek(w http.ResponseWriter, r *http.Request, in *instance) {
	offs, ok := readV2Body(p, w, r, func(b []byte) ([]topicPartitionOffset, *Error) { return parseOffsets(b, false) })
	if !ok {
		return
	}
	m := map[topicPartition]int64{}
	for _, o := range offs {
		m[topicPartition{o.Topic, o.Partition}] = o.Offset
	}
	if err := in.seek(m); err != nil {
		v2Fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Proxy) v2SeekEdge(beginning bool) func(http.ResponseWriter, *http.Request, *instance) {
	return func(w http.ResponseWriter, r *http.Request, in *instance) {
		parts, ok := readV2Body(p, w, r, func(b []byte) ([]topicPartition, *Error) { return parsePartitions(b, false) })
		if !ok {
			return
		}
		var topics []string
		for _, tp := range parts {
			if !slices.Contains(topics, tp.Topic) {
				topics = append(topics, tp.Topic)
			}
		}
		list := p.admin.ListEndOffsets
		if beginning {
			list = p.admin.ListStartOffsets
		}
		lo, lerr := list(r.Context(), topics...)
		if lerr != nil {
			v2Fail(w, lerr)
			return
		}
		m := map[topicPartition]int64{}
		for _, tp := range parts {
			o, ok := lo.Lookup(tp.Topic, tp.Partition)
			if !ok || o.Err != nil {
				v2Fail(w, errPartitionNotFound)
				return
			}
			m[tp] = o.Offset
		}
		if err := in.seek(m); err != nil {
			v2Fail(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// v2RecordJSON is one record of GET …/records.
type v2RecordJSON struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

// embed is a key or value as the instance's format shows it.
func embed(f format, b []byte) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	if f == formatJSON {
		if !json.Valid(b) {
			return nil, errors.New("the record is not JSON: consume it with the binary format")
		}
		return b, nil
	}
	s, _ := json.Marshal(base64.StdEncoding.EncodeToString(b))
	return s, nil
}

// Defaults of consumer.request.timeout.ms and consumer.request.max.bytes.
const (
	defaultRequestTimeout = time.Second
	defaultMaxBytes       = 64 << 20
)

func (p *Proxy) v2Records(w http.ResponseWriter, r *http.Request, in *instance) {
	if f := acceptedFormat(r.Header.Get("Accept")); f != formatNone && f != in.cfg.Format {
		v2Fail(w, errorf(http.StatusNotAcceptable, codeFormatMismatch, msgFormatMismatch))
		return
	}
	timeout := defaultRequestTimeout
	if in.cfg.RequestTimeout > 0 {
		timeout = time.Duration(in.cfg.RequestTimeout) * time.Millisecond
	}
	if s := r.URL.Query().Get("timeout"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			v2Fail(w, badRequest("timeout: %q is not a number of milliseconds", s))
			return
		}
		timeout = min(time.Duration(n)*time.Millisecond, timeout*60)
	}
	maxBytes := int64(defaultMaxBytes)
	if s := r.URL.Query().Get("max_bytes"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			v2Fail(w, badRequest("max_bytes: %q is not a positive number", s))
			return
		}
		maxBytes = n
	}
	if in.cl == nil {
		v2Fail(w, illegalState("Consumer is not subscribed to any topics or assigned any partitions"))
		return
	}
	in.smu.Lock()
	empty := len(in.pending) == 0
	in.smu.Unlock()
	if empty {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		fs := in.cl.PollFetches(ctx)
		cancel()
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = err
			}
		})
		in.smu.Lock()
		fs.EachRecord(func(rec *kgo.Record) {
			tp := topicPartition{rec.Topic, rec.Partition}
			if !in.owned[tp] {
				return
			}
			if s, ok := in.seeked[tp]; ok {
				if rec.Offset < s {
					return // fetched from before the seek
				}
				delete(in.seeked, tp)
			}
			in.pending = append(in.pending, rec)
		})
		in.smu.Unlock()
		if ferr != nil && !errors.Is(ferr, kgo.ErrClientClosed) {
			in.smu.Lock()
			n := len(in.pending)
			in.smu.Unlock()
			if n == 0 {
				v2Fail(w, ferr)
				return
			}
		}
	}
	out := []v2RecordJSON{}
	in.smu.Lock()
	var size int64
	taken := 0
	for _, rec := range in.pending {
		sz := int64(len(rec.Key) + len(rec.Value))
		if taken > 0 && size+sz > maxBytes {
			break
		}
		k, err := p.embedRecord(r.Context(), in.cfg.Format, rec.Key)
		if err == nil {
			var v json.RawMessage
			v, err = p.embedRecord(r.Context(), in.cfg.Format, rec.Value)
			if err == nil {
				out = append(out, v2RecordJSON{Topic: rec.Topic, Key: k, Value: v, Partition: rec.Partition, Offset: rec.Offset})
			}
		}
		if err != nil {
			if taken == 0 {
				in.smu.Unlock()
				v2Fail(w, errorf(http.StatusInternalServerError, codeKafkaError, "Kafka error: %s-%d at offset %d: %v", rec.Topic, rec.Partition, rec.Offset, err))
				return
			}
			break
		}
		size += sz
		taken++
	}
	for _, rec := range in.pending[:taken] {
		in.returned[topicPartition{rec.Topic, rec.Partition}] = rec.Offset + 1
	}
	in.pending = slices.Delete(in.pending, 0, taken)
	in.smu.Unlock()
	if in.cfg.AutoCommit && taken > 0 {
		if err := p.commit(r.Context(), in, nil); err != nil {
			p.log.Warn("kafkarest: auto commit", "group", in.key.group, "err", err)
		}
	}
	writeJSON(w, http.StatusOK, "application/vnd.kafka."+in.cfg.Format.String()+".v2+json", out)
}

// commit commits offs, or when nil every offset returned so far.
func (p *Proxy) commit(ctx context.Context, in *instance, offs []topicPartitionOffset) error {
	if in.cl == nil {
		return illegalState("Consumer is not subscribed to any topics or assigned any partitions")
	}
	commit := map[string]map[int32]kgo.EpochOffset{}
	add := func(t string, pt int32, o int64) {
		if commit[t] == nil {
			commit[t] = map[int32]kgo.EpochOffset{}
		}
		commit[t][pt] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	if offs == nil {
		in.smu.Lock()
		for tp, o := range in.returned {
			add(tp.Topic, tp.Partition, o)
		}
		in.smu.Unlock()
	} else {
		for _, o := range offs {
			add(o.Topic, o.Partition, o.Offset)
		}
	}
	if len(commit) == 0 {
		return nil
	}
	if in.assigned != nil {
		// No group membership: commit as a simple consumer.
		os := kadm.Offsets{}
		for t, ps := range commit {
			for pt, eo := range ps {
				os.Add(kadm.Offset{Topic: t, Partition: pt, At: eo.Offset, LeaderEpoch: -1})
			}
		}
		return p.admin.CommitAllOffsets(ctx, in.key.group, os)
	}
	var cerr error
	in.cl.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsgOffsetCommitRequest, resp *kmsgOffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, pt := range t.Partitions {
				if e := kerrOf(pt.ErrorCode); e != nil && cerr == nil {
					cerr = fmt.Errorf("%s-%d: %w", t.Topic, pt.Partition, e)
				}
			}
		}
	})
	return cerr
}

func (p *Proxy) v2Commit(w http.ResponseWriter, r *http.Request, in *instance) {
	offs, ok := readV2Body(p, w, r, func(b []byte) ([]topicPartitionOffset, *Error) { return parseOffsets(b, true) })
	if !ok {
		return
	}
	if offs != nil && len(offs) == 0 {
		offs = nil
	}
	if cerr := p.commit(r.Context(), in, offs); cerr != nil {
		v2Fail(w, cerr)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (p *Proxy) v2Committed(w http.ResponseWriter, r *http.Request, in *instance) {
	parts, ok := readV2Body(p, w, r, func(b []byte) ([]topicPartition, *Error) { return parsePartitions(b, false) })
	if !ok {
		return
	}
	resp, ferr := p.admin.FetchOffsets(r.Context(), in.key.group)
	if ferr != nil {
		v2Fail(w, ferr)
		return
	}
	type committed struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		Metadata  string `json:"metadata"`
	}
	out := []committed{}
	for _, tp := range parts {
		if o, ok := resp.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			out = append(out, committed{Topic: tp.Topic, Partition: tp.Partition, Offset: o.At, Metadata: o.Metadata})
		}
	}
	writeJSON(w, http.StatusOK, v2ContentType, map[string]any{"offsets": out})
}

// readV2Body reads the request's body and parses it with parse; on an error
// it answers it (Confluent's v2 error body) and reports false.
func readV2Body[T any](p *Proxy, w http.ResponseWriter, r *http.Request, parse func([]byte) (T, *Error)) (T, bool) {
	body, err := p.readBody(r)
	if err == nil {
		v, perr := parse(body)
		if perr == nil {
			return v, true
		}
		err = perr
	}
	v2Fail(w, err)
	var zero T
	return zero, false
}
