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
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/internal/kafkatls"
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
	// brokerPassword is the SCRAM password of devUser on the broker,
	// kept (0600) in brokerPasswordFile for the worker and Kafka clients;
	// clientPropsFile holds a Kafka client's settings to reach the broker.
	brokerPassword  string
	clientPropsFile string
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
	if err := s.setUpBrokerCredentials(); err != nil {
		return nil, err
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

// setUpBrokerCredentials makes (or reads back) the broker's SCRAM password
// and writes a Kafka client's properties file for it.
func (s *devSecurity) setUpBrokerCredentials() error {
	pwFile := filepath.Join(s.dir, "broker-password")
	raw, err := os.ReadFile(pwFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b := make([]byte, 18)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		s.brokerPassword = base64.RawURLEncoding.EncodeToString(b)
		if err := os.WriteFile(pwFile, []byte(s.brokerPassword+"\n"), 0o600); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		s.brokerPassword = strings.TrimSpace(string(raw))
	}
	s.clientPropsFile = filepath.Join(s.dir, "client.properties")
	return os.WriteFile(s.clientPropsFile, []byte(properties.Format(s.clientProps(""))), 0o600)
}

// clientProps are a Kafka client's settings for the dev broker, each key
// with prefix.
func (s *devSecurity) clientProps(prefix string) properties.Properties {
	return properties.Properties{
		prefix + "security.protocol":       "SASL_SSL",
		prefix + "sasl.mechanism":          broker.MechanismSCRAMSHA512,
		prefix + "sasl.jaas.config":        fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, devUser, s.brokerPassword),
		prefix + "ssl.truststore.type":     "PEM",
		prefix + "ssl.truststore.location": s.certPEM,
	}
}

// kafkaClientProps are the worker's settings for its own Kafka clients and
// its connectors' (producer., consumer., admin.).
func (s *devSecurity) kafkaClientProps() properties.Properties {
	out := properties.Properties{}
	for _, prefix := range []string{"", "producer.", "consumer.", "admin."} {
		maps.Copy(out, s.clientProps(prefix))
	}
	return out
}

// secureBroker turns the broker's listener into SASL_SSL with SCRAM
// (the self-signed certificate, devUser's credential created at the first
// start).
func (s *devSecurity) secureBroker(c *broker.Config) error {
	tlsCfg, _, err := kafkatls.Server(map[string]string{kafkatls.KeystoreType: "PEM", kafkatls.KeystoreLocation: s.keyPair})
	if err != nil {
		return err
	}
	c.Listeners = []broker.ListenerConfig{{Name: broker.ProtocolSASLSSL, Protocol: broker.ProtocolSASLSSL, Addr: c.Listener, TLS: tlsCfg,
		Mechanisms: []string{broker.MechanismSCRAMSHA512, broker.MechanismSCRAMSHA256}}}
	c.SCRAMUsers = []broker.SCRAMUser{
		{Mechanism: broker.MechanismSCRAMSHA512, Name: devUser, Password: s.brokerPassword},
		{Mechanism: broker.MechanismSCRAMSHA256, Name: devUser, Password: s.brokerPassword},
	}
	return nil
}
