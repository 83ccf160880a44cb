package container

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// The image's footprint, measured (not asserted):
//
//	go test -run '^$' -bench Image -benchtime 5x ./integration/container/
//
// BenchmarkImageSize reports the image's size and its docker save | gzip
// size; BenchmarkImageStartDev the time from docker start to GET /health
// answering 200 through the published port, dev's own "ready in" figure,
// and the container's resident memory 10 s after (idle, no connectors);
// BenchmarkImageStartWorker the same for a worker joining a broker
// container.

func BenchmarkImageSize(b *testing.B) {
	image := benchImage(b)
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Size}}", image).Output()
	if err != nil {
		b.Fatal(err)
	}
	size, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	gz, err := exec.Command("sh", "-c", "docker save "+image+" | gzip -6 | wc -c").Output()
	if err != nil {
		b.Fatal(err)
	}
	gzSize, _ := strconv.ParseFloat(strings.TrimSpace(string(gz)), 64)
	for range b.N {
	}
	b.ReportMetric(size/1e6, "MB")
	b.ReportMetric(gzSize/1e6, "MB-gzip")
}

// benchImage builds the image as the tests do.
func benchImage(b *testing.B) string {
	b.Helper()
	if out, err := runErr(repoRoot(b), nil, "make", "image", "IMAGE=tributary-test/tributary", "VERSION=checkout"); err != nil {
		b.Fatalf("make image: %v\n%s", err, out)
	}
	return testImage
}

var readyIn = regexp.MustCompile(`ready in ([0-9.]+)(ms|s)`)

func BenchmarkImageStartDev(b *testing.B) {
	image := benchImage(b)
	var start, internal, rss, pss float64
	for range b.N {
		s, in, r, p := startAndIdle(b, image, nil, []string{"dev"})
		start += s.Seconds()
		internal += in.Seconds()
		rss += r
		pss += p
	}
	n := float64(b.N)
	b.ReportMetric(start/n*1000, "ms-to-ready")
	b.ReportMetric(internal/n*1000, "ms-ready-in")
	b.ReportMetric(rss/n, "MB-RSS-idle")
	b.ReportMetric(pss/n, "MB-PSS-idle")
}

func BenchmarkImageStartWorker(b *testing.B) {
	image := benchImage(b)
	ctx := context.Background()
	nw, err := network.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer nw.Remove(ctx)
	broker, err := testcontainers.Run(ctx, image,
		testcontainers.WithCmd("broker", "--override", "group.initial.rebalance.delay.ms=0"),
		testcontainers.WithConfigModifier(func(cfg *container.Config) { cfg.Hostname = "broker" }),
		network.WithNetwork([]string{"broker"}, nw),
		testcontainers.WithWaitStrategy(wait.ForLog("broker ready")))
	if err != nil {
		b.Fatal(err)
	}
	defer broker.Terminate(ctx)
	var start, rss, pss float64
	for i := range b.N {
		env := map[string]string{
			"CONNECT_BOOTSTRAP_SERVERS": "broker:9092", "CONNECT_GROUP_ID": "bench-" + strconv.Itoa(i),
			"CONNECT_CONFIG_STORAGE_TOPIC": "configs-" + strconv.Itoa(i), "CONNECT_OFFSET_STORAGE_TOPIC": "offsets-" + strconv.Itoa(i),
			"CONNECT_STATUS_STORAGE_TOPIC":              "status-" + strconv.Itoa(i),
			"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR": "1", "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR": "1",
			"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR": "1",
		}
		s, _, r, p := startAndIdle(b, image, []testcontainers.ContainerCustomizer{
			testcontainers.WithEnv(env), network.WithNetwork([]string{"worker"}, nw)}, []string{"worker"})
		start += s.Seconds()
		rss += r
		pss += p
	}
	n := float64(b.N)
	b.ReportMetric(start/n*1000, "ms-to-ready")
	b.ReportMetric(rss/n, "MB-RSS-idle")
	b.ReportMetric(pss/n, "MB-PSS-idle")
}

// startAndIdle creates a container of image running cmd, then measures from
// its start to GET /health answering 200 on the published port; it reads
// dev's own "ready in" figure from the log, waits 10 s and sums the
// resident (RSS) and proportional (PSS) memory of the container's
// processes, in MB.
func startAndIdle(b *testing.B, image string, opts []testcontainers.ContainerCustomizer, cmd []string) (time.Duration, time.Duration, float64, float64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts = append(opts, testcontainers.WithCmd(cmd...), testcontainers.WithExposedPorts("8083/tcp"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Tmpfs = map[string]string{"/var/lib/tributary/data": "uid=65532,gid=65532"}
			bindLoopback(hc)
		}), testcontainers.WithNoStart())
	c, err := testcontainers.Run(ctx, image, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Terminate(context.Background())
	begin := time.Now()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	port, err := c.MappedPort(ctx, "8083/tcp")
	if err != nil {
		b.Fatal(err)
	}
	url := "http://127.0.0.1:" + port.Port() + "/health"
	for getJSON(url, nil) != http.StatusOK {
		if ctx.Err() != nil {
			b.Fatal("not ready in 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(begin)
	time.Sleep(10 * time.Second)
	var internal time.Duration
	if r, err := c.Logs(ctx); err == nil {
		out, _ := io.ReadAll(r)
		r.Close()
		if m := readyIn.FindStringSubmatch(string(out)); m != nil {
			internal, _ = time.ParseDuration(m[1] + m[2])
		}
	}
	info, err := c.Inspect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var rss, pss float64
	for _, p := range processTree(b, info.State.Pid) {
		rss += kB(filepath.Join("/proc", strconv.Itoa(p.pid), "status"), "VmRSS:")
		pss += kB(filepath.Join("/proc", strconv.Itoa(p.pid), "smaps_rollup"), "Pss:")
	}
	return took, internal, rss / 1024, pss / 1024
}

// kB returns the number after key in a /proc file ("VmRSS:  1234 kB").
func kB(path, key string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseFloat(f[0], 64)
				return n
			}
		}
	}
	return 0
}
