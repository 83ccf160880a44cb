package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/integration/harness"
)

// waitCommitted waits until group has committed at least min on partition
// 0 of topic and returns the committed offset.
func waitCommitted(t *testing.T, addr, group, topic string, min int64, within time.Duration) int64 {
	t.Helper()
	adm := kadm.NewClient(crashClient(t, addr))
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		offs, err := adm.FetchOffsets(ctx, group)
		cancel()
		if err == nil {
			if o, ok := offs.Lookup(topic, 0); ok && o.Err == nil && o.At >= min {
				return o.At
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has not committed %d on %s-0 within %v (%v)", group, min, topic, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWorkerSurvivesBrokerKill9 SIGKILLs the bundled broker (a separate
// process) twice while a worker streams a growing file through
// FileStreamSource → topic → FileStreamSink, and restarts it on the same
// port and data directory. The worker keeps running through the outages;
// no input line may be missing from the output (at-least-once).
func TestWorkerSurvivesBrokerKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts the broker")
	}
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	data, port := filepath.Join(dir, "broker"), harness.FreePort(t)
	bp := harness.StartBrokerProcess(t, bin, data, port)
	w, r, in, out := fileStream(t, bin, bp.Addr(), dir, "brokerkill", map[string]string{
		"consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000",
	})

	const total, kills = 40000, 2
	done := growInput(t, in, total, 100*time.Millisecond) // about 20 s of input
	committed := int64(0)
	for k := 1; k <= kills; k++ {
		// Kill mid-stream once the sink committed 2000 more records since
		// the last start: the duplicates then measure what a broker crash
		// costs (what was delivered since the last commit), not that a
		// burst was killed before its first commit.
		committed = waitCommitted(t, bp.Addr(), "connect-sink", "stream", committed+2000, 60*time.Second)
		bp.Kill()
		t.Logf("broker SIGKILL %d: sink committed %d, %d output lines", k, committed, len(readLines(out)))
		time.Sleep(time.Second) // an outage, not just a restart
		bp = harness.StartBrokerProcess(t, bin, data, port)
	}
	<-done
	got, distinct, missing := waitAllLines(out, total, 120*time.Second)
	if missing > 0 {
		s, _ := r.status("src")
		k, _ := r.status("sink")
		t.Fatalf("%d of %d input lines missing after %d broker kills; src %+v, sink %+v (worker log %s)",
			missing, total, kills, s, k, w.LogPath())
	}
	r.must("GET", "/", nil, 200)
	for _, name := range []string{"src", "sink"} {
		if s, _ := r.status(name); s.Connector.State != "RUNNING" || len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
			t.Errorf("%s after the broker outages: %+v", name, s)
		}
	}
	t.Logf("no line lost across %d broker SIGKILLs: %d output lines for %d input lines, %d duplicates",
		kills, len(got), total, len(got)-distinct)
}
