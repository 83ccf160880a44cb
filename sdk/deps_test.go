package sdk_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// sdkModules are the modules the SDK module may depend on: go-plugin, gRPC
// and protobuf, and what those three pull in themselves. A connector
// author who imports the SDK gets nothing else.
var sdkModules = []string{
	"github.com/tributary-dev/tributary/sdk",
	"github.com/hashicorp/go-plugin", "google.golang.org/grpc", "google.golang.org/protobuf",
	// pulled in by go-plugin
	"github.com/hashicorp/go-hclog", "github.com/hashicorp/yamux", "github.com/oklog/run",
	"github.com/fatih/color", "github.com/mattn/go-colorable", "github.com/mattn/go-isatty",
	"github.com/golang/protobuf",
	// pulled in by gRPC
	"golang.org/x/net", "golang.org/x/sys", "golang.org/x/text", "google.golang.org/genproto/googleapis/rpc",
}

// TestModuleDependencies checks what the SDK's packages (the acceptance
// kit included) link, module by module, and that the plugin-side packages
// (everything a connector's binary links) do not link the acceptance kit.
func TestModuleDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}} {{end}}{{.ImportPath}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		mod, pkg, ok := strings.Cut(line, " ")
		if !ok {
			continue // the standard library
		}
		n++
		if !slices.Contains(sdkModules, mod) {
			t.Errorf("the SDK links %s from module %s: it may depend only on go-plugin, gRPC and protobuf (and what they pull in): %v", pkg, mod, sdkModules)
		}
	}
	if n < 20 {
		t.Fatalf("go list -deps found %d non-standard packages, want the SDK's and go-plugin's:\n%s", n, out)
	}
	out, err = exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps .: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "/sdk/sdktest") {
			t.Errorf("package sdk links %s: the acceptance kit belongs in connectors' tests only", p)
		}
	}
	out, err = exec.Command("go", "list", "-m", "all").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if mod, _, _ := strings.Cut(line, " "); strings.HasPrefix(mod, "github.com/tributary-dev/tributary") && mod != sdkModules[0] {
			t.Errorf("the SDK module requires %s: it must not depend on the rest of Tributary", mod)
		}
	}
}
