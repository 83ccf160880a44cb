package integration

import (
	"bufio"
	"cmp"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// procStatus returns a /proc/self/status field in bytes (VmHWM: the peak
// resident set size; VmRSS: the current one).
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// vmHWM returns the process's peak resident set size in bytes.
func vmHWM() int64 { return procStatus("VmHWM") }

const (
	memBound      = 32 << 20
	memPartitions = 100
	memPerPart    = 1600 // 1 KiB records: 160 MiB in all, five times the bound
	// memOverhead is what the sink adds beyond its buffers: the AWS
	// client, one record batch, the collector's headroom. The test binary
	// itself (the whole integration package, its libraries initialised) is
	// measured before the sink opens and left out: it grows with the
	// package, not with the sink.
	memOverhead = 48 << 20
)

// TestS3SinkMemoryBound streams 160 MiB into 100 partitions whose files
// never reach flush.size, in a separate process with the SDK's soft memory
// limit: its peak RSS must stay under memory.buffer.max.bytes plus a fixed
// overhead (Confluent's sink would need s3.part.size per partition).
func TestS3SinkMemoryBound(t *testing.T) {
	t.Parallel()
	if url := os.Getenv("TRIBUTARY_S3_MEMORY_CHILD"); url != "" {
		memoryChild(t, url)
		return
	}
	s := harness.VersityGW(t, "lake")
	cmd := exec.Command(os.Args[0], "-test.run=^TestS3SinkMemoryBound$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TRIBUTARY_S3_MEMORY_CHILD="+s.URL, "GOMEMLIMIT=32MiB", "GOGC=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var peak, fed, base int64 = -1, -1, -1
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "peak-rss="); ok {
			f := strings.Fields(v)
			peak, _ = strconv.ParseInt(f[0], 10, 64)
			fed, _ = strconv.ParseInt(strings.TrimPrefix(f[1], "fed="), 10, 64)
			base, _ = strconv.ParseInt(strings.TrimPrefix(f[2], "base="), 10, 64)
		}
	}
	if peak <= 0 || base <= 0 {
		t.Fatalf("child printed no peak RSS:\n%s", out)
	}
	t.Logf("peak RSS %.1f MiB (%.1f MiB before the sink opened) for %.0f MiB buffered in %d open files (bound %d MiB + overhead %d MiB)",
		float64(peak)/(1<<20), float64(base)/(1<<20), float64(fed)/(1<<20), memPartitions, memBound>>20, memOverhead>>20)
	if peak-base > memBound+memOverhead {
		t.Fatalf("peak RSS grew by %d MiB, beyond memory.buffer.max.bytes %d MiB + %d MiB overhead", (peak-base)>>20, memBound>>20, memOverhead>>20)
	}
}

func memoryChild(t *testing.T, url string) {
	sch := schema.StructOf("bench.Row").Field("id", schema.Int64).Field("body", schema.String).Build()
	body := strings.Repeat("m", 1000)
	var tps []sdk.TopicPartition
	for p := range memPartitions {
		tps = append(tps, sdk.TopicPartition{Topic: "mem", Partition: int32(p)})
	}
	base := procStatus("VmRSS")
	s := &harness.S3{URL: url, AccessKey: "tributary", SecretKey: "tributary-secret", Region: "us-east-1"}
	cfg := s3Config(s, "lake", "format.class", "JsonFormat", "topics.dir", "mem", "flush.size", "1000000000",
		"memory.buffer.max.bytes", cmp.Or(os.Getenv("TRIBUTARY_S3_MEMORY_BOUND"), strconv.Itoa(memBound)))
	r := openS3Sink(t, cfg, tps...)
	var fed int64
	batch := make([]sdk.SinkRecord, 0, 500)
	for off := int64(0); off < memPerPart; off += 5 {
		for p := range memPartitions {
			for o := off; o < off+5; o++ {
				v := schema.NewStruct(sch).Set("id", o).Set("body", body)
				batch = append(batch, sdk.SinkRecord{Topic: "mem", Partition: int32(p), Offset: o, ValueSchema: sch, Value: v})
				fed += 1024
			}
			if len(batch) == cap(batch) {
				r.put(batch...)
				batch = batch[:0]
			}
		}
	}
	r.put(batch...)
	if got := r.flush(); len(got) != 0 {
		t.Fatalf("flush.size was never reached, yet %v is reported durable", got)
	}
	r.task.Close(context.Background())
	os.Stdout.WriteString("peak-rss=" + strconv.FormatInt(vmHWM(), 10) + " fed=" + strconv.FormatInt(fed, 10) + " base=" + strconv.FormatInt(base, 10) + "\n")
}
