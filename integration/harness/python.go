package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Python returns a Python interpreter that imports every one of modules
// (import names, e.g. "pyarrow", "confluent_kafka"): $TRIBUTARY_PYTHON,
// else the virtualenv .ci/run makes (~/.cache/tributary/pyenv), else
// python3 on PATH. It skips t when none does, naming what to install.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("TRIBUTARY_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, ".cache", "tributary", "pyenv", "bin", "python"))
	}
	cands = append(cands, "python3")
	check := "import " + strings.Join(append([]string{"sys"}, modules...), ", ")
	for _, c := range cands {
		if exec.Command(c, "-c", check).Run() == nil {
			return c
		}
	}
	pkgs := strings.NewReplacer("confluent_kafka", "confluent-kafka").Replace(strings.Join(modules, " "))
	t.Skipf("skipping: no Python with %s (python3 -m venv ~/.cache/tributary/pyenv && ~/.cache/tributary/pyenv/bin/pip install %s; .ci/run does this, and sets TRIBUTARY_PYTHON)",
		strings.Join(modules, ", "), pkgs)
	return ""
}
