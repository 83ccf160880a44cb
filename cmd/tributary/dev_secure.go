package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/restapi"
)

// devUser is the user dev --secure creates.
const devUser = "admin"

// devSecurity is what dev --secure made in DIR/secure: a self-signed
// certificate for the REST API and a credentials file for basic
// authentication (the password's bcrypt hash), kept across restarts.
type devSecurity struct {
	dir      string
	certPEM  string // the certificate alone: the CA to trust (--cacert)
	keyPair  string // certificate and key: the listener's PEM key store
	jaasFile string
	// password is set when this start made it (it is shown once).
	password string
}

// setUpDevSecurity makes (or, from an earlier start, reuses) the
// certificate, the credentials and the JAAS file of dev --secure under
// dataDir/secure.
func setUpDevSecurity(dataDir string, hosts []string) (*devSecurity, error) {
	s := &devSecurity{dir: filepath.Join(dataDir, "secure")}
	s.certPEM = filepath.Join(s.dir, "rest-cert.pem")
	s.keyPair = filepath.Join(s.dir, "rest.pem")
	s.jaasFile = filepath.Join(s.dir, "connect-jaas.conf")
	creds := filepath.Join(s.dir, "credentials.properties")
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.keyPair); errors.Is(err, os.ErrNotExist) {
		if err := selfSigned(s.certPEM, s.keyPair, hosts); err != nil {
			return nil, fmt.Errorf("self-signed certificate: %w", err)
		}
	}
	if _, err := os.Stat(creds); errors.Is(err, os.ErrNotExist) {
		b := make([]byte, 18)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		s.password = base64.RawURLEncoding.EncodeToString(b)
		hash, err := restapi.HashPassword(s.password)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(creds, []byte(properties.Format(properties.Properties{devUser: hash})), 0o600); err != nil {
			return nil, err
		}
	}
	jaas := "KafkaConnect {\n  " + restapi.PropertyFileLoginModule + " required\n  file=\"" + creds + "\";\n};\n"
	if err := os.WriteFile(s.jaasFile, []byte(jaas), 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

// workerProps are the worker settings of an HTTPS REST API with basic
// authentication on listener (host:port).
func (s *devSecurity) workerProps(listener string) properties.Properties {
	return properties.Properties{
		"listeners":                             "https://" + listener,
		"listeners.https.ssl.keystore.type":     "PEM",
		"listeners.https.ssl.keystore.location": s.keyPair,
		"rest.extension.classes":                restapi.BasicAuthExtension,
		"java.security.auth.login.config":       s.jaasFile,
	}
}

// client trusts the self-signed certificate.
func (s *devSecurity) client() (*http.Client, error) {
	b, err := os.ReadFile(s.certPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, nil
}

// selfSigned writes a self-signed certificate for hosts, valid a year,
// alone to certPath and with its PKCS#8 key to pairPath.
func selfSigned(certPath, pairPath string, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "tributary dev", Organization: []string{"Tributary"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certPath, cert, 0o644); err != nil {
		return err
	}
	return os.WriteFile(pairPath, append(cert, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})...), 0o600)
}
