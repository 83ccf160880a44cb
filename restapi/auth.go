package restapi

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tributary-dev/tributary/internal/jaas"
	"github.com/tributary-dev/tributary/internal/properties"
)

// Kafka Connect's basic-auth REST extension, by the names its users
// configure it with.
const (
	// BasicAuthExtension is the rest.extension.classes entry that turns
	// basic authentication on.
	BasicAuthExtension = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	// PropertyFileLoginModule is the login module of its JAAS section.
	PropertyFileLoginModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	// JAASSection is the section of the JAAS file it reads.
	JAASSection = "KafkaConnect"
	// Unauthorized is its 401 answer's body.
	Unauthorized = "User cannot access the resource."
	// ConnectRealm is the realm the worker's REST API names in its 401
	// answer's WWW-Authenticate challenge.
	ConnectRealm = "Kafka Connect"
)

// BasicAuth checks HTTP basic credentials against a credentials file, as
// Kafka Connect's BasicAuthSecurityRestExtension with its
// PropertyFileLoginModule does: the file is a Java properties file of
// user=password lines; an empty file lets every request through (Kafka
// Connect's rule, warned about at start). Unlike Kafka Connect, a password
// may be a bcrypt hash ($2a$, $2b$, $2y$), and the file is read again when
// it changes. It is safe for concurrent use.
type BasicAuth struct {
	path string
	log  *slog.Logger

	mu    sync.Mutex
	mtime time.Time
	size  int64
	users properties.Properties
}

// LoadBasicAuth reads the KafkaConnect section of the JAAS file at
// jaasFile, which must name one PropertyFileLoginModule with its file
// option, and the credentials file it names.
func LoadBasicAuth(jaasFile string, logger *slog.Logger) (*BasicAuth, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f, err := jaas.LoadFile(jaasFile)
	if err != nil {
		return nil, err
	}
	mods, err := f.Section(JAASSection)
	if err != nil {
		return nil, fmt.Errorf("JAAS file %s: %w", jaasFile, err)
	}
	if len(mods) != 1 || mods[0].Class != PropertyFileLoginModule {
		var classes []string
		for _, m := range mods {
			classes = append(classes, m.Class)
		}
		return nil, fmt.Errorf("JAAS file %s: section %s has %s; Tributary takes one %s (with file=\"…\")", jaasFile, JAASSection, strings.Join(classes, ", "), PropertyFileLoginModule)
	}
	path := strings.TrimSpace(mods[0].Options["file"])
	if path == "" {
		return nil, fmt.Errorf("JAAS file %s: Property Credentials file must be specified (the file option of %s)", jaasFile, PropertyFileLoginModule)
	}
	b := &BasicAuth{path: path, log: logger}
	if err := b.load(); err != nil {
		return nil, err
	}
	if len(b.users) == 0 {
		logger.Warn("Credential properties file is empty; all requests will be permitted", "file", path)
	}
	return b, nil
}

// load (re)reads the credentials file when it changed.
func (b *BasicAuth) load() error {
	st, err := os.Stat(b.path)
	if err != nil {
		return fmt.Errorf("cannot load the credentials file: %w", err)
	}
	if b.users != nil && st.ModTime().Equal(b.mtime) && st.Size() == b.size {
		return nil
	}
	users, err := properties.Load(b.path)
	if err != nil {
		return fmt.Errorf("cannot load the credentials file: %w", err)
	}
	if b.users != nil {
		b.log.Info("REST credentials file read again", "file", b.path, "users", len(users))
	}
	b.users, b.mtime, b.size = users, st.ModTime(), st.Size()
	return nil
}

// Check reports whether the Authorization header value authorizes a
// request, and the user it names.
func (b *BasicAuth) Check(header string) (string, bool) {
	b.mu.Lock()
	if err := b.load(); err != nil {
		b.log.Warn("the REST credentials file cannot be read; keeping the users read before", "err", err)
	}
	users := b.users
	b.mu.Unlock()
	if len(users) == 0 {
		return "", true // Kafka Connect: an empty file permits every request
	}
	user, pass, ok := parseBasic(header)
	if !ok {
		return "", false
	}
	want, ok := users[user]
	if !ok {
		// Spend the time a check would, so that timing does not tell
		// which users exist.
		_ = subtle.ConstantTimeCompare([]byte(pass), []byte(pass))
		return user, false
	}
	if isBcrypt(want) {
		return user, bcrypt.CompareHashAndPassword([]byte(want), []byte(pass)) == nil
	}
	return user, subtle.ConstantTimeCompare([]byte(want), []byte(pass)) == 1
}

func isBcrypt(s string) bool {
	return len(s) == 60 && (strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$"))
}

// parseBasic reads "Basic base64(user:password)" as Kafka Connect's
// BasicAuthCredentials does: the scheme case-insensitively, the user up to
// the first colon, which must not be the first character.
func parseBasic(h string) (user, pass string, ok bool) {
	scheme, rest, found := strings.Cut(h, " ")
	if !found || scheme == "" || !strings.EqualFold(scheme, "Basic") {
		return "", "", false
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", "", false
	}
	user, pass, found = strings.Cut(string(dec), ":")
	if !found || user == "" {
		return "", "", false
	}
	return user, pass, true
}

// HashPassword returns a bcrypt hash of password for a credentials file.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", errors.New("bcrypt: " + err.Error())
	}
	return string(h), nil
}

// internalRequests are exempt from authentication: requests between
// workers, which carry a signature instead (Kafka Connect's
// JaasBasicAuthFilter.INTERNAL_REQUEST_MATCHERS).
var internalRequests = []struct {
	method string
	path   *regexp.Regexp
}{
	{http.MethodPost, regexp.MustCompile(`^/?connectors/([^/]+)/tasks/?$`)},
	{http.MethodPut, regexp.MustCompile(`^/?connectors/[^/]+/fence/?$`)},
}

// authenticate lets through requests that BasicAuth authorizes, and
// internal requests; others get Kafka Connect's 401.
func (a *api) authenticate(next http.Handler) http.Handler {
	checked := a.opts.Auth.Require(next, ConnectRealm, a.log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, ir := range internalRequests {
			if r.Method == ir.method && ir.path.MatchString(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
		}
		checked.ServeHTTP(w, r)
	})
}

// Require lets through to next the requests whose basic credentials b
// accepts; others get Kafka Connect's 401, its challenge naming realm (the
// server's own: ConnectRealm for the worker's REST API, the REST proxy's
// for its listener), logged at debug (a mistyped password is not news).
func (b *BasicAuth) Require(next http.Handler, realm string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	challenge := basicChallenge(realm)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, ok := b.Check(r.Header.Get("Authorization")); !ok {
			log.Debug("rest: request failed authentication", "method", r.Method, "path", r.URL.Path, "user", user, "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", challenge)
			// Kafka Connect's answer says JSON, though it is not.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(Unauthorized))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// basicChallenge is the WWW-Authenticate value of a 401 that asks for basic
// credentials in realm, UTF-8 encoded (RFC 7617); a quote or backslash in
// realm is escaped.
func basicChallenge(realm string) string {
	return `Basic realm="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(realm) + `", charset="UTF-8"`
}
