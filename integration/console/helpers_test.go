package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tributary-dev/tributary/integration/harness"
)

// RequireBrowserEnv makes the tests fail, rather than skip, when Chromium
// is missing (CI sets it, as TRIBUTARY_REQUIRE_DOCKER for the engine).
const RequireBrowserEnv = "TRIBUTARY_REQUIRE_BROWSER"

// ShotsEnv names a directory the tests write their screenshots to
// (docs/console to refresh the README's); without it they go to a
// temporary directory whose path the test logs.
const ShotsEnv = "TRIBUTARY_CONSOLE_SHOTS"

// chromium returns the path of Debian's chromium, or skips t (fails it
// under RequireBrowserEnv).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "the console tests need Chromium: apt-get install chromium (.ci/run does)"
	if os.Getenv(RequireBrowserEnv) != "" {
		t.Fatal(RequireBrowserEnv + " is set and " + msg)
	}
	t.Skip("skipping: " + msg)
	return ""
}

// browser is a headless Chromium tab at 1280×900 whose JavaScript dialogs
// (confirm before delete or reset) are accepted, and which counts the
// requests the page sends.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the worker's URL

	mu       sync.Mutex
	requests []string // paths and queries of the requests the page sent to the worker
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	bin := chromium(t)
	// The profile directory is removed after Chromium has gone, retrying:
	// its helper processes may still write to it for a moment after the
	// browser exits, which made t.TempDir's own removal fail the test.
	profile, err := os.MkdirTemp("", "tributary-console-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for try := 0; ; try++ {
			err := os.RemoveAll(profile)
			if err == nil {
				return
			}
			if try == 50 {
				t.Logf("leaving Chromium's profile %s: %v", profile, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // root in CI containers
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(profile),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		case *network.EventRequestWillBeSent:
			if rest, ok := strings.CutPrefix(e.Request.URL, base); ok {
				b.mu.Lock()
				b.requests = append(b.requests, rest)
				b.mu.Unlock()
			}
		}
	})
	// The first Run starts the browser, which lives as long as the
	// context of that call: no timeout on it.
	if err := chromedp.Run(ctx, network.Enable()); err != nil {
		t.Fatalf("start Chromium %s: %v", bin, err)
	}
	return b
}

// run runs actions with a 60 s bound, failing the test on error.
func (b *browser) run(actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// open navigates to the console's route (a fragment such as "#/connectors")
// and waits until the page has drawn it.
func (b *browser) open(route string) {
	b.t.Helper()
	// A fresh load each time: going to another fragment of the page is
	// no load, and to the fragment shown no navigation at all.
	b.run(chromedp.Navigate("about:blank"))
	b.run(chromedp.Navigate(b.base+"/ui/"+route), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery))
}

// waitJS waits until the JavaScript expression is truthy (up to timeout).
func (b *browser) waitJS(expr string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	var ok bool
	if err := chromedp.Run(ctx, chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		var text string
		_ = chromedp.Run(b.ctx, chromedp.Text("body", &text, chromedp.ByQuery))
		b.t.Fatalf("browser: waiting for %s: %v\n--- page ---\n%s", expr, err, text)
	}
}

// text returns the text of the first element sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run(chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// eval evaluates expr into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	b.run(chromedp.Evaluate(expr, out))
}

// click clicks the first element sel matches.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.run(chromedp.Click(sel, chromedp.ByQuery, chromedp.NodeVisible))
}

// clickButton clicks the button whose text is label.
func (b *browser) clickButton(label string) {
	b.t.Helper()
	b.run(chromedp.Click(fmt.Sprintf(`//button[normalize-space(.)=%q]`, label), chromedp.BySearch, chromedp.NodeVisible))
}

// announced waits until the status region says want and returns its text.
func (b *browser) announced(want string, timeout time.Duration) string {
	b.t.Helper()
	b.waitJS(fmt.Sprintf(`document.getElementById('announce').textContent.includes(%q)`, want), timeout)
	return b.text("#announce")
}

// requestsSince returns the requests sent from index i on.
func (b *browser) requestsSince(i int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests[i:]...)
}

func (b *browser) requestCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.requests)
}

// shot saves a screenshot of the page as name.png (the whole page when
// full, else the viewport).
func (b *browser) shot(name string, full bool) {
	b.t.Helper()
	var buf []byte
	if full {
		b.run(chromedp.FullScreenshot(&buf, 100))
	} else {
		b.run(chromedp.CaptureScreenshot(&buf))
	}
	dir := os.Getenv(ShotsEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "tributary-console-shots")
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoRoot(b.t), dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

// repoRoot is the checkout this module belongs to.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test's source")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// startDev starts `tributary dev` (broker, worker, plugins) on free ports
// with extra arguments.
func startDev(t *testing.T, extra ...string) *harness.DevProcess {
	t.Helper()
	bin := harness.BuildTributary(t)
	return harness.StartDevProcess(t, bin, filepath.Join(t.TempDir(), "data"), harness.FreePort(t), harness.FreePort(t), extra...)
}

// rest calls the worker's REST API for a test's setup and checks.
func rest(t *testing.T, base, method, path string, body any, want int) []byte {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if want != 0 && resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, out, want)
	}
	return out
}

// status is a connector's status as the worker reports it.
type status struct {
	Connector struct {
		State string `json:"state"`
	} `json:"connector"`
	Tasks []struct {
		ID    int    `json:"id"`
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"tasks"`
}

func getStatus(t *testing.T, base, name string) status {
	t.Helper()
	var s status
	if err := json.Unmarshal(rest(t, base, "GET", "/connectors/"+name+"/status", nil, 200), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitREST waits until the worker reports a state for connector and its
// tasks (task "" accepts any tasks).
func waitREST(t *testing.T, base, name, conn, task string) status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := getStatus(t, base, name)
		ok := s.Connector.State == conn && len(s.Tasks) > 0
		for _, ts := range s.Tasks {
			ok = ok && (task == "" || ts.State == task)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v, want connector %s tasks %s", name, s, conn, task)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// metric reads one unlabelled sample of the worker's /metrics.
func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(rest(t, base, "GET", "/metrics", nil, 200)), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// children returns the pids of the processes whose parent is pid and
// whose command name starts with prefix (Linux /proc).
func children(pid int, prefix string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		comm := s[open+1 : end]
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid && strings.HasPrefix(comm, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// kill SIGKILLs pid.
func kill(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}

// checkLabels fails t when a form control of the page has no accessible
// name (a <label for>, aria-label or aria-labelledby).
func (b *browser) checkLabels(page string) {
	b.t.Helper()
	var missing []string
	b.eval(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
		.map(e => e.outerHTML.slice(0, 120))`, &missing)
	if len(missing) > 0 {
		b.t.Errorf("%s: form controls without a label: %v", page, missing)
	}
}

// setValue sets a form control's value as a paste would: the value, then
// its input and change events.
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	var ok bool
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false;
		e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, sel, value), &ok)
	if !ok {
		b.t.Fatalf("browser: no %s to set", sel)
	}
}
