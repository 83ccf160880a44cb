package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

	"software.sslmate.com/src/go-pkcs12"
)

// PKI is a test's certificates, made with crypto/x509: a CA, a server
// certificate for 127.0.0.1 and localhost (a broker's, a REST listener's),
// a client certificate, an expired client certificate and an unrelated
// CA. Every file is PEM: a certificate chain followed by its unencrypted
// PKCS#8 key, or a CA's certificate alone.
type PKI struct {
	Dir string
	// CA is the CA's certificate; OtherCA another CA's, which signed
	// nothing here.
	CA, OtherCA string
	// Server, Client and ExpiredClient are chains with their keys.
	Server, Client, ExpiredClient string
	// StorePassword protects the PKCS12 and JKS stores Stores makes.
	StorePassword string

	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	leaves map[string]leaf
}

type leaf struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewPKI makes a PKI in a directory under t.TempDir.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	p := &PKI{Dir: t.TempDir(), StorePassword: "store-pass-1", leaves: map[string]leaf{}}
	now := time.Now()
	ca := func(cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
		return makeCert(t, &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}, nil, nil)
	}
	p.ca, p.caKey = ca("Tributary test CA")
	other, _ := ca("Another CA")
	p.CA = p.writePEM(t, "ca.pem", p.ca, nil)
	p.OtherCA = p.writePEM(t, "other-ca.pem", other, nil)
	mk := func(name string, notAfter time.Time) string {
		c, k := makeCert(t, &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: name, Organization: []string{"Tributary tests"}},
			NotBefore: now.Add(-2 * time.Hour), NotAfter: notAfter, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}, p.ca, p.caKey)
		p.leaves[name] = leaf{c, k}
		return p.writePEM(t, name+".pem", c, k)
	}
	p.Server = mk("server", now.Add(24*time.Hour))
	p.Client = mk("client", now.Add(24*time.Hour))
	p.ExpiredClient = mk("expired-client", now.Add(-time.Minute))
	return p
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func makeCert(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
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

func (p *PKI) writePEM(t testing.TB, name string, c *x509.Certificate, key *ecdsa.PrivateKey) string {
	t.Helper()
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	if key != nil {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.ca.Raw})...)
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})...)
	}
	path := filepath.Join(p.Dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Stores are the PKI's certificates in the JVM's formats, made with the
// JDK's keytool: key stores holding a leaf's key and chain, and trust
// stores holding the CA, each as PKCS12 and JKS, protected by
// PKI.StorePassword.
type Stores struct {
	ServerP12, ServerJKS, ClientP12, ClientJKS, TrustP12, TrustJKS string
}

// Stores makes the PKI's key and trust stores with keytool (the PKCS12
// key stores are written with go-pkcs12, then imported by keytool, which
// writes every store the tests use). It skips t without a JDK.
func (p *PKI) Stores(t testing.TB) Stores {
	t.Helper()
	java := requireJava(t)
	keytool := filepath.Join(filepath.Dir(java), "keytool")
	if _, err := os.Stat(keytool); err != nil {
		t.Skipf("skipping: no keytool beside %s (install a JDK %d+)", java, MinJavaVersion)
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(keytool, args...).CombinedOutput(); err != nil {
			t.Fatalf("harness: keytool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	s := Stores{}
	pw := p.StorePassword
	for name, dst := range map[string][2]*string{"server": {&s.ServerP12, &s.ServerJKS}, "client": {&s.ClientP12, &s.ClientJKS}} {
		l := p.leaves[name]
		b, err := pkcs12.Modern.Encode(l.key, l.cert, []*x509.Certificate{p.ca}, pw)
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(p.Dir, name+"-go.p12")
		if err := os.WriteFile(src, b, 0o600); err != nil {
			t.Fatal(err)
		}
		*dst[0], *dst[1] = filepath.Join(p.Dir, name+".p12"), filepath.Join(p.Dir, name+".jks")
		for i, typ := range []string{"PKCS12", "JKS"} {
			run("-importkeystore", "-noprompt", "-srckeystore", src, "-srcstoretype", "PKCS12", "-srcstorepass", pw,
				"-destkeystore", *dst[i], "-deststoretype", typ, "-deststorepass", pw, "-destkeypass", pw)
		}
	}
	s.TrustP12, s.TrustJKS = filepath.Join(p.Dir, "trust.p12"), filepath.Join(p.Dir, "trust.jks")
	run("-importcert", "-noprompt", "-alias", "ca", "-file", p.CA, "-keystore", s.TrustP12, "-storetype", "PKCS12", "-storepass", pw)
	run("-importcert", "-noprompt", "-alias", "ca", "-file", p.CA, "-keystore", s.TrustJKS, "-storetype", "JKS", "-storepass", pw)
	return s
}
