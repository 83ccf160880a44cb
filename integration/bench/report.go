package bench

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Rate is the throughput of one phase.
type Rate struct {
	Records       int     `json:"records"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"` // 10^6 bytes of record values per second
	// CPUSeconds is the CPU time the phase took in the benchmark process
	// (client, and broker when in-process) plus an external broker
	// process (Apache Kafka); CPUSecondsPerRecord divides it by Records.
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUSecondsPerRecord float64 `json:"cpu_seconds_per_record"`
}

// setCPU records the CPU time of the phase.
func (r *Rate) setCPU(d time.Duration) {
	r.CPUSeconds = d.Seconds()
	if r.Records > 0 {
		r.CPUSecondsPerRecord = r.CPUSeconds / float64(r.Records)
	}
}

func newRate(w Workload, d time.Duration) *Rate {
	s := d.Seconds()
	if s <= 0 {
		s = 1e-9
	}
	b := int64(w.Records) * int64(w.RecordSize)
	return &Rate{
		Records:       w.Records,
		Bytes:         b,
		Seconds:       s,
		RecordsPerSec: float64(w.Records) / s,
		MBPerSec:      float64(b) / s / 1e6,
	}
}

func (r *Rate) String() string {
	return fmt.Sprintf("%s rec/s, %.1f MB/s (%.2fs)", group(r.RecordsPerSec), r.MBPerSec, r.Seconds)
}

// Result is one target's figures for one workload: Produce and Consume are
// the median runs, ProduceRuns and ConsumeRuns every run in order. When a
// run failed, Error says why and there are no figures.
type Result struct {
	Target      Target  `json:"target"`
	Produce     *Rate   `json:"produce,omitempty"`
	Consume     *Rate   `json:"consume,omitempty"`
	ProduceRuns []*Rate `json:"produce_runs,omitempty"`
	ConsumeRuns []*Rate `json:"consume_runs,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// setRuns records the runs and picks the medians.
func (r *Result) setRuns(prods, cons []*Rate) {
	r.ProduceRuns, r.ConsumeRuns = prods, cons
	r.Produce, r.Consume = median(prods), median(cons)
}

// median returns the run with the median records/s (the lower middle one
// for an even count), or nil for no runs.
func median(rs []*Rate) *Rate {
	if len(rs) == 0 {
		return nil
	}
	s := slices.Clone(rs)
	slices.SortStableFunc(s, func(a, b *Rate) int { return cmp.Compare(a.RecordsPerSec, b.RecordsPerSec) })
	return s[(len(s)-1)/2]
}

// spread is (max-min)/median of the runs' records/s, or 0 for fewer than
// two runs.
func spread(rs []*Rate) float64 {
	m := median(rs)
	if len(rs) < 2 || m.RecordsPerSec <= 0 {
		return 0
	}
	lo, hi := rs[0].RecordsPerSec, rs[0].RecordsPerSec
	for _, r := range rs[1:] {
		lo, hi = min(lo, r.RecordsPerSec), max(hi, r.RecordsPerSec)
	}
	return (hi - lo) / m.RecordsPerSec
}

// Phase is produce or consume.
type Phase string

// The two phases.
const (
	Produce Phase = "produce"
	Consume Phase = "consume"
)

// Goal is one of the targets: Tributary's rate in Phase divided by
// Reference's must be at least Min.
type Goal struct {
	Phase     Phase   `json:"phase"`
	Reference Target  `json:"reference"`
	Min       float64 `json:"min_ratio"`
}

// Goals are issue 2's benchmark targets.
var Goals = []Goal{
	{Produce, KfakeSync, 1.5},
	{Produce, KafkaDurable, 1.0},
	{Consume, KfakeMemory, 1.0},
}

// TxnGoals are issue 22's targets for the transactional workloads:
// transactional produce and read_committed consume at least 1.5x durable
// Apache Kafka.
var TxnGoals = []Goal{
	{Produce, KafkaDurable, 1.5},
	{Consume, KafkaDurable, 1.5},
}

func (g Goal) String() string {
	return fmt.Sprintf("%s %s/%s >= %.1fx", g.Phase, Tributary, g.Reference, g.Min)
}

// Ratio is a computed goal: Ratio is nil when either side is missing.
type Ratio struct {
	Goal
	Ratio *float64 `json:"ratio,omitempty"`
	// Met is nil when the ratio could not be computed.
	Met  *bool  `json:"met,omitempty"`
	Note string `json:"note,omitempty"`
}

// WorkloadReport holds every target's results for one workload.
type WorkloadReport struct {
	Workload
	Results []Result `json:"results"`
	Ratios  []Ratio  `json:"ratios"`
}

// result returns t's result, or nil.
func (w *WorkloadReport) result(t Target) *Result {
	for i := range w.Results {
		if w.Results[i].Target == t {
			return &w.Results[i]
		}
	}
	return nil
}

// rate returns t's rate in phase, or nil.
func (w *WorkloadReport) rate(t Target, p Phase) *Rate {
	r := w.result(t)
	if r == nil || r.Error != "" {
		return nil
	}
	if p == Produce {
		return r.Produce
	}
	return r.Consume
}

// Host describes where the benchmark ran.
type Host struct {
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	FranzGo   string `json:"franz_go,omitempty"`
	Kfake     string `json:"kfake,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Started        time.Time         `json:"started"`
	Host           Host              `json:"host"`
	Client         string            `json:"client"`
	Targets        []Target          `json:"targets"`
	TargetErrors   map[Target]string `json:"target_errors,omitempty"`
	Workloads      []WorkloadReport  `json:"workloads"`
	Elapsed        time.Duration     `json:"-"`
	ElapsedSeconds float64           `json:"elapsed_seconds"`
	// Groups holds the consumer group benchmarks, when they ran.
	Groups *GroupReport `json:"groups,omitempty"`
	// AllMet is true when every goal was computed for every workload and
	// met, and, when the rebalance run ran, Tributary met its goal.
	AllMet bool `json:"all_goals_met"`
	// Txn is set for the transactional workloads (Options.TxnEvery).
	Txn bool `json:"transactional,omitempty"`
}

// txnClientDesc describes the client settings of the transactional mode.
func txnClientDesc(compression string, every int) string {
	return fmt.Sprintf("franz-go kgo defaults with a transactional id (acks=all, idempotent, linger 10ms, 1 MB batches), a commit every %d records, compression %s"+
		"; read_committed consumer; random record values, no keys", every, compression)
}

// clientDesc describes the client settings for a compression codec name.
func clientDesc(compression string) string {
	return "franz-go kgo defaults (acks=all, idempotent, linger 10ms, 1 MB batches) with compression " + compression +
		"; random record values, no keys; one producer client, one consumer client"
}

func newReport(ws []Workload, ts []Target, compression string) *Report {
	r := &Report{Started: time.Now().UTC().Truncate(time.Second), Host: hostInfo(), Client: clientDesc(compression), Targets: ts}
	for _, w := range ws {
		r.Workloads = append(r.Workloads, WorkloadReport{Workload: w})
	}
	return r
}

// setTargetError records that t could not run at all.
func (r *Report) setTargetError(t Target, err error) {
	if r.TargetErrors == nil {
		r.TargetErrors = map[Target]string{}
	}
	msg := err.Error()
	if errors.Is(err, ErrSkipped) {
		msg = "skipped: " + msg
	}
	r.TargetErrors[t] = msg
}

// compute fills in every workload's ratios and AllMet.
func (r *Report) compute() {
	r.AllMet = len(r.Workloads) > 0
	if r.Groups != nil {
		r.Groups.compute()
		if len(r.Groups.Rebalance) > 0 {
			// Workload goals, if any, are checked below.
			r.AllMet = r.Groups.GoalMet != nil && *r.Groups.GoalMet
		}
	}
	for i := range r.Workloads {
		w := &r.Workloads[i]
		w.Ratios = w.Ratios[:0]
		goals := Goals
		if r.Txn {
			goals = TxnGoals
		}
		for _, g := range goals {
			ra := computeRatio(g, w.rate(Tributary, g.Phase), w.rate(g.Reference, g.Phase))
			if ra.Met == nil || !*ra.Met {
				r.AllMet = false
			}
			w.Ratios = append(w.Ratios, ra)
		}
	}
}

// computeRatio compares Tributary's rate (ours) with the reference's.
func computeRatio(g Goal, ours, ref *Rate) Ratio {
	ra := Ratio{Goal: g}
	switch {
	case ours == nil:
		ra.Note = "no " + string(Tributary) + " figure"
	case ref == nil:
		ra.Note = "no " + string(g.Reference) + " figure"
	case ref.RecordsPerSec <= 0:
		ra.Note = "reference rate is zero"
	default:
		v := ours.RecordsPerSec / ref.RecordsPerSec
		met := v >= g.Min
		ra.Ratio, ra.Met = &v, &met
	}
	return ra
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes one table per workload, the ratios against the goals and
// a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Tributary broker benchmark, %s, %s/%s, %d CPUs, %s, franz-go %s\n",
		r.Started.Format(time.RFC3339), r.Host.GOOS, r.Host.GOARCH, r.Host.CPUs, r.Host.GoVersion, orUnknown(r.Host.FranzGo))
	fmt.Fprintf(&b, "Client: %s. All on 127.0.0.1.\n", r.Client)
	fmt.Fprintf(&b, "MB = 10^6 bytes of record values; spread = (max-min)/median of the runs' records/s.\n")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "  %-14s %s\n", t, t.Describe())
	}
	for _, t := range r.Targets {
		if msg, ok := r.TargetErrors[t]; ok {
			fmt.Fprintf(&b, "  %s NOT RUN: %s\n", t, msg)
		}
	}
	for i := range r.Workloads {
		wr := &r.Workloads[i]
		fmt.Fprintf(&b, "\n== %s: %s records (%s of values) per run, median of %d run%s, %s warm-up records\n",
			wr.Workload, group(float64(wr.Records)), mbString(int64(wr.Records)*int64(wr.RecordSize)),
			wr.Runs, plural(wr.Runs), group(float64(wr.Warmup)))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "target\tproduce rec/s\tMB/s\tspread\tCPU µs/rec\tconsume rec/s\tMB/s\tspread\tCPU µs/rec\t\n")
		for _, t := range r.Targets {
			res := wr.result(t)
			switch {
			case res == nil:
				reason := "not run"
				if _, ok := r.TargetErrors[t]; ok {
					reason = "not run (see above)"
				}
				fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\n", t, reason)
			case res.Error != "":
				fmt.Fprintf(tw, "%s\tfailed (see below)\t\t\t\t\t\t\t\t\n", t)
			default:
				p, c := rateCells(res.Produce, res.ProduceRuns), rateCells(res.Consume, res.ConsumeRuns)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t, p[0], p[1], p[2], p[3], c[0], c[1], c[2], c[3])
			}
		}
		tw.Flush()
		for _, t := range r.Targets {
			if res := wr.result(t); res != nil && res.Error != "" {
				fmt.Fprintf(&b, "  %s failed: %s\n", t, res.Error)
			}
		}
		for _, ra := range wr.Ratios {
			fmt.Fprintf(&b, "  %-40s %s\n", ra.Goal.String()+":", ra.verdict())
		}
	}
	if r.Groups != nil {
		r.Groups.writeText(&b)
	}
	fmt.Fprintf(&b, "\nSummary: ")
	if r.AllMet {
		fmt.Fprintf(&b, "every goal met.")
	} else {
		fmt.Fprintf(&b, "%s.", r.summary())
	}
	fmt.Fprintf(&b, " Run took %v.\n", r.Elapsed.Round(time.Second))
	_, err := io.WriteString(w, b.String())
	return err
}

// summary counts met, missed and undecided goals.
func (r *Report) summary() string {
	var met, missed, na int
	for _, w := range r.Workloads {
		for _, ra := range w.Ratios {
			switch {
			case ra.Met == nil:
				na++
			case *ra.Met:
				met++
			default:
				missed++
			}
		}
	}
	if r.Groups != nil && len(r.Groups.Rebalance) > 0 {
		switch g := r.Groups.GoalMet; {
		case g == nil:
			na++
		case *g:
			met++
		default:
			missed++
		}
	}
	s := fmt.Sprintf("%d goal checks met, %d missed", met, missed)
	if na > 0 {
		s += fmt.Sprintf(", %d not decidable (a figure is missing)", na)
	}
	return s
}

func (ra Ratio) verdict() string {
	if ra.Ratio == nil {
		return "n/a (" + ra.Note + ")"
	}
	v := "met"
	if !*ra.Met {
		v = "NOT MET"
	}
	return fmt.Sprintf("%.2fx  %s", *ra.Ratio, v)
}

// rateCells formats records/s, MB/s, the runs' spread and the CPU
// microseconds per record.
func rateCells(r *Rate, runs []*Rate) [4]string {
	if r == nil {
		return [4]string{"-", "-", "-", "-"}
	}
	sp := "-"
	if len(runs) > 1 {
		sp = fmt.Sprintf("%.0f%%", 100*spread(runs))
	}
	cpu := "-"
	if r.CPUSeconds > 0 {
		cpu = fmt.Sprintf("%.2f", r.CPUSecondsPerRecord*1e6)
	}
	return [4]string{group(r.RecordsPerSec), fmt.Sprintf("%.1f", r.MBPerSec), sp, cpu}
}

func mbString(b int64) string {
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// group formats v rounded to an integer with thousands separators.
func group(v float64) string {
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprintf("%d", n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
