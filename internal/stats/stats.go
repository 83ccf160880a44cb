// Package stats computes the windowed statistics of Kafka's metrics
// library (org.apache.kafka.common.metrics.stats): a value is recorded into
// the current of a few samples, each Window.Size long, and a rate, average,
// maximum or frequency is computed, when asked, over the samples not older
// than Window.Samples windows. Kafka Connect's `*-rate`, `*-avg`, `*-max`
// and `*-percentage` attributes are such statistics (metrics.sample.window.ms
// and metrics.num.samples; defaults 30 s and 2).
//
// Time is an argument, never read from a clock, so the results are
// deterministic and tests need no sleeps:
//
//	s := stats.NewSampled(stats.DefaultWindow)
//	s.Record(now, 500)        // a batch of 500 records
//	s.Rate(now.Add(time.Second)) // records per second over the window
//	s.Total()                 // cumulative sum since creation
//
// A Sampled is safe for concurrent use; recording takes a mutex, so record
// once per batch, not once per record.
package stats

import (
	"math"
	"sync"
	"time"
)

// Window is how samples are kept: Samples samples of Size each.
type Window struct {
	Size    time.Duration // metrics.sample.window.ms
	Samples int           // metrics.num.samples
}

// DefaultWindow is Kafka's default (30 s, 2 samples).
var DefaultWindow = Window{Size: 30 * time.Second, Samples: 2}

func (w Window) valid() Window {
	if w.Size <= 0 {
		w.Size = DefaultWindow.Size
	}
	if w.Samples < 1 {
		w.Samples = DefaultWindow.Samples
	}
	return w
}

// sample is one window's worth of records.
type sample struct {
	start int64 // ms: Kafka's startTimeMs
	last  int64 // ms of the last record: Kafka's lastEventMs
	count int64
	sum   float64
	max   float64
	min   float64
	ones  int64 // records of the value 1 (Frequencies of booleans)
}

// Sampled is one sensor: the values recorded, with Kafka's windowed Rate,
// Avg, Max and Frequencies over them and a CumulativeSum.
type Sampled struct {
	w  Window
	mu sync.Mutex
	// samples are oldest first: at most w.Samples+1, as Kafka keeps one
	// more for the sample that overlaps the start of the window.
	samples []sample
	total   float64
	count   int64
}

// NewSampled returns an empty sensor.
func NewSampled(w Window) *Sampled {
	w = w.valid()
	return &Sampled{w: w, samples: make([]sample, 0, w.Samples+1)}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// current returns the sample now falls into, starting a new one (and
// dropping the oldest) when the current one's window is over, as Kafka's
// SampledStat.record does; s.mu held.
func (s *Sampled) current(now int64) *sample {
	n := len(s.samples)
	if n == 0 || now-s.samples[n-1].start >= s.w.Size.Milliseconds() {
		if n == s.w.Samples+1 {
			copy(s.samples, s.samples[1:])
			s.samples = s.samples[:n-1]
		}
		s.samples = append(s.samples, sample{start: now, max: math.Inf(-1), min: math.Inf(1)})
	}
	return &s.samples[len(s.samples)-1]
}

// Record records v at now.
func (s *Sampled) Record(now time.Time, v float64) {
	t := ms(now)
	s.mu.Lock()
	c := s.current(t)
	c.last = t
	c.count++
	c.sum += v
	c.max = max(c.max, v)
	c.min = min(c.min, v)
	if v == 1 {
		c.ones++
	}
	s.total += v
	s.count++
	s.mu.Unlock()
}

// live reports whether x still counts at now: Kafka's
// purgeObsoleteSamples resets a sample whose last record is Samples
// windows old.
func (s *Sampled) live(x *sample, now int64) bool {
	return now-x.last < int64(s.w.Samples)*s.w.Size.Milliseconds()
}

// Window is the sensor's window.
func (s *Sampled) Window() Window { return s.w }

// Count is the number of values recorded (Kafka's CumulativeCount).
func (s *Sampled) Count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// CountRate is the number of values recorded per second, as Rate computes
// it (Kafka's Rate over a WindowedCount).
func (s *Sampled) CountRate(now time.Time) float64 { return s.rate(now, true) }

// Min is the smallest value recorded in the live samples; NaN when there
// are none (Kafka's Min).
func (s *Sampled) Min(now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := math.Inf(1)
	var n int64
	t := ms(now)
	for i := range s.samples {
		if x := &s.samples[i]; s.live(x, t) {
			m = min(m, x.min)
			n += x.count
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return m
}

// Total is the sum of every value recorded (Kafka's CumulativeSum).
func (s *Sampled) Total() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Rate is the sum of the values recorded in the live samples per second of
// the time they span, as Kafka's Rate computes it: from the start of the
// oldest live sample to now, and at least Samples-1 full windows.
func (s *Sampled) Rate(now time.Time) float64 { return s.rate(now, false) }

func (s *Sampled) rate(now time.Time, counts bool) float64 {
	t := ms(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum float64
	oldest := t // a purged sample restarts at now
	for i := range s.samples {
		if x := &s.samples[i]; s.live(x, t) {
			if counts {
				sum += float64(x.count)
			} else {
				sum += x.sum
			}
			oldest = min(oldest, x.start)
		}
	}
	elapsed := t - oldest
	window := s.w.Size.Milliseconds()
	if full, least := elapsed/window, int64(s.w.Samples-1); full < least {
		elapsed += (least - full) * window
	}
	if elapsed <= 0 {
		elapsed = 1
	}
	return sum / (float64(elapsed) / 1000)
}

// Avg is the average of the values recorded in the live samples; NaN when
// there are none (Kafka's Avg).
func (s *Sampled) Avg(now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum float64
	var n int64
	t := ms(now)
	for i := range s.samples {
		if x := &s.samples[i]; s.live(x, t) {
			sum += x.sum
			n += x.count
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Max is the largest value recorded in the live samples; NaN when there
// are none (Kafka's Max).
func (s *Sampled) Max(now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := math.Inf(-1)
	var n int64
	t := ms(now)
	for i := range s.samples {
		if x := &s.samples[i]; s.live(x, t) {
			m = max(m, x.max)
			n += x.count
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return m
}

// Frequency is the share of the live samples' records that were 1 (the
// "success" of a boolean sensor); FrequencyOf0 the share that were not.
// Both are 0 when nothing was recorded (Kafka's Frequencies).
func (s *Sampled) Frequency(now time.Time) float64 {
	ones, n := s.freq(now)
	if n == 0 {
		return 0
	}
	return float64(ones) / float64(n)
}

// FrequencyOf0 is the share of records that were not 1; see Frequency.
func (s *Sampled) FrequencyOf0(now time.Time) float64 {
	ones, n := s.freq(now)
	if n == 0 {
		return 0
	}
	return float64(n-ones) / float64(n)
}

func (s *Sampled) freq(now time.Time) (ones, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := ms(now)
	for i := range s.samples {
		if x := &s.samples[i]; s.live(x, t) {
			ones += x.ones
			n += x.count
		}
	}
	return ones, n
}
