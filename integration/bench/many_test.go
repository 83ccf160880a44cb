package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestManyReportCluster: the many table shows a cluster run's failover
// and placement check, and compares each runtime on the same cluster size
// only, naming the Kafka Connect setting the failover ratio is against.
func TestManyReportCluster(t *testing.T) {
	rep := &ManyReport{runtimesReport[*ManyResult]{Host: Host{GOOS: "linux", CPUs: 2}, Results: []*ManyResult{
		{Runtime: "tributary plugin.isolation=plugin", Workers: 1, Connectors: 10, PSSMB: 48, RunningSeconds: 0.6},
		{Runtime: "kafka-connect", Workers: 1, Connectors: 10, RSSMB: 200, RunningSeconds: 1.4},
		{Runtime: "tributary plugin.isolation=plugin", Workers: 3, Connectors: 10, Settings: "scheduled.rebalance.max.delay.ms=1000 (default)",
			PSSMB: 72, RunningSeconds: 0.2, Moved: 6, FailoverSeconds: 12.3},
		{Runtime: "kafka-connect", Workers: 3, Connectors: 10, Settings: "scheduled.rebalance.max.delay.ms=300000 (default)",
			RSSMB: 588, RunningSeconds: 10.9, Moved: 6, FailoverSeconds: 310.5, DuplicatesAfter: 2},
		{Runtime: "kafka-connect", Workers: 3, Connectors: 100, Settings: "scheduled.rebalance.max.delay.ms=0", Error: "boom"},
	}}}
	if !rep.Failed() {
		t.Error("Failed() is false with a failed run")
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"N=10 on 1 worker(s): Tributary PSS 48 MB vs Kafka Connect RSS 200 MB (0.24x; goal <=): met; all RUNNING 0.6 s vs 1.4 s (goal <=): met\n",
		"N=10 on 3 worker(s): Tributary PSS 72 MB vs Kafka Connect RSS 588 MB (0.12x; goal <=): met; all RUNNING 0.2 s vs 10.9 s (goal <=): met; " +
			"after a SIGKILL all RUNNING again 12.3 s vs 310.5 s (Kafka Connect scheduled.rebalance.max.delay.ms=300000 (default), 25.2x)\n",
		"310.5 s", "0, 2", "failed: boom",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "N=10 on") != 2 {
		t.Errorf("want one comparison per cluster size:\n%s", s)
	}
}
