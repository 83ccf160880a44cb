package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestConsoleManyConnectors loads the connectors list of a worker running
// 300 connectors, 5 of them failed: the failed ones come first, the page
// sends ONE request for all of them (GET /connectors?expand=status&expand=info,
// counted from the browser's network events), and the time to draw the
// list is logged. Then it restarts three connectors with one bulk action
// and checks that the workers restarted them (the worker's startup
// counters) and that the page says the state they report after it.
func TestConsoleManyConnectors(t *testing.T) {
	t.Parallel()
	chromium(t)
	dev := startDev(t)
	base := dev.URL()
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const total, failing = 300, 5
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range total {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if i < failing {
				// A sink whose file cannot be opened: its task fails.
				rest(t, base, "POST", "/connectors", map[string]any{"name": fmt.Sprintf("sink-%03d", i), "config": map[string]string{
					"connector.class": "FileStreamSink", "topics": "many", "file": "/nonexistent/dir/out.txt"}}, 201)
				return
			}
			rest(t, base, "POST", "/connectors", map[string]any{"name": fmt.Sprintf("src-%03d", i), "config": map[string]string{
				"connector.class": "FileStreamSource", "topic": "many", "file": empty}}, 201)
		})
	}
	wg.Wait()
	for i := range failing {
		waitREST(t, base, fmt.Sprintf("sink-%03d", i), "RUNNING", "FAILED")
	}
	for _, n := range []string{"src-005", "src-006", "src-007"} {
		waitREST(t, base, n, "RUNNING", "RUNNING")
	}

	b := newBrowser(t, base)
	from := b.requestCount()
	begin := time.Now()
	b.open("#/connectors")
	b.waitJS(fmt.Sprintf(`document.querySelectorAll('#connectors tbody tr').length === %d`, total), 30*time.Second)
	wall := time.Since(begin)
	var inPage string
	b.eval(`document.getElementById('main').dataset.renderMs`, &inPage)
	t.Logf("connectors list of %d: %s ms from the page's request to the drawn table (in the page), %s from navigation to %d rows (Go side)", total, inPage, wall.Round(time.Millisecond), total)

	var apiCalls []string
	for _, r := range b.requestsSince(from) {
		if strings.HasPrefix(r, "/connectors") {
			apiCalls = append(apiCalls, r)
		}
	}
	if len(apiCalls) != 1 || apiCalls[0] != "/connectors?expand=status&expand=info" {
		t.Errorf("the list sent %d connector requests %v, want exactly one batch GET /connectors?expand=status&expand=info", len(apiCalls), apiCalls)
	}
	t.Logf("requests the page sent: %v", b.requestsSince(from))

	var first []string
	b.eval(fmt.Sprintf(`[...document.querySelectorAll('#connectors tbody tr')].slice(0, %d).map(r => r.dataset.connector + '=' + r.dataset.state)`, failing+1), &first)
	for i := range failing {
		if want := fmt.Sprintf("sink-%03d=failed", i); first[i] != want {
			t.Errorf("row %d is %s, want %s (failed first): %v", i, first[i], want, first)
		}
	}
	if !strings.HasSuffix(first[failing], "=healthy") {
		t.Errorf("row %d is %s, want the healthy ones after the failed", failing, first[failing])
	}
	b.checkLabels("connectors")
	// Keyboard: focus starts on the page's heading; Tab goes to the
	// search, then to the state filter; typing into the search filters.
	var focus []string
	for range 2 {
		b.run(chromedp.KeyEvent("\t"))
		var id string
		b.eval(`document.activeElement.id`, &id)
		focus = append(focus, id)
	}
	if strings.Join(focus, ",") != "q,state" {
		t.Errorf("Tab from the heading focuses %v, want the search then the state filter", focus)
	}
	b.shot("connectors", false)

	// Search and the state filter.
	b.run(chromedp.KeyEvent("\t", chromedp.KeyModifiers(input.ModifierShift)), chromedp.KeyEvent("sink-"))
	b.waitJS(fmt.Sprintf(`document.querySelectorAll('#connectors tbody tr').length === %d`, failing), 10*time.Second)
	b.open("#/connectors?state=healthy")
	b.waitJS(fmt.Sprintf(`document.querySelectorAll('#connectors tbody tr').length === %d`, total-failing), 10*time.Second)

	// On a phone: the page does not scroll sideways (the table does).
	b.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	b.open("#/connectors")
	var overflow bool
	b.eval(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow)
	if overflow {
		t.Errorf("at 390 px the connectors page scrolls sideways")
	}
	b.shot("connectors-phone", false)
	b.run(chromedp.EmulateViewport(1280, 900))

	// Bulk restart of three connectors.
	conn0 := metric(t, base, "kafka_connect_worker_connector_startup_attempts_total")
	task0 := metric(t, base, "kafka_connect_worker_task_startup_attempts_total")
	b.open("#/connectors")
	for _, n := range []string{"src-005", "src-006", "src-007"} {
		b.click(fmt.Sprintf(`input[aria-label="Select %s"]`, n))
	}
	b.waitJS(`document.querySelector('.bulk span').textContent === '3 selected'`, 5*time.Second)
	b.clickButton("Restart")
	msg := b.announced("Restart done.", 60*time.Second)
	t.Log(msg)
	for _, n := range []string{"src-005", "src-006", "src-007"} {
		if !strings.Contains(msg, n+": RUNNING (tasks: 1 RUNNING)") {
			t.Errorf("the bulk restart's result lacks %s RUNNING: %s", n, msg)
		}
	}
	conn1 := metric(t, base, "kafka_connect_worker_connector_startup_attempts_total")
	task1 := metric(t, base, "kafka_connect_worker_task_startup_attempts_total")
	if conn1-conn0 < 3 || task1-task0 < 3 {
		t.Errorf("after the bulk restart the worker started %v connectors and %v tasks, want 3 and 3", conn1-conn0, task1-task0)
	}
}
