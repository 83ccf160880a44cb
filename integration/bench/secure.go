package bench

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/internal/kafkatls"
)

// The secured targets: the cost of TLS and SASL_SSL on the bundled broker,
// and Apache Kafka over SASL_SSL for comparison. They run only when named
// (--targets tributary,tributary-tls,tributary-sasl-ssl,kafka-sasl-ssl).
const (
	TributaryTLS     Target = "tributary-tls"
	TributarySASLSSL Target = "tributary-sasl-ssl"
	KafkaSASLSSL     Target = "kafka-sasl-ssl"
)

// SecureTargets lists the secured targets in run order; "all" leaves them out.
var SecureTargets = []Target{TributaryTLS, TributarySASLSSL, KafkaSASLSSL}

const (
	benchUser     = "bench"
	benchPassword = "bench-secret"
)

// benchPKI writes a CA and a server certificate for 127.0.0.1 (with its
// key, one PEM file) into dir.
func benchPKI(dir string) (caPath, serverPath string, pool *x509.CertPool, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(48 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", "", nil, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", nil, err
	}
	caPath, serverPath = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		return "", "", nil, err
	}
	pair := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})...)
	if err := os.WriteFile(serverPath, pair, 0o600); err != nil {
		return "", "", nil, err
	}
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return caPath, serverPath, pool, nil
}

// startSecure starts a secured target; its clients get opts (TLS, and SCRAM-SHA-512
// for the SASL_SSL targets).
func startSecure(ctx context.Context, t Target, dir string, cleanup func(error) error) (*running, error) {
	caPath, serverPath, pool, err := benchPKI(dir)
	if err != nil {
		return nil, cleanup(err)
	}
	opts := []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})}
	if t != TributaryTLS {
		opts = append(opts, kgo.SASL(scram.Auth{User: benchUser, Pass: benchPassword}.AsSha512Mechanism()))
	}
	if t == KafkaSASLSSL {
		pki := &harness.PKI{CA: caPath, Server: serverPath}
		k, err := harness.StartApacheKafka(ctx, dir, map[string]string{"group.initial.rebalance.delay.ms": "0"},
			harness.WithKafkaJVMArgs(kafkaJVMArgs...),
			harness.WithSecurity(harness.KafkaSecurity{PKI: pki, ScramUsers: map[string]string{benchUser: benchPassword}}))
		if errors.Is(err, harness.ErrUnavailable) {
			return nil, cleanup(fmt.Errorf("%w: %v", ErrSkipped, err))
		}
		if err != nil {
			return nil, cleanup(err)
		}
		return &running{bootstrap: k.Listener(harness.ListenerSASLSSL), opts: opts, brokerPid: k.Pid(), close: func() error {
			return cleanup(k.Close())
		}}, nil
	}
	tlsCfg, _, err := kafkatls.Server(map[string]string{kafkatls.KeystoreType: "PEM", kafkatls.KeystoreLocation: serverPath})
	if err != nil {
		return nil, cleanup(err)
	}
	cfg := broker.DefaultConfig()
	cfg.LogDir = filepath.Join(dir, "data")
	cfg.GroupInitialRebalanceDelay = InitialRebalanceDelay * time.Millisecond
	l := broker.ListenerConfig{Name: "SSL", Protocol: broker.ProtocolSSL, Addr: "127.0.0.1:0", TLS: tlsCfg}
	if t == TributarySASLSSL {
		l.Name, l.Protocol, l.Mechanisms = "SASL_SSL", broker.ProtocolSASLSSL, []string{broker.MechanismSCRAMSHA512}
		cfg.SCRAMUsers = []broker.SCRAMUser{{Mechanism: broker.MechanismSCRAMSHA512, Name: benchUser, Password: benchPassword}}
	}
	cfg.Listeners = []broker.ListenerConfig{l}
	b, err := broker.Open(cfg)
	if err != nil {
		return nil, cleanup(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Serve(context.Background()) }()
	return &running{bootstrap: b.Addr(), opts: opts, close: func() error {
		err := b.Close()
		if serr := <-done; err == nil {
			err = serr
		}
		return cleanup(err)
	}}, nil
}
