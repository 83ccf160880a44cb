package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/internal/properties"
)

// Tests of the bundled broker's security (issue 35): listeners, SASL, SCRAM
// users, ACLs, with Kafka's own clients and Apache Kafka as the reference.

const (
	secAdmin   = "admin"
	secAdminPW = "admin-secret"
	secAlice   = "alice"
	secAlicePW = "alice-secret"
)

// secureBrokerProps are the bundled broker's properties mirroring the
// harness's secured Apache Kafka: a SASL_SSL listener named SASLSSL with
// PLAIN and SCRAM-SHA-512, the StandardAuthorizer with admin the super
// user, and admin's SCRAM credential bootstrapped.
func secureBrokerProps(pki *harness.PKI, addr string) map[string]string {
	return map[string]string{
		"listeners":                                            "SASLSSL://" + addr,
		"listener.security.protocol.map":                       "SASLSSL:SASL_SSL",
		"ssl.keystore.type":                                    "PEM",
		"ssl.keystore.location":                                pki.Server,
		"listener.name.saslssl.sasl.enabled.mechanisms":        "PLAIN,SCRAM-SHA-512",
		"listener.name.saslssl.plain.sasl.jaas.config":         `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";`,
		"listener.name.saslssl.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"authorizer.class.name":                                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                                          "User:admin",
		"tributary.scram.credentials":                          "SCRAM-SHA-512=[name=admin,password=admin-secret]",
	}
}

// secureBroker starts the bundled broker in-process with secureBrokerProps.
func secureBroker(t *testing.T, pki *harness.PKI) *harness.Broker {
	t.Helper()
	return harness.TributaryBroker(t, func(c *broker.Config) {
		cfg, warnings, err := broker.FromProperties(properties.Properties(secureBrokerProps(pki, "127.0.0.1:0")))
		if err != nil || len(warnings) > 0 {
			t.Fatalf("broker config: %v %v", err, warnings)
		}
		cfg.LogDir, cfg.Logger, cfg.GroupInitialRebalanceDelay = c.LogDir, c.Logger, 0
		*c = cfg
	})
}

func pkiTLS(t *testing.T, pki *harness.PKI) *tls.Config {
	t.Helper()
	raw, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(raw)
	return &tls.Config{RootCAs: pool}
}

// scramClient is a franz-go client over SASL_SSL with SCRAM-SHA-512.
func scramClient(t *testing.T, pki *harness.PKI, addr, user, pw string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTLSConfig(pkiTLS(t, pki)),
		kgo.SASL(scram.Auth{User: user, Pass: pw}.AsSha512Mechanism()), kgo.RequestRetries(0), kgo.RetryTimeout(2 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// clientProps writes a Java client's SASL_SSL SCRAM-SHA-512 properties.
func clientProps(t *testing.T, pki *harness.PKI, user, pw string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), user+".properties")
	body := fmt.Sprintf("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" password=\"%s\";\n"+
		"ssl.truststore.type=PEM\nssl.truststore.location=%s\n", user, pw, pki.CA)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBrokerSecurityKafkaCLIs drives the bundled broker, run as `tributary
// broker` with a SASL_SSL listener (JKS key store), with Kafka 4.4's own
// tools: kafka-configs creates a SCRAM user, kafka-acls adds, lists and
// removes ACLs, the console producer and consumer use a SASL_SSL client
// properties file; then a kill -9 shows credentials and ACLs survive.
func TestBrokerSecurityKafkaCLIs(t *testing.T) {
	t.Parallel()
	pki := harness.NewPKI(t)
	stores := pki.Stores(t)
	bin := harness.BuildTributary(t)
	if _, err := harness.FindJava(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	port := harness.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dir := filepath.Join(t.TempDir(), "broker")
	props := secureBrokerProps(pki, addr)
	props["ssl.keystore.type"], props["ssl.keystore.location"] = "JKS", stores.ServerJKS
	props["ssl.keystore.password"], props["ssl.key.password"] = pki.StorePassword, pki.StorePassword
	var overrides []string
	for _, k := range slices.Sorted(mapsKeys(props)) {
		overrides = append(overrides, k+"="+props[k])
	}
	start := func() *harness.BrokerProcess { return harness.StartBrokerProcess(t, bin, dir, port, overrides...) }
	proc := start()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	adminProps := clientProps(t, pki, secAdmin, secAdminPW)
	aliceProps := clientProps(t, pki, secAlice, secAlicePW)
	tool := func(stdin string, class string, args ...string) string {
		t.Helper()
		var in *strings.Reader
		if stdin != "" {
			in = strings.NewReader(stdin)
		}
		var out []byte
		var err error
		if in != nil {
			out, err = harness.JavaToolWithInput(ctx, in, class, args...)
		} else {
			out, err = harness.JavaTool(ctx, class, args...)
		}
		if errors.Is(err, harness.ErrUnavailable) {
			t.Skipf("skipping: %v", err)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s\n--- broker log ---\n%s", class, err, out, tailFile(proc.LogPath(), 30))
		}
		return string(out)
	}
	const configs, acls = "org.apache.kafka.tools.ConfigCommand", "org.apache.kafka.tools.AclCommand"

	// kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[…]' --entity-type users
	tool("", configs, "--bootstrap-server", addr, "--command-config", adminProps, "--alter",
		"--add-config", "SCRAM-SHA-512=[iterations=8192,password="+secAlicePW+"]", "--entity-type", "users", "--entity-name", secAlice)
	out := tool("", configs, "--bootstrap-server", addr, "--command-config", adminProps, "--describe", "--entity-type", "users", "--entity-name", secAlice)
	if !strings.Contains(out, "SCRAM-SHA-512=iterations=8192") {
		t.Fatalf("kafka-configs --describe users: %s", out)
	}

	// kafka-acls.sh --add: alice produces to and consumes from orders-*,
	// in group alice-group.
	tool("", acls, "--bootstrap-server", addr, "--command-config", adminProps, "--add", "--allow-principal", "User:"+secAlice,
		"--producer", "--topic", "orders-", "--resource-pattern-type", "prefixed")
	tool("", acls, "--bootstrap-server", addr, "--command-config", adminProps, "--add", "--allow-principal", "User:"+secAlice,
		"--consumer", "--topic", "orders-", "--resource-pattern-type", "prefixed", "--group", "alice-group")
	out = tool("", acls, "--bootstrap-server", addr, "--command-config", adminProps, "--list", "--principal", "User:"+secAlice)
	for _, want := range []string{"name=orders-, patternType=PREFIXED", "operation=WRITE", "operation=READ", "name=alice-group, patternType=PREFIXED"} {
		if !strings.Contains(out, want) {
			t.Fatalf("kafka-acls --list lacks %q:\n%s", want, out)
		}
	}

	admin := kadm.NewClient(scramClient(t, pki, addr, secAdmin, secAdminPW))
	for _, topic := range []string{"orders-1", "payments"} {
		if _, err := admin.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	tool("a\nb\nc\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", addr, "--topic", "orders-1", "--producer.config", aliceProps)
	consume := func() string {
		return tool("", "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", addr, "--topic", "orders-1", "--group", "alice-group",
			"--from-beginning", "--max-messages", "3", "--timeout-ms", "30000", "--command-config", aliceProps)
	}
	if got := strings.Fields(consume()); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("console consumer read %v", got)
	}
	// alice may not produce to payments.
	alice := scramClient(t, pki, addr, secAlice, secAlicePW)
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice producing to payments: %v", err)
	}

	// kill -9: alice's credential and ACLs survive.
	proc.Kill()
	proc = start()
	alice2 := scramClient(t, pki, addr, secAlice, secAlicePW)
	if err := alice2.ProduceSync(ctx, &kgo.Record{Topic: "orders-1", Value: []byte("d")}).FirstErr(); err != nil {
		t.Fatalf("alice after kill -9: %v\n%s", err, tailFile(proc.LogPath(), 20))
	}
	if err := alice2.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice producing to payments after kill -9: %v", err)
	}

	// kafka-acls.sh --remove, then alice cannot produce.
	tool("", acls, "--bootstrap-server", addr, "--command-config", adminProps, "--remove", "--force", "--allow-principal", "User:"+secAlice,
		"--producer", "--topic", "orders-", "--resource-pattern-type", "prefixed")
	out = tool("", acls, "--bootstrap-server", addr, "--command-config", adminProps, "--list", "--principal", "User:"+secAlice)
	if strings.Contains(out, "operation=WRITE") {
		t.Fatalf("WRITE still listed after --remove:\n%s", out)
	}
	if err := alice2.ProduceSync(ctx, &kgo.Record{Topic: "orders-1", Value: []byte("e")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice after her WRITE ACL was removed: %v", err)
	}
	// kafka-configs.sh --delete-config removes the user.
	tool("", configs, "--bootstrap-server", addr, "--command-config", adminProps, "--alter", "--delete-config", "SCRAM-SHA-512",
		"--entity-type", "users", "--entity-name", secAlice)
	if err := scramClient(t, pki, addr, secAlice, secAlicePW).Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("alice after her credential was deleted: %v", err)
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func tailFile(path string, n int) string {
	raw, _ := os.ReadFile(path)
	return tailOf(string(raw), n)
}

// TestBrokerSecurityConfluentKafka: librdkafka (confluent-kafka) produces
// and consumes over SASL_SSL with SCRAM-SHA-512, and a wrong password is
// refused.
func TestBrokerSecurityConfluentKafka(t *testing.T) {
	t.Parallel()
	py := harness.Python(t, "confluent_kafka")
	pki := harness.NewPKI(t)
	b := secureBroker(t, pki)
	ctx := testCtx(t)
	admin := kadm.NewClient(scramClient(t, pki, b.Bootstrap(), secAdmin, secAdminPW))
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "py-topic"); err != nil {
		t.Fatal(err)
	}
	script := `
import sys
from confluent_kafka import Producer, Consumer, KafkaException
bootstrap, ca, user, pw = sys.argv[1:5]
conf = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": user, "sasl.password": pw, "ssl.ca.location": ca}
if user == "bad":
    conf["sasl.username"] = "admin"
    p = Producer(dict(conf, **{"message.timeout.ms": 5000}))
    errs = []
    p.produce("py-topic", b"x", on_delivery=lambda e, m: errs.append(e))
    p.flush(10)
    print("failed" if errs and errs[0] is not None else "delivered")
    sys.exit(0)
p = Producer(conf)
for i in range(5):
    p.produce("py-topic", str(i).encode())
if p.flush(20) != 0:
    sys.exit("not flushed")
c = Consumer(dict(conf, **{"group.id": "py-group", "auto.offset.reset": "earliest"}))
c.subscribe(["py-topic"])
got = []
while len(got) < 5:
    m = c.poll(20)
    if m is None:
        sys.exit("timed out after %d records" % len(got))
    if m.error():
        raise KafkaException(m.error())
    got.append(m.value().decode())
c.close()
print(",".join(got))
`
	// The script's answer is its standard output; librdkafka logs to
	// standard error, and may still do so after the answer.
	run := func(user, pw string) string {
		cmd := exec.CommandContext(ctx, py, "-c", script, b.Bootstrap(), pki.CA, user, pw)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("confluent-kafka as %s: %v\n%s%s", user, err, out, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(secAdmin, secAdminPW); !strings.HasSuffix(got, "0,1,2,3,4") {
		t.Fatalf("confluent-kafka read %q", got)
	}
	if got := run("bad", "wrong"); !strings.HasSuffix(got, "failed") {
		t.Fatalf("confluent-kafka with a wrong password: %q", got)
	}
}

// aclScenario is the differential's ACL scenario, run as alice (allowed to
// produce to orders-*, denied orders-secret, in no group) and admin (a
// super user); it returns the error codes of each request.
func aclScenario(t *testing.T, ctx context.Context, alice, admin *kgo.Client) map[string][]int16 {
	t.Helper()
	codes := map[string][]int16{}
	// Requests go straight to the broker (no coordinator look-up, no
	// retries), so each answer is the broker's own.
	if err := alice.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	direct := func(cl *kgo.Client) *kgo.Broker { return cl.DiscoveredBrokers()[0] }
	req := func(name string, cl *kgo.Client, r kmsg.Request, pick func(kmsg.Response) []int16) {
		resp, err := direct(cl).Request(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		codes[name] = pick(resp)
	}
	for _, topic := range []string{"orders-1", "orders-secret", "payments"} {
		err := alice.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
		codes["produce "+topic] = []int16{errCode(err)}
	}
	md := kmsg.NewPtrMetadataRequest()
	for _, n := range []string{"orders-1", "orders-secret", "payments", "orders-missing"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(n)
		md.Topics = append(md.Topics, mt)
	}
	md.IncludeTopicAuthorizedOperations = true
	req("metadata", alice, md, func(resp kmsg.Response) []int16 {
		// By topic name: Kafka orders topics as its Scala sets do.
		byName := map[string][2]int16{}
		for _, t := range resp.(*kmsg.MetadataResponse).Topics {
			byName[deref(t.Topic)] = [2]int16{t.ErrorCode, int16(t.AuthorizedOperations)}
		}
		var out []int16
		for _, n := range []string{"orders-1", "orders-secret", "payments", "orders-missing"} {
			out = append(out, byName[n][0], byName[n][1])
		}
		return out
	})
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"alice-group"}
	req("find coordinator", alice, fc, func(resp kmsg.Response) []int16 {
		return []int16{resp.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode}
	})
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.ProtocolType, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = "alice-group", "consumer", 10000, 10000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
	req("join group", alice, jg, func(resp kmsg.Response) []int16 { return []int16{resp.(*kmsg.JoinGroupResponse).ErrorCode} })
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "alice-group", -1
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = "orders-1"
	oct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}
	oc.Topics = append(oc.Topics, oct)
	req("offset commit", alice, oc, func(resp kmsg.Response) []int16 {
		return []int16{resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode}
	})
	ct := kmsg.NewPtrCreateTopicsRequest()
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "orders-new", 1, 1
	ct.Topics, ct.TimeoutMillis = append(ct.Topics, ctt), 5000
	req("create topics", alice, ct, func(resp kmsg.Response) []int16 {
		return []int16{resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode}
	})
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TopicNames, dt.TimeoutMillis = []string{"orders-1"}, 5000
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("orders-1")}}
	req("delete topics", alice, dt, func(resp kmsg.Response) []int16 {
		return []int16{resp.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode}
	})
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "orders-1"}}
	req("describe configs", alice, dc, func(resp kmsg.Response) []int16 {
		return []int16{resp.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode}
	})
	lo := kmsg.NewPtrListOffsetsRequest()
	lot := kmsg.NewListOffsetsRequestTopic()
	lot.Topic = "orders-1"
	lot.Partitions = []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1, CurrentLeaderEpoch: -1}}
	lo.Topics = append(lo.Topics, lot)
	req("list offsets", alice, lo, func(resp kmsg.Response) []int16 {
		return []int16{resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode}
	})
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionTimeoutMillis = 60000
	req("init producer id", alice, ip, func(resp kmsg.Response) []int16 { return []int16{resp.(*kmsg.InitProducerIDResponse).ErrorCode} })
	ipt := kmsg.NewPtrInitProducerIDRequest()
	ipt.TransactionalID, ipt.TransactionTimeoutMillis = kmsg.StringPtr("alice-txn"), 60000
	req("init producer id txn", alice, ipt, func(resp kmsg.Response) []int16 { return []int16{resp.(*kmsg.InitProducerIDResponse).ErrorCode} })
	da := kmsg.NewPtrDescribeACLsRequest()
	da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	req("describe acls (alice)", alice, da, func(resp kmsg.Response) []int16 { return []int16{resp.(*kmsg.DescribeACLsResponse).ErrorCode} })
	req("describe acls (admin)", admin, da, func(resp kmsg.Response) []int16 {
		r := resp.(*kmsg.DescribeACLsResponse)
		n := 0
		for _, res := range r.Resources {
			n += len(res.ACLs)
		}
		return []int16{r.ErrorCode, int16(n)}
	})
	ds := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	// Users named: Apache Kafka 4.4 never answers an unauthorized request
	// with null users (a NullPointerException in getErrorResponse).
	ds.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: secAlice}}
	req("describe scram (alice)", alice, ds, func(resp kmsg.Response) []int16 {
		r := resp.(*kmsg.DescribeUserSCRAMCredentialsResponse)
		out := []int16{r.ErrorCode}
		for _, res := range r.Results {
			out = append(out, res.ErrorCode)
		}
		return out
	})
	lg := kmsg.NewPtrListGroupsRequest()
	req("list groups (alice)", alice, lg, func(resp kmsg.Response) []int16 {
		r := resp.(*kmsg.ListGroupsResponse)
		return []int16{r.ErrorCode, int16(len(r.Groups))}
	})
	return codes
}

// errCode is a request error's Kafka code: 0 for none, -1 for an error
// that is not Kafka's.
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return -1
}

// TestBrokerACLsMatchKafka runs the same ACL scenario and the same SASL
// failures against Apache Kafka 4.4 and the bundled broker, both secured
// the same way (SASL_SSL listener, PLAIN and SCRAM-SHA-512, the
// StandardAuthorizer, admin the super user), and compares the error codes
// of every request and the failures' texts.
func TestBrokerACLsMatchKafka(t *testing.T) {
	t.Parallel()
	pki := harness.NewPKI(t)
	k := harness.ApacheKafka(t, harness.WithSecurity(harness.KafkaSecurity{PKI: pki,
		PlainUsers: map[string]string{secAdmin: secAdminPW, secAlice: secAlicePW},
		ScramUsers: map[string]string{secAdmin: secAdminPW}}),
		harness.WithServerProperties(map[string]string{
			"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			// The harness and the controller connect as ANONYMOUS over PLAINTEXT.
			"super.users": "User:admin;User:ANONYMOUS",
		}))
	b := secureBroker(t, pki)
	ctx := testCtx(t)
	type side struct {
		name string
		addr string
	}
	results := map[string]map[string][]int16{}
	failures := map[string][]string{}
	for _, s := range []side{{"kafka", k.Listener(harness.ListenerSASLSSL)}, {"tributary", b.Bootstrap()}} {
		admin := scramClient(t, pki, s.addr, secAdmin, secAdminPW)
		adm := kadm.NewClient(admin)
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: secAlice, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: secAlicePW}})
		if err != nil || res.Error() != nil {
			t.Fatalf("%s: alter scram: %v %v", s.name, err, res.Error())
		}
		for _, topic := range []string{"orders-1", "orders-secret", "payments"} {
			if r, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
				t.Fatalf("%s: create %s: %v %v", s.name, topic, err, r.Err)
			}
		}
		for _, a := range []*kadm.ACLBuilder{
			kadm.NewACLs().Allow("User:alice").Topics("orders-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite),
			kadm.NewACLs().Deny("User:alice").Topics("orders-secret").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite),
		} {
			rs, err := adm.CreateACLs(ctx, a)
			if err != nil || rs[0].Err != nil {
				t.Fatalf("%s: create acls: %v %+v", s.name, err, rs)
			}
		}
		// ACLs reach Kafka's brokers through the metadata log: wait.
		alice := scramClient(t, pki, s.addr, secAlice, secAlicePW)
		deadline := time.Now().Add(20 * time.Second)
		for alice.ProduceSync(ctx, &kgo.Record{Topic: "orders-1", Value: []byte("warm")}).FirstErr() != nil && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		results[s.name] = aclScenario(t, ctx, alice, admin)

		// SASL failures: their codes and texts.
		for _, bad := range []kgo.Opt{
			kgo.SASL(scram.Auth{User: secAlice, Pass: "wrong"}.AsSha512Mechanism()),
			kgo.SASL(scram.Auth{User: "nobody", Pass: "wrong"}.AsSha512Mechanism()),
			kgo.SASL(plain.Auth{User: secAlice, Pass: "wrong"}.AsMechanism()),
			kgo.SASL(scram.Auth{User: secAlice, Pass: secAlicePW}.AsSha256Mechanism()),
		} {
			cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr), kgo.DialTLSConfig(pkiTLS(t, pki)), bad, kgo.RequestRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			err = cl.Ping(ctx)
			cl.Close()
			failures[s.name] = append(failures[s.name], saslFailure(err))
		}
	}
	for name, want := range results["kafka"] {
		if got := results["tributary"][name]; !slices.Equal(got, want) {
			t.Errorf("%s: tributary answered %v, Apache Kafka %v", name, got, want)
		}
	}
	t.Logf("Apache Kafka's codes: %v", results["kafka"])
	if !slices.Equal(failures["kafka"], failures["tributary"]) {
		t.Errorf("SASL failures differ:\n tributary: %q\n kafka:     %q", failures["tributary"], failures["kafka"])
	}
}

// saslFailure is an authentication error's code and Kafka's text, without
// franz-go's wrapping.
func saslFailure(err error) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		if err == nil {
			return "no error"
		}
		return "not a Kafka error"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ke.Message+": "); i >= 0 {
		msg = msg[i+len(ke.Message)+2:]
	}
	return ke.Message + ": " + msg
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestWorkerClusterOnSecuredBroker: two Tributary workers, each with its
// own SCRAM principal, form a cluster on the bundled broker over SASL_SSL
// with ACLs; each connector's producer logs in as its own principal
// (producer.override.sasl.jaas.config), and the ACLs confine it to its
// topics: conn-a writes to a-data, conn-b is refused a-data.
func TestWorkerClusterOnSecuredBroker(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	pki := harness.NewPKI(t)
	b := secureBroker(t, pki)
	ctx := testCtx(t)
	adm := kadm.NewClient(scramClient(t, pki, b.Bootstrap(), secAdmin, secAdminPW))
	var ups []kadm.UpsertSCRAM
	for _, u := range []string{"worker-1", "worker-2", "conn-a", "conn-b"} {
		ups = append(ups, kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: u + "-secret"})
	}
	if res, err := adm.AlterUserSCRAMs(ctx, nil, ups); err != nil || res.Error() != nil {
		t.Fatalf("scram users: %v %v", err, res.Error())
	}
	for _, topic := range []string{"a-data", "b-data"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []*kadm.ACLBuilder{
		// The workers: their internal topics and group.
		kadm.NewACLs().Allow("User:worker-1", "User:worker-2").Topics("sec-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpAll),
		kadm.NewACLs().Allow("User:worker-1", "User:worker-2").Groups("sec").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpAll),
		// Each connector's principal: its own topics.
		kadm.NewACLs().Allow("User:conn-a").Topics("a-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:conn-b").Topics("b-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite),
	} {
		if rs, err := adm.CreateACLs(ctx, a); err != nil || rs[0].Err != nil {
			t.Fatalf("acls: %v %+v", err, rs)
		}
	}
	jaas := func(user string) string {
		return fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s-secret";`, user, user)
	}
	var workers []*harness.WorkerProcess
	for i := 1; i <= 2; i++ {
		user := "worker-" + strconv.Itoa(i)
		extra := map[string]string{}
		for _, prefix := range []string{"", "producer.", "consumer.", "admin."} {
			extra[prefix+"security.protocol"] = "SASL_SSL"
			extra[prefix+"sasl.mechanism"] = "SCRAM-SHA-512"
			extra[prefix+"sasl.jaas.config"] = jaas(user)
			extra[prefix+"ssl.truststore.type"] = "PEM"
			extra[prefix+"ssl.truststore.location"] = pki.CA
		}
		props := harness.WorkerProps(t, b.Bootstrap(), "sec", extra)
		workers = append(workers, harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), user), props))
	}
	r := rest{t: t, url: workers[0].URL()}
	datagen := func(topic, user string) map[string]string {
		return map[string]string{"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "kafka.topic": topic,
			"records.per.sec": "50", "payload.bytes": "16", "tasks.max": "1",
			"producer.override.sasl.jaas.config": jaas(user)}
	}
	r.must("PUT", "/connectors/src-a/config", datagen("a-data", "conn-a"), 201)
	r.must("PUT", "/connectors/src-b/config", datagen("a-data", "conn-b"), 201)
	r.waitState("src-a", "RUNNING", 1)
	// conn-a's records arrive in a-data.
	deadline := time.Now().Add(30 * time.Second)
	for {
		offs, err := adm.ListEndOffsets(ctx, "a-data")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("a-data", 0); ok && o.Offset > 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("conn-a's records did not reach a-data: %+v", offs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// conn-b may not write a-data: its task fails with the broker's answer.
	deadline = time.Now().Add(45 * time.Second)
	for {
		s, _ := r.status("src-b")
		if len(s.Tasks) == 1 && s.Tasks[0].State == "FAILED" {
			if !strings.Contains(s.Tasks[0].Trace, "TOPIC_AUTHORIZATION_FAILED") && !strings.Contains(s.Tasks[0].Trace, "TopicAuthorization") &&
				!strings.Contains(s.Tasks[0].Trace, "not authorized") {
				t.Errorf("src-b failed for another reason: %s", s.Tasks[0].Trace)
			}
			t.Logf("src-b failed: %s", firstLine(s.Tasks[0].Trace))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("src-b (conn-b writing a-data) did not fail: %+v", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBrokerSecurityKcat: kcat (Debian's librdkafka 2.0.2, whose SCRAM
// login Kafka 4.4 refuses too, so TLS and PLAIN only) produces and
// consumes over SASL_SSL with PLAIN; a wrong password gets no metadata.
func TestBrokerSecurityKcat(t *testing.T) {
	t.Parallel()
	requireKcat(t)
	pki := harness.NewPKI(t)
	b := secureBroker(t, pki)
	ctx := testCtx(t)
	if _, err := kadm.NewClient(scramClient(t, pki, b.Bootstrap(), secAdmin, secAdminPW)).CreateTopic(ctx, 1, 1, nil, "kcat-topic"); err != nil {
		t.Fatal(err)
	}
	sec := func(pw string) []string {
		return []string{"-b", b.Bootstrap(), "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=PLAIN",
			"-X", "sasl.username=" + secAdmin, "-X", "sasl.password=" + pw, "-X", "ssl.ca.location=" + pki.CA}
	}
	kcat(ctx, t, "k1:one\nk2:two\n", append(sec(secAdminPW), "-P", "-t", "kcat-topic", "-K", ":")...)
	out := kcat(ctx, t, "", append(sec(secAdminPW), "-C", "-t", "kcat-topic", "-o", "beginning", "-c", "2", "-e", "-f", "%k=%s\n")...)
	if got := strings.Fields(out); strings.Join(got, ",") != "k1=one,k2=two" {
		t.Fatalf("kcat read %q", out)
	}
	cmd := exec.CommandContext(ctx, "kcat", append(sec("wrong"), "-L", "-m", "5")...)
	if outb, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(outb), "Invalid username or password") {
		t.Fatalf("kcat with a wrong password: %v\n%s", err, outb)
	}
}

// TestBrokerSecurityKill9: SCRAM credentials and ACLs created through the
// admin API are acknowledged only once durable: a kill -9 right after the
// answers loses neither (franz-go clients only, so it runs without java).
func TestBrokerSecurityKill9(t *testing.T) {
	t.Parallel()
	pki := harness.NewPKI(t)
	bin := harness.BuildTributary(t)
	port := harness.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dir := filepath.Join(t.TempDir(), "broker")
	props := secureBrokerProps(pki, addr)
	var overrides []string
	for _, k := range slices.Sorted(mapsKeys(props)) {
		overrides = append(overrides, k+"="+props[k])
	}
	proc := harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	ctx := testCtx(t)
	adm := kadm.NewClient(scramClient(t, pki, addr, secAdmin, secAdminPW))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders-1"); err != nil {
		t.Fatal(err)
	}
	const users = 20
	var ups []kadm.UpsertSCRAM
	for i := range users {
		ups = append(ups, kadm.UpsertSCRAM{User: "u" + strconv.Itoa(i), Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "pw" + strconv.Itoa(i)})
	}
	if res, err := adm.AlterUserSCRAMs(ctx, nil, ups); err != nil || res.Error() != nil {
		t.Fatalf("scram: %v %v", err, res.Error())
	}
	for i := range users {
		a := kadm.NewACLs().Allow("User:u" + strconv.Itoa(i)).Topics("orders-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite)
		if rs, err := adm.CreateACLs(ctx, a); err != nil || rs[0].Err != nil {
			t.Fatalf("acl %d: %v %+v", i, err, rs)
		}
	}
	proc.Kill() // at once after the last answer
	proc = harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	for i := range users {
		cl := scramClient(t, pki, addr, "u"+strconv.Itoa(i), "pw"+strconv.Itoa(i))
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders-1", Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("u%d after kill -9: %v\n%s", i, err, tailFile(proc.LogPath(), 20))
		}
		cl.Close()
	}
	desc, err := kadm.NewClient(scramClient(t, pki, addr, secAdmin, secAdminPW)).DescribeUserSCRAMs(ctx)
	if err != nil || len(desc) != users+1 {
		t.Fatalf("after kill -9: %d SCRAM users (want %d): %v", len(desc), users+1, err)
	}
}
