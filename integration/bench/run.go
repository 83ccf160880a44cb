package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MinRecordSize is the smallest record value: each value starts with its
// 8-byte sequence number.
const MinRecordSize = 8

// Workload is one record size and partition count.
type Workload struct {
	RecordSize int `json:"record_size"`
	Partitions int `json:"partitions"`
	Records    int `json:"records"`
	Warmup     int `json:"warmup_records"`
	Runs       int `json:"runs"`
	// TxnEvery > 0 makes the producer transactional, committing every
	// TxnEvery records, and the consumer read_committed.
	TxnEvery int `json:"txn_every,omitempty"`
}

func (w Workload) String() string {
	s := fmt.Sprintf("%s records, %d partition%s", sizeString(w.RecordSize), w.Partitions, plural(w.Partitions))
	if w.TxnEvery > 0 {
		s += fmt.Sprintf(", a transaction every %d records, read_committed", w.TxnEvery)
	}
	return s
}

func (w Workload) short() string {
	return fmt.Sprintf("%s/%dp", sizeString(w.RecordSize), w.Partitions)
}

func sizeString(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// DefaultRecords is the record count used for a size when none is given:
// 256 MiB of values, at most 1,000,000 records (1,000,000 x 100 B, 262,144
// x 1 KiB), which keeps the default five-target, three-run benchmark to
// about three minutes on two cores while each phase lasts around a second.
func DefaultRecords(size int) int {
	n := (256 << 20) / size
	return max(1000, min(1_000_000, n))
}

// DefaultWarmup is the warm-up record count for a measured count of n.
func DefaultWarmup(n int) int { return min(50_000, max(n/10, 100)) }

// DefaultRuns is how often each workload is measured per target; the
// report shows the median run.
const DefaultRuns = 3

// Options configure Run.
type Options struct {
	// Sizes are the record value sizes in bytes (each >= MinRecordSize).
	Sizes []int
	// Partitions are the partition counts.
	Partitions []int
	// Records per workload; 0 means DefaultRecords(size).
	Records int
	// Warmup records per workload; negative means DefaultWarmup(records),
	// 0 disables the warm-up.
	Warmup int
	// Runs is how often each workload is measured per target (default
	// DefaultRuns); each run uses a fresh topic.
	Runs int
	// Compression is the producer's batch compression: none (default),
	// snappy (franz-go's default), lz4, zstd or gzip.
	Compression string
	// Targets to run, in order.
	Targets []Target
	// Dir is where data directories are created (default os.TempDir()).
	Dir string
	// PhaseTimeout bounds each produce or consume phase (default 5 min).
	PhaseTimeout time.Duration
	// Progress receives one line per step; nil discards.
	Progress io.Writer
	// TxnEvery > 0 runs the workloads transactionally: the producer has a
	// transactional id and commits every TxnEvery records, consumers read
	// committed records only; the goals become TxnGoals.
	TxnEvery int

	// NoWorkloads skips the produce/consume workloads (only the group
	// benchmarks run).
	NoWorkloads bool
	// Groups runs the consumer group benchmarks on the targets that have
	// them (tributary, kfake-memory, kafka).
	Groups bool
	// GroupRecords is the record count of the group consume run (default
	// DefaultGroupRecords); it runs Runs times.
	GroupRecords int
	// RebalanceRuns is the repetition count of the rebalance run (0: no
	// rebalance run).
	RebalanceRuns int
	// RebalanceTimeout bounds the wait for the survivors after a kill
	// (default 60 s).
	RebalanceTimeout time.Duration
	// MemberExe and MemberArgs start the rebalance run's member child:
	// a process that calls RunMemberChild when MemberChildEnv is set
	// (default: this executable, no arguments).
	MemberExe  string
	MemberArgs []string
}

// Workloads expands the options into the workload list, sizes outermost.
func (o *Options) Workloads() []Workload {
	var ws []Workload
	for _, s := range o.Sizes {
		for _, p := range o.Partitions {
			n := o.Records
			if n <= 0 {
				n = DefaultRecords(s)
			}
			wu := o.Warmup
			if wu < 0 {
				wu = DefaultWarmup(n)
			}
			runs := o.Runs
			if runs <= 0 {
				runs = DefaultRuns
			}
			ws = append(ws, Workload{RecordSize: s, Partitions: p, Records: n, Warmup: wu, Runs: runs, TxnEvery: o.TxnEvery})
		}
	}
	return ws
}

// Validate checks the options.
func (o *Options) Validate() error {
	if len(o.Sizes) == 0 || len(o.Partitions) == 0 || len(o.Targets) == 0 {
		return errors.New("need at least one size, partition count and target")
	}
	for _, s := range o.Sizes {
		if s < MinRecordSize || s > 900_000 {
			return fmt.Errorf("record size %d out of range [%d, 900000]", s, MinRecordSize)
		}
	}
	for _, p := range o.Partitions {
		if p < 1 || p > 1000 {
			return fmt.Errorf("partition count %d out of range [1, 1000]", p)
		}
	}
	if o.Runs < 0 || o.Runs > 100 {
		return fmt.Errorf("run count %d out of range [1, 100]", o.Runs)
	}
	if _, err := compressionCodec(o.Compression); err != nil {
		return err
	}
	if o.Records < 0 {
		return fmt.Errorf("negative record count %d", o.Records)
	}
	if o.TxnEvery < 0 {
		return fmt.Errorf("negative transaction size %d", o.TxnEvery)
	}
	if o.GroupRecords < 0 {
		return fmt.Errorf("negative group record count %d", o.GroupRecords)
	}
	if o.RebalanceRuns < 0 || o.RebalanceRuns > 100 {
		return fmt.Errorf("rebalance run count %d out of range [0, 100]", o.RebalanceRuns)
	}
	if o.NoWorkloads && !o.Groups {
		return errors.New("nothing to run: workloads and group runs both disabled")
	}
	if o.Groups && o.NoWorkloads && !slices.ContainsFunc(o.Targets, Target.hasGroups) {
		return errNoGroupTargets
	}
	return nil
}

// Run starts each target in turn, runs every workload against it and
// returns the report. An error starting or running one target is recorded
// in the report and the run goes on; Run returns an error only for invalid
// options or a cancelled ctx.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.PhaseTimeout <= 0 {
		o.PhaseTimeout = 5 * time.Minute
	}
	logf := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "bench: "+format+"\n", args...)
		}
	}
	if o.Compression == "" {
		o.Compression = "none"
	}
	codec, _ := compressionCodec(o.Compression)
	if o.GroupRecords <= 0 {
		o.GroupRecords = DefaultGroupRecords
	}
	if o.RebalanceTimeout <= 0 {
		o.RebalanceTimeout = time.Minute
	}
	runs := o.Runs
	if runs <= 0 {
		runs = DefaultRuns
	}
	var ws []Workload
	if !o.NoWorkloads {
		ws = o.Workloads()
	}
	rep := newReport(ws, o.Targets, o.Compression)
	if o.TxnEvery > 0 {
		rep.Txn = true
		rep.Client = txnClientDesc(o.Compression, o.TxnEvery)
	}
	if o.Groups {
		rep.Groups = &GroupReport{Settings: groupSettings(o.GroupRecords, runs, o.RebalanceRuns)}
	}
	begin := time.Now()
	for _, t := range o.Targets {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		logf("%s: starting (%s)", t, t.Describe())
		st := time.Now()
		r, err := start(ctx, t, o.Dir)
		if err != nil {
			logf("%s: not run: %v", t, err)
			rep.setTargetError(t, err)
			continue
		}
		logf("%s: ready at %s in %v", t, r.bootstrap, time.Since(st).Round(time.Millisecond))
		for i, w := range rep.Workloads {
			if ctx.Err() != nil {
				break
			}
			res := runWorkload(ctx, t, r, w.Workload, codec, o.PhaseTimeout, logf)
			rep.Workloads[i].Results = append(rep.Workloads[i].Results, res)
		}
		if o.Groups && t.hasGroups() && ctx.Err() == nil {
			rep.Groups.Consume = append(rep.Groups.Consume, groupConsume(ctx, t, r.bootstrap, o.GroupRecords, runs, o.PhaseTimeout, logf))
			if o.RebalanceRuns > 0 && ctx.Err() == nil {
				rep.Groups.Rebalance = append(rep.Groups.Rebalance, rebalance(ctx, t, r.bootstrap, &o, logf))
			}
		}
		if err := r.close(); err != nil {
			logf("%s: stop: %v", t, err)
		} else {
			logf("%s: stopped", t)
		}
	}
	rep.Elapsed = time.Since(begin)
	rep.ElapsedSeconds = rep.Elapsed.Seconds()
	rep.compute()
	return rep, ctx.Err()
}

// runWorkload runs one workload against one target.
func runWorkload(ctx context.Context, t Target, r *running, w Workload, codec kgo.CompressionCodec, timeout time.Duration, logf func(string, ...any)) Result {
	bootstrap := r.bootstrap
	res := Result{Target: t}
	fail := func(phase string, err error) Result {
		res.Error = fmt.Sprintf("%s: %v", phase, err)
		logf("%s %s: FAILED %s", t, w.short(), res.Error)
		return res
	}
	name := fmt.Sprintf("bench-%db-%dp", w.RecordSize, w.Partitions)
	var topics []string
	for run := 1; run <= w.Runs; run++ {
		topics = append(topics, fmt.Sprintf("%s-run%d", name, run))
	}
	if w.Warmup > 0 {
		topics = append(topics, name+"-warmup")
	}
	if err := createTopics(ctx, bootstrap, int32(w.Partitions), topics, r.opts...); err != nil {
		return fail("create topics", err)
	}

	popts := append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ProducerBatchCompression(codec)}, r.opts...)
	if w.TxnEvery > 0 {
		popts = append(popts, kgo.TransactionalID(fmt.Sprintf("%s-%s", name, t)))
	}
	prod, err := kgo.NewClient(popts...)
	if err != nil {
		return fail("producer", err)
	}
	defer prod.Close()

	if w.Warmup > 0 {
		logf("%s %s: warm-up, %d records", t, w.short(), w.Warmup)
		pctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := produce(pctx, prod, name+"-warmup", w.RecordSize, w.Warmup, w.TxnEvery)
		if err == nil {
			_, err = consume(pctx, bootstrap, name+"-warmup", w.RecordSize, w.Warmup, w.TxnEvery > 0, r.opts...)
		}
		cancel()
		if err != nil {
			return fail("warm-up", err)
		}
	}

	var prods, cons []*Rate
	for run := 1; run <= w.Runs; run++ {
		topic := topics[run-1]
		step := fmt.Sprintf("%s %s run %d/%d", t, w.short(), run, w.Runs)
		logf("%s: produce %d records", step, w.Records)
		pctx, cancel := context.WithTimeout(ctx, timeout)
		cpu0 := r.cpu()
		d, err := produce(pctx, prod, topic, w.RecordSize, w.Records, w.TxnEvery)
		cpu := r.cpu() - cpu0
		cancel()
		if err != nil {
			return fail(fmt.Sprintf("run %d: produce", run), err)
		}
		p := newRate(w, d)
		p.setCPU(cpu)
		prods = append(prods, p)
		logf("%s: produced %s", step, p)

		logf("%s: consume %d records from the start", step, w.Records)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cpu0 = r.cpu()
		d, err = consume(cctx, bootstrap, topic, w.RecordSize, w.Records, w.TxnEvery > 0, r.opts...)
		cpu = r.cpu() - cpu0
		cancel()
		if err != nil {
			return fail(fmt.Sprintf("run %d: consume", run), err)
		}
		c := newRate(w, d)
		c.setCPU(cpu)
		cons = append(cons, c)
		logf("%s: consumed %s, count, order and offsets verified", step, c)
	}
	res.setRuns(prods, cons)
	return res
}

// createTopics creates topics with the given partition count and
// replication factor 1.
func createTopics(ctx context.Context, bootstrap string, partitions int32, topics []string, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resps, err := adm.CreateTopics(cctx, partitions, 1, nil, topics...)
	if err != nil {
		return err
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			return fmt.Errorf("topic %s: %w", r.Topic, r.Err)
		}
	}
	// Wait until every partition has a leader: a client that sees a topic
	// before that waits for its next metadata refresh (5 s by default in
	// franz-go), which would land in the measured time.
	for {
		md, err := adm.Metadata(cctx, topics...)
		if err == nil && topicsReady(md, topics, partitions) {
			return nil
		}
		select {
		case <-cctx.Done():
			return fmt.Errorf("topics not ready: %w (last metadata error: %v)", cctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// topicsReady reports whether md lists every topic with all partitions led.
func topicsReady(md kadm.Metadata, topics []string, partitions int32) bool {
	for _, name := range topics {
		td, ok := md.Topics[name]
		if !ok || td.Err != nil || int32(len(td.Partitions)) != partitions {
			return false
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}

// compressionCodec maps a --compression name to franz-go's codec.
func compressionCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "", "none":
		return kgo.NoCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("unknown compression %q (none, snappy, lz4, zstd, gzip)", name)
}

// produce writes n records of size bytes to topic and returns the time from
// the first Produce call to the end of Flush. Value i starts with i as a
// big-endian uint64; the rest is random, so that compression has nothing
// to gain. With txnEvery > 0 (a transactional client) the records go in
// transactions of txnEvery records, each committed before the next begins.
func produce(ctx context.Context, cl *kgo.Client, topic string, size, n, txnEvery int) (time.Duration, error) {
	// A free list rather than a sync.Pool, which a GC would empty: records
	// (and their random values) are made once and reused after their ack.
	// At most MaxBufferedRecords (50,000 by default) are ever outstanding.
	rng := rand.NewChaCha8([32]byte{byte(size), byte(n), byte(n >> 8), byte(n >> 16)})
	free := make(chan *kgo.Record, min(n, 50_000))
	get := func() *kgo.Record {
		select {
		case r := <-free:
			return r
		default:
			v := make([]byte, size)
			rng.Read(v)
			return &kgo.Record{Value: v}
		}
	}
	put := func(r *kgo.Record) {
		*r = kgo.Record{Value: r.Value}
		select {
		case free <- r:
		default:
		}
	}
	var (
		acked    atomic.Int64
		errOnce  sync.Once
		firstErr error
		failed   atomic.Bool
	)
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			errOnce.Do(func() { firstErr = err; failed.Store(true) })
			return
		}
		acked.Add(1)
		put(r)
	}
	start := time.Now()
	for i := 0; i < n && !failed.Load(); i++ {
		if txnEvery > 0 && i%txnEvery == 0 {
			if i > 0 {
				if err := commitTxn(ctx, cl); err != nil {
					return 0, err
				}
			}
			if err := cl.BeginTransaction(); err != nil {
				return 0, fmt.Errorf("begin transaction: %w", err)
			}
		}
		r := get()
		r.Topic = topic
		binary.BigEndian.PutUint64(r.Value, uint64(i))
		cl.Produce(ctx, r, promise)
	}
	if txnEvery > 0 && !failed.Load() {
		if err := commitTxn(ctx, cl); err != nil {
			return 0, err
		}
	}
	if err := cl.Flush(ctx); err != nil && !failed.Load() {
		return 0, err
	}
	d := time.Since(start)
	if failed.Load() {
		return 0, firstErr
	}
	if got := acked.Load(); got != int64(n) {
		return 0, fmt.Errorf("%d of %d records acknowledged", got, n)
	}
	return d, nil
}

// commitTxn flushes the transaction's records (EndTransaction does not) and
// commits it.
func commitTxn(ctx context.Context, cl *kgo.Client) error {
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush before commit: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// consume reads topic from the start with a new client until n records
// arrived, checking that every value has the right size and carries a
// sequence number below n, that each partition's sequence numbers increase
// and its offsets are contiguous from 0 (increasing, with committed only:
// read_committed, where transaction markers take offsets), and that no
// record repeats. It returns the time from creating the client to the n-th
// record.
func consume(ctx context.Context, bootstrap, topic string, size, n int, committed bool, extra ...kgo.Opt) (time.Duration, error) {
	start := time.Now()
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var (
		seen    = make([]uint64, (n+63)/64)
		nextOff = map[int32]int64{}
		lastSeq = map[int32]int64{}
		count   int
		bad     error
	)
	check := func(r *kgo.Record) error {
		if len(r.Value) != size {
			return fmt.Errorf("partition %d offset %d: value of %d bytes, want %d", r.Partition, r.Offset, len(r.Value), size)
		}
		if want := nextOff[r.Partition]; r.Offset != want && !(committed && r.Offset > want) {
			return fmt.Errorf("partition %d: offset %d, want %d", r.Partition, r.Offset, want)
		}
		nextOff[r.Partition] = r.Offset + 1
		seq := binary.BigEndian.Uint64(r.Value)
		if seq >= uint64(n) {
			return fmt.Errorf("partition %d offset %d: sequence %d out of range", r.Partition, r.Offset, seq)
		}
		if last, ok := lastSeq[r.Partition]; ok && int64(seq) <= last {
			return fmt.Errorf("partition %d offset %d: sequence %d after %d (out of order)", r.Partition, r.Offset, seq, last)
		}
		lastSeq[r.Partition] = int64(seq)
		if seen[seq/64]&(1<<(seq%64)) != 0 {
			return fmt.Errorf("partition %d offset %d: sequence %d seen twice", r.Partition, r.Offset, seq)
		}
		seen[seq/64] |= 1 << (seq % 64)
		return nil
	}
	for count < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("%w after %d of %d records", err, count, n)
		}
		for _, fe := range fs.Errors() {
			if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) {
				continue
			}
			if kerr.IsRetriable(fe.Err) {
				continue
			}
			return 0, fmt.Errorf("fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if bad != nil {
				return
			}
			bad = check(r)
			count++
		})
		if bad != nil {
			return 0, bad
		}
	}
	d := time.Since(start)
	if count != n {
		return 0, fmt.Errorf("read %d records, want %d", count, n)
	}
	return d, nil
}

// hostInfo describes the machine and the client.
func hostInfo() Host {
	h := Host{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/twmb/franz-go":
				h.FranzGo = d.Version
			case "github.com/twmb/franz-go/pkg/kfake":
				h.Kfake = d.Version
			}
		}
	}
	return h
}
