package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// authorizerBroker starts a bundled broker with the StandardAuthorizer on
// a PLAINTEXT listener, whose clients (User:ANONYMOUS) are super users:
// they may do anything, ACLs included.
func authorizerBroker(t *testing.T) *harness.Broker {
	t.Helper()
	return harness.TributaryBroker(t, func(c *broker.Config) {
		cfg, warnings, err := broker.FromProperties(properties.Properties(map[string]string{
			"listeners":             "PLAINTEXT://127.0.0.1:0",
			"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users":           "User:ANONYMOUS",
		}))
		if err != nil || len(warnings) > 0 {
			t.Fatalf("broker config: %v %v", err, warnings)
		}
		cfg.LogDir, cfg.Logger, cfg.GroupInitialRebalanceDelay = c.LogDir, c.Logger, 0
		*c = cfg
	})
}

// TestRESTProxyACLs creates, lists and deletes ACLs through the proxy's v3
// API against the bundled broker with the StandardAuthorizer, and checks
// each step with kadm.
func TestRESTProxyACLs(t *testing.T) {
	t.Parallel()
	b := authorizerBroker(t)
	base := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{})
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	kafkaACLs := func() []string {
		t.Helper()
		res, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range res {
			if d.Err != nil {
				t.Fatal(d.Err)
			}
			for _, a := range d.Described {
				out = append(out, strings.Join([]string{a.Type.String(), a.Name, a.Pattern.String(), a.Principal, a.Host, a.Operation.String(), a.Permission.String()}, " "))
			}
		}
		return out
	}

	clusters := curl(t, http.MethodGet, base+"/v3/clusters", "", "", "")
	id, _ := jsonField(t, clusters.body, "data", "0", "cluster_id").(string)
	acls := base + "/v3/clusters/" + id + "/acls"

	create := func(body string) exchange {
		return curl(t, http.MethodPost, acls, "application/json", "", body)
	}
	e := create(`{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`)
	if e.status != http.StatusCreated || !strings.Contains(e.header.Get("Location"), "resource_name=orders") {
		t.Fatalf("create: %d %s %v", e.status, e.body, e.header)
	}
	e = create(`{"resource_type":"TOPIC","resource_name":"pay-","pattern_type":"PREFIXED","principal":"User:bob","host":"*","operation":"WRITE","permission":"DENY"}`)
	if e.status != http.StatusCreated {
		t.Fatalf("create: %d %s", e.status, e.body)
	}
	// Bad bodies are refused naming the field, and create nothing.
	for field, bad := range map[string]string{
		"operation":     `{"resource_type":"TOPIC","resource_name":"x","pattern_type":"LITERAL","principal":"User:eve","host":"*","operation":"READS","permission":"ALLOW"}`,
		"principal":     `{"resource_type":"TOPIC","resource_name":"x","pattern_type":"LITERAL","host":"*","operation":"READ","permission":"ALLOW"}`,
		"resource_type": `{"resource_type":"ANY","resource_name":"x","pattern_type":"LITERAL","principal":"User:eve","host":"*","operation":"READ","permission":"ALLOW"}`,
	} {
		e := create(bad)
		var msg struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(e.body, &msg)
		if (e.status != 400 && e.status != 422) || msg.Code != e.status || !strings.Contains(msg.Message, field) {
			t.Errorf("bad body %s: %d %s", bad, e.status, e.body)
		}
	}
	want := []string{"TOPIC orders LITERAL User:alice * READ ALLOW", "TOPIC pay- PREFIXED User:bob * WRITE DENY"}
	if got := kafkaACLs(); !sameSet(got, want) {
		t.Fatalf("kadm lists %v, want %v", got, want)
	}

	// The list, whole and filtered.
	all := curl(t, http.MethodGet, acls, "", "", "")
	if all.status != http.StatusOK || jsonField(t, all.body, "kind") != "KafkaAclList" {
		t.Fatalf("list: %d %s", all.status, all.body)
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(all.body, &list); err != nil || len(list.Data) != 2 {
		t.Fatalf("list: %v %s", err, all.body)
	}
	if a := list.Data[0]; a["resource_name"] != "orders" || a["operation"] != "READ" || a["permission"] != "ALLOW" || a["pattern_type"] != "LITERAL" || a["cluster_id"] != id {
		t.Fatalf("first ACL: %v", a)
	}
	filtered := curl(t, http.MethodGet, acls+"?principal=User:bob&operation=write", "", "", "")
	if err := json.Unmarshal(filtered.body, &list); err != nil || len(list.Data) != 1 || list.Data[0]["resource_name"] != "pay-" {
		t.Fatalf("filtered list: %d %s", filtered.status, filtered.body)
	}
	if e := curl(t, http.MethodGet, acls+"?operation=sing", "", "", ""); e.status != http.StatusBadRequest {
		t.Fatalf("bad filter: %d %s", e.status, e.body)
	}

	// Delete by filter: the answer names what was deleted.
	del := curl(t, http.MethodDelete, acls+"?resource_type=TOPIC&resource_name=orders&pattern_type=LITERAL", "", "", "")
	if err := json.Unmarshal(del.body, &list); err != nil || del.status != http.StatusOK || len(list.Data) != 1 || list.Data[0]["principal"] != "User:alice" {
		t.Fatalf("delete: %d %s", del.status, del.body)
	}
	if got := kafkaACLs(); !sameSet(got, want[1:]) {
		t.Fatalf("after delete kadm lists %v, want %v", got, want[1:])
	}
	del = curl(t, http.MethodDelete, acls+"?resource_type=TOPIC&resource_name=orders", "", "", "")
	if err := json.Unmarshal(del.body, &list); err != nil || del.status != http.StatusOK || len(list.Data) != 0 {
		t.Fatalf("delete again: %d %s", del.status, del.body)
	}

	// A batch: all created, or (one entry bad) none.
	g := func(name string) string {
		return `{"resource_type":"GROUP","resource_name":"` + name + `","pattern_type":"LITERAL","principal":"User:carol","host":"*","operation":"READ","permission":"ALLOW"}`
	}
	if e := curl(t, http.MethodPost, acls+":batch", "application/json", "", `{"data":[`+g("g1")+`,`+g("g2")+`]}`); e.status != http.StatusNoContent {
		t.Fatalf("batch: %d %s", e.status, e.body)
	}
	want = []string{want[1], "GROUP g1 LITERAL User:carol * READ ALLOW", "GROUP g2 LITERAL User:carol * READ ALLOW"}
	if got := kafkaACLs(); !sameSet(got, want) {
		t.Fatalf("after the batch kadm lists %v, want %v", got, want)
	}
	bad := curl(t, http.MethodPost, acls+":batch", "application/json", "", `{"data":[`+g("g3")+`,`+strings.Replace(g("g4"), `"READ"`, `"NAP"`, 1)+`]}`)
	if bad.status != http.StatusBadRequest || !strings.Contains(string(bad.body), "data[1]: operation") {
		t.Fatalf("bad batch: %d %s", bad.status, bad.body)
	}
	if got := kafkaACLs(); !sameSet(got, want) {
		t.Fatalf("after a bad batch kadm lists %v, want %v", got, want)
	}
}

// TestRESTProxyACLsSecurityDisabled: without an authorizer the ACL
// endpoints answer Kafka's SecurityDisabled as Confluent's 400.
func TestRESTProxyACLsSecurityDisabled(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	base := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{})
	id, _ := jsonField(t, curl(t, http.MethodGet, base+"/v3/clusters", "", "", "").body, "data", "0", "cluster_id").(string)
	acls := base + "/v3/clusters/" + id + "/acls"
	for _, e := range []exchange{
		curl(t, http.MethodGet, acls, "", "", ""),
		curl(t, http.MethodPost, acls, "application/json", "", `{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`),
		curl(t, http.MethodDelete, acls+"?resource_type=TOPIC", "", "", ""),
	} {
		if e.status != http.StatusBadRequest || jsonField(t, e.body, "error_code") != 400.0 {
			t.Errorf("without an authorizer: %d %s", e.status, e.body)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		if m[s]--; m[s] < 0 {
			return false
		}
	}
	return true
}
