package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Prometheus is a Prometheus server (Debian's prometheus package: apt-get
// install prometheus) scraping a test's targets on 127.0.0.1, with its
// storage in a temporary directory. It evaluates rule files too, so a test
// can check that an alert fires.
type Prometheus struct {
	URL  string
	proc *process
}

// PrometheusConfig is what StartPrometheusT scrapes and evaluates.
type PrometheusConfig struct {
	// Targets are host:port addresses serving /metrics, in one job
	// ("tributary"); each sample gets its address as the instance label.
	Targets []string
	// Interval is the scrape and rule evaluation interval (default 1 s).
	Interval time.Duration
	// RuleFiles are Prometheus rule files (recording and alerting rules)
	// to load. Shorten, when set, replaces every alert's for: duration
	// (its "for: 5m" written for production) with Shorten, so that a test
	// sees the alert fire.
	RuleFiles []string
	Shorten   time.Duration
}

// PrometheusBinary finds the prometheus executable: $TRIBUTARY_PROMETHEUS,
// or prometheus on PATH; the error wraps ErrUnavailable.
func PrometheusBinary() (string, error) {
	if p := os.Getenv("TRIBUTARY_PROMETHEUS"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		return "", fmt.Errorf("harness: no prometheus on PATH (apt-get install prometheus, or set TRIBUTARY_PROMETHEUS): %w", ErrUnavailable)
	}
	return p, nil
}

var forRE = regexp.MustCompile(`(?m)^(\s*)for:\s*\S+\s*$`)

// StartPrometheusT starts Prometheus for the test and stops it when the
// test ends; the test is skipped, saying what to install, when there is no
// prometheus binary.
func StartPrometheusT(t testing.TB, cfg PrometheusConfig) *Prometheus {
	t.Helper()
	bin, err := PrometheusBinary()
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	dir := t.TempDir()
	var rules []string
	for i, f := range cfg.RuleFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
		if cfg.Shorten > 0 {
			b = forRE.ReplaceAll(b, []byte("${1}for: "+promDuration(cfg.Shorten)))
		}
		p := filepath.Join(dir, fmt.Sprintf("rules-%d.yml", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatalf("harness: %v", err)
		}
		rules = append(rules, p)
	}
	var y strings.Builder
	fmt.Fprintf(&y, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n",
		promDuration(cfg.Interval), promDuration(cfg.Interval), promDuration(cfg.Interval))
	if len(rules) > 0 {
		y.WriteString("rule_files:\n")
		for _, r := range rules {
			fmt.Fprintf(&y, "  - %q\n", r)
		}
	}
	y.WriteString("scrape_configs:\n  - job_name: tributary\n    static_configs:\n      - targets:\n")
	for _, tg := range cfg.Targets {
		fmt.Fprintf(&y, "          - %q\n", tg)
	}
	confPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(confPath, []byte(y.String()), 0o644); err != nil {
		t.Fatalf("harness: %v", err)
	}
	p, err := startRetrying(func() (*Prometheus, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		argv := []string{"--config.file=" + confPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + addr, "--log.level=warn"}
		proc, err := startProcess("prometheus", bin, argv, dir, filepath.Join(dir, "prometheus.log"))
		if err != nil {
			return nil, err
		}
		pr := &Prometheus{URL: "http://" + addr, proc: proc}
		if err := pr.waitReady(30 * time.Second); err != nil {
			proc.Close()
			return nil, startError(proc, err)
		}
		return pr, nil
	})
	if err != nil {
		t.Fatalf("harness: start Prometheus: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of %s ---\n%s\n--- %s ---\n%s", p.proc.logPath, p.proc.tail(30), confPath, y.String())
		}
		p.proc.Close()
	})
	t.Logf("Prometheus at %s scraping %v every %v", p.URL, cfg.Targets, cfg.Interval)
	return p
}

func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// waitReady polls /-/ready.
func (p *Prometheus) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	client := &http.Client{Timeout: time.Second}
	for {
		if done, err := p.proc.exited(); done {
			return fmt.Errorf("harness: prometheus exited during start-up: %v", err)
		}
		if resp, err := client.Get(p.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("harness: prometheus not ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Sample is one element of an instant query's result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant PromQL query and returns its vector (a scalar
// result is one sample without labels).
func (p *Prometheus) Query(ctx context.Context, expr string) ([]Sample, error) {
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/query?query="+url.QueryEscape(expr), &body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("harness: query %s: %s", expr, body.Error)
	}
	parse := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	switch body.Data.ResultType {
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := parse(v)
		return []Sample{{Value: f}}, err
	case "vector":
		var vs []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(body.Data.Result, &vs); err != nil {
			return nil, err
		}
		out := make([]Sample, len(vs))
		for i, v := range vs {
			f, err := parse(v.Value)
			if err != nil {
				return nil, err
			}
			out[i] = Sample{Labels: v.Metric, Value: f}
		}
		return out, nil
	}
	return nil, fmt.Errorf("harness: query %s: result type %s", expr, body.Data.ResultType)
}

// Alert is one alert Prometheus holds (pending or firing).
type Alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// Alerts returns the alerts of the rule files, pending and firing.
func (p *Prometheus) Alerts(ctx context.Context) ([]Alert, error) {
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Alerts []Alert `json:"alerts"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/alerts", &body); err != nil {
		return nil, err
	}
	return body.Data.Alerts, nil
}

// Targets returns the scrape targets' health by instance ("up", "down",
// "unknown") and their last errors.
func (p *Prometheus) Targets(ctx context.Context) (map[string]string, error) {
	var body struct {
		Data struct {
			ActiveTargets []struct {
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/targets", &body); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range body.Data.ActiveTargets {
		out[t.Labels["instance"]] = strings.TrimSpace(t.Health + " " + t.LastError)
	}
	return out, nil
}

func (p *Prometheus) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("harness: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("harness: GET %s: %s: %w", path, b, err)
	}
	return nil
}
