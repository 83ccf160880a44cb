package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
)

// proxyBenchValue is a 1 KiB JSON document whose payload is random base64
// text, so that compression (franz-go's default, snappy, on both paths)
// does not shrink it to nothing.
var proxyBenchValue = func() string {
	rnd := rand.New(rand.NewPCG(7, 7))
	raw := make([]byte, 1024)
	for i := range raw {
		raw[i] = byte(rnd.UintN(256))
	}
	v := `{"id":0,"name":"benchmark","payload":"`
	v += base64.StdEncoding.EncodeToString(raw)[:1024-len(v)-2] + `"}`
	return v
}()

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRESTProxyProduce produces b.N records of 1 KiB JSON to the
// bundled broker (in this process, acks=all) through franz-go directly,
// through the proxy's v3 streaming produce (one chunked request) and
// through v2 produce (requests of 500 records, 4 at a time). It reports
// records/s and the process's CPU per record (broker included). Run with
//
//	go test -run XXX -bench BenchmarkRESTProxyProduce -benchtime 200000x ./integration/
func BenchmarkRESTProxyProduce(b *testing.B) {
	br := harness.TributaryBroker(b)
	h := startRESTProxy(b, br.Bootstrap(), kafkarest.Config{})
	ctx := context.Background()
	id := clusterID(b, h)
	measure := func(b *testing.B, run func(topic string)) {
		topic := fmt.Sprintf("bench-%s-%d", strings.NewReplacer("/", "-", "=", "-").Replace(b.Name()), b.N)
		curl(b, "POST", h+"/v3/clusters/"+id+"/topics", "application/json", "", `{"topic_name":"`+topic+`","partitions_count":1}`)
		cpu0, t0 := processCPU(), time.Now()
		b.ResetTimer()
		run(topic)
		b.StopTimer()
		el, cpu := time.Since(t0), processCPU()-cpu0
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/record")
	}
	b.Run("client=franz-go", func(b *testing.B) {
		measure(b, func(topic string) {
			cl, err := kgo.NewClient(kgo.SeedBrokers(br.Bootstrap()), kgo.DefaultProduceTopic(topic))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			v := []byte(proxyBenchValue)
			var failed error
			var mu sync.Mutex
			for range b.N {
				cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
					if err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
				})
			}
			if err := cl.Flush(ctx); err != nil || failed != nil {
				b.Fatal(err, failed)
			}
		})
	})
	b.Run("client=v3-streaming", func(b *testing.B) {
		measure(b, func(topic string) {
			pr, pw := io.Pipe()
			go func() {
				bw := bufio.NewWriterSize(pw, 256<<10)
				rec := `{"value":{"type":"JSON","data":` + proxyBenchValue + `}}`
				for range b.N {
					bw.WriteString(rec)
				}
				pw.CloseWithError(bw.Flush())
			}()
			resp, err := http.Post(h+"/v3/clusters/"+id+"/topics/"+topic+"/records", "application/json", pr)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			// One report a line; a client needs only its error_code.
			sc := bufio.NewScanner(resp.Body)
			for i := range b.N {
				if !sc.Scan() || !bytes.HasPrefix(sc.Bytes(), []byte(`{"error_code":200,`)) {
					b.Fatalf("report %d: %s %v", i, sc.Bytes(), sc.Err())
				}
			}
		})
	})
	b.Run("client=v2-json", func(b *testing.B) {
		measure(b, func(topic string) {
			const batch, conc = 500, 4
			body := `{"records":[` + strings.TrimSuffix(strings.Repeat(`{"value":`+proxyBenchValue+`},`, batch), ",") + `]}`
			work := make(chan int)
			var wg sync.WaitGroup
			for range conc {
				wg.Go(func() {
					for n := range work {
						b := body
						if n < batch {
							b = `{"records":[` + strings.TrimSuffix(strings.Repeat(`{"value":`+proxyBenchValue+`},`, n), ",") + `]}`
						}
						resp, err := http.Post(h+"/topics/"+topic, "application/vnd.kafka.json.v2+json", strings.NewReader(b))
						if err != nil {
							panic(err)
						}
						out, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 || strings.Contains(string(out), `"error_code":5`) {
							panic(fmt.Sprintf("v2 produce: %d %s", resp.StatusCode, out))
						}
					}
				})
			}
			for left := b.N; left > 0; left -= batch {
				work <- min(left, batch)
			}
			close(work)
			wg.Wait()
		})
	})
}
