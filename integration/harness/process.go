package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return p
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portHold is the port of a killed server, held (holdPort) until the
// server restarts; its zero value holds nothing.
type portHold struct{ release func() }

// kill closes p, the server (SIGKILL), and holds its port.
func (h *portHold) kill(p *process, port int) error {
	if err := p.Close(); err != nil {
		return err
	}
	release, err := holdPort(port)
	h.release = release
	return err
}

// free releases the port if it is held.
func (h *portHold) free() {
	if h.release != nil {
		h.release()
		h.release = nil
	}
}

// holdPort keeps 127.0.0.1:port bound while a test's server is down, so
// that no other test's FreePort is handed it meanwhile (the server comes
// back on it); connections are reset at once, as they would be refused
// by a port nobody listens on. release unbinds it.
func holdPort(port int) (release func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("harness: hold port %d: %w", port, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, not an orderly close
			}
			c.Close()
		}
	}()
	return func() { l.Close(); <-done }, nil
}

// freePorts returns n distinct free loopback ports; the listeners are held
// until all are chosen so that the kernel cannot hand out one twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// process is a started java process in its own process group, with its
// standard output and error written to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done is closed

	closeOnce sync.Once
	closeErr  error

	// archive and dump, when dump is set, ask Close to stop the JVM
	// gently so that it writes its class-data sharing archive (see
	// classArchive); later runs start from the archive.
	archive, dump string
}

// archiveStopTimeout bounds the one gentle stop of a JVM that writes its
// class-data archive on exit.
const archiveStopTimeout = 60 * time.Second

// startProcess starts java with argv in dir, logging to logPath.
func startProcess(name, java string, argv []string, dir, logPath string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: open %s log: %w", name, err)
	}
	cmd := exec.Command(java, argv...)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = f
	setProcAttr(cmd)
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

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Close kills the whole process group with SIGKILL and waits for the
// process to exit; a JVM that is to write its class-data archive (the
// first run on a machine) is first asked to stop with SIGTERM. It is safe
// to call more than once.
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		if p.dump != "" {
			defer discardDump(p.dump)
			if p.cmd.Process.Signal(syscall.SIGTERM) == nil {
				select {
				case <-p.done:
					keepArchive(p.archive, p.dump)
				case <-time.After(archiveStopTimeout):
				}
			}
		}
		if err := killGroup(p.cmd); err != nil {
			p.closeErr = fmt.Errorf("harness: kill %s: %w", p.name, err)
		}
		<-p.done
		if err := p.logFile.Close(); err != nil && p.closeErr == nil {
			p.closeErr = fmt.Errorf("harness: close %s log: %w", p.name, err)
		}
	})
	return p.closeErr
}

// tail returns the last lines of the process log.
func (p *process) tail(n int) string {
	return logTail(p.logPath, n)
}

// logTail returns the last n lines of the file at path.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	const maxBytes = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxBytes {
		if _, err := f.Seek(-maxBytes, io.SeekEnd); err != nil {
			return fmt.Sprintf("(cannot seek %s: %v)", path, err)
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	// The JVM's class-data archive warnings, written at exit, would hide
	// why it exited.
	var kept []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.Contains(l, []byte("][cds]")) {
			kept = append(kept, l...)
		}
	}
	return tailLines(kept, n)
}

// followReady copies a child's stdout to log, line by line, and sends the
// URI of its "ready <uri>" line (how the FerretDB and mongocontainer
// children announce that they serve) on the returned channel, which is
// closed when the output ends.
func followReady(stdout io.Reader, log io.Writer) <-chan string {
	ready := make(chan string, 1)
	go func() {
		defer close(ready)
		announced := false // the first ready line counts
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if uri, ok := strings.CutPrefix(sc.Text(), "ready "); ok && !announced {
				ready <- uri
				announced = true
			}
			fmt.Fprintln(log, sc.Text())
		}
	}()
	return ready
}

// logProblems returns the last n lines of a slog text log, from byte
// offset from on, that are warnings or errors, or say how the worker's
// group membership changed (joined, rejoining, a rebalance): what a failed
// test's reader wants first from a long worker log.
func logProblems(path string, from int64, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	if from > 0 && from <= int64(len(b)) {
		b = b[from:]
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") ||
			strings.Contains(l, `msg="joined the group"`) || strings.Contains(l, `msg="rejoining`) || strings.Contains(l, "rebalance") {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	if len(keep) == 0 {
		return "(none)"
	}
	return strings.Join(keep, "\n")
}

// tailLines returns the last n lines of b.
func tailLines(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	lines := strings.Split(string(b), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// maxStartAttempts bounds how often a component is restarted on new ports
// after losing a race for a "free" port.
const maxStartAttempts = 3

// errPortInUse marks a start-up failure caused by a port that another
// process bound between freePorts and the component's start.
var errPortInUse = errors.New("port already in use")

// startRetrying calls start until it succeeds, fails for another reason
// than a port taken by someone else, or maxStartAttempts are used.
func startRetrying[T any](start func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := start()
		if errors.Is(err, errPortInUse) && attempt < maxStartAttempts {
			continue // another process took a "free" port: pick new ones
		}
		return v, err
	}
}

// startError wraps err with the tail of the process log, and with
// errPortInUse when the process died failing to bind a port.
func startError(p *process, err error) error {
	err = fmt.Errorf("%w\n--- last lines of %s ---\n%s%s", err, p.logPath, p.tail(40), javaErrors(p.logPath, 20))
	if done, _ := p.exited(); done {
		if b, rerr := os.ReadFile(p.logPath); rerr == nil && bytes.Contains(b, []byte("Address already in use")) {
			return fmt.Errorf("%w: %w", errPortInUse, err)
		}
	}
	return err
}

// javaErrors returns the ERROR lines and exceptions of a Java component's
// log (at most n), which a start-up failure's tail may have scrolled
// past; "" when there are none.
func javaErrors(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " ERROR ") || strings.Contains(l, "Exception:") || strings.HasPrefix(strings.TrimSpace(l), "Caused by:") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	if len(keep) > n {
		keep = keep[:n]
	}
	return "\n--- errors and exceptions ---\n" + strings.Join(keep, "\n")
}
