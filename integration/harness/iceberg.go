package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
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
	return runJavaProgram(t, RequireIcebergJars(t), source, args...)
}
