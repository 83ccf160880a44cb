package container

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// startDev runs `dev --demo` from the image with dir mounted as its data
// directory and the REST port published on 127.0.0.1, and waits until the
// REST API answers /health. modify may change the host config (read-only
// root, tmpfs, ...).
func startDev(t *testing.T, image, dir string, modify func(*container.HostConfig)) testcontainers.Container {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := testcontainers.Run(ctx, image,
		testcontainers.WithCmd("dev", "--demo"),
		testcontainers.WithExposedPorts("8083/tcp"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: dir, Target: "/var/lib/tributary/data"})
			bindLoopback(hc)
			if modify != nil {
				modify(hc)
			}
		}),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/health").WithPort("8083/tcp").WithStartupTimeout(time.Minute)),
	)
	if c != nil {
		terminate(t, c)
	}
	if err != nil {
		t.Fatalf("run %s dev --demo: %v", image, err)
	}
	return c
}

// bindLoopback publishes every port of hc on 127.0.0.1 only (testcontainers
// publishes on all interfaces otherwise).
func bindLoopback(hc *container.HostConfig) {
	for p, bs := range hc.PortBindings {
		for i := range bs {
			bs[i].HostIP = loopback
		}
		hc.PortBindings[p] = bs
	}
}

var demoLine = regexp.MustCompile(`^Struct\{id=(\d+),`)

// demoIDs reads the demo's output file and returns the record ids it holds,
// in order.
func demoIDs(t *testing.T, path string) []int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := demoLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue // a line being written
		}
		n, _ := strconv.Atoi(m[1])
		ids = append(ids, n)
	}
	return ids
}

// parquetFiles counts the Parquet files under dir.
func parquetFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			n++
		}
		return nil
	})
	return n
}

// TestImageDevDemo: `dev --demo` in a container answers REST on the
// published port, the demo's records arrive in the mounted data directory
// and Parquet files appear in its lake; docker stop ends it with exit code
// 0 well within 10 s; a second start resumes: the record ids go on from
// where they stopped, none written twice (the README's promise for a clean
// stop), none skipped.
func TestImageDevDemo(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	dir := hostDir(t)
	c := startDev(t, image, dir, nil)
	url := restURL(t, c)
	eventually(t, 30*time.Second, "the demo's four connectors through the published REST port", func() string {
		var names []string
		if code := getJSON(url+"/connectors", &names); code != http.StatusOK || len(names) != 4 {
			return fmt.Sprintf("GET /connectors: %d %v", code, names)
		}
		return ""
	})
	out := waitDemo(t, dir, 1000)

	stop := func(round int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		timeout := 10 * time.Second
		begin := time.Now()
		if err := c.Stop(ctx, &timeout); err != nil {
			t.Fatalf("docker stop: %v", err)
		}
		took := time.Since(begin)
		st, err := c.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("stop %d: docker stop took %v, exit code %d", round, took.Round(time.Millisecond), st.ExitCode)
		if st.ExitCode != 0 || took >= timeout {
			t.Fatalf("stop %d: exit code %d after %v (SIGKILL comes at %v)", round, st.ExitCode, took, timeout)
		}
	}
	stop(1)
	first := demoIDs(t, out)
	checkContiguous(t, first)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("second start: %v", err)
	}
	url = restURL(t, c) // the published port may change
	eventually(t, time.Minute, "records after the second start", func() string {
		if n := len(demoIDs(t, out)); n < len(first)+400 {
			return fmt.Sprintf("%d records, %d before the restart", n, len(first))
		}
		return ""
	})
	var st connectorStatus
	if code := getJSON(url+"/connectors/demo-datagen/status", &st); code != http.StatusOK || !st.running(1) {
		t.Errorf("demo-datagen after the second start: %d %+v", code, st)
	}
	stop(2)
	checkContiguous(t, demoIDs(t, out))
}

// waitDemo waits until the demo has written at least n records to the
// data directory dir and a Parquet file to its lake, and returns the path of
// its output file.
func waitDemo(t *testing.T, dir string, n int) string {
	t.Helper()
	out := filepath.Join(dir, "demo-output.txt")
	eventually(t, time.Minute, "demo records and Parquet files in the mounted data directory", func() string {
		got, files := len(demoIDs(t, out)), parquetFiles(filepath.Join(dir, "lake"))
		if got < n || files == 0 {
			return fmt.Sprintf("%d records, %d Parquet files", got, files)
		}
		return ""
	})
	return out
}

// checkContiguous fails t unless ids are 0, 1, 2, ... each once.
func checkContiguous(t *testing.T, ids []int) {
	t.Helper()
	for i, id := range ids {
		if id != i {
			t.Fatalf("record %d of %d has id %d: a record was written twice or lost", i, len(ids), id)
		}
	}
	t.Logf("%d records, ids 0..%d each once", len(ids), len(ids)-1)
}

// TestImageNonRootReadOnly: the image runs as its own non-root user, and
// dev --demo (the broker, the worker and the plugin processes it starts)
// works on a read-only root filesystem with only the data volume and a
// tmpfs at /tmp (the plugins' sockets, spill files) writable.
func TestImageNonRootReadOnly(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	dir := hostDir(t)
	c := startDev(t, image, dir, func(hc *container.HostConfig) {
		hc.ReadonlyRootfs = true
		hc.Tmpfs = map[string]string{"/tmp": "rw,nosuid,nodev,size=64m"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := c.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.User != "65532:65532" || !info.HostConfig.ReadonlyRootfs {
		t.Errorf("user %q, read-only root %v", info.Config.User, info.HostConfig.ReadonlyRootfs)
	}
	waitDemo(t, dir, 500)
	// The container's processes as the host sees them: dev and its plugin
	// processes, none of them root.
	procs := processTree(t, info.State.Pid)
	if len(procs) < 4 {
		t.Errorf("%d processes in the container, want dev and its three plugins: %v", len(procs), procs)
	}
	for _, p := range procs {
		if p.uid == 0 || p.uid != 65532 {
			t.Errorf("process %d (%s) runs as uid %d", p.pid, p.name, p.uid)
		}
	}
	t.Logf("processes: %v", procs)
}

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid, uid int
	name           string
}

func (p proc) String() string { return fmt.Sprintf("%s[%d] uid %d", p.name, p.pid, p.uid) }

// processTree returns root and its descendants from this machine's /proc
// (the engine runs here), or skips t when /proc does not show them.
func processTree(t testing.TB, root int) []proc {
	t.Helper()
	all := map[int]proc{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		p := proc{pid: pid}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			fields := strings.Fields(v)
			if len(fields) == 0 {
				continue
			}
			switch k {
			case "Name":
				p.name = fields[0]
			case "PPid":
				p.ppid, _ = strconv.Atoi(fields[0])
			case "Uid":
				p.uid, _ = strconv.Atoi(fields[1]) // the effective uid
			}
		}
		all[pid] = p
	}
	if _, ok := all[root]; !ok {
		t.Skipf("the container's process %d is not in this machine's /proc (a remote engine?)", root)
	}
	tree := []proc{all[root]}
	for i := 0; i < len(tree); i++ {
		for _, p := range all {
			if p.ppid == tree[i].pid {
				tree = append(tree, p)
			}
		}
	}
	return tree
}

// TestImageThirdPartyPlugin: a third-party connector (examples/ticker,
// built static as the image has no libc) in a host directory mounted on
// plugin.path is loaded by the worker in the image and runs as a plugin
// process; the built-in connectors run the same way (the binary executes
// itself).
func TestImageThirdPartyPlugin(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	plugins := hostDir(t)
	run(t, filepath.Join(repoRoot(t), "examples"), []string{"CGO_ENABLED=0"}, "go", "build", "-o", filepath.Join(plugins, "ticker"), "./ticker")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := testcontainers.Run(ctx, image,
		testcontainers.WithCmd("dev", "--plugin-path", "/opt/tributary/plugins"),
		testcontainers.WithExposedPorts("8083/tcp"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: plugins, Target: "/opt/tributary/plugins", ReadOnly: true})
			bindLoopback(hc)
		}),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/health").WithPort("8083/tcp").WithStartupTimeout(time.Minute)),
	)
	if c != nil {
		terminate(t, c)
	}
	if err != nil {
		t.Fatalf("run dev with a plugin path: %v", err)
	}
	url := restURL(t, c)
	var list []struct {
		Class string `json:"class"`
	}
	if code := getJSON(url+"/connector-plugins", &list); code != http.StatusOK {
		t.Fatalf("GET /connector-plugins: %d", code)
	}
	var classes []string
	for _, p := range list {
		classes = append(classes, p.Class)
	}
	if !strings.Contains(strings.Join(classes, " "), "Ticker") {
		t.Fatalf("the mounted plugin is not listed: %v", classes)
	}
	createConnector(t, url, "ticks", map[string]string{"connector.class": "Ticker", "topic": "ticks", "interval.ms": "10"})
	eventually(t, time.Minute, "the ticker's offsets advancing", func() string {
		var st connectorStatus
		if code := getJSON(url+"/connectors/ticks/status", &st); code != http.StatusOK || !st.running(1) {
			return fmt.Sprintf("status %d %+v", code, st)
		}
		var offsets struct {
			Offsets []struct {
				Offset map[string]any `json:"offset"`
			} `json:"offsets"`
		}
		if code := getJSON(url+"/connectors/ticks/offsets", &offsets); code != http.StatusOK || len(offsets.Offsets) == 0 {
			return fmt.Sprintf("offsets %d %+v", code, offsets)
		}
		if seq, _ := offsets.Offsets[0].Offset["seq"].(float64); seq < 10 {
			return fmt.Sprintf("offset %v", offsets.Offsets[0].Offset)
		}
		return ""
	})
}
