package restapi_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/restapitest"
)

func writeAuthFiles(t *testing.T, creds string) string {
	t.Helper()
	dir := t.TempDir()
	credsPath := filepath.Join(dir, "credentials.properties")
	if err := os.WriteFile(credsPath, []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	jaasPath := filepath.Join(dir, "connect-jaas.conf")
	if err := os.WriteFile(jaasPath, []byte(`KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="`+credsPath+`";
};
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return jaasPath
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	hash, err := restapi.HashPassword("hashed-secret")
	if err != nil {
		t.Fatal(err)
	}
	jaasPath := writeAuthFiles(t, "alice=alice-secret\nbob: "+hash+"\n")
	auth, err := restapi.LoadBasicAuth(jaasPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := restapi.New(restapitest.NewHerder(), restapi.Options{Auth: auth})
	for _, tc := range []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/connectors", "", 401},
		{"GET", "/connectors", basic("alice", "alice-secret"), 200},
		{"GET", "/connectors", basic("alice", "wrong"), 401},
		{"GET", "/connectors", basic("nobody", "alice-secret"), 401},
		{"GET", "/connectors", basic("bob", "hashed-secret"), 200},
		{"GET", "/connectors", basic("bob", hash), 401},
		{"GET", "/connectors", "Bearer xyz", 401},
		{"GET", "/connectors", "Basic not-base64!", 401},
		{"GET", "/", basic("alice", "alice-secret"), 200},
		{"GET", "/admin/loggers", "", 401},
		// The console is behind the same authentication.
		{"GET", "/ui/", "", 401},
		{"GET", "/ui/app.js", "", 401},
		{"GET", "/ui/", basic("alice", "alice-secret"), 200},
		{"GET", "/ui/app.js", basic("bob", "hashed-secret"), 200},
		// Internal requests between workers are signed instead.
		{"POST", "/connectors/x/tasks", "", 404},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader("[]"))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tc.want {
			t.Errorf("%s %s (%q): %d, want %d: %s", tc.method, tc.path, tc.auth, w.Code, tc.want, w.Body)
		}
		if w.Code == 401 && w.Body.String() != restapi.Unauthorized {
			t.Errorf("401 body %q", w.Body)
		}
		if got := w.Header().Get("WWW-Authenticate"); w.Code == 401 && got != `Basic realm="Kafka Connect", charset="UTF-8"` {
			t.Errorf("401 challenge %q", got)
		}
	}

	// The credentials file is read again when it changes.
	creds := filepath.Join(filepath.Dir(jaasPath), "credentials.properties")
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(creds, []byte("carol=carol-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(creds, later, later)
	req := httptest.NewRequest("GET", "/connectors", nil)
	req.Header.Set("Authorization", basic("carol", "carol-secret"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Errorf("a user added to the file: %d", w.Code)
	}
}

func TestBasicAuthEmptyFile(t *testing.T) {
	t.Parallel()
	auth, err := restapi.LoadBasicAuth(writeAuthFiles(t, "# nobody\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Kafka Connect's rule: an empty file permits every request.
	w := do(t, restapi.New(restapitest.NewHerder(), restapi.Options{Auth: auth}), "GET", "/connectors", "")
	if w.Code != 200 {
		t.Errorf("empty credentials file: %d", w.Code)
	}
}

func TestBasicAuthConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct{ jaas, want string }{
		"no section":   {"Other { a.B required; };", "no KafkaConnect section (it has Other)"},
		"other module": {"KafkaConnect { com.example.LdapLoginModule required; };", "Tributary takes one org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"},
		"no file":      {"KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required; };", "Property Credentials file must be specified"},
		"missing file": {`KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file="/no/such/file"; };`, "no such file"},
		"malformed":    {"KafkaConnect { x", "control flag not specified"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(p, []byte(tc.jaas), 0o600)
		if _, err := restapi.LoadBasicAuth(p, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	h := restapitest.NewHerder()
	if w := do(t, restapi.New(h, restapi.Options{Admin: restapi.AdminNone}), "GET", "/admin/loggers", ""); w.Code != 404 {
		t.Errorf("admin on a regular listener: %d", w.Code)
	}
	admin := restapi.New(h, restapi.Options{Admin: restapi.AdminOnly})
	if w := do(t, admin, "GET", "/connectors", ""); w.Code != 404 {
		t.Errorf("the API on an admin listener: %d", w.Code)
	}
	if w := do(t, admin, "GET", "/admin/loggers", ""); w.Code != 200 {
		t.Errorf("admin on an admin listener: %d %s", w.Code, w.Body)
	}
}

// TestRequireRealm: the 401 of a server other than the worker's REST API
// (the REST proxy's listener) names that server's realm.
func TestRequireRealm(t *testing.T) {
	t.Parallel()
	auth, err := restapi.LoadBasicAuth(writeAuthFiles(t, "alice=alice-secret\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tc := range []struct {
		realm, auth string
		code        int
		challenge   string
	}{
		{"KafkaRest", "", 401, `Basic realm="KafkaRest", charset="UTF-8"`},
		{"KafkaRest", basic("alice", "wrong"), 401, `Basic realm="KafkaRest", charset="UTF-8"`},
		{"KafkaRest", basic("alice", "alice-secret"), 204, ""},
		{restapi.ConnectRealm, "", 401, `Basic realm="Kafka Connect", charset="UTF-8"`},
		{`a "b" \ c`, "", 401, `Basic realm="a \"b\" \\ c", charset="UTF-8"`},
	} {
		req := httptest.NewRequest("GET", "/v3/clusters", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		auth.Require(next, tc.realm, nil).ServeHTTP(w, req)
		if got := w.Header().Get("WWW-Authenticate"); w.Code != tc.code || got != tc.challenge {
			t.Errorf("realm %q, %q: %d %q, want %d %q", tc.realm, tc.auth, w.Code, got, tc.code, tc.challenge)
		}
		if tc.code == 401 && w.Body.String() != restapi.Unauthorized {
			t.Errorf("realm %q: 401 body %q", tc.realm, w.Body)
		}
	}
}
