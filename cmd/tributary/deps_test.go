package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestCode keeps the product binary free of test code:
// franz-go's kfake, goleak, the test harness and anything else under
// integration/ (the benchmark program lives there), the SDK's acceptance
// kit, and the testing package. Two libraries of the binary import testing
// for exported test helpers (go-plugin: plugin.TestPluginGRPCConn and the
// like; Apache Thrift, under arrow-go's Parquet writer: thrift.TestLogger),
// so testing is linked; no package of ours, nor any other, may import it.
func TestBinaryLinksNoTestCode(t *testing.T) {
	testingAllowed := map[string]bool{
		"github.com/hashicorp/go-plugin":         true,
		"github.com/apache/thrift/lib/go/thrift": true,
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/tributary: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 100 {
		t.Fatalf("go list -deps gave %d packages, want the whole binary's:\n%s", len(lines), out)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		p, imports := f[0], f[1:]
		switch {
		case strings.Contains(p, "/kfake"),
			strings.HasPrefix(p, "go.uber.org/goleak"),
			strings.HasPrefix(p, "github.com/tributary-dev/tributary/integration"),
			strings.HasPrefix(p, "github.com/tributary-dev/tributary/sdk/sdktest"),
			strings.HasPrefix(p, "github.com/tributary-dev/tributary/internal/testconn"):
			t.Errorf("cmd/tributary links %s: test code must stay out of the product binary", p)
		}
		if slices.Contains(imports, "testing") && !testingAllowed[p] {
			t.Errorf("%s, linked into cmd/tributary, imports testing: test code must stay out of the product binary", p)
		}
	}
}
