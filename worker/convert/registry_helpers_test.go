package convert

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeRegistry is a minimal in-memory Confluent REST registry for unit
// tests: register, lookup, schema by id, latest version. Integration
// tests use a real registry.
type fakeRegistry struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	texts    []string          // by id-1
	types    map[int]string    // schemaType by id, when not AVRO
	subjects map[string][]int  // ids by version-1
	users    map[string]string // basic auth, when set
}

func newFakeRegistryB(t testing.TB) *fakeRegistry {
	f := &fakeRegistry{subjects: map[string][]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	f := &fakeRegistry{subjects: map[string][]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeRegistry) fail(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": code, "message": msg})
}

func (f *fakeRegistry) idOf(text string) int {
	for i, s := range f.texts {
		if s == text {
			return i + 1
		}
	}
	f.texts = append(f.texts, text)
	return len(f.texts)
}

func (f *fakeRegistry) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if f.users != nil {
		u, p, ok := r.BasicAuth()
		if !ok || f.users[u] != p {
			f.fail(w, 401, 401, "Unauthorized")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	var body struct {
		Schema string `json:"schema"`
		Type   string `json:"schemaType"`
	}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Schema == "" {
			f.fail(w, 422, 42201, "Invalid schema")
			return
		}
	}
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case len(parts) == 3 && parts[0] == "schemas" && parts[1] == "ids" && r.Method == http.MethodGet:
		id, _ := strconv.Atoi(parts[2])
		if id < 1 || id > len(f.texts) {
			f.fail(w, 404, 40403, "Schema "+parts[2]+" not found")
			return
		}
		if typ := f.types[id]; typ != "" {
			reply(map[string]any{"schema": f.texts[id-1], "schemaType": typ})
			return
		}
		reply(map[string]any{"schema": f.texts[id-1]})
	case len(parts) >= 2 && parts[0] == "subjects":
		subject, _ := url.PathUnescape(parts[1])
		versions := f.subjects[subject]
		switch {
		case len(parts) == 3 && parts[2] == "versions" && r.Method == http.MethodPost:
			id := f.idOf(body.Schema)
			if body.Type != "" && body.Type != "AVRO" {
				if f.types == nil {
					f.types = map[int]string{}
				}
				f.types[id] = body.Type
			}
			for _, v := range versions {
				if v == id {
					reply(map[string]any{"id": id})
					return
				}
			}
			f.subjects[subject] = append(versions, id)
			reply(map[string]any{"id": id})
		case len(parts) == 2 && r.Method == http.MethodPost:
			if len(versions) == 0 {
				f.fail(w, 404, 40401, "Subject '"+subject+"' not found.")
				return
			}
			for i, id := range versions {
				if f.texts[id-1] == body.Schema {
					reply(map[string]any{"subject": subject, "id": id, "version": i + 1, "schema": body.Schema})
					return
				}
			}
			f.fail(w, 404, 40403, "Schema not found")
		case len(parts) == 4 && parts[3] == "latest" && r.Method == http.MethodGet:
			if len(versions) == 0 {
				f.fail(w, 404, 40401, "Subject '"+subject+"' not found.")
				return
			}
			id := versions[len(versions)-1]
			reply(map[string]any{"subject": subject, "id": id, "version": len(versions), "schema": f.texts[id-1]})
		default:
			f.fail(w, 404, 404, "HTTP 404 Not Found")
		}
	default:
		f.fail(w, 404, 404, "HTTP 404 Not Found")
	}
}

func loadGoldensF(f *testing.F) []avroGolden {
	raw, err := os.ReadFile("testdata/avro/golden.json")
	if err != nil {
		f.Fatal(err)
	}
	var g []avroGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		f.Fatal(err)
	}
	return g
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var fuzzReg struct {
	once sync.Once
	reg  *fakeRegistry
}

// fuzzRegistry is one registry for the whole fuzz run, holding the
// goldens' schemas under subject golden-fuzz-value.
func fuzzRegistry(t *testing.T) *fakeRegistry {
	fuzzReg.once.Do(func() {
		f := &fakeRegistry{subjects: map[string][]int{}}
		f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
		raw, _ := os.ReadFile("testdata/avro/golden.json")
		var g []avroGolden
		_ = json.Unmarshal(raw, &g)
		for _, c := range g {
			id := f.idOf(c.Schema)
			f.subjects["golden-fuzz-value"] = append(f.subjects["golden-fuzz-value"], id)
		}
		fuzzReg.reg = f
	})
	return fuzzReg.reg
}
