// Package kafkatls builds crypto/tls configurations from Kafka's ssl.*
// settings, for the worker's Kafka clients, its HTTPS REST listeners and
// the client that forwards REST requests between workers (and, later, the
// bundled broker's listeners):
//
//	cfg, notes, err := kafkatls.Client(props) // props: "ssl.truststore.location" → …
//
// Key and trust material is read in the three formats Kafka reads: PEM
// (files, or inline in ssl.keystore.key, ssl.keystore.certificate.chain and
// ssl.truststore.certificates), PKCS12 and JKS. Like the JVM, which reads a
// PKCS12 file given as JKS and the other way round, the format of a file is
// sniffed from its content (JKS's magic number, PKCS12's DER sequence, PEM's
// armour) rather than taken from ssl.*.type; a PEM file must still be
// declared PEM, and Kafka's rules for PEM stores apply with Kafka's
// messages (a PEM key store takes no password, only ssl.key.password).
//
// Settings that only mean something to the JVM (ssl.provider,
// ssl.keymanager.algorithm, …) are accepted and reported in the notes.
// Errors name the setting and the file, never a password.
package kafkatls

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// Setting names (Kafka's SslConfigs and BrokerSecurityConfigs).
const (
	TruststoreLocation     = "ssl.truststore.location"
	TruststoreType         = "ssl.truststore.type"
	TruststorePassword     = "ssl.truststore.password"
	TruststoreCertificates = "ssl.truststore.certificates"
	KeystoreLocation       = "ssl.keystore.location"
	KeystoreType           = "ssl.keystore.type"
	KeystorePassword       = "ssl.keystore.password"
	KeystoreKey            = "ssl.keystore.key"
	KeystoreChain          = "ssl.keystore.certificate.chain"
	KeyPassword            = "ssl.key.password"
	EndpointIdentification = "ssl.endpoint.identification.algorithm"
	Protocol               = "ssl.protocol"
	EnabledProtocols       = "ssl.enabled.protocols"
	CipherSuites           = "ssl.cipher.suites"
	ClientAuth             = "ssl.client.auth"
)

// javaOnly are ssl.* settings that configure the JVM's TLS implementation
// and have no equivalent in Go's.
var javaOnly = []string{
	"ssl.provider", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
	"ssl.secure.random.implementation", "ssl.engine.factory.class",
}

// Known reports whether k is an ssl.* setting this package reads or
// knowingly ignores.
func Known(k string) bool {
	switch k {
	case TruststoreLocation, TruststoreType, TruststorePassword, TruststoreCertificates, KeystoreLocation, KeystoreType,
		KeystorePassword, KeystoreKey, KeystoreChain, KeyPassword, EndpointIdentification, Protocol, EnabledProtocols,
		CipherSuites, ClientAuth:
		return true
	}
	return slices.Contains(javaOnly, k)
}

// Secret reports whether the ssl.* setting k holds a secret (Kafka's
// PASSWORD-typed ssl settings).
func Secret(k string) bool {
	return strings.HasPrefix(k, "ssl.") && (strings.HasSuffix(k, "password") || k == KeystoreKey)
}

// Client returns the TLS configuration of a client (a Kafka client, or the
// REST client that forwards requests) from ssl.* settings: the trust store
// (else the system's roots), the key store's certificate as the client
// certificate, hostname verification unless
// ssl.endpoint.identification.algorithm is empty, the protocols and
// cipher suites. The caller sets ServerName (franz-go sets it per broker).
func Client(props map[string]string) (*tls.Config, []string, error) {
	cfg, notes, err := common(props)
	if err != nil {
		return nil, notes, err
	}
	roots, err := trustStore(props)
	if err != nil {
		return nil, notes, err
	}
	cfg.RootCAs = roots
	certs, err := keyStore(props, time.Now())
	if err != nil {
		return nil, notes, err
	}
	cfg.Certificates = certs
	alg, set := props[EndpointIdentification]
	switch alg = strings.TrimSpace(alg); {
	case !set || strings.EqualFold(alg, "https"):
	case alg == "":
		// Kafka: an empty algorithm turns off hostname verification,
		// not the verification of the chain.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChainOnly(roots)
	default:
		return nil, notes, fmt.Errorf("%s=%s: only https (the default) and an empty value (no hostname verification) are supported", EndpointIdentification, alg)
	}
	if v, ok := props[ClientAuth]; ok && strings.TrimSpace(v) != "" {
		notes = append(notes, ClientAuth+" is a server setting and is ignored by clients")
	}
	return cfg, notes, nil
}

// Server returns the TLS configuration of a server (an HTTPS REST
// listener) from ssl.* settings: the key store's certificate, and with
// ssl.client.auth=requested or required the trust store (else the system's
// roots) to verify client certificates.
func Server(props map[string]string) (*tls.Config, []string, error) {
	cfg, notes, err := common(props)
	if err != nil {
		return nil, notes, err
	}
	certs, err := keyStore(props, time.Now())
	if err != nil {
		return nil, notes, err
	}
	if len(certs) == 0 {
		return nil, notes, fmt.Errorf("a TLS server needs a certificate and its key: set %s (or %s and %s)", KeystoreLocation, KeystoreKey, KeystoreChain)
	}
	cfg.Certificates = certs
	switch v := strings.ToLower(strings.TrimSpace(props[ClientAuth])); v {
	case "", "none":
		cfg.ClientAuth = tls.NoClientCert
	case "requested", "required":
		cas, err := trustStore(props)
		if err != nil {
			return nil, notes, err
		}
		cfg.ClientCAs = cas
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		if v == "required" {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	default:
		return nil, notes, fmt.Errorf("%s=%s: must be none, requested or required", ClientAuth, v)
	}
	return cfg, notes, nil
}

// common reads the protocol and cipher settings and notes the Java-only
// ones.
func common(props map[string]string) (*tls.Config, []string, error) {
	var notes []string
	for _, k := range javaOnly {
		if v, ok := props[k]; ok && strings.TrimSpace(v) != "" {
			notes = append(notes, k+" configures the JVM's TLS implementation and is ignored")
		}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	versions := map[string]uint16{"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11, "TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}
	if v, ok := props[EnabledProtocols]; ok && strings.TrimSpace(v) != "" {
		var lo, hi uint16
		for _, p := range splitList(v) {
			ver, ok := versions[p]
			if !ok {
				return nil, notes, fmt.Errorf("%s: unknown protocol %q (TLSv1.2 and TLSv1.3 are supported, TLSv1 and TLSv1.1 deprecated)", EnabledProtocols, p)
			}
			if lo == 0 || ver < lo {
				lo = ver
			}
			hi = max(hi, ver)
		}
		cfg.MinVersion, cfg.MaxVersion = lo, hi
	}
	if v, ok := props[Protocol]; ok && strings.TrimSpace(v) != "" {
		// ssl.protocol names the SSLContext's protocol; in Java it caps
		// nothing that ssl.enabled.protocols allows except with TLSv1.2,
		// which leaves TLS 1.3 out.
		switch p := strings.TrimSpace(v); p {
		case "TLS", "TLSv1.3":
		case "TLSv1.2":
			cfg.MaxVersion = tls.VersionTLS12
		default:
			if _, ok := versions[p]; !ok {
				return nil, notes, fmt.Errorf("%s=%s: must be TLSv1.3, TLSv1.2 or TLS", Protocol, p)
			}
			cfg.MaxVersion = versions[p]
		}
	}
	if cfg.MaxVersion != 0 && cfg.MinVersion > cfg.MaxVersion {
		return nil, notes, fmt.Errorf("%s and %s leave no protocol version enabled", Protocol, EnabledProtocols)
	}
	if v, ok := props[CipherSuites]; ok && strings.TrimSpace(v) != "" {
		byName := map[string]uint16{}
		for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
			byName[s.Name] = s.ID
		}
		tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
		var ignored13 []string
		for _, s := range splitList(v) {
			if id, ok := byName[s]; ok && !tls13[s] {
				cfg.CipherSuites = append(cfg.CipherSuites, id)
				continue
			}
			if tls13[s] {
				ignored13 = append(ignored13, s)
				continue
			}
			return nil, notes, fmt.Errorf("%s: unknown or unsupported cipher suite %q", CipherSuites, s)
		}
		if len(ignored13) > 0 {
			notes = append(notes, fmt.Sprintf("%s: the TLS 1.3 suites (%s) cannot be chosen in Go, which enables all three", CipherSuites, strings.Join(ignored13, ", ")))
		}
	}
	return cfg, notes, nil
}

// kafkaErr is an error with Kafka's message word for word (capitalised
// and punctuated as Java's exceptions are, not as Go's errors are): users
// search for these.
func kafkaErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// verifyChainOnly verifies the peer's chain against roots (nil: the
// system's) without checking its name.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}

// Format is the format of key or trust material.
type Format string

// The formats Kafka reads.
const (
	PEM    Format = "PEM"
	PKCS12 Format = "PKCS12"
	JKS    Format = "JKS"
)

// Sniff tells the format of a store's content: JKS by its magic number
// (0xFEEDFEED), PKCS12 by its DER SEQUENCE, PEM by its armour; "" for
// anything else.
func Sniff(b []byte) Format {
	switch {
	case len(b) >= 4 && b[0] == 0xfe && b[1] == 0xed && b[2] == 0xfe && b[3] == 0xed:
		return JKS
	case len(b) >= 2 && b[0] == 0x30 && b[1] >= 0x80:
		return PKCS12
	case bytes.Contains(b, []byte("-----BEGIN ")):
		return PEM
	}
	return ""
}

// declared is a store's ssl.*.type: JKS (Kafka's default), PKCS12 or PEM.
func declared(props map[string]string, key string) (Format, error) {
	t := strings.ToUpper(strings.TrimSpace(props[key]))
	switch Format(t) {
	case "":
		return JKS, nil
	case JKS, PKCS12, PEM:
		return Format(t), nil
	}
	return "", fmt.Errorf("%s=%s: must be JKS, PKCS12 or PEM", key, props[key])
}

// value returns a setting and whether it is set (non-blank): Kafka treats
// a password set to "" as set, but no store is protected by "" in practice
// and a blank inline key is no key.
func value(props map[string]string, k string) (string, bool) {
	v, ok := props[k]
	return v, ok && strings.TrimSpace(v) != ""
}

// trustStore returns the certificates to trust: nil (the system's roots)
// when no trust store is configured.
func trustStore(props map[string]string) (*x509.CertPool, error) {
	typ, err := declared(props, TruststoreType)
	if err != nil {
		return nil, err
	}
	path, hasPath := value(props, TruststoreLocation)
	password, hasPassword := props[TruststorePassword]
	inline, hasInline := value(props, TruststoreCertificates)
	var certs []*x509.Certificate
	switch {
	case hasInline:
		switch {
		case typ != PEM:
			return nil, kafkaErr("SSL trust store certs can be specified only for PEM, but trust store type is %s.", typ)
		case hasPath:
			return nil, kafkaErr("Both SSL trust store location and separate trust certificates are specified.")
		case hasPassword:
			return nil, kafkaErr("SSL trust store password cannot be specified for PEM format.")
		}
		if certs, err = pemCertificates([]byte(inline)); err != nil {
			return nil, fmt.Errorf("%s: %w", TruststoreCertificates, err)
		}
	case hasPath:
		if typ == PEM && hasPassword {
			return nil, kafkaErr("SSL trust store password cannot be specified for PEM format.")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", TruststoreLocation, err)
		}
		if certs, err = trustedCertificates(b, typ, password); err != nil {
			return nil, fmt.Errorf("%s %s: %w", TruststoreLocation, path, err)
		}
	case hasPassword:
		return nil, kafkaErr("SSL trust store is not specified, but trust store password is specified.")
	default:
		return nil, nil
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// trustedCertificates reads a trust store file's certificates: a PEM
// file's, a JKS store's trusted entries and the certificates of its key
// entries (as Java's trust manager takes them), a PKCS12 store's.
func trustedCertificates(b []byte, typ Format, password string) ([]*x509.Certificate, error) {
	format := Sniff(b)
	if err := matchDeclared(format, typ, TruststoreType); err != nil {
		return nil, err
	}
	switch format {
	case PEM:
		return pemCertificates(b)
	case JKS:
		ks, err := loadJKS(b, password, true)
		if err != nil {
			return nil, err
		}
		var certs []*x509.Certificate
		for _, alias := range ks.Aliases() {
			var raw []byte
			if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
				raw = e.Certificate.Content
			} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil && len(chain) > 0 {
				raw = chain[0].Content
			}
			if raw == nil {
				continue
			}
			c, err := x509.ParseCertificate(raw)
			if err != nil {
				return nil, fmt.Errorf("entry %s: %w", alias, err)
			}
			certs = append(certs, c)
		}
		if len(certs) == 0 {
			return nil, errors.New("the JKS store holds no certificate")
		}
		return certs, nil
	default: // PKCS12
		certs, err := pkcs12.DecodeTrustStore(b, password)
		if err == nil && len(certs) > 0 {
			return certs, nil
		}
		// A key store used as a trust store: its chain.
		_, leaf, cas, err2 := pkcs12.DecodeChain(b, password)
		if err2 != nil {
			if err == nil {
				err = err2
			}
			return nil, pkcs12Error(err, password)
		}
		return append([]*x509.Certificate{leaf}, cas...), nil
	}
}

func matchDeclared(format, typ Format, typeKey string) error {
	switch {
	case format == "":
		return fmt.Errorf("not a PEM, PKCS12 or JKS store")
	case format == PEM && typ != PEM:
		return fmt.Errorf("the file is PEM: set %s=PEM", typeKey)
	case format != PEM && typ == PEM:
		return fmt.Errorf("the file is %s, not PEM: set %s=%s", format, typeKey, format)
	}
	return nil
}

func pkcs12Error(err error, password string) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		if password == "" {
			return errors.New("the PKCS12 store is protected by a password: set its password")
		}
		return errors.New("wrong password for the PKCS12 store")
	}
	return fmt.Errorf("PKCS12: %w", err)
}

// loadJKS reads a JKS store; without a password (allowed for trust stores,
// as in Java) its integrity is not checked.
func loadJKS(b []byte, password string, trust bool) (keystore.KeyStore, error) {
	ks := keystore.New()
	err := ks.Load(bytes.NewReader(b), []byte(password))
	switch {
	case err == nil:
	case trust && password == "" && strings.Contains(err.Error(), "invalid digest"):
		// Entries are read before the digest, which only a password
		// checks: Java reads the store unchecked.
	case strings.Contains(err.Error(), "invalid digest"):
		return ks, kafkaErr("Keystore was tampered with, or password was incorrect")
	default:
		return ks, fmt.Errorf("JKS: %w", err)
	}
	return ks, nil
}

// keyStore returns the certificate and key of the key store, if one is
// configured, applying Kafka's rules for PEM stores. A certificate that
// has expired is an error: no peer would accept it.
func keyStore(props map[string]string, now time.Time) ([]tls.Certificate, error) {
	typ, err := declared(props, KeystoreType)
	if err != nil {
		return nil, err
	}
	path, hasPath := value(props, KeystoreLocation)
	password, hasPassword := props[KeystorePassword]
	key, hasKey := value(props, KeystoreKey)
	chain, hasChain := value(props, KeystoreChain)
	keyPassword, hasKeyPassword := props[KeyPassword]
	var certs []tls.Certificate
	var where string
	switch {
	case hasKey:
		switch {
		case typ != PEM:
			return nil, kafkaErr("SSL private key can be specified only for PEM, but key store type is %s.", typ)
		case !hasChain:
			return nil, kafkaErr("SSL private key is specified, but certificate chain is not specified.")
		case hasPath:
			return nil, kafkaErr("Both SSL key store location and separate private key are specified.")
		case hasPassword:
			return nil, kafkaErr("SSL key store password cannot be specified with PEM format, only key password may be specified.")
		}
		c, err := pemKeyPair([]byte(chain), []byte(key), keyPassword, hasKeyPassword)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", KeystoreKey, KeystoreChain, err)
		}
		certs, where = []tls.Certificate{c}, KeystoreChain
	case hasChain:
		return nil, kafkaErr("SSL certificate chain is specified, but private key is not specified")
	case hasPath && typ == PEM:
		if hasPassword {
			return nil, kafkaErr("SSL key store password cannot be specified with PEM format, only key password may be specified")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeystoreLocation, err)
		}
		if f := Sniff(b); f != PEM {
			return nil, fmt.Errorf("%s %s: %w", KeystoreLocation, path, matchDeclared(f, typ, KeystoreType))
		}
		c, err := pemKeyPair(b, b, keyPassword, hasKeyPassword)
		if err != nil {
			return nil, kafkaErr("Failed to load PEM SSL keystore %s: %w", path, err)
		}
		certs, where = []tls.Certificate{c}, path
	case !hasPath && hasPassword:
		return nil, kafkaErr("SSL key store is not specified, but key store password is specified.")
	case hasPath && !hasPassword:
		return nil, kafkaErr("SSL key store is specified, but key store password is not specified.")
	case hasPath:
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeystoreLocation, err)
		}
		if !hasKeyPassword {
			keyPassword = password // Kafka: the key password defaults to the store's
		}
		certs, err = storeKeyPairs(b, typ, password, keyPassword)
		if err != nil {
			return nil, kafkaErr("Failed to load SSL keystore %s of type %s: %w", path, typ, err)
		}
		where = path
	default:
		return nil, nil
	}
	for _, c := range certs {
		if c.Leaf != nil && now.After(c.Leaf.NotAfter) {
			return nil, fmt.Errorf("the certificate in %s (%s) expired on %s", where, c.Leaf.Subject, c.Leaf.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	return certs, nil
}

// storeKeyPairs reads the key entries of a PKCS12 or JKS store.
func storeKeyPairs(b []byte, typ Format, password, keyPassword string) ([]tls.Certificate, error) {
	format := Sniff(b)
	if err := matchDeclared(format, typ, KeystoreType); err != nil {
		return nil, err
	}
	if format == PKCS12 {
		key, leaf, cas, err := pkcs12.DecodeChain(b, password)
		if err != nil {
			return nil, pkcs12Error(err, password)
		}
		c := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, ca := range cas {
			c.Certificate = append(c.Certificate, ca.Raw)
		}
		return []tls.Certificate{c}, nil
	}
	ks, err := loadJKS(b, password, false)
	if err != nil {
		return nil, err
	}
	var out []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
		if err != nil {
			return nil, fmt.Errorf("key %s: cannot recover the key (wrong %s?)", alias, KeyPassword)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", alias, err)
		}
		c := tls.Certificate{PrivateKey: key}
		for _, cert := range e.CertificateChain {
			c.Certificate = append(c.Certificate, cert.Content)
		}
		if len(c.Certificate) == 0 {
			return nil, fmt.Errorf("key %s has no certificate", alias)
		}
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, fmt.Errorf("key %s: %w", alias, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("the store holds no private key entry")
	}
	return out, nil
}

// pemCertificates reads every CERTIFICATE block.
func pemCertificates(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, kafkaErr("At least one certificate expected, but none found")
	}
	return certs, nil
}

// pemKeyPair reads a certificate chain and one private key (PKCS#8, as
// Kafka reads it, encrypted or not; PKCS#1 and SEC 1 keys are accepted
// too).
func pemKeyPair(chainPEM, keyPEM []byte, password string, hasPassword bool) (tls.Certificate, error) {
	certs, err := pemCertificates(chainPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	var keys []*pem.Block
	for rest := keyPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if strings.HasSuffix(block.Type, "PRIVATE KEY") {
			keys = append(keys, block)
		}
	}
	switch len(keys) {
	case 0:
		return tls.Certificate{}, kafkaErr("Private key not provided")
	case 1:
	default:
		return tls.Certificate{}, kafkaErr("Expected one private key, but found %d", len(keys))
	}
	var key crypto.PrivateKey
	switch keys[0].Type {
	case "ENCRYPTED PRIVATE KEY":
		if !hasPassword {
			return tls.Certificate{}, fmt.Errorf("the private key is encrypted: set %s", KeyPassword)
		}
		key, err = pkcs8.ParsePKCS8PrivateKey(keys[0].Bytes, []byte(password))
		if err != nil {
			return tls.Certificate{}, kafkaErr("Private key could not be loaded (wrong %s?)", KeyPassword)
		}
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(keys[0].Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(keys[0].Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(keys[0].Bytes)
	default:
		err = fmt.Errorf("unsupported key type %s", keys[0].Type)
	}
	if err != nil {
		return tls.Certificate{}, kafkaErr("Private key could not be loaded: %w", err)
	}
	c := tls.Certificate{PrivateKey: key, Leaf: certs[0]}
	for _, cert := range certs {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	if pub, ok := key.(interface{ Public() crypto.PublicKey }); ok {
		if eq, ok := pub.Public().(interface{ Equal(crypto.PublicKey) bool }); ok && !eq.Equal(certs[0].PublicKey) {
			return tls.Certificate{}, errors.New("the private key does not match the first certificate of the chain")
		}
	}
	return c, nil
}
