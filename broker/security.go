package broker

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/xdg-go/scram"

	"github.com/tributary-dev/tributary/broker/acl"
	"github.com/tributary-dev/tributary/broker/log"
)

// SCRAM iteration bounds (Kafka's ScramMechanism.minIterations and
// ScramControlManager.MAX_ITERATIONS).
const (
	scramMinIterations     = 4096
	scramMaxIterations     = 16384
	scramDefaultIterations = 4096
)

// SCRAMUser is a SCRAM credential to create at start
// (tributary.scram.credentials).
type SCRAMUser struct {
	Mechanism  string // SCRAM-SHA-256 or SCRAM-SHA-512
	Name       string
	Password   string
	Iterations int // 0: 4096
}

// scramCredential is what the broker stores of a SCRAM password (RFC 5802):
// never the password, only what verifies a proof of it.
type scramCredential struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
}

// securityFile is the persisted security metadata: SCRAM credentials and ACLs.
type securityFile struct {
	Version int                                    `json:"version"`
	SCRAM   map[string]map[string]*scramCredential `json:"scram,omitempty"` // user → mechanism → credential
	ACLs    []acl.Binding                          `json:"acls,omitempty"`
}

// security holds the SCRAM credentials and ACLs, persisted in
// LogDir/security.json; every change is written (and fsynced) before it is
// acknowledged.
type security struct {
	path string
	mu   sync.RWMutex
	data securityFile
	// auth is replaced, never modified, on every ACL change; requests
	// load it without taking mu (it is read for every produced and
	// fetched topic).
	auth atomic.Pointer[acl.Authorizer]
	cfg  *Config
}

func (b *Broker) openSecurity() (*security, error) {
	s := &security{path: filepath.Join(b.cfg.LogDir, "security.json"), cfg: &b.cfg}
	raw, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.data = securityFile{Version: 1}
	case err != nil:
		return nil, fmt.Errorf("broker: read security metadata: %w", err)
	default:
		if err := json.Unmarshal(raw, &s.data); err != nil {
			return nil, fmt.Errorf("broker: security metadata %s is corrupt: %w", s.path, err)
		}
		if s.data.Version != 1 {
			return nil, fmt.Errorf("broker: security metadata %s has unknown version %d", s.path, s.data.Version)
		}
	}
	if s.data.SCRAM == nil {
		s.data.SCRAM = map[string]map[string]*scramCredential{}
	}
	s.rebuildAuthorizer()
	changed := false
	for _, u := range b.cfg.SCRAMUsers {
		if s.data.SCRAM[u.Name][u.Mechanism] != nil {
			continue
		}
		iters := u.Iterations
		if iters == 0 {
			iters = scramDefaultIterations
		}
		salt := make([]byte, 32)
		rand.Read(salt)
		cred, err := newSCRAMCredential(u.Mechanism, salt, iters, saltPassword(u.Mechanism, u.Password, salt, iters))
		if err != nil {
			return nil, fmt.Errorf("broker: tributary.scram.credentials: %w", err)
		}
		if s.data.SCRAM[u.Name] == nil {
			s.data.SCRAM[u.Name] = map[string]*scramCredential{}
		}
		s.data.SCRAM[u.Name][u.Mechanism] = cred
		changed = true
		b.logger.Info("created SCRAM credential from tributary.scram.credentials", "user", u.Name, "mechanism", u.Mechanism)
	}
	if changed {
		if err := s.saveLocked(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *security) saveLocked() error {
	raw, err := json.MarshalIndent(s.data, "", "  ")
	if err != nil {
		return err
	}
	if err := log.WriteFileAtomic(s.path, raw); err != nil {
		return fmt.Errorf("broker: save security metadata: %w", err)
	}
	return nil
}

func (s *security) rebuildAuthorizer() {
	a := &acl.Authorizer{SuperUsers: map[string]bool{}, AllowIfNoACL: s.cfg.AllowEveryoneIfNoACL, ACLs: slices.Clone(s.data.ACLs)}
	for _, u := range s.cfg.SuperUsers {
		a.SuperUsers[u] = true
	}
	s.auth.Store(a)
}

// authorizer returns the current authorizer; nil when authorization is off.
func (s *security) authorizer() *acl.Authorizer {
	if !s.cfg.Authorizer {
		return nil
	}
	return s.auth.Load()
}

// credential returns a user's SCRAM credential for a mechanism.
func (s *security) credential(user, mechanism string) *scramCredential {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.data.SCRAM[user][mechanism]
}

func scramHash(mechanism string) (func() hash.Hash, scram.HashGeneratorFcn, error) {
	switch mechanism {
	case MechanismSCRAMSHA256:
		return sha256.New, scram.SHA256, nil
	case MechanismSCRAMSHA512:
		return sha512.New, scram.SHA512, nil
	}
	return nil, nil, fmt.Errorf("unknown SCRAM mechanism %q", mechanism)
}

// saltPassword is RFC 5802's Hi(password, salt, iterations).
func saltPassword(mechanism, password string, salt []byte, iters int) []byte {
	h, _, err := scramHash(mechanism)
	if err != nil {
		return nil
	}
	k, err := pbkdf2.Key(h, password, salt, iters, h().Size())
	if err != nil {
		return nil
	}
	return k
}

// newSCRAMCredential derives the stored and server keys from a salted
// password, as Kafka's controller does with AlterUserScramCredentials'
// upsertions.
func newSCRAMCredential(mechanism string, salt []byte, iters int, salted []byte) (*scramCredential, error) {
	h, _, err := scramHash(mechanism)
	if err != nil {
		return nil, err
	}
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(h, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	clientKey := mac(salted, "Client Key")
	sum := h()
	sum.Write(clientKey)
	return &scramCredential{Salt: salt, Iterations: iters, StoredKey: sum.Sum(nil), ServerKey: mac(salted, "Server Key")}, nil
}

var bootstrapEntry = regexp.MustCompile(`^\s*(SCRAM-SHA-256|SCRAM-SHA-512)\s*=\s*\[(.*)\]\s*$`)

// ParseSCRAMBootstrap reads tributary.scram.credentials: entries as
// kafka-storage.sh format --add-scram takes them, separated by ';':
// SCRAM-SHA-256=[name=alice,password=alice-secret(,iterations=8192)].
// Passwords may be quoted ("…") to hold ',' or ']'.
func ParseSCRAMBootstrap(v string) ([]SCRAMUser, error) {
	var out []SCRAMUser
	for _, e := range splitOutsideQuotes(v, ';') {
		if strings.TrimSpace(e) == "" {
			continue
		}
		m := bootstrapEntry.FindStringSubmatch(e)
		if m == nil {
			return nil, errors.New("an entry is not SCRAM-SHA-256=[name=…,password=…] or SCRAM-SHA-512=[…]")
		}
		u := SCRAMUser{Mechanism: m[1]}
		for _, kv := range splitOutsideQuotes(m[2], ',') {
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, errors.New("an entry's fields must be key=value")
			}
			val = strings.TrimSpace(val)
			if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
				val = val[1 : len(val)-1]
			}
			switch strings.TrimSpace(k) {
			case "name":
				u.Name = val
			case "password":
				u.Password = val
			case "iterations":
				n, err := strconv.Atoi(val)
				if err != nil || n < scramMinIterations || n > scramMaxIterations {
					return nil, fmt.Errorf("iterations must be between %d and %d", scramMinIterations, scramMaxIterations)
				}
				u.Iterations = n
			default:
				return nil, fmt.Errorf("unknown field %q (name, password, iterations)", strings.TrimSpace(k))
			}
		}
		if u.Name == "" || u.Password == "" {
			return nil, errors.New("an entry needs a name and a password")
		}
		out = append(out, u)
	}
	return out, nil
}

func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// acls returns the stored ACLs; do not modify them.
func (s *security) acls() []acl.Binding {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.data.ACLs
}

// addACLs stores new ACLs (an ACL already stored is not duplicated).
func (s *security) addACLs(add []acl.Binding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.data.ACLs
	next := slices.Clone(old)
	for _, b := range add {
		if !slices.Contains(next, b) {
			next = append(next, b)
		}
	}
	s.data.ACLs = next
	if err := s.saveLocked(); err != nil {
		s.data.ACLs = old
		return err
	}
	s.rebuildAuthorizer()
	return nil
}

// deleteACLs removes the ACLs for which match returns >= 0 and returns them.
func (s *security) deleteACLs(match func(acl.Binding) int) ([]acl.Binding, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.data.ACLs
	var keep, deleted []acl.Binding
	for _, b := range old {
		if match(b) >= 0 {
			deleted = append(deleted, b)
		} else {
			keep = append(keep, b)
		}
	}
	if len(deleted) == 0 {
		return nil, nil
	}
	s.data.ACLs = keep
	if err := s.saveLocked(); err != nil {
		s.data.ACLs = old
		return nil, err
	}
	s.rebuildAuthorizer()
	return deleted, nil
}
