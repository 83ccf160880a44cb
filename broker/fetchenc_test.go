package broker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/broker/log"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchEncodeMatchesKmsg is a property test: the hand-written streaming
// encoder of fetch responses produces exactly the bytes of
// kmsg.FetchResponse.AppendTo (framed with size and correlation id), for
// every supported version, random topics, partitions, errors and record data,
// read_committed or not.
func TestFetchEncodeMatchesKmsg(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))

	// A few logs with different contents to read chunks from.
	var logs []*log.Log
	for i := 0; i < 4; i++ {
		cfg := log.DefaultConfig()
		cfg.SegmentBytes = int64(512 + rng.IntN(4096))
		l, err := log.Open(t.TempDir(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		for j := 0; j < 5+i*20; j++ {
			var values []string
			for k := 0; k <= rng.IntN(5); k++ {
				values = append(values, fmt.Sprintf("l%d-b%d-r%d-%s", i, j, k, bytes.Repeat([]byte("x"), rng.IntN(200))))
			}
			b := testBatch(-1, 0, 0, int64(j), values...)
			batches, hdrs, err := log.SplitBatches(b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(batches[0], hdrs[0], time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}

	randName := func() string {
		n := rng.IntN(300) // names over 127 bytes exercise multi-byte varints
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz._-0123456789"[rng.IntN(39)]
		}
		return string(b)
	}
	for iter := 0; iter < 2000; iter++ {
		version := int16(4 + rng.IntN(9)) // 4..12
		committed := rng.IntN(2) == 0
		fr := &fetchReply{version: version}
		want := kmsg.NewPtrFetchResponse()
		want.Version = version
		nTopics := rng.IntN(4)
		if rng.IntN(20) == 0 {
			nTopics = 130 // more than a one-byte compact array length
		}
		for ti := 0; ti < nTopics; ti++ {
			ft := fetchTopic{name: randName()}
			binary.BigEndian.PutUint64(ft.id[:], rng.Uint64())
			binary.BigEndian.PutUint64(ft.id[8:], rng.Uint64())
			wt := kmsg.NewFetchResponseTopic()
			wt.Topic = ft.name
			wt.TopicID = ft.id
			nParts := rng.IntN(4)
			if nTopics < 10 && rng.IntN(20) == 0 {
				nParts = 200
			}
			for pi := 0; pi < nParts; pi++ {
				fp := fetchPart{
					partition:     rng.Int32N(1000) - 1,
					hwm:           rng.Int64N(1<<40) - 1,
					lso:           rng.Int64N(1<<40) - 1,
					logStart:      rng.Int64N(1<<40) - 1,
					committedRead: committed,
				}
				if rng.IntN(4) == 0 {
					fp.errorCode = int16(rng.IntN(120))
				}
				wp := kmsg.NewFetchResponseTopicPartition()
				wp.Partition = fp.partition
				wp.ErrorCode = fp.errorCode
				wp.HighWatermark = fp.hwm
				wp.LastStableOffset = fp.lso
				wp.LogStartOffset = fp.logStart
				wp.PreferredReadReplica = -1
				if committed {
					wp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
					for range rng.IntN(3) {
						a := log.AbortedTxn{ProducerID: rng.Int64N(1 << 40), FirstOffset: rng.Int64N(1 << 40)}
						fp.aborted = append(fp.aborted, a)
						wa := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
						wa.ProducerID, wa.FirstOffset = a.ProducerID, a.FirstOffset
						wp.AbortedTransactions = append(wp.AbortedTransactions, wa)
					}
				}
				wp.RecordBatches = []byte{}
				if rng.IntN(3) > 0 {
					l := logs[rng.IntN(len(logs))]
					_, hwm, _ := l.Offsets()
					chunk, err := l.Read(rng.Int64N(hwm+1), rng.Int64N(20000), rng.IntN(2) == 0)
					if err != nil {
						t.Fatal(err)
					}
					fp.chunk = chunk
					if wp.RecordBatches, err = chunk.Bytes(); err != nil {
						t.Fatal(err)
					}
					if wp.RecordBatches == nil {
						wp.RecordBatches = []byte{}
					}
				}
				ft.parts = append(ft.parts, fp)
				wt.Partitions = append(wt.Partitions, wp)
			}
			fr.topics = append(fr.topics, ft)
			want.Topics = append(want.Topics, wt)
		}
		corr := rng.Int32()
		wantBytes := appendResponse(nil, corr, want.IsFlexible(), want)

		var got []byte
		for _, part := range fr.encode(corr) {
			if part.chunk == nil {
				got = append(got, part.bytes...)
				continue
			}
			b, err := part.chunk.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b...)
		}
		fr.release()
		if !bytes.Equal(got, wantBytes) {
			i := 0
			for i < len(got) && i < len(wantBytes) && got[i] == wantBytes[i] {
				i++
			}
			t.Fatalf("iteration %d, fetch v%d, committed %v, %d topics: encode differs from kmsg at byte %d of %d/%d\n got %x\nwant %x",
				iter, version, committed, nTopics, i, len(got), len(wantBytes), got[max(0, i-16):min(len(got), i+16)], wantBytes[max(0, i-16):min(len(wantBytes), i+16)])
		}
		// And a client decodes it back.
		if int(binary.BigEndian.Uint32(got)) != len(got)-4 || int32(binary.BigEndian.Uint32(got[4:])) != corr {
			t.Fatalf("frame size/correlation id wrong")
		}
		dec := decodeResponse(t, 1, version, got[8:]).(*kmsg.FetchResponse)
		if len(dec.Topics) != nTopics {
			t.Fatalf("decoded %d topics, want %d", len(dec.Topics), nTopics)
		}
	}
}

// TestAppendResponseFraming checks the generic response framing for every
// API the broker serves, at every version it supports: size prefix,
// correlation id, header tags exactly when the response header is flexible
// (never for ApiVersions, KIP-511), then the kmsg body.
func TestAppendResponseFraming(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for key, api := range apiByKey {
		for v := api.min; v <= api.max; v++ {
			t.Run(fmt.Sprintf("%s/v%d", kmsg.NameForKey(key), v), func(t *testing.T) {
				resp := kmsg.ResponseForKey(key)
				resp.SetVersion(v)
				corr := rng.Int32()
				flexHeader := resp.IsFlexible() && key != apiVersionsKey
				framed := appendResponse([]byte("junk"), corr, flexHeader, resp)
				if string(framed[:4]) != "junk" {
					t.Fatal("appendResponse overwrote dst")
				}
				framed = framed[4:]
				if int(binary.BigEndian.Uint32(framed)) != len(framed)-4 {
					t.Fatalf("size %d for a frame of %d", binary.BigEndian.Uint32(framed), len(framed)-4)
				}
				if got := int32(binary.BigEndian.Uint32(framed[4:])); got != corr {
					t.Fatalf("correlation id %d, want %d", got, corr)
				}
				body := framed[8:]
				if flexHeader {
					if body[0] != 0 {
						t.Fatalf("header tags %x", body[0])
					}
					body = body[1:]
				}
				if !bytes.Equal(body, resp.AppendTo(nil)) {
					t.Fatal("body differs from kmsg's AppendTo")
				}
				decodeResponse(t, key, v, framed[8:])
			})
		}
	}
}
