package datagen

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"time"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Class is the connector class.
const Class = "dev.tributary.connect.datagen.DatagenConnector"

// Config is the datagen configuration.
type Config struct {
	Topic        string  `key:"kafka.topic" importance:"high" validate:"nonempty" doc:"Topic to write the generated records to."`
	Iterations   int64   `key:"iterations" default:"-1" importance:"medium" validate:"min=-1" doc:"Number of records each task generates before going idle; -1 for no limit."`
	Rate         float64 `key:"records.per.sec" default:"0" importance:"medium" validate:"min=0" doc:"Records per second per task; 0 for as fast as possible."`
	PayloadBytes int32   `key:"payload.bytes" default:"100" validate:"min=0,max=10485760" doc:"Length of the random payload field of each record."`
	Keys         int64   `key:"key.cardinality" default:"1000" validate:"min=1" doc:"Number of distinct record keys."`
	Seed         int64   `key:"seed" default:"0" doc:"Seed of the generator; equal seeds generate equal records."`
	BatchSize    int32   `key:"batch.size" default:"1000" validate:"min=1" doc:"Maximum records returned by one poll."`
	TaskIndex    int32   `key:"datagen.task" default:"0" validate:"min=0" doc:"Index of the task; set by the connector when it splits the work."`
}

// KeySchema and ValueSchema of the generated records.
var (
	KeySchema   = schema.String
	ValueSchema = schema.StructOf("tributary.datagen.Record").Version(1).
			Field("id", schema.Int64).
			Field("key", schema.String).
			Field("amount", schema.Decimal(2)).
			Field("created", schema.Timestamp).
			Field("payload", schema.String).
			Build()
)

// Connector returns the datagen connector.
func Connector() sdk.Connector {
	return sdk.SourceConnector[Config]{
		Class:   Class,
		Version: "4.4.0-tributary", // Tributary's (worker.Version), checked by cmd/tributary's tests
		Doc:     "Generates keyed records with a schema.",
		NewTask: func(c Config) sdk.SourceTask { return &task{cfg: c} },
		TaskConfigs: func(_ context.Context, c Config, maxTasks int) ([]Config, error) {
			out := make([]Config, maxTasks)
			for i := range out {
				out[i] = c
				out[i].TaskIndex = int32(i)
			}
			return out, nil
		},
		// Record seq of a task is a function of the seed, the task and
		// seq alone, and a task resumes after its committed seq: the same
		// records again, each once.
		ExactlyOnce: func(Config) sdk.ExactlyOnceSupport { return sdk.ExactlyOnceSupported },
	}
}

type task struct {
	cfg   Config
	gen   *Generator
	seq   int64 // next sequence number
	start time.Time
	first int64
}

func (t *task) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	t.gen = NewGenerator(t.cfg)
	off, err := tc.Offset(ctx, t.gen.part)
	if err != nil {
		return fmt.Errorf("datagen: read offset: %w", err)
	}
	if off != nil {
		seq, ok := off.Int64("seq")
		if !ok {
			return fmt.Errorf("datagen: stored offset %v has no integer seq", off)
		}
		t.seq = seq + 1
	}
	t.start, t.first = time.Now(), t.seq
	return nil
}

func (t *task) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	n := int64(min(max, int(t.cfg.BatchSize)))
	if t.cfg.Iterations >= 0 {
		n = min(n, t.cfg.Iterations-t.seq)
	}
	if t.cfg.Rate > 0 {
		due := t.first + int64(time.Since(t.start).Seconds()*t.cfg.Rate) + 1
		if due <= t.seq {
			next := t.start.Add(time.Duration(float64(t.seq-t.first) / t.cfg.Rate * float64(time.Second)))
			sleep(ctx, min(time.Until(next), 100*time.Millisecond))
			return nil, nil
		}
		n = min(n, due-t.seq)
	}
	if n <= 0 {
		sleep(ctx, 100*time.Millisecond) // count reached: idle
		return nil, nil
	}
	recs := make([]sdk.SourceRecord, n)
	for i := range recs {
		t.gen.record(t.seq, &recs[i])
		t.seq++
	}
	return recs, nil
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// letters are the 64 characters of random payloads (base64url's alphabet),
// so that one 64-bit random number gives ten of them.
const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"

// letterPairs[j] holds letters[j&63] and letters[j>>6] as a little-endian
// pair: twelve random bits give two characters with one lookup.
var letterPairs = func() (t [4096]uint16) {
	for j := range t {
		t[j] = uint16(letters[j&63]) | uint16(letters[j>>6])<<8
	}
	return t
}()

// randomText returns n random characters of letters, ten per random
// number (x's bits 0-5 give the first, 6-11 the second, and so on). The
// string is built in place: the byte slice is never used again, so it
// becomes the string without a copy (the generator is on the benchmark's
// hot path).
func randomText(rng *splitmix, n int) string {
	if n == 0 {
		return ""
	}
	b := make([]byte, n)
	i := 0
	for ; n-i >= 10; i += 10 {
		x := rng.next()
		c := b[i : i+10]
		binary.LittleEndian.PutUint64(c, uint64(letterPairs[x&4095])|uint64(letterPairs[x>>12&4095])<<16|
			uint64(letterPairs[x>>24&4095])<<32|uint64(letterPairs[x>>36&4095])<<48)
		binary.LittleEndian.PutUint16(c[8:], letterPairs[x>>48&4095])
	}
	for x := rng.next(); i < n; i++ {
		b[i] = letters[x&63]
		x >>= 6
	}
	return unsafe.String(unsafe.SliceData(b), n)
}

// Payloads of at most maxPooled bytes are windows, at a random offset
// below poolBytes, of a random text the task draws once at start: a record
// then costs no random characters of its own, as in Kafka's own producer
// benchmark (which sends one payload over and over), while records still
// differ: about one record in eight shares part of its text with one of
// the 64 before it, which lets snappy, lz4 and gzip (looking back 32-64
// KiB) shrink a batch by a few percent, and zstd, looking further, more.
const (
	maxPooled = 64 << 10
	poolBytes = 1 << 20
)

// A Generator makes a task's records: record seq is a pure function of the
// configuration (seed, task index, sizes) and seq.
type Generator struct {
	cfg  Config
	part sdk.Partition
	pool string // random text; empty when payloads are drawn one by one
	keys []any  // the keys as values, when there are at most maxKeyTable
}

// maxKeyTable bounds the key cardinality up to which a generator keeps its
// keys ready instead of formatting one per record.
const maxKeyTable = 4096

// NewGenerator returns the generator of cfg's task; it draws the task's
// random text (about a millisecond).
func NewGenerator(cfg Config) *Generator {
	g := &Generator{cfg: cfg, part: sdk.Partition{"datagen.task": int64(cfg.TaskIndex)}}
	if cfg.PayloadBytes > 0 && cfg.PayloadBytes <= maxPooled {
		// Bit 63 set: no record's seed (sequence numbers are below 2^63)
		// is the text's.
		rng := splitmix(uint64(cfg.Seed)*0x9e3779b97f4a7c15 ^ uint64(cfg.TaskIndex)<<48 ^ (1<<63 | 0x5eed_7e47))
		g.pool = randomText(&rng, poolBytes+int(cfg.PayloadBytes))
	}
	if cfg.Keys <= maxKeyTable {
		g.keys = make([]any, cfg.Keys)
		for i := range g.keys {
			g.keys[i] = keyOf(int64(i))
		}
	}
	return g
}

func keyOf(i int64) string { return "key-" + strconv.FormatInt(i, 10) }

// Record returns record seq of the generator's task: what the task emits is
// a function of (seed, task, seq) alone, so whoever reads the topic (a
// verifier, a benchmark, a test) can compute what each record must be.
func (g *Generator) Record(seq int64) sdk.SourceRecord {
	var r sdk.SourceRecord
	g.record(seq, &r)
	return r
}

func (g *Generator) record(seq int64, r *sdk.SourceRecord) {
	rng := splitmix(uint64(g.cfg.Seed)*0x9e3779b97f4a7c15 ^ uint64(g.cfg.TaskIndex)<<48 ^ uint64(seq))
	// Each value is boxed once, however many places hold it.
	var k any
	if i := int64(rng.next() % uint64(g.cfg.Keys)); g.keys != nil {
		k = g.keys[i]
	} else {
		k = keyOf(i)
	}
	var id any = seq
	var payload string
	if n := int(g.cfg.PayloadBytes); g.pool != "" {
		off := int(rng.next() % poolBytes)
		payload = g.pool[off : off+n]
	} else {
		payload = randomText(&rng, n)
	}
	v := schema.NewStruct(ValueSchema)
	v.SetIndex(0, id)
	v.SetIndex(1, k)
	v.SetIndex(2, big.NewInt(int64(rng.next()%1_000_000)))
	v.SetIndex(3, time.UnixMilli(1_700_000_000_000+seq).UTC())
	v.SetIndex(4, payload)
	*r = sdk.SourceRecord{
		Partition: g.part, Offset: sdk.Offset{"seq": id}, Topic: g.cfg.Topic,
		KeySchema: KeySchema, Key: k, ValueSchema: ValueSchema, Value: v,
	}
}

type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (t *task) Close(context.Context) error { return nil }
