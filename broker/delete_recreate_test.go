package broker

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Regression: a topic re-created right after a delete could reuse the old
// directory, which the delete then removed under it (acknowledged data
// lost at the next restart).
func TestDeleteThenRecreateTopic(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir)
	for i := 0; i < 200; i++ {
		t1, err := b.createTopic("t", 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = t1
		var wg sync.WaitGroup
		var t2 *topic
		wg.Add(2)
		go func() { defer wg.Done(); b.deleteTopic(t1) }()
		go func() {
			defer wg.Done()
			for {
				var err error
				if t2, err = b.createTopic("t", 1, nil); err == nil {
					return
				}
			}
		}()
		wg.Wait()
		// The new topic's log must exist on disk.
		l := t2.partitions()[0].log
		if _, err := os.Stat(filepath.Join(dir, "t-0")); err != nil {
			t.Fatalf("iteration %d: new topic's log dir is gone: %v (log dir %s)", i, err, l.Dir())
		}
		if _, err := os.Stat(filepath.Join(dir, "t-0", "00000000000000000000.log")); err != nil {
			t.Fatalf("iteration %d: new topic's segment file is gone: %v", i, err)
		}
		b.deleteTopic(t2)
		time.Sleep(time.Millisecond)
	}
}
