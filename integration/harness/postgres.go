package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresBinDirEnv names the environment variable that overrides the
// directory of the PostgreSQL server binaries (default
// /usr/lib/postgresql/15/bin).
const PostgresBinDirEnv = "TRIBUTARY_PG_BIN"

// PostgresImageEnv names the environment variable that runs the servers in
// Docker containers of an image instead (for another major version, such
// as the PostgreSQL 17 image integration/container builds from Debian
// trixie's packages, tributary-test/postgres:17): the container publishes
// 5432 on the port the harness picked, Kill is docker kill -s KILL and
// Restart docker start.
const PostgresImageEnv = "TRIBUTARY_PG_IMAGE"

// postgresImage returns the image of PostgresImageEnv ("" for local
// binaries).
func postgresImage() string { return os.Getenv(PostgresImageEnv) }

// postgresUser is the operating-system account the server runs as when the
// tests run as root (initdb and postgres refuse to run as root).
const postgresUser = "postgres"

// PostgresBinDir returns the directory holding initdb, postgres and
// pg_recvlogical.
func PostgresBinDir() string {
	if d := os.Getenv(PostgresBinDirEnv); d != "" {
		return d
	}
	return "/usr/lib/postgresql/15/bin"
}

// Postgres is a PostgreSQL server started by the harness: a fresh cluster in
// a temporary directory, listening on a free 127.0.0.1 port, with
// wal_level=logical unless a test asked otherwise. Its superuser is
// "postgres" with password Password (password authentication over TCP,
// replication connections included).
type Postgres struct {
	Host     string
	Port     int
	User     string
	Password string
	Database string

	dir      string
	binDir   string
	proc     *process
	startup  time.Duration
	settings map[string]string // what Restart starts the server with again
	// image and container: the server runs in a container (PostgresImageEnv).
	image, container string
	cred             *syscall.Credential // the account it runs as (nil: this one)
	held             portHold            // the port, held while killed
}

// PostgresOption configures StartPostgres.
type PostgresOption func(*postgresConfig)

type postgresConfig struct {
	settings map[string]string
}

// WithPostgresSetting sets a server setting (postgres -c key=value),
// overriding the harness's default, for example
// WithPostgresSetting("wal_level", "replica").
func WithPostgresSetting(key, value string) PostgresOption {
	return func(c *postgresConfig) { c.settings[key] = value }
}

// PostgresDefaults are the server settings the harness starts with.
// fsync=off only risks data on an operating-system crash, which the tests
// never cause; synchronous_commit stays on, so a committed transaction is
// in the WAL before the client hears of it (what a CDC test relies on when
// it kills the server's clients).
func PostgresDefaults() map[string]string {
	return map[string]string{
		"wal_level":                 "logical",
		"max_replication_slots":     "20",
		"max_wal_senders":           "20",
		"max_connections":           "100",
		"fsync":                     "off",
		"full_page_writes":          "off",
		"shared_buffers":            "128MB",
		"max_wal_size":              "2GB",
		"wal_sender_timeout":        "60s",
		"logical_decoding_work_mem": "64MB",
		"log_min_messages":          "warning",
		"log_connections":           "off",
	}
}

// StartPostgresT starts a PostgreSQL server for the test and stops it in
// t.Cleanup, printing the tail of its log if the test failed. It skips the
// test when the server binaries are missing, saying what to install.
func StartPostgresT(t testing.TB, opts ...PostgresOption) *Postgres {
	t.Helper()
	if err := CheckPostgres(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := StartPostgres(ctx, opts...)
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("PostgreSQL log tail (%s):\n%s", pg.LogPath(), pg.proc.tail(40))
		}
		if err := pg.Close(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	t.Logf("PostgreSQL at %s:%d started in %v", pg.Host, pg.Port, pg.startup.Round(time.Millisecond))
	return pg
}

// CheckPostgres reports, with an error wrapping ErrUnavailable, whether the
// PostgreSQL server binaries are installed.
func CheckPostgres() error {
	if img := postgresImage(); img != "" {
		if out, err := exec.Command("docker", "image", "inspect", img).CombinedOutput(); err != nil {
			return fmt.Errorf("harness: %s=%s but the image is not in the Docker engine: %v %s: %w", PostgresImageEnv, img, err, tailLines(out, 3), ErrUnavailable)
		}
		return nil
	}
	for _, b := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(PostgresBinDir(), b)); err != nil {
			return fmt.Errorf("harness: PostgreSQL 15 server not found in %s (install it: apt-get install postgresql-15, or set %s): %w",
				PostgresBinDir(), PostgresBinDirEnv, ErrUnavailable)
		}
	}
	return nil
}

// StartPostgres creates a cluster in a new temporary directory and starts
// it on a free loopback port; ctx bounds the start-up. Close stops it and
// removes the directory.
func StartPostgres(ctx context.Context, opts ...PostgresOption) (*Postgres, error) {
	begin := time.Now()
	if err := CheckPostgres(); err != nil {
		return nil, err
	}
	cfg := postgresConfig{settings: PostgresDefaults()}
	for _, o := range opts {
		o(&cfg)
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	// Not t.TempDir: its parents are private to the test's user, and the
	// server may run as another.
	dir, err := os.MkdirTemp("", "tributary-pg-")
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	pg := &Postgres{Host: "127.0.0.1", User: "postgres", Password: "tributary", Database: "postgres", dir: dir, binDir: PostgresBinDir(),
		settings: cfg.settings, cred: cred}
	fail := func(err error) (*Postgres, error) {
		if pg.proc != nil {
			_ = pg.proc.Close()
		}
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("harness: chown %s: %w", dir, err))
		}
	}
	if img := postgresImage(); img != "" {
		pg.image, pg.container = img, filepath.Base(dir)
		for attempt := 1; ; attempt++ {
			port, err := freePort()
			if err != nil {
				return fail(fmt.Errorf("harness: %w", err))
			}
			err = pg.start(ctx, port)
			if err == nil {
				break
			}
			if attempt < maxStartAttempts && (strings.Contains(err.Error(), "address already in use") || strings.Contains(err.Error(), "port is already allocated")) {
				_ = exec.Command("docker", "rm", "-f", "-v", pg.container).Run()
				pg.proc = nil
				continue
			}
			_ = exec.Command("docker", "rm", "-f", "-v", pg.container).Run()
			return fail(err)
		}
		pg.startup = time.Since(begin)
		return pg, nil
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(pg.Password+"\n"), 0o644); err != nil {
		return fail(fmt.Errorf("harness: %w", err))
	}
	initdb := exec.CommandContext(ctx, filepath.Join(pg.binDir, "initdb"), "-D", pg.dataDir(), "-U", "postgres",
		"--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("harness: initdb: %w\n%s", err, tailLines(out, 20)))
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(fmt.Errorf("harness: %w", err))
		}
		err = pg.start(ctx, port)
		if err == nil {
			break
		}
		if errors.Is(err, errPortInUse) && attempt < maxStartAttempts {
			continue
		}
		return fail(err)
	}
	pg.startup = time.Since(begin)
	return pg, nil
}

// postgresCredential returns the account to run the server as: nil (the
// current one) unless the process runs as root.
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(postgresUser)
	if err != nil {
		return nil, fmt.Errorf("harness: PostgreSQL refuses to run as root and there is no %q user to run it as (installing postgresql-15 creates it): %v: %w",
			postgresUser, err, ErrUnavailable)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (pg *Postgres) dataDir() string { return filepath.Join(pg.dir, "data") }

// start runs postgres on port and waits until it accepts connections.
func (pg *Postgres) start(ctx context.Context, port int) error {
	pg.Port = port
	if pg.image != "" {
		return pg.startContainer(ctx)
	}
	argv := []string{"-D", pg.dataDir(), "-p", strconv.Itoa(port), "-h", pg.Host, "-k", pg.dir}
	for _, k := range slices.Sorted(maps.Keys(pg.settings)) {
		argv = append(argv, "-c", k+"="+pg.settings[k])
	}
	logPath := filepath.Join(pg.dir, "postgres.log")
	if pg.proc != nil { // a restart: keep the log of the first run
		logPath = filepath.Join(pg.dir, fmt.Sprintf("postgres-%d.log", time.Now().UnixNano()))
	}
	proc, err := startProcessAs("PostgreSQL", filepath.Join(pg.binDir, "postgres"), argv, pg.dir, logPath, pg.cred)
	if err != nil {
		return err
	}
	pg.proc = proc
	return pg.waitReady(ctx)
}

// startContainer runs the server in its container, attached (the docker
// command's output is the server's log): docker run the first time,
// docker start after a Kill.
func (pg *Postgres) startContainer(ctx context.Context) error {
	argv := []string{"start", "-a", pg.container}
	if pg.proc == nil {
		argv = []string{"run", "-a", "stdout", "-a", "stderr", "--name", pg.container, "-p", fmt.Sprintf("127.0.0.1:%d:5432", pg.Port),
			"-e", "POSTGRES_PASSWORD=" + pg.Password, "-e", "LANG=C.UTF-8", "--shm-size", "256m", pg.image, "postgres"}
		for _, k := range slices.Sorted(maps.Keys(pg.settings)) {
			argv = append(argv, "-c", k+"="+pg.settings[k])
		}
	}
	logPath := filepath.Join(pg.dir, "postgres.log")
	if pg.proc != nil {
		logPath = filepath.Join(pg.dir, fmt.Sprintf("postgres-%d.log", time.Now().UnixNano()))
	}
	proc, err := startProcessAs("PostgreSQL container", "docker", argv, pg.dir, logPath, nil)
	if err != nil {
		return err
	}
	pg.proc = proc
	return pg.waitReady(ctx)
}

// waitReady polls until a connection succeeds, the server exits or ctx ends.
func (pg *Postgres) waitReady(ctx context.Context) error {
	var lastErr error
	for {
		if done, werr := pg.proc.exited(); done {
			return startError(pg.proc, fmt.Errorf("harness: PostgreSQL exited during start-up: %v", werr))
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, pg.DSN())
		cancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			_ = pg.proc.Close()
			return startError(pg.proc, fmt.Errorf("harness: PostgreSQL on port %d not ready: %w (last error: %v)", pg.Port, ctx.Err(), lastErr))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN returns a connection string for the superuser and database
// "postgres"; use DSNFor for another user or database.
func (pg *Postgres) DSN() string { return pg.DSNFor(pg.User, pg.Password, pg.Database) }

// DSNFor returns a connection string for user, password and database.
func (pg *Postgres) DSNFor(user, password, database string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", user, password, pg.Host, pg.Port, database)
}

// Connect opens a connection as the superuser; the caller closes it.
func (pg *Postgres) Connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		return nil, fmt.Errorf("harness: connect to PostgreSQL: %w", err)
	}
	return conn, nil
}

// ConnectAs opens a connection as user to database; the caller closes it.
func (pg *Postgres) ConnectAs(ctx context.Context, user, password, database string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, pg.DSNFor(user, password, database))
	if err != nil {
		return nil, fmt.Errorf("harness: connect to PostgreSQL as %s: %w", user, err)
	}
	return conn, nil
}

// Exec runs SQL statements (several separated by semicolons are fine) as
// the superuser in a new connection, failing t on error.
func (pg *Postgres) Exec(t testing.TB, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("harness: %.200s: %v", sql, err)
	}
}

// BinDir returns the directory of the server binaries (pg_recvlogical is
// there too).
func (pg *Postgres) BinDir() string { return pg.binDir }

// Pid returns the postmaster's process id.
func (pg *Postgres) Pid() int { return pg.proc.cmd.Process.Pid }

// LogPath returns the server's log file.
func (pg *Postgres) LogPath() string { return pg.proc.logPath }

// Kill kills the server and all its processes with SIGKILL, as a crash of
// the machine's database would: nothing is shut down cleanly, connections
// break, and Restart runs crash recovery.
func (pg *Postgres) Kill() error {
	if pg.container != "" {
		if out, err := exec.Command("docker", "kill", "-s", "KILL", pg.container).CombinedOutput(); err != nil {
			return fmt.Errorf("harness: docker kill %s: %v %s", pg.container, err, out)
		}
		<-pg.proc.done // the attached docker command ends with the container
	}
	return pg.held.kill(pg.proc, pg.Port)
}

// Restart starts the server again after Kill, on the same port and data
// directory, and waits until it accepts connections.
func (pg *Postgres) Restart(ctx context.Context) error {
	if done, _ := pg.proc.exited(); !done {
		return fmt.Errorf("harness: PostgreSQL (pid %d) is still running", pg.Pid())
	}
	pg.held.free()
	return pg.start(ctx, pg.Port)
}

// Close stops the server with an immediate shutdown (SIGQUIT: it removes
// its shared memory), kills what is left after 10 s, and removes the
// cluster's directory. It is safe to call more than once.
func (pg *Postgres) Close() error {
	pg.held.free()
	if pg.container != "" {
		_ = exec.Command("docker", "rm", "-f", "-v", pg.container).Run()
	}
	if pg.proc == nil {
		return nil
	}
	if done, _ := pg.proc.exited(); !done {
		_ = pg.proc.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-pg.proc.done:
		case <-time.After(10 * time.Second):
		}
	}
	err := pg.proc.Close()
	if rerr := os.RemoveAll(pg.dir); rerr != nil && err == nil {
		err = fmt.Errorf("harness: remove %s: %w", pg.dir, rerr)
	}
	return err
}

// startProcessAs is startProcess with the child running under cred (nil:
// the current user).
func startProcessAs(name, bin string, argv []string, dir, logPath string, cred *syscall.Credential) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: open %s log: %w", name, err)
	}
	cmd := exec.Command(bin, argv...)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = f
	setProcAttr(cmd)
	cmd.SysProcAttr.Credential = cred
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("harness: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// RequireDebezium makes sure the jars directory holds Debezium's
// PostgreSQL connector (integration/pom.xml lists it), running
// fetch-jars.sh once when it does not, and skips t when it cannot be had.
// Kafka Connect started by KafkaConnect then offers the connector.
func RequireDebezium(t testing.TB) {
	t.Helper()
	requireJava(t)
	dir := requireJars(t)
	has := func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "debezium-connector-postgres-*.jar"))
		s, _ := filepath.Glob(filepath.Join(dir, "kafka-4.4-sanitizer-shim-for-debezium.jar"))
		return len(m) > 0 && len(s) > 0
	}
	if has() {
		return
	}
	if os.Getenv(noFetchEnv) == "" {
		t.Logf("harness: Debezium's PostgreSQL connector missing in %s, running %s", dir, FetchScript())
		if out, err := exec.Command("bash", FetchScript(), dir).CombinedOutput(); err != nil {
			t.Logf("harness: %s failed: %v\n%s", FetchScript(), err, out)
		}
	}
	if !has() {
		t.Skipf("skipping: Debezium's PostgreSQL connector is not in %s (run: bash integration/fetch-jars.sh)", dir)
	}
}

// Pid returns the process id of the Kafka Connect JVM (for CPU and memory
// measurements in benchmarks).
func (c *Connect) Pid() int { return c.proc.cmd.Process.Pid }
