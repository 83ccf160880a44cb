package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// PipelineMetrics is the metrics overhead run: the FileStream pipeline on
// Tributary, round after round, on a worker built without metrics (the
// baseline), on one with them nobody scrapes, and on one with them
// scraped every ScrapeInterval, in a rotating order.
const PipelineMetrics = "metrics"

// Variants of the metrics overhead run.
const (
	VariantBaseline   = "baseline (no metrics)"
	VariantUnscraped  = "metrics, not scraped"
	VariantScraped    = "metrics, scraped"
	DefaultRounds     = 5
	TargetMetricsCost = 0.03 // at most 3 % more CPU per record
)

// MetricsVariant is one variant's runs.
type MetricsVariant struct {
	Name string `json:"name"`
	// Key names the variant's connectors.
	Key string `json:"key"`
	// Exe is the tributary binary the variant ran.
	Exe  string            `json:"exe"`
	Runs []*PipelineResult `json:"runs"`
	// CPUMicrosPerRecord and RecordsPerSec are the medians over the runs.
	CPUMicrosPerRecord float64 `json:"cpu_us_per_record"`
	RecordsPerSec      float64 `json:"records_per_sec"`
	// Scrapes and ScrapeBytes count the GET /metrics answered while the
	// pipelines ran (scraped variant).
	Scrapes     int64 `json:"scrapes,omitempty"`
	ScrapeBytes int64 `json:"scrape_bytes,omitempty"`
}

// MetricsOverhead is the metrics overhead run's result.
type MetricsOverhead struct {
	Rounds         int               `json:"rounds"`
	Records        int               `json:"records_per_run"`
	ScrapeInterval float64           `json:"scrape_interval_seconds"`
	Variants       []*MetricsVariant `json:"variants"`
	// Overhead is the scraped variant's median CPU per record over the
	// baseline's, less 1 (NaN without a baseline); ScrapeCost the
	// scraped variant's over the unscraped one's, less 1.
	Overhead   float64 `json:"overhead"`
	ScrapeCost float64 `json:"scrape_cost"`
	// PairedOverhead is the median over the rounds of each round's scraped
	// run over its baseline run, less 1: runs a few seconds apart share
	// the machine's load, which a median over all runs does not pair.
	PairedOverhead float64 `json:"paired_overhead"`
}

func (m *MetricsOverhead) variant(name string) *MetricsVariant {
	for _, v := range m.Variants {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// runMetricsOverhead runs PipelineMetrics: o.Rounds rounds of the three
// variants (two without o.Baseline), each run on a fresh worker process.
func runMetricsOverhead(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, work string) (*MetricsOverhead, error) {
	rounds := o.Rounds
	if rounds <= 0 {
		rounds = DefaultRounds
	}
	interval := o.ScrapeInterval
	if interval <= 0 {
		interval = time.Second
	}
	input := filepath.Join(work, "metrics-input.txt")
	logf("metrics overhead: writing %d lines of %d bytes to %s", o.FileRecords, ConnectLineBytes+1, input)
	if err := writeInput(input, o.FileRecords); err != nil {
		return nil, err
	}
	m := &MetricsOverhead{Rounds: rounds, Records: o.FileRecords, ScrapeInterval: interval.Seconds()}
	if o.Baseline != "" {
		m.Variants = append(m.Variants, &MetricsVariant{Name: VariantBaseline, Key: "baseline", Exe: o.Baseline})
	}
	m.Variants = append(m.Variants, &MetricsVariant{Name: VariantUnscraped, Key: "unscraped", Exe: o.Exe},
		&MetricsVariant{Name: VariantScraped, Key: "scraped", Exe: o.Exe})
	for r := range rounds {
		for i := range m.Variants {
			// Rotate the order round by round: no variant always runs
			// first, on a cooler machine, or last.
			v := m.Variants[(i+r)%len(m.Variants)]
			tag := fmt.Sprintf("metrics-%d-%d", r, (i+r)%len(m.Variants))
			dir := filepath.Join(work, tag)
			ov := o
			ov.Exe = v.Exe
			var stop func() (int64, int64)
			res := runTributary(ctx, ov, logf, adm, bootstrap, dir, "FileStream-"+v.Key, func(url string) (pipeline, error) {
				if v.Name == VariantScraped {
					stop = scrape(url+"/metrics", interval)
				}
				topic := "bench-" + tag
				return pipeline{topic: topic, n: int64(o.FileRecords),
					source: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
						"file": input, "topic": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
						"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
					sink: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max": "1",
						"file": filepath.Join(dir, "output.txt"), "topics": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
						"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
				}, nil
			})
			if stop != nil {
				n, b := stop()
				v.Scrapes += n
				v.ScrapeBytes += b
			}
			v.Runs = append(v.Runs, res)
			if res.Error != "" {
				return m, fmt.Errorf("metrics overhead, %s, round %d: %s", v.Name, r+1, res.Error)
			}
			logf("metrics overhead: round %d/%d, %s: %.2f µs CPU per record", r+1, rounds, v.Name, res.CPUMicrosPerRecord)
			if ctx.Err() != nil {
				return m, ctx.Err()
			}
		}
	}
	m.compute()
	return m, nil
}

func (m *MetricsOverhead) compute() {
	for _, v := range m.Variants {
		var cpu, rate []float64
		for _, r := range v.Runs {
			if r.Error == "" {
				cpu = append(cpu, r.CPUMicrosPerRecord)
				rate = append(rate, r.RecordsPerSec)
			}
		}
		v.CPUMicrosPerRecord, v.RecordsPerSec = medianOf(cpu), medianOf(rate)
	}
	ratio := func(a, b *MetricsVariant) float64 {
		if a == nil || b == nil || b.CPUMicrosPerRecord == 0 {
			return 0
		}
		return a.CPUMicrosPerRecord/b.CPUMicrosPerRecord - 1
	}
	m.Overhead = ratio(m.variant(VariantScraped), m.variant(VariantBaseline))
	m.ScrapeCost = ratio(m.variant(VariantScraped), m.variant(VariantUnscraped))
	if s, b := m.variant(VariantScraped), m.variant(VariantBaseline); s != nil && b != nil {
		var rs []float64
		for i := range min(len(s.Runs), len(b.Runs)) {
			if x, y := s.Runs[i], b.Runs[i]; x.Error == "" && y.Error == "" && y.CPUMicrosPerRecord > 0 {
				rs = append(rs, x.CPUMicrosPerRecord/y.CPUMicrosPerRecord-1)
			}
		}
		m.PairedOverhead = medianOf(rs)
	}
}

// scrape GETs url every interval, as Prometheus would, until the returned
// stop, which says how many scrapes were answered and their bytes.
func scrape(url string, interval time.Duration) (stop func() (scrapes, bytes int64)) {
	var n, size atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 10 * time.Second}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			resp, err := client.Get(url)
			if err != nil {
				continue
			}
			b, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				n.Add(1)
				size.Add(b)
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		wg.Wait()
		return n.Load(), size.Load()
	}
}

// writeText prints the metrics overhead table and its target.
func (m *MetricsOverhead) writeText(out io.Writer) error {
	fmt.Fprintf(out, "Metrics overhead: FileStream, %d records per run, %d rounds, variants in rotating order, each run on a fresh worker; GET /metrics every %s in the scraped variant\n\n",
		m.Records, m.Rounds, time.Duration(m.ScrapeInterval*float64(time.Second)))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "variant\tCPU µs/record (median)\truns\trecords/s (median)\tscrapes\tbytes/scrape\t")
	for _, v := range m.Variants {
		runs := make([]string, 0, len(v.Runs))
		for _, r := range v.Runs {
			runs = append(runs, strconv.FormatFloat(r.CPUMicrosPerRecord, 'f', 2, 64))
		}
		per := "-"
		if v.Scrapes > 0 {
			per = group(float64(v.ScrapeBytes) / float64(v.Scrapes))
		}
		fmt.Fprintf(w, "%s\t%.2f\t%s\t%s\t%d\t%s\t\n", v.Name, v.CPUMicrosPerRecord, strings.Join(runs, ", "), group(v.RecordsPerSec), v.Scrapes, per)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	if m.variant(VariantBaseline) == nil {
		fmt.Fprintf(out, "CPU per record, scraped vs not scraped: %+.2f%% (no --baseline: the overhead against a build without metrics is not measured)\n", m.ScrapeCost*100)
		return nil
	}
	verdict := "met"
	if m.Overhead > TargetMetricsCost {
		verdict = "not met"
	}
	fmt.Fprintf(out, "CPU per record with metrics scraped every %s vs without metrics: %+.2f%% (medians; goal <= +%.0f%%): %s; median of the rounds' pairs: %+.2f%%; scraped vs not scraped: %+.2f%%\n",
		time.Duration(m.ScrapeInterval*float64(time.Second)), m.Overhead*100, TargetMetricsCost*100, verdict, m.PairedOverhead*100, m.ScrapeCost*100)
	return nil
}
