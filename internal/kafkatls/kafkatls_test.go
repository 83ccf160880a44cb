package kafkatls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// pki is a CA with a server and a client certificate, written as PEM
// files, PKCS12 stores and (with keytool) JKS stores.
type pki struct {
	dir                        string
	ca                         *x509.Certificate
	caKey                      *ecdsa.PrivateKey
	serverPEM, clientPEM       string // chain + unencrypted PKCS#8 key
	clientEncPEM               string // chain + encrypted PKCS#8 key (password "keypass")
	caPEM                      string
	serverP12, clientP12       string // password "storepass"
	trustP12                   string // keytool -importcert, password "storepass"
	serverJKS, clientJKS       string // keytool -importkeystore, password "storepass"
	trustJKS                   string
	expiredPEM, otherCAPEM     string
	serverCert, clientCert     *x509.Certificate
	serverKeyDER, clientKeyDER []byte
}

func newCert(t *testing.T, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func write(t *testing.T, path string, blocks ...*pem.Block) string {
	t.Helper()
	var b []byte
	for _, bl := range blocks {
		b = append(b, pem.EncodeToMemory(bl)...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	p := &pki{dir: dir}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	p.ca, p.caKey = newCert(t, ca, nil, nil)
	leaf := func(serial int64, cn string, notAfter time.Time, usage x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey) {
		return newCert(t, &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-2 * time.Hour), NotAfter: notAfter,
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			KeyUsage: x509.KeyUsageDigitalSignature}, p.ca, p.caKey)
	}
	var sk, ck, ek *ecdsa.PrivateKey
	var expired *x509.Certificate
	p.serverCert, sk = leaf(2, "server", now.Add(time.Hour), x509.ExtKeyUsageServerAuth)
	p.clientCert, ck = leaf(3, "client", now.Add(time.Hour), x509.ExtKeyUsageClientAuth)
	expired, ek = leaf(4, "expired", now.Add(-time.Minute), x509.ExtKeyUsageClientAuth)
	p.serverKeyDER, _ = x509.MarshalPKCS8PrivateKey(sk)
	p.clientKeyDER, _ = x509.MarshalPKCS8PrivateKey(ck)
	ekDER, _ := x509.MarshalPKCS8PrivateKey(ek)
	cert := func(c *x509.Certificate) *pem.Block { return &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw} }
	p.caPEM = write(t, filepath.Join(dir, "ca.pem"), cert(p.ca))
	p.serverPEM = write(t, filepath.Join(dir, "server.pem"), cert(p.serverCert), cert(p.ca), &pem.Block{Type: "PRIVATE KEY", Bytes: p.serverKeyDER})
	p.clientPEM = write(t, filepath.Join(dir, "client.pem"), cert(p.clientCert), &pem.Block{Type: "PRIVATE KEY", Bytes: p.clientKeyDER})
	enc, err := pkcs8.MarshalPrivateKey(ck, []byte("keypass"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p.clientEncPEM = write(t, filepath.Join(dir, "client-enc.pem"), cert(p.clientCert), &pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: enc})
	p.expiredPEM = write(t, filepath.Join(dir, "expired.pem"), cert(expired), &pem.Block{Type: "PRIVATE KEY", Bytes: ekDER})
	other, _ := newCert(t, &x509.Certificate{SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "other CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}, nil, nil)
	p.otherCAPEM = write(t, filepath.Join(dir, "other-ca.pem"), cert(other))
	p12 := func(name string, key *ecdsa.PrivateKey, c *x509.Certificate) string {
		b, err := pkcs12.Modern.Encode(key, c, []*x509.Certificate{p.ca}, "storepass")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.serverP12 = p12("server.p12", sk, p.serverCert)
	p.clientP12 = p12("client.p12", ck, p.clientCert)
	return p
}

// keytool converts the PKCS12 key stores to JKS and makes JKS and PKCS12
// trust stores holding the CA, as users make them. It skips the test
// without a JDK.
func (p *pki) keytool(t *testing.T) {
	t.Helper()
	kt, err := exec.LookPath("keytool")
	if err != nil {
		t.Skip("skipping: keytool not found (install a JDK 17+)")
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(kt, args...).CombinedOutput(); err != nil {
			t.Fatalf("keytool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	p.serverJKS, p.clientJKS = filepath.Join(p.dir, "server.jks"), filepath.Join(p.dir, "client.jks")
	for src, dst := range map[string]string{p.serverP12: p.serverJKS, p.clientP12: p.clientJKS} {
		run("-importkeystore", "-noprompt", "-srckeystore", src, "-srcstoretype", "PKCS12", "-srcstorepass", "storepass",
			"-destkeystore", dst, "-deststoretype", "JKS", "-deststorepass", "storepass", "-destkeypass", "storepass")
	}
	p.trustJKS, p.trustP12 = filepath.Join(p.dir, "trust.jks"), filepath.Join(p.dir, "trust.p12")
	run("-importcert", "-noprompt", "-alias", "ca", "-file", p.caPEM, "-keystore", p.trustJKS, "-storetype", "JKS", "-storepass", "storepass")
	run("-importcert", "-noprompt", "-alias", "ca", "-file", p.caPEM, "-keystore", p.trustP12, "-storetype", "PKCS12", "-storepass", "storepass")
}

// handshake runs a TLS handshake between server and client configs over
// loopback and returns the client's and the server's errors.
func handshake(t *testing.T, server, client *tls.Config) (clientErr, serverErr error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		err = c.(*tls.Conn).Handshake()
		if err == nil {
			_, err = c.Write([]byte("x"))
		}
		done <- err
	}()
	client = client.Clone()
	client.ServerName = "127.0.0.1"
	c, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err == nil {
		// TLS 1.3: the server's verdict on the client certificate
		// arrives with the first read.
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	return err, <-done
}

func TestFormatsInterchangeable(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	p.keytool(t)
	servers := map[string]map[string]string{
		"PEM":    {KeystoreType: "PEM", KeystoreLocation: p.serverPEM},
		"PKCS12": {KeystoreType: "PKCS12", KeystoreLocation: p.serverP12, KeystorePassword: "storepass"},
		"JKS":    {KeystoreLocation: p.serverJKS, KeystorePassword: "storepass"},
		// The JVM reads a PKCS12 file declared JKS, and so does this.
		"PKCS12 as JKS": {KeystoreType: "JKS", KeystoreLocation: p.serverP12, KeystorePassword: "storepass"},
	}
	clients := map[string]map[string]string{
		"PEM": {TruststoreType: "PEM", TruststoreLocation: p.caPEM, KeystoreType: "PEM", KeystoreLocation: p.clientPEM},
		"PEM inline": {TruststoreType: "PEM", TruststoreCertificates: readFile(t, p.caPEM), KeystoreType: "PEM",
			KeystoreKey: pemKey(p.clientKeyDER), KeystoreChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.clientCert.Raw}))},
		"PEM encrypted key": {TruststoreType: "PEM", TruststoreLocation: p.caPEM, KeystoreType: "PEM", KeystoreLocation: p.clientEncPEM, KeyPassword: "keypass"},
		"PKCS12": {TruststoreType: "PKCS12", TruststoreLocation: p.trustP12, TruststorePassword: "storepass",
			KeystoreType: "PKCS12", KeystoreLocation: p.clientP12, KeystorePassword: "storepass"},
		"JKS":                      {TruststoreLocation: p.trustJKS, TruststorePassword: "storepass", KeystoreLocation: p.clientJKS, KeystorePassword: "storepass"},
		"JKS trust, no password":   {TruststoreLocation: p.trustJKS, KeystoreLocation: p.clientJKS, KeystorePassword: "storepass"},
		"key store as trust store": {TruststoreType: "PKCS12", TruststoreLocation: p.serverP12, TruststorePassword: "storepass", KeystoreType: "PEM", KeystoreLocation: p.clientPEM},
	}
	for sname, sprops := range servers {
		sprops[ClientAuth] = "required"
		sprops[TruststoreType], sprops[TruststoreLocation] = "PEM", p.caPEM
		server, _, err := Server(sprops)
		if err != nil {
			t.Fatalf("server %s: %v", sname, err)
		}
		for cname, cprops := range clients {
			client, _, err := Client(cprops)
			if err != nil {
				t.Fatalf("client %s: %v", cname, err)
			}
			if cerr, serr := handshake(t, server, client); cerr != nil || serr != nil {
				t.Errorf("server %s, client %s: client %v, server %v", sname, cname, cerr, serr)
			}
		}
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func pemKey(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func TestHandshakeFailures(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	server, _, err := Server(map[string]string{KeystoreType: "PEM", KeystoreLocation: p.serverPEM, ClientAuth: "required", TruststoreType: "PEM", TruststoreLocation: p.caPEM})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"wrong CA":                       {map[string]string{TruststoreType: "PEM", TruststoreLocation: p.otherCAPEM, KeystoreType: "PEM", KeystoreLocation: p.clientPEM}, "certificate signed by unknown authority"},
		"no client certificate":          {map[string]string{TruststoreType: "PEM", TruststoreLocation: p.caPEM}, "certificate required"},
		"no hostname check, chain still": {map[string]string{TruststoreType: "PEM", TruststoreLocation: p.otherCAPEM, EndpointIdentification: "", KeystoreType: "PEM", KeystoreLocation: p.clientPEM}, "unknown authority"},
	} {
		client, _, err := Client(tc.props)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cerr, _ := handshake(t, server, client)
		if cerr == nil || !strings.Contains(cerr.Error(), tc.want) {
			t.Errorf("%s: client error %v, want %q", name, cerr, tc.want)
		}
	}
	// An empty algorithm skips the name: a certificate for another name
	// is accepted when its chain is trusted.
	client, _, err := Client(map[string]string{TruststoreType: "PEM", TruststoreLocation: p.caPEM, EndpointIdentification: "", KeystoreType: "PEM", KeystoreLocation: p.clientPEM})
	if err != nil {
		t.Fatal(err)
	}
	client.ServerName = "not-the-name.example"
	if cerr, serr := handshake(t, server, client); cerr != nil || serr != nil {
		t.Errorf("no hostname verification: client %v, server %v", cerr, serr)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"PEM key store with a password": {map[string]string{KeystoreType: "PEM", KeystoreLocation: p.clientPEM, KeystorePassword: "x"},
			"SSL key store password cannot be specified with PEM format, only key password may be specified"},
		"inline PEM with a password": {map[string]string{KeystoreType: "PEM", KeystoreKey: pemKey(p.clientKeyDER), KeystoreChain: readFile(t, p.caPEM), KeystorePassword: "x"},
			"SSL key store password cannot be specified with PEM format, only key password may be specified."},
		"PEM trust store with a password": {map[string]string{TruststoreType: "PEM", TruststoreLocation: p.caPEM, TruststorePassword: "x"},
			"SSL trust store password cannot be specified for PEM format."},
		"inline key without chain": {map[string]string{KeystoreType: "PEM", KeystoreKey: pemKey(p.clientKeyDER)},
			"SSL private key is specified, but certificate chain is not specified."},
		"inline key, not PEM": {map[string]string{KeystoreKey: pemKey(p.clientKeyDER)},
			"SSL private key can be specified only for PEM, but key store type is JKS."},
		"store without password": {map[string]string{KeystoreType: "PKCS12", KeystoreLocation: p.clientP12},
			"SSL key store is specified, but key store password is not specified."},
		"wrong PKCS12 password": {map[string]string{KeystoreType: "PKCS12", KeystoreLocation: p.clientP12, KeystorePassword: "nope"},
			"wrong password for the PKCS12 store"},
		"PEM file declared JKS":          {map[string]string{TruststoreLocation: p.caPEM}, "the file is PEM: set ssl.truststore.type=PEM"},
		"expired certificate":            {map[string]string{KeystoreType: "PEM", KeystoreLocation: p.expiredPEM}, "(CN=expired) expired on"},
		"encrypted key without password": {map[string]string{KeystoreType: "PEM", KeystoreLocation: p.clientEncPEM}, "the private key is encrypted: set ssl.key.password"},
		"encrypted key, wrong password":  {map[string]string{KeystoreType: "PEM", KeystoreLocation: p.clientEncPEM, KeyPassword: "nope"}, "Private key could not be loaded"},
		"missing file":                   {map[string]string{KeystoreType: "PEM", KeystoreLocation: filepath.Join(p.dir, "nope.pem")}, "no such file"},
		"bad cipher":                     {map[string]string{CipherSuites: "TLS_NOT_A_SUITE"}, "unknown or unsupported cipher suite"},
		"bad protocol":                   {map[string]string{EnabledProtocols: "SSLv3"}, "unknown protocol"},
		"bad algorithm":                  {map[string]string{EndpointIdentification: "ldaps"}, "only https"},
	} {
		_, _, err := Client(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "storepass") || strings.Contains(err.Error(), "keypass")) {
			t.Errorf("%s: the error quotes a password: %v", name, err)
		}
	}
	if _, _, err := Server(map[string]string{KeystoreType: "PEM", KeystoreLocation: p.serverPEM, ClientAuth: "sometimes"}); err == nil {
		t.Error("ssl.client.auth=sometimes accepted")
	}
	if _, _, err := Server(map[string]string{}); err == nil || !strings.Contains(err.Error(), "needs a certificate") {
		t.Errorf("server without key store: %v", err)
	}
}

func TestNotes(t *testing.T) {
	t.Parallel()
	cfg, notes, err := Client(map[string]string{"ssl.provider": "SunJSSE", "ssl.keymanager.algorithm": "PKIX", CipherSuites: "TLS_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
		EnabledProtocols: "TLSv1.2,TLSv1.3", Protocol: "TLSv1.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 3 || cfg.MinVersion != tls.VersionTLS12 || cfg.MaxVersion != tls.VersionTLS12 || len(cfg.CipherSuites) != 1 {
		t.Fatalf("notes %q, versions %x..%x, suites %v", notes, cfg.MinVersion, cfg.MaxVersion, cfg.CipherSuites)
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Format{"\xfe\xed\xfe\xed\x00": JKS, "\x30\x82\x01": PKCS12, "junk\n-----BEGIN CERTIFICATE-----": PEM, "hello": ""} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", in, got, want)
		}
	}
}
