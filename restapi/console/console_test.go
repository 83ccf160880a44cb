package console_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/restapitest"
)

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

// TestServed checks the console as the REST API serves it: beside Kafka
// Connect's paths, which stay as they are.
func TestServed(t *testing.T) {
	t.Parallel()
	h := restapi.New(restapitest.NewHerder(), restapi.Options{})
	for _, tc := range []struct {
		method, path string
		want         int
		ctype        string
		body         string
	}{
		{"GET", "/ui/", 200, "text/html", `<script type="module" src="app.js">`},
		{"GET", "/ui/index.html", 200, "text/html", "<main"},
		{"GET", "/ui/app.js", 200, "text/javascript", "api.batch()"},
		{"GET", "/ui/api.js", 200, "text/javascript", "/connectors?expand=status&expand=info"},
		{"GET", "/ui/logic.js", 200, "text/javascript", "export function holistic"},
		{"GET", "/ui/style.css", 200, "text/css", "@media"},
		{"HEAD", "/ui/app.js", 200, "text/javascript", ""},
		{"GET", "/ui", 301, "", ""},
		{"GET", "/ui/missing.js", 404, "", ""},
		{"GET", "/ui/../go.mod", 400, "", ""}, // refused before routing, as any ".." path
		{"GET", "/ui/.hidden", 404, "", ""},
		{"POST", "/ui/", 405, "", ""},
		{"GET", "/connectors", 200, "application/json", "[]"},
		{"GET", "/", 200, "application/json", "version"},
	} {
		resp := get(t, h, tc.method, tc.path)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d (%s)", tc.method, tc.path, resp.StatusCode, tc.want, b)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
			t.Errorf("%s %s: Content-Type %q, want %s", tc.method, tc.path, ct, tc.ctype)
		}
		if !strings.Contains(string(b), tc.body) {
			t.Errorf("%s %s: body lacks %q", tc.method, tc.path, tc.body)
		}
		if tc.want == 200 && strings.HasPrefix(tc.path, "/ui") {
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("%s: CSP %q", tc.path, csp)
			}
		}
	}
	if loc := get(t, h, "GET", "/ui").Header.Get("Location"); loc != "/ui/" {
		t.Errorf("/ui redirects to %q", loc)
	}
	// An unchanged file is a 304.
	etag := get(t, h, "GET", "/ui/app.js").Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if resp := get(t, h, "GET", "/ui/app.js", "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %s: %d, want 304", etag, resp.StatusCode)
	}
	// An admin-only listener serves neither the API nor the console.
	admin := restapi.New(restapitest.NewHerder(), restapi.Options{Admin: restapi.AdminOnly})
	if resp := get(t, admin, "GET", "/ui/"); resp.StatusCode != 404 {
		t.Errorf("admin listener: /ui/ is %d, want 404", resp.StatusCode)
	}
}

// TestSelfContained checks that the assets load nothing from elsewhere (no
// CDN: the console works offline) and that every module and stylesheet
// they name is embedded.
func TestSelfContained(t *testing.T) {
	t.Parallel()
	assets := os.DirFS("assets")
	ref := regexp.MustCompile(`(?:from\s+|import\s*\(\s*|src=|href=)["']([^"']+)["']`)
	external := regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.HasPrefix(target, "#") || strings.HasPrefix(target, "data:") || strings.Contains(target, "${") {
				continue
			}
			if external.MatchString(target) {
				t.Errorf("%s loads %s from elsewhere", p, target)
				continue
			}
			if _, err := fs.Stat(assets, strings.TrimPrefix(target, "./")); err != nil {
				t.Errorf("%s names %s, which is not embedded", p, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
