package broker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/tributary-dev/tributary/internal/properties"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";`

// secureConfig is a broker with a SASL_PLAINTEXT listener (PLAIN and SCRAM),
// ACLs on, admin the super user and its SCRAM credential bootstrapped.
func secureConfig(t *testing.T, extra map[string]string) func(*Config) {
	return func(c *Config) {
		p := properties.Properties{
			"listeners":                                   "CLIENT://127.0.0.1:0",
			"listener.security.protocol.map":              "CLIENT:SASL_PLAINTEXT",
			"sasl.enabled.mechanisms":                     "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
			"listener.name.client.plain.sasl.jaas.config": plainJAAS,
			"tributary.scram.credentials":                 "SCRAM-SHA-512=[name=admin,password=admin-secret]",
			"authorizer.class.name":                       "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users":                                 "User:admin",
		}
		for k, v := range extra {
			p[k] = v
		}
		cfg, warnings, err := FromProperties(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) > 0 {
			t.Fatalf("warnings: %v", warnings)
		}
		cfg.LogDir, cfg.Logger, cfg.Metrics = c.LogDir, c.Logger, nil
		cfg.FailedAuthDelay = 0
		*c = cfg
	}
}

func saslClient(t *testing.T, b *Broker, mech kgo.Opt, opts ...kgo.Opt) *kgo.Client {
	return newClient(t, b, append([]kgo.Opt{mech, kgo.RequestRetries(0), kgo.RetryTimeout(time.Second)}, opts...)...)
}

func plainAuth(user, pw string) kgo.Opt {
	return kgo.SASL(plain.Auth{User: user, Pass: pw}.AsMechanism())
}

func scram256(user, pw string) kgo.Opt {
	return kgo.SASL(scram.Auth{User: user, Pass: pw}.AsSha256Mechanism())
}

func scram512(user, pw string) kgo.Opt {
	return kgo.SASL(scram.Auth{User: user, Pass: pw}.AsSha512Mechanism())
}

func TestSASLAuthenticationAndACLs(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, secureConfig(t, nil))
	ctx := testCtx(t)

	// PLAIN: a wrong password fails with Kafka's text.
	bad := kadm.NewClient(saslClient(t, b, plainAuth("alice", "nope")))
	_, err := bad.ListTopics(ctx)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), "Authentication failed: Invalid username or password") {
		t.Fatalf("bad PLAIN password: %v", err)
	}
	// SCRAM: a wrong password and an unknown user fail with the same generic text.
	for _, opt := range []kgo.Opt{scram512("admin", "nope"), scram256("nobody", "x")} {
		_, err := kadm.NewClient(saslClient(t, b, opt)).ListTopics(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), "due to invalid credentials with SASL mechanism SCRAM-SHA-") {
			t.Fatalf("bad SCRAM login: %v", err)
		}
	}

	// The bootstrapped admin (SCRAM-SHA-512) is a super user.
	admin := kadm.NewClient(saslClient(t, b, scram512("admin", "admin-secret")))
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "orders-eu"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"orders-secret", "payments"} {
		if _, err := admin.CreateTopic(ctx, 1, 1, nil, n); err != nil {
			t.Fatal(err)
		}
	}
	// Admin creates bob's SCRAM-SHA-256 credential (the client salts).
	res, err := admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-secret"}})
	if err != nil || res.Error() != nil {
		t.Fatalf("alter scram: %v %v", err, res.Error())
	}
	// Kafka's checks (kadm checks the iterations client-side: a raw request).
	few := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = "carl", 1, 1000, []byte("salt"), make([]byte, 32)
	dup := up
	dup.Name, dup.Iterations = "dora", 4096
	few.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up, dup, dup}
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "nobody", 1
	few.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{del}
	fr, err := few.RequestWith(ctx, saslClient(t, b, scram512("admin", "admin-secret")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"carl": "93 Too few iterations", "dora": "92 A user credential cannot be altered twice in the same request", "nobody": "91 Attempt to delete a user credential that does not exist"}
	for _, r := range fr.Results {
		if got := strconv.Itoa(int(r.ErrorCode)) + " " + deref(r.ErrorMessage); got != want[r.User] {
			t.Errorf("alter scram %s: %s, want %s", r.User, got, want[r.User])
		}
	}
	desc, err := admin.DescribeUserSCRAMs(ctx)
	if err != nil || len(desc["bob"].CredInfos) != 1 || desc["bob"].CredInfos[0].Iterations != 4096 || len(desc["admin"].CredInfos) != 1 {
		t.Fatalf("describe scram: %v %+v", err, desc)
	}

	// ACLs: bob writes to orders-* but not orders-secret.
	acls := kadm.NewACLs().Allow("User:bob").Topics("orders-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite)
	deny := kadm.NewACLs().Deny("User:bob").Topics("orders-secret").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite)
	for _, a := range []*kadm.ACLBuilder{acls, deny} {
		cr, err := admin.CreateACLs(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range cr {
			if r.Err != nil {
				t.Fatalf("create acl: %v %s", r.Err, r.ErrMessage)
			}
		}
	}

	bob := saslClient(t, b, scram256("bob", "bob-secret"))
	produce := func(cl *kgo.Client, topic string) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
	}
	if err := produce(bob, "orders-eu"); err != nil {
		t.Fatalf("bob produce to orders-eu: %v", err)
	}
	if err := produce(bob, "orders-secret"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob produce to orders-secret: %v", err)
	}
	if err := produce(bob, "payments"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob produce to payments: %v", err)
	}
	// bob may not alter ACLs or SCRAM credentials.
	cr, err := kadm.NewClient(bob).CreateACLs(ctx, kadm.NewACLs().Allow("User:bob").Topics("payments").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(cr) != 1 || !errors.Is(cr[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob create acl: %v %+v", err, cr)
	}
	// bob sees only the topics he may describe (WRITE implies DESCRIBE).
	md, err := kadm.NewClient(bob).Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := md.Topics.Names(); len(got) != 2 || !contains(got, "orders-eu") || !contains(got, "orders-secret") {
		t.Fatalf("bob's metadata topics %v", got)
	}
	// A group without READ.
	cons := saslClient(t, b, scram256("bob", "bob-secret"), kgo.ConsumeTopics("orders-eu"), kgo.ConsumerGroup("bobs-group"))
	fs := cons.PollFetches(ctx)
	if err := fs.Err0(); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("bob's group: %v", err)
	}

	// KIP-848 requests are checked too (READ, DESCRIBE on the group).
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberEpoch = "bobs-group", 0
	hbResp, err := bob.DiscoveredBrokers()[0].Request(ctx, hb)
	if err != nil || hbResp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("bob's KIP-848 heartbeat: %v %+v", err, hbResp)
	}
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{"bobs-group"}
	cgdResp, err := bob.DiscoveredBrokers()[0].Request(ctx, cgd)
	if err != nil || cgdResp.(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("bob's ConsumerGroupDescribe: %v %+v", err, cgdResp)
	}

	// Describe filters: MATCH finds the literal deny and the prefixed allow.
	described, err := admin.DescribeACLs(ctx, kadm.NewACLs().Topics("orders-secret").ResourcePatternType(kadm.ACLPatternMatch).Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range described {
		if d.Err != nil {
			t.Fatal(d.Err)
		}
		n += len(d.Described)
	}
	if n != 2 {
		t.Fatalf("MATCH orders-secret described %d ACLs: %+v", n, described)
	}

	// Restart: credentials and ACLs are durable.
	b.Close()
	b2 := startBroker(t, dir, secureConfig(t, nil))
	bob2 := saslClient(t, b2, scram256("bob", "bob-secret"))
	if err := produce(bob2, "orders-eu"); err != nil {
		t.Fatalf("after restart, bob produce to orders-eu: %v", err)
	}
	if err := produce(bob2, "orders-secret"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("after restart, bob produce to orders-secret: %v", err)
	}
	// Delete bob's deny: he may write orders-secret.
	admin2 := kadm.NewClient(saslClient(t, b2, scram512("admin", "admin-secret")))
	dr, err := admin2.DeleteACLs(ctx, kadm.NewACLs().Deny("User:bob").DenyHosts().Topics("orders-secret").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite))
	if err != nil || len(dr) != 1 || len(dr[0].Deleted) != 1 {
		t.Fatalf("delete acl: %v %+v", err, dr)
	}
	if err := produce(bob2, "orders-secret"); err != nil {
		t.Fatalf("bob produce to orders-secret after the deny was deleted: %v", err)
	}
	// Delete bob's credential: he can no longer log in.
	res, err = admin2.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || res.Error() != nil {
		t.Fatalf("delete scram: %v %v", err, res.Error())
	}
	_, err = kadm.NewClient(saslClient(t, b2, scram256("bob", "bob-secret"))).ListTopics(ctx)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("bob after deletion: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestSASLReauthentication(t *testing.T) {
	b := startBroker(t, "", secureConfig(t, map[string]string{"connections.max.reauth.ms": "700", "authorizer.class.name": ""}))
	cl := saslClient(t, b, plainAuth("alice", "alice-secret"))
	ctx := testCtx(t)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "reauth"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce across re-authentications: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// saslRawConn dials b and exchanges Kafka frames by hand.
type saslRawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialSASLRaw(t *testing.T, addr string) *saslRawConn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &saslRawConn{t: t, nc: nc}
}

func (r *saslRawConn) send(req kmsg.Request, corr int32) {
	var body []byte
	body = binary.BigEndian.AppendUint16(body, uint16(req.Key()))
	body = binary.BigEndian.AppendUint16(body, uint16(req.GetVersion()))
	body = binary.BigEndian.AppendUint32(body, uint32(corr))
	body = binary.BigEndian.AppendUint16(body, 1)
	body = append(body, 't')
	if req.IsFlexible() {
		body = append(body, 0)
	}
	body = req.AppendTo(body)
	r.sendRaw(body)
}

func (r *saslRawConn) sendRaw(b []byte) {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	if _, err := r.nc.Write(append(frame, b...)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *saslRawConn) recv() ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r.nc, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(r.nc, b)
	return b, err
}

func TestSASLStateMachine(t *testing.T) {
	b := startBroker(t, "", secureConfig(t, nil))

	// A request before authentication closes the connection.
	r := dialSASLRaw(t, b.Addr())
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	r.send(md, 1)
	if _, err := r.recv(); err == nil {
		t.Fatal("metadata before authentication was answered")
	}

	// An unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled ones, then close.
	r = dialSASLRaw(t, b.Addr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "GSSAPI"
	r.send(hs, 1)
	raw, err := r.recv()
	if err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.Version = 1
	if err := resp.ReadFrom(raw[4:]); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" {
		t.Fatalf("handshake: %+v", resp)
	}
	if _, err := r.recv(); err == nil {
		t.Fatal("connection stays open after an unsupported mechanism")
	}

	// SaslHandshake v0: a bare PLAIN token, a bare empty answer, then requests.
	r = dialSASLRaw(t, b.Addr())
	hs.Version, hs.Mechanism = 0, "PLAIN"
	r.send(hs, 1)
	if _, err := r.recv(); err != nil {
		t.Fatal(err)
	}
	r.sendRaw([]byte("\x00alice\x00alice-secret"))
	tok, err := r.recv()
	if err != nil || len(tok) != 0 {
		t.Fatalf("v0 token answer %x %v", tok, err)
	}
	md.Version = 12
	r.send(md, 2)
	if _, err := r.recv(); err != nil {
		t.Fatalf("metadata after v0 authentication: %v", err)
	}

	// A bad SASL frame (oversized) closes that connection only.
	r = dialSASLRaw(t, b.Addr())
	r.nc.Write([]byte{0x7f, 0xff, 0xff, 0xff})
	if _, err := r.recv(); err == nil {
		t.Fatal("an oversized SASL frame was answered")
	}
	cl := saslClient(t, b, plainAuth("alice", "alice-secret"))
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatalf("another connection after a bad frame: %v", err)
	}
}

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate (CN=client,OU=apps,O=tributary) as PEM files in dir.
func testPKI(t testing.TB, dir string) (ca *x509.CertPool, client tls.Certificate, serverProps map[string]string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	issue := func(subject pkix.Name, server bool) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}
		if server {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	pemFile := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvDER, srvKey := issue(pkix.Name{CommonName: "broker"}, true)
	srvKeyDER, _ := x509.MarshalPKCS8PrivateKey(srvKey)
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}))
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: srvKeyDER}))
	caPath := pemFile("ca.pem", "CERTIFICATE", caDER)
	serverProps = map[string]string{
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.certificate.chain": chain,
		"ssl.keystore.key":               keyPEM,
		"ssl.truststore.type":            "PEM",
		"ssl.truststore.location":        caPath,
	}
	cliDER, cliKey := issue(pkix.Name{CommonName: "client", OrganizationalUnit: []string{"apps"}, Organization: []string{"tributary"}}, false)
	client = tls.Certificate{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}
	ca = x509.NewCertPool()
	ca.AddCert(caCert)
	return ca, client, serverProps
}

func TestSSLListenerPrincipalFromCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, clientCert, ssl := testPKI(t, dir)
	extra := map[string]string{
		"listeners":                                   "CLIENT://127.0.0.1:0,MTLS://127.0.0.1:0,SECURE://127.0.0.1:0",
		"listener.security.protocol.map":              "CLIENT:SASL_PLAINTEXT,MTLS:SSL,SECURE:SASL_SSL",
		"ssl.client.auth":                             "required",
		"listener.name.secure.ssl.client.auth":        "none",
		"ssl.principal.mapping.rules":                 "RULE:^CN=([a-z]+),OU=apps,.*$/$1-app/U,DEFAULT",
		"listener.name.secure.plain.sasl.jaas.config": plainJAAS,
	}
	for k, v := range ssl {
		extra[k] = v
	}
	b := startBroker(t, dir+"/data", secureConfig(t, extra))
	ctx := testCtx(t)
	admin := kadm.NewClient(saslClient(t, b, scram512("admin", "admin-secret")))
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "certs"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:CLIENT-APP").Topics("certs").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite)); err != nil {
		t.Fatal(err)
	}
	mtlsAddr := b.ListenerAddr("MTLS")
	tlsCfg := &tls.Config{RootCAs: ca, Certificates: []tls.Certificate{clientCert}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(mtlsAddr), kgo.DialTLSConfig(tlsCfg), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "certs", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("mTLS produce as User:CLIENT-APP: %v", err)
	}
	// Metadata over a listener advertises that listener's address.
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) != 1 || net.JoinHostPort(md.Brokers[0].Host, itoa(md.Brokers[0].Port)) != mtlsAddr {
		t.Fatalf("metadata over MTLS: %v %+v (listener %s)", err, md.Brokers, mtlsAddr)
	}
	// Without a client certificate the handshake fails.
	noCert, _ := kgo.NewClient(kgo.SeedBrokers(mtlsAddr), kgo.DialTLSConfig(&tls.Config{RootCAs: ca}), kgo.RequestRetries(0))
	defer noCert.Close()
	if err := noCert.Ping(ctx); err == nil {
		t.Fatal("mTLS without a certificate succeeded")
	}
	// SASL_SSL: PLAIN over TLS.
	sec, _ := kgo.NewClient(kgo.SeedBrokers(b.ListenerAddr("SECURE")), kgo.DialTLSConfig(&tls.Config{RootCAs: ca}), plainAuth("admin", "admin-secret"), kgo.RequestRetries(0))
	defer sec.Close()
	if err := sec.ProduceSync(ctx, &kgo.Record{Topic: "certs", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("SASL_SSL produce: %v", err)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestPrincipalRules(t *testing.T) {
	rules, err := parsePrincipalRules(`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=kafka-server1,OU=ServiceUsers,O=Org,C=US":                   "kafka-server1",
		"CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=Cupertino,ST=CA,C=US": "duke@javasoft",
		"OU=x,CN=Admin.Foo": "admin.foo",
	} {
		got, err := mapPrincipal(rules, dn)
		if err != nil || got != want {
			t.Errorf("%s: got %q %v, want %q", dn, got, err, want)
		}
	}
	only, _ := parsePrincipalRules(`RULE:^CN=(.*)$/$1/`)
	if _, err := mapPrincipal(only, "OU=x"); err == nil {
		t.Error("no matching rule is an error")
	}
	if _, err := parsePrincipalRules("RULE:broken"); err == nil {
		t.Error("a broken rule is refused")
	}
}

func TestParseSCRAMBootstrap(t *testing.T) {
	us, err := ParseSCRAMBootstrap(`SCRAM-SHA-256=[name=alice,password="a,b]c"];SCRAM-SHA-512=[name=bob,password=x,iterations=8192]`)
	if err != nil || len(us) != 2 || us[0].Password != "a,b]c" || us[1].Iterations != 8192 || us[1].Mechanism != MechanismSCRAMSHA512 {
		t.Fatalf("%+v %v", us, err)
	}
	for _, bad := range []string{"SCRAM-SHA-1=[name=a,password=b]", "SCRAM-SHA-256=[name=a]", "SCRAM-SHA-256=[name=a,password=b,iterations=10]"} {
		if _, err := ParseSCRAMBootstrap(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
