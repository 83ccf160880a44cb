package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/jaas"
	"github.com/tributary-dev/tributary/internal/kafkatls"
	"github.com/tributary-dev/tributary/internal/properties"
)

// Security protocols of a listener (Kafka's SecurityProtocol).
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// SASL mechanisms the broker serves.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// anonymous is the principal of a connection that did not authenticate.
const anonymous = "User:ANONYMOUS"

// ListenerConfig is one named listener (an entry of listeners, with its
// security protocol from listener.security.protocol.map and its
// listener.name.<name>.* settings).
type ListenerConfig struct {
	// Name is the listener's name (PLAINTEXT, CLIENT, …), upper case.
	Name string
	// Protocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
	Protocol string
	// Addr is the host:port to bind.
	Addr string
	// Advertised is the host:port clients connecting to this listener are
	// told to use (advertised.listeners); "" means Addr.
	Advertised string
	// TLS is the server TLS configuration of SSL and SASL_SSL listeners
	// (ssl.*, listener.name.<l>.ssl.*; ssl.client.auth sets ClientAuth).
	TLS *tls.Config
	// PrincipalRules are ssl.principal.mapping.rules: how a client
	// certificate's distinguished name becomes a user name ("" = DEFAULT).
	PrincipalRules string
	// Mechanisms are the enabled SASL mechanisms (sasl.enabled.mechanisms).
	Mechanisms []string
	// PlainUsers are the PLAIN users and passwords (the user_<name>="<pw>"
	// options of listener.name.<l>.plain.sasl.jaas.config).
	PlainUsers map[string]string
	// ReauthAfter is connections.max.reauth.ms: a SASL session's lifetime,
	// after which the client must re-authenticate (0: never).
	ReauthAfter time.Duration
}

func (l *ListenerConfig) sasl() bool {
	return l.Protocol == ProtocolSASLPlaintext || l.Protocol == ProtocolSASLSSL
}

func (l *ListenerConfig) tlsOn() bool {
	return l.Protocol == ProtocolSSL || l.Protocol == ProtocolSASLSSL
}

// listener is a bound listener.
type listener struct {
	cfg     ListenerConfig
	ln      net.Listener
	rules   []principalRule
	advHost string
	advPort int32
}

// defaultProtocolMap is Kafka's default listener.security.protocol.map.
const defaultProtocolMap = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

// securityKeys are the security properties FromProperties reads (besides
// the listener.name.* prefix).
var securityKeys = []struct{ name, def, doc string }{
	{"listener.security.protocol.map", defaultProtocolMap, "Security protocol of each listener name."},
	{"inter.broker.listener.name", "", "Accepted; a single node has no inter-broker traffic."},
	{"security.inter.broker.protocol", "PLAINTEXT", "Accepted; a single node has no inter-broker traffic."},
	{"sasl.mechanism.inter.broker.protocol", "GSSAPI", "Accepted; a single node has no inter-broker traffic."},
	{"controller.listener.names", "", "Listeners of a KRaft controller; not served by this broker."},
	{"sasl.enabled.mechanisms", "GSSAPI", "SASL mechanisms of SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512."},
	{"ssl.principal.mapping.rules", "DEFAULT", "Rules mapping a client certificate's DN to a user name."},
	{"connections.max.reauth.ms", "0", "SASL session lifetime; clients re-authenticate before it ends (0: off)."},
	{"connection.failed.authentication.delay.ms", "100", "Delay before a connection that failed authentication is closed."},
	{"authorizer.class.name", "", "Any value turns the ACL authorizer on (StandardAuthorizer semantics)."},
	{"super.users", "", "Principals allowed everything, e.g. User:admin;User:ops."},
	{"allow.everyone.if.no.acl.found", "false", "Allow an operation on a resource no ACL matches."},
	{"tributary.scram.credentials", "", "SCRAM users created at start if missing: SCRAM-SHA-256=[name=admin,password=secret];..."},
}

// parseSecurity reads the listener and security properties into c.
func parseSecurity(p properties.Properties, c *Config) (warnings []string, errs []error) {
	fail := func(k string, err error) { errs = append(errs, fmt.Errorf("%s: %w", k, err)) }
	protoMap := map[string]string{}
	const mapKey = "listener.security.protocol.map"
	for _, kv := range splitCSV(orDefault(p, mapKey, defaultProtocolMap)) {
		name, proto, ok := strings.Cut(kv, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if !ok || name == "" {
			fail(mapKey, fmt.Errorf("entry %q is not NAME:PROTOCOL", kv))
			continue
		}
		switch proto {
		case ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL:
			protoMap[name] = proto
		default:
			fail(mapKey, fmt.Errorf("unknown security protocol %q", proto))
		}
	}
	controllers := map[string]bool{}
	for _, n := range splitCSV(p["controller.listener.names"]) {
		controllers[strings.ToUpper(n)] = true
	}
	if v, ok := p["listeners"]; ok {
		ls, err := parseListenerList(v)
		if err != nil {
			fail("listeners", err)
		}
		c.Listeners = nil
		for _, l := range ls {
			if controllers[l.Name] {
				warnings = append(warnings, fmt.Sprintf("listeners: %s is a controller listener (controller.listener.names) and is not served", l.Name))
				continue
			}
			proto, ok := protoMap[l.Name]
			if !ok {
				fail("listeners", fmt.Errorf("listener %s has no security protocol in listener.security.protocol.map", l.Name))
				continue
			}
			l.Protocol = proto
			c.Listeners = append(c.Listeners, l)
		}
	}
	if v, ok := p["advertised.listeners"]; ok {
		ads, err := parseListenerList(v)
		if err != nil {
			fail("advertised.listeners", err)
		}
		if len(c.Listeners) == 0 && len(ads) == 1 {
			c.Advertised = ads[0].Addr
		}
		for _, a := range ads {
			i := slices.IndexFunc(c.Listeners, func(l ListenerConfig) bool { return l.Name == a.Name })
			if i < 0 {
				if len(c.Listeners) > 0 {
					fail("advertised.listeners", fmt.Errorf("%s is not one of listeners", a.Name))
				}
				continue
			}
			c.Listeners[i].Advertised = a.Addr
		}
	}
	if n := strings.ToUpper(strings.TrimSpace(p["inter.broker.listener.name"])); n != "" && len(c.Listeners) > 0 &&
		!slices.ContainsFunc(c.Listeners, func(l ListenerConfig) bool { return l.Name == n }) {
		fail("inter.broker.listener.name", fmt.Errorf("%s is not one of listeners", n))
	}
	reauth, err := nonNegativeMs(p, "connections.max.reauth.ms", 0)
	if err != nil {
		fail("connections.max.reauth.ms", err)
	}
	if c.FailedAuthDelay, err = nonNegativeMs(p, "connection.failed.authentication.delay.ms", 100); err != nil {
		fail("connection.failed.authentication.delay.ms", err)
	}
	for i := range c.Listeners {
		l := &c.Listeners[i]
		prefix := "listener.name." + strings.ToLower(l.Name) + "."
		get := func(k string) (string, bool) {
			if v, ok := p[prefix+k]; ok {
				return strings.TrimSpace(v), true
			}
			v, ok := p[k]
			return strings.TrimSpace(v), ok
		}
		if l.tlsOn() {
			ssl := map[string]string{}
			for _, k := range p.Keys() {
				if strings.HasPrefix(k, "ssl.") && kafkatls.Known(k) {
					ssl[k] = strings.TrimSpace(p[k])
				}
			}
			for _, k := range p.Keys() {
				if rest, ok := strings.CutPrefix(k, prefix); ok && strings.HasPrefix(rest, "ssl.") && kafkatls.Known(rest) {
					ssl[rest] = strings.TrimSpace(p[k])
				}
			}
			cfg, notes, err := kafkatls.Server(ssl)
			if err != nil {
				fail("listener "+l.Name, err)
			}
			warnings = append(warnings, notes...)
			l.TLS = cfg
		}
		l.PrincipalRules, _ = get("ssl.principal.mapping.rules")
		if !l.sasl() {
			continue
		}
		l.ReauthAfter = reauth
		if v, ok := get("connections.max.reauth.ms"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				fail(prefix+"connections.max.reauth.ms", errors.New("must be a non-negative integer"))
			}
			l.ReauthAfter = time.Duration(n) * time.Millisecond
		}
		mechs, ok := get("sasl.enabled.mechanisms")
		if !ok {
			mechs = "GSSAPI"
		}
		for _, m := range splitCSV(mechs) {
			switch m = strings.ToUpper(m); m {
			case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
				l.Mechanisms = append(l.Mechanisms, m)
			default:
				fail("sasl.enabled.mechanisms", fmt.Errorf("listener %s: mechanism %s is not supported (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 are)", l.Name, m))
			}
		}
		if slices.Contains(l.Mechanisms, MechanismPlain) {
			v, ok := p[prefix+"plain.sasl.jaas.config"]
			if !ok {
				fail("listener "+l.Name, fmt.Errorf("PLAIN is enabled but %splain.sasl.jaas.config (PlainLoginModule with user_<name>=\"<password>\" options) is not set", prefix))
				continue
			}
			users, err := plainUsers(v)
			if err != nil {
				fail(prefix+"plain.sasl.jaas.config", err)
			}
			l.PlainUsers = users
		}
	}
	if v := strings.TrimSpace(p["authorizer.class.name"]); v != "" {
		c.Authorizer = true
	}
	for _, s := range strings.Split(p["super.users"], ";") {
		if s = strings.TrimSpace(s); s != "" {
			if !strings.Contains(s, ":") {
				fail("super.users", fmt.Errorf("%q is not a principal (Type:name, e.g. User:admin)", s))
				continue
			}
			c.SuperUsers = append(c.SuperUsers, s)
		}
	}
	if v, ok := p["allow.everyone.if.no.acl.found"]; ok {
		if c.AllowEveryoneIfNoACL, err = parseBool(strings.TrimSpace(v)); err != nil {
			fail("allow.everyone.if.no.acl.found", err)
		}
	}
	if v := strings.TrimSpace(p["tributary.scram.credentials"]); v != "" {
		users, err := ParseSCRAMBootstrap(v)
		if err != nil {
			fail("tributary.scram.credentials", err)
		}
		c.SCRAMUsers = append(c.SCRAMUsers, users...)
	}
	return warnings, errs
}

// securityKey reports whether k is read by parseSecurity.
func securityKey(k string) bool {
	if strings.HasPrefix(k, "listener.name.") || (strings.HasPrefix(k, "ssl.") && kafkatls.Known(k)) {
		return true
	}
	return slices.ContainsFunc(securityKeys, func(e struct{ name, def, doc string }) bool { return e.name == k })
}

func orDefault(p properties.Properties, k, def string) string {
	if v, ok := p[k]; ok && strings.TrimSpace(v) != "" {
		return v
	}
	return def
}

func splitCSV(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func nonNegativeMs(p properties.Properties, k string, def time.Duration) (time.Duration, error) {
	v, ok := p[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return def, errors.New("must be a non-negative integer")
	}
	return time.Duration(n) * time.Millisecond, nil
}

var validListenerName = regexp.MustCompile(`^[A-Z0-9_-]+$`)

// parseListenerList reads "NAME://host:port,..." (a bare host:port is a
// PLAINTEXT listener).
func parseListenerList(v string) ([]ListenerConfig, error) {
	entries := splitCSV(v)
	if len(entries) == 0 {
		return nil, errors.New("must not be empty")
	}
	var out []ListenerConfig
	names := map[string]bool{}
	for _, e := range entries {
		name, hostport := ProtocolPlaintext, e
		if n, hp, ok := strings.Cut(e, "://"); ok {
			// Not url.Parse: listener names such as SASL_SSL are not
			// URL schemes.
			name, hostport = strings.ToUpper(strings.TrimSpace(n)), hp
			if !validListenerName.MatchString(name) {
				return nil, fmt.Errorf("%q: listener name %q must be letters, digits, '_' or '-'", e, n)
			}
		}
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			return nil, fmt.Errorf("%q: not host:port: %w", e, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("%q: bad port %q", e, port)
		}
		if names[name] {
			return nil, fmt.Errorf("listener name %s is used twice", name)
		}
		names[name] = true
		out = append(out, ListenerConfig{Name: name, Addr: net.JoinHostPort(host, port)})
	}
	return out, nil
}

// plainUsers reads the user_<name>="<password>" options of a
// PlainLoginModule JAAS entry.
func plainUsers(v string) (map[string]string, error) {
	mods, err := jaas.Parse(v)
	if err != nil {
		return nil, err
	}
	users := map[string]string{}
	for _, m := range mods {
		if !strings.HasSuffix(m.Class, "PlainLoginModule") {
			return nil, fmt.Errorf("login module %s is not org.apache.kafka.common.security.plain.PlainLoginModule", m.Class)
		}
		for k, pw := range m.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = pw
			}
		}
	}
	return users, nil
}

// principalRule is one rule of ssl.principal.mapping.rules (Kafka's
// SslPrincipalMapper): DEFAULT, or RULE:pattern/replacement/[LU].
type principalRule struct {
	isDefault bool
	pattern   *regexp.Regexp
	repl      string
	lower     bool
	upper     bool
}

var ruleSyntax = regexp.MustCompile(`^\s*(?:(DEFAULT)|RULE:((?:[^/\\]|\\.)*)/((?:[^/\\]|\\.)*)/([LU]?))\s*(?:,|$)`)

// parsePrincipalRules reads ssl.principal.mapping.rules.
func parsePrincipalRules(v string) ([]principalRule, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return []principalRule{{isDefault: true}}, nil
	}
	var rules []principalRule
	for rest := v; strings.TrimSpace(rest) != ""; {
		m := ruleSyntax.FindStringSubmatchIndex(rest)
		if m == nil {
			return nil, fmt.Errorf("invalid rule: %s", strings.TrimSpace(rest))
		}
		if m[2] >= 0 {
			rules = append(rules, principalRule{isDefault: true})
		} else {
			pat := rest[m[4]:m[5]]
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				return nil, fmt.Errorf("invalid rule pattern %q: %w", pat, err)
			}
			// Java's $1 is Go's ${1}.
			repl := regexp.MustCompile(`\$(\d+)`).ReplaceAllString(rest[m[6]:m[7]], "$${$1}")
			flag := rest[m[8]:m[9]]
			rules = append(rules, principalRule{pattern: re, repl: repl, lower: flag == "L", upper: flag == "U"})
		}
		rest = rest[m[1]:]
	}
	return rules, nil
}

// mapPrincipal applies the rules to a distinguished name; the first rule
// that matches wins. No match is an error, as in Kafka.
func mapPrincipal(rules []principalRule, dn string) (string, error) {
	for _, r := range rules {
		if r.isDefault {
			return dn, nil
		}
		if r.pattern.MatchString(dn) {
			s := r.pattern.ReplaceAllString(dn, r.repl)
			switch {
			case r.lower:
				s = strings.ToLower(s)
			case r.upper:
				s = strings.ToUpper(s)
			}
			return s, nil
		}
	}
	return "", fmt.Errorf("no rule of ssl.principal.mapping.rules applies to the distinguished name %s", dn)
}

// certificateDN returns a certificate subject's distinguished name as
// Java's X500Principal.getName() writes it (RFC 2253, no spaces).
func certificateDN(cert *x509.Certificate) string {
	return cert.Subject.String()
}
