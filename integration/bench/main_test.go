package bench

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the rebalance smoke test start this test binary as its
// member child.
func TestMain(m *testing.M) {
	if IsMemberChild() {
		os.Exit(RunMemberChild(context.Background(), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
