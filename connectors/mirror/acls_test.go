package mirror

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func aclString(a kadm.DescribedACL) string {
	return fmt.Sprintf("%s:%s:%s %s@%s %s %s", a.Type, a.Pattern, a.Name, a.Principal, a.Host, a.Permission, a.Operation)
}

func topicACL(name string, pattern kadm.ACLPattern, principal, host string, perm kmsg.ACLPermissionType, op kadm.ACLOperation) kadm.DescribedACL {
	return kadm.DescribedACL{Type: kmsg.ACLResourceTypeTopic, Name: name, Pattern: pattern, Principal: principal, Host: host, Permission: perm, Operation: op}
}

func TestRemoteTopicACLs(t *testing.T) {
	const (
		lit   = kadm.ACLPatternLiteral
		allow = kmsg.ACLPermissionTypeAllow
		deny  = kmsg.ACLPermissionTypeDeny
	)
	cfg := &SourceConfig{CommonConfig: CommonConfig{SourceAlias: "A", TargetAlias: "B",
		Topics: SplitList(DefaultTopics), TopicsExclude: SplitList(DefaultTopicsExclude)}, HeartbeatsReplicate: true}
	src := []kadm.DescribedACL{
		topicACL("orders", lit, "User:alice", "*", allow, kadm.OpRead),
		topicACL("orders", lit, "User:alice", "*", allow, kadm.OpWrite),    // the mirror alone writes remote topics
		topicACL("orders", lit, "User:bob", "10.0.0.1", allow, kadm.OpAll), // ALL becomes READ, the host kept
		topicACL("orders", lit, "User:eve", "*", deny, kadm.OpWrite),       // a DENY WRITE is kept
		topicACL("orders", lit, "User:eve", "*", deny, kadm.OpAll),         // so is a DENY ALL
		topicACL("orders", lit, "User:carol", "*", allow, kadm.OpDescribe), // other operations as they are
		topicACL("orders", kadm.ACLPatternPrefixed, "User:carol", "*", allow, kadm.OpRead),
		topicACL("skip.replica", lit, "User:alice", "*", allow, kadm.OpRead), // topics.exclude
		topicACL("__consumer_offsets", lit, "User:alice", "*", allow, kadm.OpRead),
		topicACL("B.orders", lit, "User:alice", "*", allow, kadm.OpRead), // came from B: a cycle
		topicACL("C.orders", lit, "User:dan", "*", allow, kadm.OpRead),   // came from C: goes on as A.C.orders
		topicACL("heartbeats", lit, "User:dan", "*", allow, kadm.OpRead),
		topicACL("*", lit, "User:dan", "*", allow, kadm.OpRead), // Kafka's LITERAL filter lets the wildcard through
		{Type: kmsg.ACLResourceTypeGroup, Name: "orders", Pattern: lit, Principal: "User:alice", Host: "*", Permission: allow, Operation: kadm.OpRead},
	}
	want := []kadm.DescribedACL{
		topicACL("A.orders", lit, "User:alice", "*", allow, kadm.OpRead),
		topicACL("A.orders", lit, "User:bob", "10.0.0.1", allow, kadm.OpRead),
		topicACL("A.orders", lit, "User:eve", "*", deny, kadm.OpWrite),
		topicACL("A.orders", lit, "User:eve", "*", deny, kadm.OpAll),
		topicACL("A.orders", lit, "User:carol", "*", allow, kadm.OpDescribe),
		topicACL("A.C.orders", lit, "User:dan", "*", allow, kadm.OpRead),
		topicACL("A.heartbeats", lit, "User:dan", "*", allow, kadm.OpRead),
		topicACL("A.*", lit, "User:dan", "*", allow, kadm.OpRead),
	}
	got := cfg.remoteTopicACLs(cfg.Policy(), cfg.TopicFilter(), src)
	if !slices.Equal(got, want) {
		for _, a := range got {
			t.Logf("got  %s", aclString(a))
		}
		for _, a := range want {
			t.Logf("want %s", aclString(a))
		}
		t.Fatal("remote topic ACLs differ")
	}

	// With the Identity policy the names stay; the filter still applies.
	cfg.PolicyClass = IdentityPolicyClass
	cfg.Topics = []string{"orders"}
	cfg.HeartbeatsReplicate = false
	got = cfg.remoteTopicACLs(cfg.Policy(), cfg.TopicFilter(), src[:3])
	want = []kadm.DescribedACL{
		topicACL("orders", lit, "User:alice", "*", allow, kadm.OpRead),
		topicACL("orders", lit, "User:bob", "10.0.0.1", allow, kadm.OpRead),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("identity policy: got %v, want %v", got, want)
	}
	if got := cfg.remoteTopicACLs(cfg.Policy(), cfg.TopicFilter(), src[7:8]); len(got) != 0 {
		t.Errorf("topic outside topics= replicated: %v", got)
	}
}
