package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// s3Objects reads every JSON object under prefix and returns how often
// each line occurs, and the start offsets of the objects by partition.
func s3Objects(t *testing.T, s *harness.S3, prefix string) (map[string]int, map[int][]int64) {
	t.Helper()
	count := map[string]int{}
	starts := map[int][]int64{}
	for _, k := range listKeys(t, s, "lake", prefix) {
		name := k[strings.LastIndexByte(k, '/')+1:]
		parts := strings.Split(strings.TrimSuffix(name, ".json"), "+")
		p, _ := strconv.Atoi(parts[1])
		off, _ := strconv.ParseInt(parts[2], 10, 64)
		starts[p] = append(starts[p], off)
		for _, l := range strings.Split(strings.TrimSuffix(string(getObject(t, s, "lake", k)), "\n"), "\n") {
			count[l]++
		}
	}
	return count, starts
}

// produceEvents writes "rec-00000" … of total to topic events in the
// background, record k to partition k%2, 100 at a time with pause
// between; the channel is closed when all are written.
func produceEvents(t *testing.T, cl *kgo.Client, total int, pause time.Duration) <-chan struct{} {
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for i := 0; i < total; i += 100 {
			var recs []*kgo.Record
			for j := i; j < i+100; j++ {
				recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(j % 2), Value: []byte(fmt.Sprintf("rec-%05d", j))})
			}
			if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				t.Errorf("produce: %v", err) // not Fatal: not the test's goroutine
				return
			}
			time.Sleep(pause)
		}
	}()
	return produced
}

// TestS3SinkKill9ExactlyOnce SIGKILLs a worker process running the S3 sink
// (and with it the plugin process) while records stream in, at a moment
// when objects are uploaded whose offsets are not committed yet, restarts
// it, and checks that every record is in exactly one object.
func TestS3SinkKill9ExactlyOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts a worker")
	}
	s := harness.VersityGW(t, "lake")
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	// Records 2k and 2k+1 go to partitions 0 and 1: 3000 each, so that
	// every file reaches flush.size.
	cl := crashClient(t, bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(context.Background(), 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	const total = 6000
	produced := produceEvents(t, cl, total, 40*time.Millisecond)

	// Offsets are committed every 4 s, files of 100 records go up far more
	// often: a kill lands between uploads and their commit.
	props := harness.WorkerProps(t, bootstrap, "s3kill", map[string]string{
		"offset.flush.interval.ms": "4000", "consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000",
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
	})
	wdir := filepath.Join(t.TempDir(), "worker")
	w := harness.StartWorkerProcess(t, bin, wdir, props)
	r := rest{t, w.URL()}
	cfg := s.SinkConfig("lake")
	for k, v := range map[string]string{"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "events",
		"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "100", "tasks.max": "1"} {
		cfg[k] = v
	}
	r.must("PUT", "/connectors/lake/config", cfg, 201)
	r.waitState("lake", "RUNNING", 1)

	for kill := 1; kill <= 2; kill++ {
		deadline := time.Now().Add(60 * time.Second)
		for {
			// Kill once some object starts at or after the group's committed
			// offset of its partition: uploaded, not committed.
			offs, err := adm.FetchOffsets(context.Background(), "connect-lake")
			_, starts := s3Objects(t, s, "topics/")
			uncommitted := 0
			if err == nil {
				for p, ss := range starts {
					committed := int64(0)
					if o, ok := offs.Lookup("events", int32(p)); ok && o.Err == nil {
						committed = o.At
					}
					for _, st := range ss {
						if st >= committed {
							uncommitted++
						}
					}
				}
			}
			if uncommitted > 0 && len(starts) > 0 {
				t.Logf("kill -9 %d with %d uploaded objects not yet committed", kill, uncommitted)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no upload ahead of the committed offsets within 60s (objects by partition: %v)", starts)
			}
			time.Sleep(50 * time.Millisecond)
		}
		w.Kill()
		w = harness.StartWorkerProcess(t, bin, wdir, props)
	}
	<-produced
	waitExactlyOnce(t, s, total, w.LogPath(), "after 2 kill -9 restarts")
}

// waitExactlyOnce waits until the bucket's JSON objects under topics/ hold
// the records "rec-00000" … of total, each in exactly one object, failing
// the test with what is missing (and the tail of the worker log at
// logPath) after 90 s.
func waitExactlyOnce(t *testing.T, s *harness.S3, total int, logPath, after string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		count, _ := s3Objects(t, s, "topics/")
		if len(count) == total {
			dups := 0
			for l, n := range count {
				if n != 1 {
					dups++
					t.Errorf("%s is in %d objects", l, n)
				}
				if !strings.HasPrefix(l, `"rec-`) {
					t.Errorf("unexpected line %q", l)
				}
			}
			if dups > 0 {
				t.Fatalf("%d records written more than once", dups)
			}
			t.Logf("all %d records in exactly one object %s", total, after)
			return
		}
		if time.Now().After(deadline) {
			var missing []int
			for i := 0; i < total; i++ {
				if count[fmt.Sprintf(`"rec-%05d"`, i)] == 0 {
					missing = append(missing, i)
				}
			}
			_, starts := s3Objects(t, s, "topics/")
			t.Fatalf("%d of %d records in the bucket after 90s; missing %v; object start offsets %v\n%s", len(count), total, missing, starts, harnessTail(logPath))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestS3SinkSurvivesStoreOutage SIGKILLs the S3 server while the S3 sink
// uploads, keeps it down for 4 s while records keep coming, starts it
// again, and checks that the task never failed and that every record is in
// exactly one object: the uploads that failed were written again from the
// partition's last durable offset, under the same object names.
func TestS3SinkSurvivesStoreOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts the S3 server")
	}
	s := harness.VersityGW(t, "lake")
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	cl := crashClient(t, bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	const total = 6000
	produced := produceEvents(t, cl, total, 160*time.Millisecond) // about 10 s of records
	props := harness.WorkerProps(t, bootstrap, "s3outage", map[string]string{
		"offset.flush.interval.ms": "2000",
		"key.converter":            "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
	})
	w := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "worker"), props)
	r := rest{t, w.URL()}
	cfg := s.SinkConfig("lake")
	for k, v := range map[string]string{"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "events",
		"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "100", "tasks.max": "1",
		"s3.part.retries": "1", "s3.retry.backoff.ms": "100"} {
		cfg[k] = v
	}
	r.must("PUT", "/connectors/lake/config", cfg, 201)
	r.waitState("lake", "RUNNING", 1)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, starts := s3Objects(t, s, "topics/"); len(starts) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no objects in both partitions within 60 s")
		}
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Log("S3 server killed")
	time.Sleep(4 * time.Second)
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Log("S3 server back")
	<-produced
	waitExactlyOnce(t, s, total, w.LogPath(), "after a 4 s outage of the S3 server")
	r.waitState("lake", "RUNNING", 1)
	log, err := os.ReadFile(w.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(log), "writing files failed; rewinding")
	if n == 0 {
		t.Fatalf("the outage failed no upload (no rewind in the worker log):\n%s", harnessTail(w.LogPath()))
	}
	t.Logf("%d failed uploads written again", n)
}

func harnessTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}
