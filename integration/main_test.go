package integration

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests, then removes what the harness shares between
// them: the live MongoDB tests' container, if one was started.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := liveMongo.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
