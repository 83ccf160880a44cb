package console

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tributary-dev/tributary/integration/harness"
)

const pgClass = "io.debezium.connector.postgresql.PostgresConnector"

// pgConfig is a Postgres source of table public.t under id.
func pgConfig(pg *harness.Postgres, id, password string) map[string]string {
	return map[string]string{
		"connector.class":             pgClass,
		"plugin.name":                 "pgoutput",
		"database.hostname":           pg.Host,
		"database.port":               strconv.Itoa(pg.Port),
		"database.user":               pg.User,
		"database.password":           password,
		"database.dbname":             pg.Database,
		"database.sslmode":            "disable",
		"topic.prefix":                id,
		"table.include.list":          "public.t",
		"slot.name":                   "slot_" + id,
		"publication.name":            "pub_" + id,
		"publication.autocreate.mode": "filtered",
	}
}

// TestConsolePostgres drives the console in Chromium through a Postgres
// source's life: created through the wizard with a wrong password (the
// error shows on the password field), fixed, RUNNING; paused and resumed;
// its plugin process killed and the failed task restarted from the page;
// stopped, its offsets reset, resumed; and a second source whose password
// is a ${file:...} reference shows the reference, the first one's literal
// password masked.
func TestConsolePostgres(t *testing.T) {
	t.Parallel()
	chromium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'one'), (2, 'two')`)
	secrets := filepath.Join(t.TempDir(), "db.properties")
	if err := os.WriteFile(secrets, []byte("password="+pg.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dev := startDev(t,
		"--override", "config.providers=file",
		"--override", "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider")
	base := dev.URL()
	b := newBrowser(t, base)

	// The wizard: pick the plugin, import a config with a wrong password.
	b.open("#/new")
	b.waitJS(fmt.Sprintf(`!!document.querySelector('button[data-class=%q]')`, pgClass), 20*time.Second)
	b.shot("wizard-plugins", false)
	b.click(fmt.Sprintf(`button[data-class=%q]`, pgClass))
	b.waitJS(`!!document.querySelector('form#wizard [name="database.password"]')`, 30*time.Second)
	imp, _ := json.Marshal(map[string]any{"name": "orders", "config": pgConfig(pg, "orders", "wrong-password")})
	b.click(`details.import summary`)
	b.setValue(`#f-import`, string(imp))
	b.click(`#do-import`)
	b.waitJS(`document.querySelector('#f-name') && document.querySelector('#f-name').value === 'orders'`, 20*time.Second)
	b.clickButton("Next: review")
	b.waitJS(`document.querySelector('[data-error-for="database.password"]').textContent.includes('password authentication failed')`, 30*time.Second)
	var invalid string
	b.eval(`document.querySelector('form#wizard [name="database.password"]').getAttribute('aria-invalid')`, &invalid)
	if invalid != "true" {
		t.Errorf("the password field is not marked invalid: aria-invalid=%q", invalid)
	}
	t.Logf("error on the password field: %s", b.text(`[data-error-for="database.password"]`))
	b.checkLabels("wizard")
	var ignored any
	b.eval(`document.querySelector('form#wizard [name="database.password"]').scrollIntoView({block: 'center'})`, &ignored)
	b.shot("wizard-form-error", false)

	// Fix it: type the right password; live validation clears the error.
	b.setValue(`form#wizard [name="database.password"]`, "")
	b.run(chromedp.SendKeys(`form#wizard [name="database.password"]`, pg.Password, chromedp.ByQuery))
	b.waitJS(`document.querySelector('[data-error-for="database.password"]').textContent === ''`, 30*time.Second)
	b.clickButton("Next: review")
	b.waitJS(`!!document.querySelector('#review')`, 30*time.Second)
	var pwShown string
	b.eval(`[...document.querySelectorAll('#review tr')].find(r => r.firstChild.textContent === 'database.password').children[1].textContent`, &pwShown)
	if pwShown == pg.Password || !strings.Contains(pwShown, "•") {
		t.Errorf("the review shows the password as %q, want it masked", pwShown)
	}
	b.shot("wizard-review", true)
	b.click(`#create`)
	b.announced("Created. The worker reports orders: RUNNING (tasks: 1 RUNNING)", 60*time.Second)
	b.waitJS(`document.querySelector('#holistic [data-state="healthy"]') !== null`, 30*time.Second)
	waitREST(t, base, "orders", "RUNNING", "RUNNING")

	// The detail page masks the literal password.
	var cell string
	b.eval(`document.querySelector('#config tr[data-key="database.password"] td').textContent`, &cell)
	if cell == pg.Password || !strings.Contains(cell, "•") {
		t.Errorf("the config view shows the password as %q, want it masked", cell)
	}
	// Snapshot progress, from the Debezium metrics of the connector's task
	// (the table's rows, once the snapshot completed).
	for deadline := time.Now().Add(30 * time.Second); ; {
		b.open("#/connectors/orders")
		var snap string
		b.eval(`(document.querySelector('#snapshot') || {}).textContent || ''`, &snap)
		if strings.HasPrefix(snap, "completed: ") && strings.Contains(snap, "from 1 table(s)") {
			t.Logf("snapshot: %s", snap)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the detail page's snapshot line is %q after 30 s, want completed from 1 table", snap)
		}
		time.Sleep(time.Second)
	}
	b.checkLabels("connector")
	b.shot("connector-detail", true)

	// Pause and resume: each shows the state the worker reports after it.
	b.clickButton("Pause")
	t.Log(b.announced("Pause done. The worker reports orders: PAUSED (tasks: 1 PAUSED)", 30*time.Second))
	waitREST(t, base, "orders", "PAUSED", "PAUSED")
	b.clickButton("Resume")
	t.Log(b.announced("Resume done. The worker reports orders: RUNNING (tasks: 1 RUNNING)", 30*time.Second))

	// Kill its plugin process: the page shows the failed task with its
	// error; "Restart failed tasks" brings it back.
	plugins := children(dev.Pid(), "tributary-conne")
	if len(plugins) == 0 {
		t.Fatalf("no plugin process under tributary dev (pid %d)", dev.Pid())
	}
	for _, pid := range plugins {
		kill(t, pid)
	}
	waitREST(t, base, "orders", "FAILED", "FAILED")
	b.open("#/connectors/orders")
	b.waitJS(`document.querySelector('#tasks tr[data-task="0"][data-state="FAILED"] details summary') !== null`, 20*time.Second)
	t.Logf("failed task's first line: %s", b.text(`#tasks tr[data-task="0"] details summary`))
	b.shot("connector-failed", true)
	b.open("#/connectors?state=failed")
	b.waitJS(`!!document.querySelector('#connectors tr[data-connector="orders"][data-state="failed"]')`, 10*time.Second)
	b.open("#/connectors/orders")
	b.clickButton("Restart failed tasks")
	t.Log(b.announced("Restart failed tasks done. The worker reports orders: RUNNING (tasks: 1 RUNNING)", 60*time.Second))
	waitREST(t, base, "orders", "RUNNING", "RUNNING")

	// Stop, reset the offsets, resume.
	b.clickButton("Stop")
	t.Log(b.announced("Stop done. The worker reports orders: STOPPED", 30*time.Second))
	b.waitJS(`document.querySelector('#offsets tbody').children.length > 0`, 10*time.Second)
	b.shot("connector-stopped-offsets", true)
	b.clickButton("Reset offsets")
	t.Log(b.announced("The worker now reports 0 committed offset(s)", 30*time.Second))
	b.waitJS(`document.querySelector('#offsets tbody').children.length === 0`, 10*time.Second)
	var offs struct {
		Offsets []any `json:"offsets"`
	}
	if err := json.Unmarshal(rest(t, base, "GET", "/connectors/orders/offsets", nil, 200), &offs); err != nil || len(offs.Offsets) != 0 {
		t.Errorf("offsets after the reset: %+v (%v), want none", offs, err)
	}
	b.clickButton("Resume")
	t.Log(b.announced("Resume done. The worker reports orders: RUNNING (tasks: 1 RUNNING)", 60*time.Second))

	// The config editor shows the password masked and keeps it when
	// another key is edited and saved.
	b.open("#/connectors/orders")
	b.click(`details.edit summary`)
	var ignoredBool bool
	b.eval(`(() => { const ta = document.querySelector('details.edit textarea'); const c = JSON.parse(ta.value);
		if (c['database.password'] !== '••••••••') return false;
		c['heartbeat.interval.ms'] = '15000'; ta.value = JSON.stringify(c, null, 2); return true; })()`, &ignoredBool)
	if !ignoredBool {
		t.Errorf("the config editor does not show the password masked")
	}
	b.clickButton("Validate and save")
	t.Log(b.announced("Configuration saved. The worker reports orders:", 30*time.Second))
	var saved map[string]string
	if err := json.Unmarshal(rest(t, base, "GET", "/connectors/orders/config", nil, 200), &saved); err != nil {
		t.Fatal(err)
	}
	if saved["heartbeat.interval.ms"] != "15000" || saved["database.password"] != pg.Password {
		t.Errorf("after the edit the config has heartbeat.interval.ms=%q and the password %s, want 15000 and the password kept",
			saved["heartbeat.interval.ms"], map[bool]string{true: "kept", false: "changed"}[saved["database.password"] == pg.Password])
	}
	waitREST(t, base, "orders", "RUNNING", "RUNNING")

	// A password from ${file:...}: the reference, never the secret.
	ref := "${file:" + secrets + ":password}"
	cfg := pgConfig(pg, "byref", ref)
	rest(t, base, "POST", "/connectors", map[string]any{"name": "byref", "config": cfg}, 201)
	waitREST(t, base, "byref", "RUNNING", "RUNNING")
	b.open("#/connectors/byref")
	b.eval(`document.querySelector('#config tr[data-key="database.password"] td').textContent`, &cell)
	if cell != ref {
		t.Errorf("the config view shows %q for a referenced password, want %q", cell, ref)
	}
	var editor string
	b.eval(`document.querySelector('details.edit textarea').value`, &editor)
	if !strings.Contains(editor, ref) {
		t.Errorf("the config editor lacks the reference %s:\n%s", ref, editor)
	}

	// Overview and log levels render what the worker knows.
	b.open("#/")
	b.waitJS(`document.querySelector('[data-testid="count-healthy"]').textContent === '2'`, 20*time.Second)
	if leader := b.text(`[data-testid="leader"]`); !strings.Contains(leader, strings.TrimPrefix(base, "http://")) {
		t.Errorf("overview's leader is %q, want this worker %s", leader, base)
	}
	b.shot("overview", true)
	b.open("#/loggers")
	b.setValue(`#lg-name`, "org.apache.kafka.connect.runtime")
	b.setValue(`#lg-level`, "DEBUG")
	b.clickButton("Set level")
	t.Log(b.announced("org.apache.kafka.connect.runtime is now at DEBUG", 20*time.Second))
	b.shot("loggers", false)
}
