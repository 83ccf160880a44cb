package stats

import (
	"math"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_000)

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// TestRateAsKafka checks Kafka's Rate: the sum over the live samples
// divided by their span, at least Samples-1 full windows.
func TestRateAsKafka(t *testing.T) {
	t.Parallel()
	w := Window{Size: 30 * time.Second, Samples: 2}
	s := NewSampled(w)
	if got := s.Rate(at(0)); got != 0 {
		t.Fatalf("empty rate %v, want 0", got)
	}
	s.Record(at(0), 300)
	// 1 s into the first window: elapsed 1 s, plus one full window.
	if got, want := s.Rate(at(1000)), 300/31.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("rate at 1 s = %v, want %v", got, want)
	}
	s.Record(at(30_000), 300) // a second sample
	if got, want := s.Rate(at(45_000)), 600/45.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("rate at 45 s = %v, want %v", got, want)
	}
	// The first sample's last record is 60 s old: purged.
	if got, want := s.Rate(at(60_000)), 300/30.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("rate at 60 s = %v, want %v", got, want)
	}
	// Everything purged: 0 over a window.
	if got := s.Rate(at(200_000)); got != 0 {
		t.Errorf("rate after idling = %v, want 0", got)
	}
	if got := s.Total(); got != 600 {
		t.Errorf("total = %v, want 600", got)
	}
}

func TestAvgMaxFrequency(t *testing.T) {
	t.Parallel()
	s := NewSampled(Window{Size: 10 * time.Second, Samples: 2})
	if !math.IsNaN(s.Avg(at(0))) || !math.IsNaN(s.Max(at(0))) {
		t.Fatalf("avg %v max %v of nothing, want NaN (as Kafka)", s.Avg(at(0)), s.Max(at(0)))
	}
	if s.Frequency(at(0)) != 0 || s.FrequencyOf0(at(0)) != 0 {
		t.Fatal("frequencies of nothing should be 0")
	}
	s.Record(at(0), 1)
	s.Record(at(1000), 0)
	s.Record(at(2000), 1)
	s.Record(at(3000), 1)
	if got := s.Avg(at(3000)); got != 0.75 {
		t.Errorf("avg = %v, want 0.75", got)
	}
	if got := s.Max(at(3000)); got != 1 {
		t.Errorf("max = %v, want 1", got)
	}
	if got := s.Frequency(at(3000)); got != 0.75 {
		t.Errorf("frequency of 1 = %v, want 0.75", got)
	}
	if got := s.FrequencyOf0(at(3000)); got != 0.25 {
		t.Errorf("frequency of 0 = %v, want 0.25", got)
	}
	s.Record(at(25_000), 7)
	// 25 s: the first sample's last record (3 s) is 22 s old, live.
	if got := s.Max(at(25_000)); got != 7 {
		t.Errorf("max = %v, want 7", got)
	}
	if got := s.Avg(at(26_000)); got != 7 {
		t.Errorf("avg at 26 s = %v, want 7 (the first sample purged)", got)
	}
}

// TestSamplesRoll: at most Samples+1 samples are kept, the oldest dropped.
func TestSamplesRoll(t *testing.T) {
	t.Parallel()
	s := NewSampled(Window{Size: time.Second, Samples: 2})
	for i := range int64(10) {
		s.Record(at(i*1000), float64(i))
	}
	if len(s.samples) != 3 {
		t.Fatalf("%d samples kept, want 3", len(s.samples))
	}
	if got := s.Max(at(9000)); got != 9 {
		t.Errorf("max = %v, want 9", got)
	}
	if got := s.Avg(at(9500)); got != 8.5 {
		t.Errorf("avg = %v, want 8.5 (the samples of 8 and 9)", got)
	}
}
