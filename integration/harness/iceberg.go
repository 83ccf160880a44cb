package harness

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// icebergJarsEnv names the environment variable that overrides the
// Iceberg jars directory.
const icebergJarsEnv = "TRIBUTARY_ICEBERG_JARS"

// IcebergJarsDir returns the directory holding Apache Iceberg's Java
// library and Kafka Connect sink (integration/iceberg/pom.xml):
// $TRIBUTARY_ICEBERG_JARS, else $HOME/.cache/tributary/jars/iceberg-1.12.0.
func IcebergJarsDir() string {
	if d := os.Getenv(icebergJarsEnv); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "tributary", "jars", "iceberg-1.12.0")
}

func icebergJarsReady(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "iceberg-data-*.jar"))
	_, err := os.Stat(filepath.Join(dir, ".complete"))
	return len(m) > 0 && err == nil
}

// RequireIcebergJars returns the Iceberg jars directory, running
// integration/fetch-iceberg-jars.sh once if it is missing, and skips t when
// the jars still cannot be had.
func RequireIcebergJars(t testing.TB) string {
	t.Helper()
	dir := IcebergJarsDir()
	if icebergJarsReady(dir) {
		return dir
	}
	script := filepath.Join("integration", "fetch-iceberg-jars.sh")
	if _, file, _, ok := runtime.Caller(0); ok {
		script = filepath.Join(filepath.Dir(file), "..", "fetch-iceberg-jars.sh")
	}
	if _, err := exec.LookPath("mvn"); err == nil && os.Getenv(noFetchEnv) == "" {
		t.Logf("harness: Iceberg jars missing in %s, running %s", dir, script)
		if out, err := exec.Command("bash", script, dir).CombinedOutput(); err != nil {
			t.Logf("harness: %s failed: %v\n%s", script, err, out)
		}
	}
	if !icebergJarsReady(dir) {
		t.Skipf("skipping: Apache Iceberg jars unavailable in %s (bash integration/fetch-iceberg-jars.sh needs a JDK %d+ and Maven; or point %s at them)", dir, MinJavaVersion, icebergJarsEnv)
	}
	return dir
}

// RunIcebergJava is RunJavaProgram with Apache Iceberg's jars on the class
// path instead of Kafka's.
func RunIcebergJava(t testing.TB, source string, args ...string) []byte {
	t.Helper()
	return RunJavaProgramWith(t, source, []string{classpath(RequireIcebergJars(t))}, args...)
}

// IcebergREST is a REST catalog served by testdata/IcebergRESTServer.java
// (Apache Iceberg's CatalogHandlers over a JdbcCatalog) on a free
// 127.0.0.1 port.
type IcebergREST struct {
	URL  string
	proc *process
}

// StartIcebergREST compiles and starts the REST catalog server source with
// Iceberg's jars, passing it the catalog properties props (uri, warehouse,
// io-impl, s3.*), and waits until it listens. It stops with t.
func StartIcebergREST(t testing.TB, source string, props map[string]string) *IcebergREST {
	t.Helper()
	jars := RequireIcebergJars(t)
	java := requireJava(t)
	javac := filepath.Join(filepath.Dir(java), "javac")
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", classpath(jars), source).CombinedOutput(); err != nil {
		t.Fatalf("harness: javac %s: %v\n%s", source, err, out)
	}
	port := FreePort(t)
	args := append(defaultJVMArgs(), "-Duser.timezone=UTC", "-cp", classes+string(os.PathListSeparator)+classpath(jars),
		strings.TrimSuffix(filepath.Base(source), ".java"), "port="+strconv.Itoa(port))
	for _, k := range slices.Sorted(maps.Keys(props)) {
		args = append(args, k+"="+props[k])
	}
	dir := t.TempDir()
	p, err := startProcess("iceberg-rest", java, args, dir, filepath.Join(dir, "rest.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of the REST catalog's log ---\n%s", p.tail(30))
		}
		p.Close()
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		if b, _ := os.ReadFile(p.logPath); strings.Contains(string(b), "ready\n") {
			break
		}
		if done, err := p.exited(); done {
			t.Fatalf("harness: the REST catalog exited: %v\n%s", err, p.tail(30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("harness: the REST catalog is not ready after 60s\n%s", p.tail(30))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &IcebergREST{URL: "http://127.0.0.1:" + strconv.Itoa(port), proc: p}
}

// DuckDBIcebergPython returns a Python interpreter with DuckDB 1.5.5 and
// its iceberg, avro and httpfs extensions as PyPI packages
// (duckdb-extension-*; DuckDB's INSTALL would download them from
// extensions.duckdb.org, which tests cannot reach): $TRIBUTARY_DUCKDB_PYTHON,
// else the virtualenv .ci/run makes (~/.cache/tributary/duckdb-iceberg). It
// skips t when neither has them, naming what to install. A virtualenv of
// its own: the extensions must match DuckDB's version exactly, and the main
// one's DuckDB is newer.
func DuckDBIcebergPython(t testing.TB) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("TRIBUTARY_DUCKDB_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, ".cache", "tributary", "duckdb-iceberg", "bin", "python"))
	}
	for _, c := range cands {
		if exec.Command(c, "-c", "import duckdb, duckdb_extension_iceberg, duckdb_extension_avro, duckdb_extension_httpfs, pytz").Run() == nil {
			return c
		}
	}
	t.Skipf("skipping: no Python with DuckDB's iceberg extension (python3 -m venv ~/.cache/tributary/duckdb-iceberg && " +
		"~/.cache/tributary/duckdb-iceberg/bin/pip install duckdb==1.5.5 duckdb-extension-iceberg==1.5.5 " +
		"duckdb-extension-avro==1.5.5 duckdb-extension-httpfs==1.5.5 pytz; .ci/run does this)")
	return ""
}

// appInfoShim is org.apache.kafka.common.utils.AppInfoParser as Kafka 4.3
// had it, delegating to its Kafka 4.4 home: Apache Iceberg 1.12's sink
// calls AppInfoParser.getVersion(), and Kafka 4.4 moved the class to
// ...utils.internals (fetch-jars.sh shims Debezium's Sanitizer the same
// way).
const appInfoShim = `package org.apache.kafka.common.utils;

/** Kafka 4.3's AppInfoParser.getVersion, delegating to its Kafka 4.4 home (test harness only). */
public final class AppInfoParser {
    private AppInfoParser() {}
    public static String getVersion() { return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion(); }
    public static String getCommitId() { return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId(); }
}
`

// IcebergConnectPlugins returns a Kafka Connect plugin.path holding Apache
// Iceberg's Kafka Connect sink (the jars of IcebergJarsDir, linked) with
// the AppInfoParser shim Kafka Connect 4.4 needs for it, compiled against
// the Kafka jars.
func IcebergConnectPlugins(t testing.TB) string {
	t.Helper()
	jars := RequireIcebergJars(t)
	kafka := requireJars(t)
	java := requireJava(t)
	bin := filepath.Dir(java)
	plugins := t.TempDir()
	dir := filepath.Join(plugins, "iceberg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(jars)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".jar" {
			if err := os.Symlink(filepath.Join(jars, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	build := t.TempDir()
	src := filepath.Join(build, "src", "org", "apache", "kafka", "common", "utils")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "AppInfoParser.java"), []byte(appInfoShim), 0o644); err != nil {
		t.Fatal(err)
	}
	classes := filepath.Join(build, "classes")
	if out, err := exec.Command(filepath.Join(bin, "javac"), "-nowarn", "--release", "17", "-cp", classpath(kafka), "-d", classes,
		filepath.Join(src, "AppInfoParser.java")).CombinedOutput(); err != nil {
		t.Fatalf("harness: javac AppInfoParser shim: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(bin, "jar"), "cf", filepath.Join(dir, "kafka-4.4-appinfoparser-shim-for-iceberg.jar"),
		"-C", classes, ".").CombinedOutput(); err != nil {
		t.Fatalf("harness: jar AppInfoParser shim: %v\n%s", err, out)
	}
	return plugins
}
