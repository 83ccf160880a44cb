package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
)

// deps lists the packages the binary of the main package pkg links, each
// with its imports ("path import import…").
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 100 {
		t.Fatalf("go list -deps %s gave %d packages, want the whole binary's:\n%s", pkg, len(lines), out)
	}
	return lines
}

// mainPackages lists the main packages under cmd/: tributary and the
// first-party connectors' executables, the product's binaries.
func mainPackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "github.com/tributary-dev/tributary/cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list cmd/...: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestBinaryLinksNoTestCode keeps the product binaries (tributary and the
// tributary-connector-* executables) free of test code: franz-go's kfake,
// goleak, the test harness and anything else under integration/ (the
// benchmark program lives there), the SDK's acceptance kit, and the
// testing package. Two libraries of the binaries import testing for
// exported test helpers (go-plugin: plugin.TestPluginGRPCConn and the like;
// Apache Thrift, under arrow-go's Parquet writer: thrift.TestLogger), so
// testing is linked; no package of ours, nor any other, may import it.
func TestBinaryLinksNoTestCode(t *testing.T) {
	testingAllowed := map[string]bool{
		"github.com/hashicorp/go-plugin":         true,
		"github.com/apache/thrift/lib/go/thrift": true,
	}
	for _, bin := range mainPackages(t) {
		for _, line := range deps(t, bin) {
			f := strings.Fields(line)
			p, imports := f[0], f[1:]
			switch {
			case strings.Contains(p, "/kfake"),
				strings.HasPrefix(p, "go.uber.org/goleak"),
				strings.HasPrefix(p, "github.com/tributary-dev/tributary/integration"),
				strings.HasPrefix(p, "github.com/tributary-dev/tributary/sdk/sdktest"),
				strings.HasPrefix(p, "github.com/tributary-dev/tributary/internal/testconn"):
				t.Errorf("%s links %s: test code must stay out of the product binaries", bin, p)
			}
			if slices.Contains(imports, "testing") && !testingAllowed[p] {
				t.Errorf("%s, linked into %s, imports testing: test code must stay out of the product binaries", p, bin)
			}
		}
	}
}

// connectorLibraries names, for each executable of first-party
// connectors, the packages (and their subpackages) that only it may link:
// its connectors and their client libraries. A library two families use
// (the S3 client and the Parquet writer of the S3 and Iceberg sinks, pgx
// for the Postgres source and the Iceberg sink's PostgreSQL catalog) is
// listed under both, and only they may link it. The MongoDB driver's bson
// package is not among them: the worker's transformations read BSON.
var connectorLibraries = map[string][]string{
	"tributary-connector-basic": {
		"github.com/tributary-dev/tributary/connectors/file",
		"github.com/tributary-dev/tributary/connectors/datagen",
		"github.com/tributary-dev/tributary/connectors/discard",
		"github.com/tributary-dev/tributary/connectors/mirror",
	},
	"tributary-connector-postgres": {
		"github.com/tributary-dev/tributary/connectors/postgres",
		"github.com/jackc",
	},
	"tributary-connector-mongodb": {
		"github.com/tributary-dev/tributary/connectors/mongodb",
		"go.mongodb.org/mongo-driver/v2/mongo",
		"go.mongodb.org/mongo-driver/v2/x/mongo",
	},
	"tributary-connector-s3": {
		"github.com/tributary-dev/tributary/connectors/s3",
		"github.com/aws",
		"github.com/apache/arrow-go",
		"github.com/apache/thrift",
		// hamba/avro is not the S3 family's alone: the bundled schema
		// registry (tributary broker, dev) parses Avro schemas with it.
		"github.com/parquet-go",
	},
	"tributary-connector-iceberg": {
		"github.com/tributary-dev/tributary/connectors/iceberg",
		"github.com/apache/iceberg-go",
		"github.com/aws",
		"github.com/apache/arrow-go",
		"github.com/apache/thrift",
		"github.com/jackc",
		"modernc.org/sqlite",
		"github.com/uptrace/bun",
		"gocloud.dev",
	},
}

// TestBinariesLinkOnlyTheirOwnConnectors keeps each family of first-party
// connectors and its libraries in its own executable: out of tributary
// (the broker, the worker, dev) and out of the other families'. Go
// initialises every package a binary links in every process it starts:
// with all connectors linked into tributary an idle worker's RSS went
// from 28 to 47 MB, and a FileStream plugin process paid 43 MB for what
// needs 17 (docs/benchmarks.md, "Idle memory"). No binary links the
// connectors package itself (All, which imports every connector).
func TestBinariesLinkOnlyTheirOwnConnectors(t *testing.T) {
	for _, bin := range mainPackages(t) {
		name := path.Base(bin)
		if name != "tributary" && connectorLibraries[name] == nil {
			t.Errorf("%s: a command of cmd/ that is neither tributary nor listed in connectorLibraries (list the libraries only it may link)", bin)
		}
		var linked []string
		for _, line := range deps(t, bin) {
			p := strings.Fields(line)[0]
			if p == "github.com/tributary-dev/tributary/connectors" {
				linked = append(linked, p)
			}
			under := func(l string) bool { return p == l || strings.HasPrefix(p, l+"/") }
			if slices.ContainsFunc(connectorLibraries[name], under) {
				continue
			}
			for other, libs := range connectorLibraries {
				if other != name && slices.ContainsFunc(libs, under) {
					linked = append(linked, p)
					break
				}
			}
		}
		if len(linked) > 0 {
			more := ""
			if len(linked) > 10 {
				more = " and " + strconv.Itoa(len(linked)-10) + " more"
				linked = linked[:10]
			}
			t.Errorf("%s links %s%s: each family of connectors and its libraries belong in its own tributary-connector-* executable",
				name, strings.Join(linked, ", "), more)
		}
	}
}

// initLine is one line of GODEBUG=inittrace=1: "init PKG @T ms, C ms
// clock, N bytes, M allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestInitCost bounds what tributary's package initialisation costs each
// of its processes, whatever the command: the packages initialised and the
// bytes their inits allocate (GODEBUG=inittrace=1). The bounds are loose
// (December 2026: 199 packages, 0.7 MB; with the connectors linked 313 and
// 2.5 MB), a guard against linking a heavy library into the worker's path
// again, not a measurement; docs/benchmarks.md has the RSS figures.
func TestInitCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const maxPackages, maxBytes = 260, 1500 << 10
	cmd := exec.Command(harness.BuildTributary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tributary version: %v\n%s", err, stderr.String())
	}
	var pkgs, bytesTotal int
	type cost struct {
		pkg   string
		bytes int
	}
	var costs []cost
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		pkgs++
		bytesTotal += n
		costs = append(costs, cost{m[1], n})
	}
	if pkgs == 0 {
		t.Fatalf("no init lines in GODEBUG=inittrace=1's output (has its format changed?):\n%s", stderr.String())
	}
	t.Logf("%d packages initialised, %d bytes allocated by their inits", pkgs, bytesTotal)
	if pkgs > maxPackages || bytesTotal > maxBytes {
		slices.SortFunc(costs, func(a, b cost) int { return b.bytes - a.bytes })
		var top strings.Builder
		for _, c := range costs[:min(15, len(costs))] {
			top.WriteString("\n  " + c.pkg + " " + strconv.Itoa(c.bytes) + " bytes")
		}
		t.Errorf("tributary initialises %d packages (at most %d) allocating %d bytes (at most %d) in every process; the largest:%s",
			pkgs, maxPackages, bytesTotal, maxBytes, top.String())
	}
}
