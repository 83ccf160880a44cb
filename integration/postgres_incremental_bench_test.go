package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// BenchmarkPostgresIncrementalSnapshot measures an incremental snapshot
// (execute-snapshot through the signal table) of one table, by Tributary's
// source and by Debezium 3.6.1 on Kafka Connect 4.4, one after the other on
// the same database, each on its own broker, without and with a concurrent
// change stream (updates of random rows, about 1,000 a second): rows/s of
// the snapshot and the stream's lag during it (the longest time from a
// change's commit to its event in the topic). Run it alone:
//
//	go test -run '^$' -bench BenchmarkPostgresIncrementalSnapshot -benchtime 1x -timeout 60m ./integration/
//
// TRIBUTARY_PG_INCR_BENCH_ROWS sets the table's rows (500000; Debezium
// takes minutes for those on a small machine); TRIBUTARY_PG_BENCH_NO_DEBEZIUM
// leaves Debezium out, TRIBUTARY_PG_INCR_BENCH_NO_LOAD the runs under load.
func BenchmarkPostgresIncrementalSnapshot(b *testing.B) {
	rows := 500000
	if v, err := strconv.Atoi(os.Getenv("TRIBUTARY_PG_INCR_BENCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	pg := harness.StartPostgresT(b)
	pg.Exec(b, signalTableSQL)
	pg.Exec(b, fmt.Sprintf(`CREATE TABLE big (id bigint PRIMARY KEY, v bigint NOT NULL, pad text NOT NULL);
		INSERT INTO big SELECT i, i, repeat('p', 100) FROM generate_series(1, %d) i; ANALYZE big; CHECKPOINT`, rows))
	type result struct {
		rate float64
		lag  time.Duration
	}
	results := map[string]result{}
	run := func(name string, start func(cfg map[string]string) (bootstrap string, stop func()), load bool) {
		id := fmt.Sprintf("ib%d", pgSeq.Add(1))
		cfg := pgIncrementalConfig(pg, id, "public.big")
		cfg["slot.drop.on.stop"] = "true"
		bootstrap, stop := start(cfg)
		defer stop()
		cl := newBenchClient(b, bootstrap)
		topic := id + ".public.big"
		cl.AddConsumeTopics(topic)
		var reads, lastRead atomic.Int64 // lastRead: when the latest read event arrived (Unix ns)
		var maxLag atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		first := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.Once{}
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				now := time.Now()
				fs.EachRecord(func(r *kgo.Record) {
					once.Do(func() { close(first) })
					// Read events (most of them, 4 KB each with their
					// schema) are counted without parsing, so that this
					// consumer keeps up with the snapshot on two cores and
					// the lag measured is the pipeline's, not its own.
					if bytes.Contains(r.Value, []byte(`"op":"r"`)) {
						reads.Add(1)
						lastRead.Store(now.UnixNano())
						return
					}
					var v struct {
						Payload struct {
							Op     string `json:"op"`
							Source struct {
								TsUs int64 `json:"ts_us"`
							} `json:"source"`
						} `json:"payload"`
					}
					if json.Unmarshal(r.Value, &v) != nil {
						return
					}
					switch v.Payload.Op {
					case "r":
						reads.Add(1)
						lastRead.Store(now.UnixNano())
					case "u":
						if lag := now.Sub(time.UnixMicro(v.Payload.Source.TsUs)); int64(lag) > maxLag.Load() {
							maxLag.Store(int64(lag))
						}
					}
				})
			}
		}()
		// The stream runs once a change arrives (changes made before the
		// slot exists are not captured: one a second until then).
		for deadline := time.Now().Add(3 * time.Minute); ; {
			pg.Exec(b, "UPDATE big SET v = v + 1 WHERE id = 1")
			select {
			case <-first:
			case <-time.After(time.Second):
				if time.Now().Before(deadline) {
					continue
				}
				b.Fatalf("%s: the stream did not start", name)
			}
			break
		}
		maxLag.Store(0)
		var loadWG sync.WaitGroup
		var loadCount atomic.Int64
		if load {
			loadWG.Add(1)
			go func() {
				defer loadWG.Done()
				conn := pgConn(b, pg)
				for i := 0; ctx.Err() == nil; i++ {
					if _, err := conn.Exec(ctx, fmt.Sprintf("UPDATE big SET v = v + 1 WHERE id = %d", 1+(i*7919)%rows)); err != nil && ctx.Err() == nil {
						b.Error(err)
						return
					}
					loadCount.Add(1)
					time.Sleep(time.Millisecond)
				}
			}()
		}
		t0 := time.Now()
		pg.Exec(b, fmt.Sprintf(`INSERT INTO debezium_signal VALUES ('%s', 'execute-snapshot', '{"data-collections": ["public.big"]}')`, id))
		// The snapshot is over when no read event came for 3 s after at
		// least the rows no change touched: a row changed while its chunk
		// was open arrives as the change, not as a read.
		for last := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			n := reads.Load()
			if n >= int64(rows) || n >= int64(rows)-loadCount.Load() && n > 0 && time.Since(time.Unix(0, lastRead.Load())) > 3*time.Second {
				break
			}
			if time.Since(t0) > 30*time.Minute {
				b.Fatalf("%s: %d of %d rows after 30 minutes", name, n, rows)
			}
			if time.Since(last) > 10*time.Second {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "%s: %d rows after %v\n", name, n, time.Since(t0).Round(time.Second))
			}
		}
		d := time.Unix(0, lastRead.Load()).Sub(t0)
		cancel()
		loadWG.Wait()
		wg.Wait()
		label := name
		if load {
			label += "/load"
		}
		results[label] = result{rate: float64(rows) / d.Seconds(), lag: time.Duration(maxLag.Load())}
		b.Logf("%s: %d rows in %v (%.0f rows/s; %d as read events, the others changed during their chunk), %d changes, stream lag at most %v",
			label, rows, d.Round(time.Millisecond), float64(rows)/d.Seconds(), reads.Load(), loadCount.Load(), time.Duration(maxLag.Load()).Round(time.Millisecond))
	}
	tributary := func(cfg map[string]string) (string, func()) {
		bin := harness.BuildTributary(b)
		bootstrap := harness.TributaryBroker(b).Bootstrap()
		props := harness.WorkerProps(b, bootstrap, "incrbench"+cfg["topic.prefix"], nil)
		w := harness.StartWorkerProcess(b, bin, filepath.Join(b.TempDir(), "worker"), props)
		benchREST(b, w.URL(), "POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
		return bootstrap, func() { benchREST(b, w.URL(), "DELETE", "/connectors/pg", nil, 204); time.Sleep(2 * time.Second) }
	}
	debezium := func(cfg map[string]string) (string, func()) {
		bootstrap := harness.TributaryBroker(b).Bootstrap()
		kc := harness.KafkaConnect(b, bootstrap)
		cfg["tasks.max"] = "1"
		benchREST(b, kc.URL(), "POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
		return bootstrap, func() { benchREST(b, kc.URL(), "DELETE", "/connectors/pg", nil, 204); time.Sleep(2 * time.Second) }
	}
	for i := 0; i < b.N; i++ {
		load := os.Getenv("TRIBUTARY_PG_INCR_BENCH_NO_LOAD") == ""
		run("tributary", tributary, false)
		if load {
			run("tributary", tributary, true)
		}
		if os.Getenv("TRIBUTARY_PG_BENCH_NO_DEBEZIUM") == "" {
			harness.RequireDebezium(b)
			run("debezium", debezium, false)
			if load {
				run("debezium", debezium, true)
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(results["tributary"].rate, "rows/s")
	b.ReportMetric(results["tributary/load"].rate, "rows/s-under-load")
	b.ReportMetric(results["tributary/load"].lag.Seconds(), "max-lag-s")
	if d := results["debezium"]; d.rate > 0 {
		b.ReportMetric(results["tributary"].rate/d.rate, "x-debezium")
		b.Logf("ratio: %.1fx Debezium's rate idle", results["tributary"].rate/d.rate)
		if dl := results["debezium/load"]; dl.rate > 0 {
			b.ReportMetric(results["tributary/load"].rate/dl.rate, "x-debezium-under-load")
			b.Logf("ratio under load: %.1fx; stream lag during the snapshot at most %v (Debezium %v)",
				results["tributary/load"].rate/dl.rate, results["tributary/load"].lag.Round(time.Millisecond), dl.lag.Round(time.Millisecond))
		}
	}
}
