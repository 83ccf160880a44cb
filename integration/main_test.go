package integration

import (
	"os"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMain removes the tributary binary the tests share
// (harness.BuildTributary builds it once per run).
func TestMain(m *testing.M) {
	code := m.Run()
	harness.RemoveBuilds()
	os.Exit(code)
}
