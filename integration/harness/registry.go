package harness

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SchemaRegistryURL returns the URL of a schema registry with Confluent
// Schema Registry's REST API for t: the one $TRIBUTARY_SCHEMA_REGISTRY_URL
// names (Confluent's, Karapace, Apicurio's /apis/ccompat/v7, Redpanda's),
// else Tributary's bundled registry, served by a `tributary broker`
// process of t's own (schema.registry.listeners, its _schemas topic on
// that broker), stopped in t.Cleanup. Tests that share the named registry
// keep apart by using topics (and so subjects) of their own.
func SchemaRegistryURL(t testing.TB) string {
	t.Helper()
	if u := strings.TrimSpace(os.Getenv("TRIBUTARY_SCHEMA_REGISTRY_URL")); u != "" {
		return u
	}
	bin := BuildTributary(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	StartBrokerProcess(t, bin, filepath.Join(t.TempDir(), "registry-broker"), FreePort(t), "schema.registry.listeners="+url)
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := client.Get(url + "/subjects")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("harness: the bundled schema registry at %s does not answer after 60s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
