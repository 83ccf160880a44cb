package kafkarest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseCreateACL(t *testing.T) {
	good := `{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`
	c, err := parseCreateACL([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.ResourceType != kmsg.ACLResourceTypeTopic || c.ResourceName != "orders" || c.ResourcePatternType != kmsg.ACLResourcePatternTypeLiteral ||
		c.Principal != "User:alice" || c.Host != "*" || c.Operation != kmsg.ACLOperationRead || c.PermissionType != kmsg.ACLPermissionTypeAllow {
		t.Fatalf("parsed %+v", c)
	}
	for _, tc := range []struct {
		body   string
		status int
		field  string
	}{
		{`{"resource_name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`, 422, "resource_type"},
		{strings.Replace(good, `"READ"`, `"READS"`, 1), 400, "operation"},
		{strings.Replace(good, `"READ"`, `"ANY"`, 1), 400, "operation"},
		{strings.Replace(good, `"LITERAL"`, `"MATCH"`, 1), 400, "pattern_type"},
		{strings.Replace(good, `"TOPIC"`, `"ANY"`, 1), 400, "resource_type"},
		{strings.Replace(good, `"ALLOW"`, `"UNKNOWN"`, 1), 400, "permission"},
		{strings.Replace(good, `"*"`, `7`, 1), 422, "host"},
		{strings.Replace(good, `"User:alice"`, `""`, 1), 422, "principal"},
		{`{`, 400, ""},
	} {
		_, err := parseCreateACL([]byte(tc.body))
		if err == nil || err.Status != tc.status || !strings.Contains(err.Message, tc.field) {
			t.Errorf("%s: got %v, want %d naming %q", tc.body, err, tc.status, tc.field)
		}
	}
}

func TestParseACLFilter(t *testing.T) {
	f, err := parseACLFilter(url.Values{"resource_type": {"topic"}, "principal": {"User:bob"}, "operation": {"describe_configs"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.ResourceType != kmsg.ACLResourceTypeTopic || f.Pattern != kmsg.ACLResourcePatternTypeAny || f.ResourceName != nil ||
		f.Principal == nil || *f.Principal != "User:bob" || f.Operation != kmsg.ACLOperationDescribeConfigs || f.Permission != kmsg.ACLPermissionTypeAny {
		t.Fatalf("parsed %+v", f)
	}
	if _, err := parseACLFilter(url.Values{"permission": {"maybe"}}); err == nil || err.Status != http.StatusBadRequest || !strings.Contains(err.Message, "permission") {
		t.Fatalf("bad permission: %v", err)
	}
}

func FuzzParseCreateACL(f *testing.F) {
	f.Add(`{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`)
	f.Add(`{"resource_type":null}`)
	f.Fuzz(func(t *testing.T, body string) {
		c, err := parseCreateACL([]byte(body))
		if err != nil {
			if err.Status != http.StatusBadRequest && err.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d", err.Status)
			}
			return
		}
		if c.ResourceType <= kmsg.ACLResourceTypeAny || c.Operation <= kmsg.ACLOperationAny || c.PermissionType <= kmsg.ACLPermissionTypeAny ||
			c.ResourcePatternType <= kmsg.ACLResourcePatternTypeMatch || c.Principal == "" || c.Host == "" || c.ResourceName == "" {
			t.Fatalf("accepted %+v", c)
		}
	})
}

func TestParseCreateACLBatch(t *testing.T) {
	one := `{"resource_type":"GROUP","resource_name":"g","pattern_type":"PREFIXED","principal":"User:a","host":"*","operation":"READ","permission":"ALLOW"}`
	cs, err := parseCreateACLBatch([]byte(`{"data":[` + one + `,` + one + `]}`))
	if err != nil || len(cs) != 2 || cs[1].ResourceType != kmsg.ACLResourceTypeGroup {
		t.Fatalf("%v %+v", err, cs)
	}
	for _, bad := range []string{`{"data":[]}`, `{}`, `{"data":[` + one + `,{"resource_type":"TOPIC"}]}`} {
		if _, err := parseCreateACLBatch([]byte(bad)); err == nil || !strings.Contains(err.Message, "data") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if _, err := parseCreateACLBatch([]byte(`{"data":[` + one + `,{"resource_type":"TOPIC"}]}`)); !strings.Contains(err.Message, "data[1]: resource_name") {
		t.Errorf("the error does not name the entry: %v", err)
	}
}
