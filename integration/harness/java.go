package harness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// ErrUnavailable is wrapped by errors reporting that a component cannot run
// on this machine (no suitable java, jars not fetched). The testing entry
// points turn it into t.Skip.
var ErrUnavailable = errors.New("component unavailable")

// MinJavaVersion is the lowest Java feature release the Apache Kafka 4.4
// broker and Kafka Connect run on.
const MinJavaVersion = 17

// jarsEnv names the environment variable that overrides the jars directory.
const jarsEnv = "TRIBUTARY_JARS"

// noFetchEnv, when set, stops the testing entry points from running
// fetch-jars.sh themselves.
const noFetchEnv = "TRIBUTARY_NO_FETCH"

// requiredJars returns globs that must all match in a usable jars directory.
func requiredJars() []string {
	return []string{"kafka_2.13-*.jar", "kafka-tools-*.jar", "connect-runtime-*.jar", "connect-file-*.jar", "connect-json-*.jar",
		"connect-transforms-*.jar", "debezium-connect-plugins-*.jar", "connect-basic-auth-extension-*.jar"}
}

// JarsDir returns the directory holding the Apache Kafka / Kafka Connect
// jars: $TRIBUTARY_JARS if set, otherwise
// $HOME/.cache/tributary/jars/kafka-4.4.0.
func JarsDir() string {
	if d := os.Getenv(jarsEnv); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "tributary", "jars", "kafka-4.4.0")
}

// CheckJars reports, with an error wrapping ErrUnavailable, whether dir
// holds the jars the harness needs.
func CheckJars(dir string) error {
	for _, g := range requiredJars() {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return fmt.Errorf("harness: glob %s: %w", g, err)
		}
		if len(m) == 0 {
			return fmt.Errorf("harness: no %s in %s (run: bash integration/fetch-jars.sh): %w", g, dir, ErrUnavailable)
		}
	}
	return nil
}

// FetchScript returns the path of integration/fetch-jars.sh in the source
// tree this package was built from.
func FetchScript() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("integration", "fetch-jars.sh")
	}
	return filepath.Join(filepath.Dir(file), "..", "fetch-jars.sh")
}

// requireJars returns the jars directory, running fetch-jars.sh once if the
// jars are missing, and skips t when they still cannot be had.
func requireJars(t testing.TB) string {
	t.Helper()
	dir := JarsDir()
	if CheckJars(dir) == nil {
		return dir
	}
	script := FetchScript()
	_, statErr := os.Stat(script)
	_, mvnErr := exec.LookPath("mvn")
	if os.Getenv(noFetchEnv) == "" && statErr == nil && mvnErr == nil {
		t.Logf("harness: Kafka jars missing in %s, running %s", dir, script)
		out, err := exec.Command("bash", script, dir).CombinedOutput()
		if err != nil {
			t.Logf("harness: %s failed: %v\n%s", script, err, out)
		}
	}
	if err := CheckJars(dir); err != nil {
		t.Skipf("skipping: Apache Kafka jars unavailable: %v (fetching needs a JDK %d+ and Maven; or point %s at a directory of Kafka 4.4 jars)", err, MinJavaVersion, jarsEnv)
	}
	return dir
}

// requireJava returns a suitable java binary or skips t.
func requireJava(t testing.TB) string {
	t.Helper()
	java, err := FindJava()
	if err != nil {
		t.Skipf("skipping: %v (install a JDK %d+ or set JAVA_HOME)", err, MinJavaVersion)
	}
	return java
}

// FindJava returns the path of a java binary of at least MinJavaVersion:
// $JAVA_HOME/bin/java, else java on PATH, else the newest JDK under
// /usr/lib/jvm. The error wraps ErrUnavailable when none qualifies.
func FindJava() (string, error) {
	var cands []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		cands = append(cands, filepath.Join(h, "bin", "java"))
	}
	if p, err := exec.LookPath("java"); err == nil {
		cands = append(cands, p)
	}
	jvms, _ := filepath.Glob("/usr/lib/jvm/*/bin/java")
	sort.Sort(sort.Reverse(sort.StringSlice(jvms)))
	cands = append(cands, jvms...)

	var tried []string
	for _, c := range cands {
		v, err := javaVersion(c)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		if v >= MinJavaVersion {
			return c, nil
		}
		tried = append(tried, fmt.Sprintf("%s: version %d", c, v))
	}
	if len(tried) == 0 {
		return "", fmt.Errorf("harness: no java found (JAVA_HOME, PATH, /usr/lib/jvm): %w", ErrUnavailable)
	}
	return "", fmt.Errorf("harness: no java %d+ found (tried %s): %w", MinJavaVersion, strings.Join(tried, "; "), ErrUnavailable)
}

// javaVersion returns the feature release of the java binary at path.
func javaVersion(path string) (int, error) {
	out, err := exec.Command(path, "-version").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("run -version: %w", err)
	}
	m := regexp.MustCompile(`version "(\d+)(?:\.(\d+))?`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("cannot parse version from %q", firstLine(out))
	}
	major, _ := strconv.Atoi(string(m[1]))
	if major == 1 && len(m[2]) > 0 { // 1.8 style
		major, _ = strconv.Atoi(string(m[2]))
	}
	return major, nil
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// defaultJVMArgs returns JVM flags that keep the JVMs small and quick to
// start on a shared 2-core CI machine.
func defaultJVMArgs() []string {
	return []string{
		"-Xms64m", "-Xmx512m",
		"-XX:+UseSerialGC",
		"-XX:+ExitOnOutOfMemoryError",
		"-Xshare:auto",
		"-Djava.awt.headless=true",
	}
}

// quickStartJVMArgs tunes a JVM for start-up rather than peak speed: only
// the C1 compiler (no C2 compiler threads competing for the CI machine's two
// cores while a hundred jars' classes load). Tests' brokers, workers and
// tools run seconds to a minute, so they finish sooner this way; benchmarks
// (testing.B, StartApacheKafka, StartKafkaConnect) keep the full JIT.
func quickStartJVMArgs() []string {
	return []string{"-XX:TieredStopAtLevel=1"}
}

// isBenchmark reports whether tb is a benchmark, whose JVMs must run at
// full speed.
func isBenchmark(tb testing.TB) bool {
	_, ok := tb.(*testing.B)
	return ok
}

// log4j2Config is a Log4j 2 properties configuration sending everything at
// level and above to stdout (appender "out") or stderr.
func log4j2Config(level, target string) string {
	return `status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = ` + target + `
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d{HH:mm:ss,SSS}] %p %m (%c{1})%n
rootLogger.level = ` + level + `
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka
logger.kafka.level = ` + level + `
logger.apache.name = org.apache.kafka
logger.apache.level = ` + level + `
logger.reflections.name = org.reflections
logger.reflections.level = error
logger.jetty.name = org.eclipse.jetty
logger.jetty.level = warn
`
}

// JavaTool runs a Kafka command-line tool class (for example
// "org.apache.kafka.tools.ConsoleProducer",
// "org.apache.kafka.tools.consumer.ConsoleConsumer" or
// "org.apache.kafka.tools.ProducerPerformance") with the jars from JarsDir
// and returns its standard output. The tool can target any bootstrap
// address, including Tributary's broker. Its log goes to standard error,
// whose tail is included in the error when the tool fails. The tool's JVM
// is tuned for start-up (quickStartJVMArgs): use it for clients that check
// behaviour, not as a benchmark peer.
func JavaTool(ctx context.Context, class string, args ...string) ([]byte, error) {
	return JavaToolWithInput(ctx, nil, class, args...)
}

// JavaToolWithInput is JavaTool with stdin as the tool's standard input
// (for example the records for ConsoleProducer, one a line).
func JavaToolWithInput(ctx context.Context, stdin io.Reader, class string, args ...string) ([]byte, error) {
	java, jars, err := javaAndJars()
	if err != nil {
		return nil, err
	}
	return runTool(ctx, java, jars, stdin, class, args)
}

// javaAndJars returns the java executable and the jars directory every
// Java component needs; the error wraps ErrUnavailable when either is
// missing.
func javaAndJars() (java, jars string, err error) {
	if java, err = FindJava(); err != nil {
		return "", "", err
	}
	jars = JarsDir()
	if err := CheckJars(jars); err != nil {
		return "", "", err
	}
	return java, jars, nil
}

// runTool runs class with the given java and jars directory.
func runTool(ctx context.Context, java, jars string, stdin io.Reader, class string, args []string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "tributary-tool-*")
	if err != nil {
		return nil, fmt.Errorf("harness: tool temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	logCfg := filepath.Join(tmp, "log4j2.properties")
	if err := os.WriteFile(logCfg, []byte(log4j2Config("warn", "SYSTEM_ERR")), 0o644); err != nil {
		return nil, fmt.Errorf("harness: write tool log config: %w", err)
	}
	argv := append(defaultJVMArgs(), quickStartJVMArgs()...)
	archive, dump := classArchive(java, jars, class)
	argv = append(argv, archiveArgs(archive, dump)...)
	defer discardDump(dump)
	// JVM warnings (a stale class-data archive, say) go to standard error:
	// standard output is the tool's, and tests parse it.
	argv = append(argv, "-Xlog:disable", "-Xlog:all=warning:stderr")
	argv = append(argv, "-Dlog4j2.configurationFile="+logCfg, "-cp", classpath(jars), class)
	argv = append(argv, args...)

	cmd := exec.CommandContext(ctx, java, argv...)
	cmd.Dir = tmp
	cmd.Stdin = stdin
	setProcAttr(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("harness: %s %s: %w\n%s", class, strings.Join(args, " "), err, tailLines(stderr.Bytes(), 30))
	}
	keepArchive(archive, dump)
	return stdout.Bytes(), nil
}

// RunJavaProgram compiles a small Java program (one source file, such as
// the golden file generators under testdata/gen) against the jars and runs
// its main class (the file's name) with args, in the UTC time zone and the
// en_US locale, returning its standard output. It skips t when no JDK
// (javac beside java) or jars can be had.
func RunJavaProgram(t testing.TB, source string, args ...string) []byte {
	t.Helper()
	return RunJavaProgramWith(t, source, []string{classpath(requireJars(t))}, args...)
}

// RunJavaProgramWith is RunJavaProgram with its own class path (entries
// such as "dir/*").
func RunJavaProgramWith(t testing.TB, source string, cp []string, args ...string) []byte {
	t.Helper()
	java := requireJava(t)
	javac := filepath.Join(filepath.Dir(java), "javac")
	if _, err := os.Stat(javac); err != nil {
		t.Skipf("skipping: no javac beside %s (install a JDK %d+)", java, MinJavaVersion)
	}
	cpath := strings.Join(cp, string(os.PathListSeparator))
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", cpath, source).CombinedOutput(); err != nil {
		t.Fatalf("harness: javac %s: %v\n%s", source, err, out)
	}
	class := strings.TrimSuffix(filepath.Base(source), ".java")
	argv := append(defaultJVMArgs(), "-Duser.timezone=UTC", "-Duser.language=en", "-Duser.country=US",
		"-cp", classes+string(os.PathListSeparator)+cpath, class)
	cmd := exec.Command(java, append(argv, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harness: java %s: %v\n%s", class, err, tailLines(stderr.Bytes(), 30))
	}
	return stdout.Bytes()
}

// MSKJars returns the class path of aws-msk-iam-auth and its AWS SDK
// (integration/msk-iam/pom.xml, fetched by fetch-jars.sh beside the Kafka
// jars) with Kafka's kafka-clients, skipping t when they are missing.
func MSKJars(t testing.TB) []string {
	t.Helper()
	kafka := requireJars(t)
	dir := filepath.Join(filepath.Dir(kafka), "aws-msk-iam-auth")
	if m, _ := filepath.Glob(filepath.Join(dir, "aws-msk-iam-auth-*.jar")); len(m) == 0 {
		t.Skipf("skipping: aws-msk-iam-auth not in %s (run: bash integration/fetch-jars.sh)", dir)
	}
	clients, _ := filepath.Glob(filepath.Join(kafka, "kafka-clients-*.jar"))
	return append([]string{filepath.Join(dir, "*")}, clients...)
}

// classArchive returns the class-data sharing archive for running class
// with java on the jars: a dynamic AppCDS archive of the classes an earlier
// run loaded, which halves a JVM's start-up CPU. When the
// archive does not exist yet, dump names the file this run should write it
// to (-XX:ArchiveClassesAtExit) and rename to archive after a clean exit.
// The archive is keyed by java, jars directory (and its fetch-jars.sh
// marker) and class; the JVM itself refuses, with a warning, an archive
// whose JDK build or jar files changed. Both are "" when there is no cache
// directory.
func classArchive(java, jars, class string) (archive, dump string) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", ""
	}
	marker, _ := os.ReadFile(filepath.Join(jars, ".complete"))
	h := sha256.New()
	for _, part := range []string{java, jars, string(marker), class} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	dir := filepath.Join(cache, "tributary", "cds")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", ""
	}
	archive = filepath.Join(dir, fmt.Sprintf("%s-%x.jsa", class[strings.LastIndexByte(class, '.')+1:], h.Sum(nil)[:8]))
	if _, err := os.Stat(archive); err == nil {
		return archive, ""
	}
	f, err := os.CreateTemp(dir, ".dump-*.jsa")
	if err != nil {
		return "", ""
	}
	f.Close()
	os.Remove(f.Name()) // the JVM creates it
	return archive, f.Name()
}

// classpath returns the java class path for every jar in dir.
func classpath(dir string) string {
	return filepath.Join(dir, "*")
}

// archiveArgs returns the JVM flags that use archive, or, when dump is set,
// write the archive to dump when the JVM exits by itself.
func archiveArgs(archive, dump string) []string {
	switch {
	case archive == "":
		return nil
	case dump == "":
		return []string{"-XX:SharedArchiveFile=" + archive}
	default:
		return []string{"-XX:ArchiveClassesAtExit=" + dump}
	}
}

// keepArchive moves a JVM's dump into place as archive once the JVM has
// exited by itself (a killed JVM may leave half a file: discard it then).
func keepArchive(archive, dump string) {
	if dump == "" {
		return
	}
	if st, err := os.Stat(dump); err == nil && st.Size() > 0 {
		_ = os.Rename(dump, archive) // atomic: concurrent runs each leave a whole archive
	}
}

// discardDump removes what is left of a dump that was not kept.
func discardDump(dump string) {
	if dump != "" {
		_ = os.Remove(dump)
	}
}
