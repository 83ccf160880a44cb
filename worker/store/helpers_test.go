package store

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/integration/harness"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// forEachBroker runs f against Tributary's broker and against kfake.
func forEachBroker(t *testing.T, f func(t *testing.T, brokers []string)) {
	t.Run("broker=tributary", func(t *testing.T) {
		b := harness.TributaryBroker(t)
		f(t, []string{b.Bootstrap()})
	})
	t.Run("broker=kfake", func(t *testing.T) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		f(t, c.ListenAddrs())
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// golden reads testdata/java-golden.tsv: lines of tab-separated fields
// produced by a small Java program against Kafka 4.4's jars (see
// testdata/README.md).
func golden(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("testdata/java-golden.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, strings.Split(sc.Text(), "\t"))
	}
	return out
}

func goldenLine(t *testing.T, kind string) []string {
	t.Helper()
	for _, l := range golden(t) {
		if l[0] == kind {
			return l
		}
	}
	t.Fatalf("no golden line %q", kind)
	return nil
}

// eventually polls cond until it holds or the test times out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
