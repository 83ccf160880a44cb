package container

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// composeCmd returns the compose command to run: `docker compose` (v2) where
// the docker command has it, else Debian's docker-compose (1.29).
func composeCmd(t *testing.T) []string {
	t.Helper()
	needEngine(t)
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	msg := "the compose tests need docker compose or docker-compose (apt-get install docker-compose)"
	if os.Getenv("TRIBUTARY_REQUIRE_DOCKER") != "" {
		t.Fatal("TRIBUTARY_REQUIRE_DOCKER is set and " + msg)
	}
	t.Skip("skipping: " + msg)
	return nil
}

// project is one compose project of a test: its files, name and
// environment.
type project struct {
	t     *testing.T
	cmd   []string
	name  string
	files []string
	env   []string
}

// newProject returns a project of the files (relative to the checkout) under
// a name of its own, taken down with its volumes at the end of the test.
func newProject(t *testing.T, env map[string]string, files ...string) *project {
	t.Helper()
	b := make([]byte, 4)
	rand.Read(b)
	p := &project{t: t, cmd: composeCmd(t), name: "tribtest" + hex.EncodeToString(b)}
	for _, f := range files {
		p.files = append(p.files, filepath.Join(repoRoot(t), f))
	}
	for k, v := range env {
		p.env = append(p.env, k+"="+v)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := p.runErr("logs", "--no-color", "--tail", "40")
			t.Logf("--- compose logs of %s ---\n%s", p.name, out)
		}
		if out, err := p.runErr("down", "-v", "--timeout", "10"); err != nil {
			t.Logf("compose down: %v\n%s", err, out)
		}
	})
	return p
}

func (p *project) args(args ...string) []string {
	a := append([]string(nil), p.cmd[1:]...)
	a = append(a, "-p", p.name)
	for _, f := range p.files {
		a = append(a, "-f", f)
	}
	return append(a, args...)
}

// run runs a compose subcommand and fails the test if it fails.
func (p *project) run(args ...string) string {
	p.t.Helper()
	return run(p.t, repoRoot(p.t), p.env, p.cmd[0], p.args(args...)...)
}

func (p *project) runErr(args ...string) (string, error) {
	return runErr(repoRoot(p.t), p.env, p.cmd[0], p.args(args...)...)
}

// leftovers lists the containers, networks and volumes of the project that
// the engine still has.
func (p *project) leftovers() string {
	p.t.Helper()
	var left []string
	filter := "label=com.docker.compose.project=" + p.name
	for _, kind := range [][]string{{"ps", "-a", "-q"}, {"network", "ls", "-q"}, {"volume", "ls", "-q"}} {
		out := run(p.t, "", nil, "docker", append(kind, "--filter", filter)...)
		if s := strings.TrimSpace(out); s != "" {
			left = append(left, kind[0]+": "+strings.ReplaceAll(s, "\n", " "))
		}
	}
	return strings.Join(left, "; ")
}

// TestComposeConfig: the compose command validates both compose files, and
// the lake file with the tests' image override.
func TestComposeConfig(t *testing.T) {
	t.Parallel()
	for _, files := range [][]string{
		{"docker/compose.yaml"},
		{"docker/compose.lake.yaml"},
		{"docker/compose.lake.yaml", "integration/container/testdata/compose.local-images.yaml"},
	} {
		p := newProject(t, nil, files...)
		out := p.run("config")
		for _, want := range []string{"services:", "image:"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: config does not show %q:\n%s", files, want, out)
			}
		}
	}
}

// TestComposeCluster: docker/compose.yaml comes up (the broker and three
// workers), a connector created through one worker runs with its tasks
// spread over the cluster, and `down` leaves nothing of the project.
func TestComposeCluster(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	ports := []int{harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)}
	env := map[string]string{"TRIBUTARY_IMAGE": image}
	for i, port := range ports {
		env[fmt.Sprintf("REST_PORT_%d", i+1)] = strconv.Itoa(port)
	}
	p := newProject(t, env, "docker/compose.yaml")
	begin := time.Now()
	p.run("up", "-d")
	url := func(i int) string { return fmt.Sprintf("http://127.0.0.1:%d", ports[i]) }
	eventually(t, 2*time.Minute, "the three workers' REST APIs", func() string {
		for i := range ports {
			if code := getJSON(url(i)+"/health", nil); code != http.StatusOK {
				return fmt.Sprintf("worker-%d /health: %d", i+1, code)
			}
		}
		return ""
	})
	t.Logf("compose up to three healthy workers: %v", time.Since(begin).Round(10*time.Millisecond))
	createConnector(t, url(1), "gen", map[string]string{
		"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "kafka.topic": "gen",
		"tasks.max": "3", "records.per.sec": "10"})
	eventually(t, time.Minute, "gen RUNNING with its tasks spread", func() string {
		var st connectorStatus
		if code := getJSON(url(2)+"/connectors/gen/status", &st); code != http.StatusOK || !st.running(3) {
			return fmt.Sprintf("%d %+v", code, st)
		}
		workers := map[string]bool{}
		for _, w := range taskWorkers(st) {
			workers[w] = true
		}
		if len(workers) < 2 {
			return fmt.Sprintf("all tasks on %v", workers)
		}
		return ""
	})
	p.run("down", "-v", "--timeout", "10")
	if left := p.leftovers(); left != "" {
		t.Errorf("compose down left: %s", left)
	}
}

// lakeImagesBuilt holds the stand-ins of the lake's official images once
// built by this test process.
var lakeImagesBuilt struct {
	once sync.Once
	err  error
}

// lakeImages builds the stand-ins for postgres:17 and
// versity/versitygw:v1.8.0 that testdata/compose.local-images.yaml names:
// a Debian trixie base with PostgreSQL 17 (debootstrap and docker import,
// kept in the engine under a tag naming a hash of what goes into it, so
// built once per machine), the postgres image's entrypoint on it, and the
// versitygw release the S3 tests run.
func lakeImages(t *testing.T) {
	t.Helper()
	needEngine(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: the lake's stand-in images are made with debootstrap, which needs root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		msg := "the lake's stand-in images need debootstrap (apt-get install debootstrap)"
		if os.Getenv("TRIBUTARY_REQUIRE_DOCKER") != "" {
			t.Fatal(msg)
		}
		t.Skip("skipping: " + msg)
	}
	lakeImagesBuilt.once.Do(func() { lakeImagesBuilt.err = buildLakeImages(t) })
	if lakeImagesBuilt.err != nil {
		t.Fatal(lakeImagesBuilt.err)
	}
}

// debianBase is what the stand-ins' base is made of.
var debianBase = struct{ suite, packages string }{"trixie", "postgresql-17"}

func buildLakeImages(t *testing.T) error {
	images := filepath.Join(repoRoot(t), "integration", "container", "images")
	base := "tributary-test/debian:" + debianBase.suite + "-" + contentKey(t, nil, debianBase.suite, debianBase.packages, "trimmed-v1")
	if _, err := runErr("", nil, "docker", "image", "inspect", base); err != nil {
		begin := time.Now()
		if err := debootstrapImage(base); err != nil {
			return err
		}
		t.Logf("made %s with debootstrap in %v", base, time.Since(begin).Round(time.Second))
	}
	if out, err := runErr("", nil, "docker", "build", "-q", "--build-arg", "BASE="+base, "-t", "tributary-test/postgres:17", filepath.Join(images, "postgres")); err != nil {
		return fmt.Errorf("build the postgres stand-in: %v\n%s", err, out)
	}
	vgw, err := harness.FindVersityGW()
	if err != nil {
		return err
	}
	ctxDir, err := os.MkdirTemp("", "tributary-versitygw-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ctxDir)
	for src, dst := range map[string]string{vgw: "versitygw", filepath.Join(images, "versitygw", "Dockerfile"): "Dockerfile"} {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(ctxDir, dst), b, 0o755); err != nil {
			return err
		}
	}
	if out, err := runErr("", nil, "docker", "build", "-q", "--build-arg", "BASE="+base, "-t", "tributary-test/versitygw:v1.8.0", ctxDir); err != nil {
		return fmt.Errorf("build the versitygw stand-in: %v\n%s", err, out)
	}
	return nil
}

// debootstrapImage makes a minimal Debian of debianBase with its packages
// and imports it into the engine as tag. The mirror is
// TRIBUTARY_DEBIAN_MIRROR or deb.debian.org.
func debootstrapImage(tag string) error {
	mirror := os.Getenv("TRIBUTARY_DEBIAN_MIRROR")
	if mirror == "" {
		mirror = "http://deb.debian.org/debian"
	}
	dir, err := os.MkdirTemp("", "tributary-debootstrap-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "rootfs")
	if out, err := runErr("", nil, "debootstrap", "--variant=minbase", "--include="+debianBase.packages, debianBase.suite, root, mirror); err != nil {
		return fmt.Errorf("debootstrap %s from %s: %v\n%s", debianBase.suite, mirror, err, lastLines(out, 30))
	}
	// What an image does not need: the downloaded packages, apt's lists,
	// documentation, translations, and the cluster the package made.
	for _, p := range []string{"var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale",
		"var/lib/postgresql/17", "etc/postgresql/17"} {
		os.RemoveAll(filepath.Join(root, p))
	}
	os.MkdirAll(filepath.Join(root, "var/lib/apt/lists/partial"), 0o755)
	os.MkdirAll(filepath.Join(root, "var/cache/apt/archives/partial"), 0o755)
	cmd := fmt.Sprintf("tar -C %q -c . | docker import - %q", root, tag)
	if out, err := runErr("", nil, "sh", "-c", cmd); err != nil {
		return fmt.Errorf("docker import %s: %v\n%s", tag, err, out)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestComposeLake: docker/compose.lake.yaml, the README's Postgres -> S3
// lake, comes up as one `up` (with the stand-ins of the official postgres
// and versitygw images): the one-shot service registers both connectors,
// the snapshot lands as Parquet in the bucket, and the README's UPDATE,
// DELETE and INSERT appear as the README's table; `down` leaves nothing.
func TestComposeLake(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	lakeImages(t)
	py := harness.Python(t, "duckdb")
	lake := hostDir(t)
	rest := harness.FreePort(t)
	p := newProject(t, map[string]string{
		"TRIBUTARY_IMAGE": image, "LAKE_DIR": lake, "REST_PORT": strconv.Itoa(rest),
		"POSTGRES_PORT": strconv.Itoa(harness.FreePort(t)), "S3_PORT": strconv.Itoa(harness.FreePort(t)),
	}, "docker/compose.lake.yaml", "integration/container/testdata/compose.local-images.yaml")
	begin := time.Now()
	p.run("up", "-d")
	url := fmt.Sprintf("http://127.0.0.1:%d", rest)
	eventually(t, 3*time.Minute, "both connectors registered and RUNNING", func() string {
		for _, name := range []string{"shop-cdc", "shop-lake"} {
			var st connectorStatus
			if code := getJSON(url+"/connectors/"+name+"/status", &st); code != http.StatusOK || !st.running(1) {
				return fmt.Sprintf("%s: %d %+v", name, code, st)
			}
		}
		return ""
	})
	t.Logf("compose up to both connectors RUNNING: %v", time.Since(begin).Round(10*time.Millisecond))
	if out := p.run("logs", "--no-color", "register"); !strings.Contains(out, `connector "shop-cdc": created`) || !strings.Contains(out, `connector "shop-lake": created`) {
		t.Errorf("the register service's output:\n%s", out)
	}
	files := filepath.Join(lake, "lake", "topics", "shop.public.orders") + "/**/*.parquet"
	query := func(sql string) string {
		out, err := exec.Command(py, "-c", "import duckdb, sys; print(duckdb.sql(sys.argv[1]).fetchall())", sql).CombinedOutput()
		if err != nil {
			return "error: " + string(out)
		}
		return strings.TrimSpace(string(out))
	}
	table := fmt.Sprintf("select id, customer, amount::varchar, placed::varchar, qty, __op, __deleted from read_parquet('%s') order by __source_ts_ms, id", files)
	eventually(t, time.Minute, "the snapshot in the lake", func() string {
		if got := query(table); got != `[(1, 'ada', '12.50', '2026-03-01', 1, 'r', 'false'), (2, 'bob', '7.25', '2026-03-02', 3, 'r', 'false')]` {
			return got
		}
		return ""
	})
	p.run("exec", "-T", "postgres", "psql", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "shop",
		"-c", "UPDATE orders SET qty = 4 WHERE id = 1", "-c", "DELETE FROM orders WHERE id = 2",
		"-c", "INSERT INTO orders VALUES (3, 'cy', 99.99, '2026-03-03', 1)")
	// The README's table: the snapshot, then each change.
	want := `[(1, 'ada', '12.50', '2026-03-01', 1, 'r', 'false'), (2, 'bob', '7.25', '2026-03-02', 3, 'r', 'false'), ` +
		`(1, 'ada', '12.50', '2026-03-01', 4, 'u', 'false'), (2, 'bob', '7.25', '2026-03-02', 3, 'd', 'true'), ` +
		`(3, 'cy', '99.99', '2026-03-03', 1, 'c', 'false')]`
	eventually(t, time.Minute, "the changes in the lake", func() string {
		if got := query(table); got != want {
			return got
		}
		return ""
	})
	p.run("down", "-v", "--timeout", "10")
	if left := p.leftovers(); left != "" {
		t.Errorf("compose down left: %s", left)
	}
}
