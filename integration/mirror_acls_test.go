package integration

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/integration/harness"
)

// topicACLsOf lists the topic ACLs of a cluster as sorted strings
// "pattern:name principal@host permission operation".
func topicACLsOf(t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	res, err := adm.DescribeACLs(testCtx(t), kadm.NewACLs().Topics().ResourcePatternType(kadm.ACLPatternAny).
		Operations().Allow().AllowHosts().Deny().DenyHosts())
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		t.Fatalf("describe topic ACLs: %v", err)
	}
	var out []string
	for _, r := range res {
		for _, a := range r.Described {
			out = append(out, fmt.Sprintf("%s:%s %s@%s %s %s", a.Pattern, a.Name, a.Principal, a.Host, a.Permission, a.Operation))
		}
	}
	slices.Sort(out)
	return out
}

// createTopicACL creates one topic ACL.
func createTopicACL(t *testing.T, adm *kadm.Client, topic string, pattern kadm.ACLPattern, principal, host string, allow bool, op kadm.ACLOperation) {
	t.Helper()
	b := kadm.NewACLs().Topics(topic).ResourcePatternType(pattern).Operations(op)
	if allow {
		b.Allow(principal).AllowHosts(host)
	} else {
		b.Deny(principal).DenyHosts(host)
	}
	res, err := adm.CreateACLs(testCtx(t), b)
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		t.Fatalf("create ACL %s %s %s: %v", topic, principal, op, err)
	}
}

// TestMirrorTopicACLs mirrors a bundled broker with the StandardAuthorizer
// (A) to another (B) with sync.topic.acls.interval.seconds=1: the LITERAL
// topic ACLs of the replicated topics appear on B on the remote topics,
// ALLOW ALL turned into READ, DENY entries as they are; ALLOW WRITE,
// PREFIXED patterns, excluded topics and group ACLs stay behind. An ACL
// added on A later follows within a sync or two, and the repeated syncs
// neither fail nor add anything.
func TestMirrorTopicACLs(t *testing.T) {
	t.Parallel()
	a := authorizerBroker(t).Bootstrap()
	b := authorizerBroker(t).Bootstrap()
	src := mirrorClient(t, a)
	mirrorCreateTopic(t, src, "orders", 2, nil)
	mirrorCreateTopic(t, src, "skip.replica", 1, nil)
	srcAdm := kadm.NewClient(src)
	lit := kadm.ACLPatternLiteral
	createTopicACL(t, srcAdm, "orders", lit, "User:alice", "*", true, kadm.OpRead)
	createTopicACL(t, srcAdm, "orders", lit, "User:alice", "*", true, kadm.OpWrite)
	createTopicACL(t, srcAdm, "orders", lit, "User:bob", "10.0.0.1", true, kadm.OpAll)
	createTopicACL(t, srcAdm, "orders", lit, "User:eve", "*", false, kadm.OpWrite)
	createTopicACL(t, srcAdm, "orders", lit, "User:eve", "*", false, kadm.OpAll)
	createTopicACL(t, srcAdm, "orders", lit, "User:carol", "*", true, kadm.OpDescribe)
	createTopicACL(t, srcAdm, "ord", kadm.ACLPatternPrefixed, "User:carol", "*", true, kadm.OpRead)
	createTopicACL(t, srcAdm, "skip.replica", lit, "User:alice", "*", true, kadm.OpRead)
	grp, err := srcAdm.CreateACLs(testCtx(t), kadm.NewACLs().Groups("app").Operations(kadm.OpRead).Allow("User:alice"))
	if err != nil || grp[0].Err != nil {
		t.Fatalf("group ACL: %v %v", err, grp)
	}
	recs := mirrorProduce(t, src, "orders", 2, 0, 100)

	r, w, _ := mirrorWorker(t, b, "mirror-acls")
	startMirror(r, "acls", mirrorConfigs("A", a, "B", b, map[string]string{"sync.topic.acls.interval.seconds": "1"}))
	r.waitState("acls-source", "RUNNING", 2)

	tgtAdm := kadmClient(t, b)
	want := []string{
		"LITERAL:A.orders User:alice@* ALLOW READ",
		"LITERAL:A.orders User:bob@10.0.0.1 ALLOW READ",
		"LITERAL:A.orders User:carol@* ALLOW DESCRIBE",
		"LITERAL:A.orders User:eve@* DENY ALL",
		"LITERAL:A.orders User:eve@* DENY WRITE",
	}
	slices.Sort(want)
	mirrorWait(t, 30*time.Second, "topic ACLs on B", func() string {
		if got := topicACLsOf(t, tgtAdm); !slices.Equal(got, want) {
			return fmt.Sprintf("B has %q, want %q", got, want)
		}
		return ""
	})
	if got := readPartitions(t, b, "A.orders", len(recs), 60*time.Second); len(got[0])+len(got[1]) != len(recs) {
		t.Fatalf("A.orders: %d+%d records, want %d", len(got[0]), len(got[1]), len(recs))
	}

	// An ACL added on A later: ALLOW ALL arrives as READ.
	createTopicACL(t, srcAdm, "orders", lit, "User:frank", "*", true, kadm.OpAll)
	want = append(want, "LITERAL:A.orders User:frank@* ALLOW READ")
	slices.Sort(want)
	mirrorWait(t, 30*time.Second, "the new ACL on B", func() string {
		if got := topicACLsOf(t, tgtAdm); !slices.Equal(got, want) {
			return fmt.Sprintf("B has %q, want %q", got, want)
		}
		return ""
	})
	time.Sleep(3 * time.Second) // a few more syncs of the same ACLs
	if got := topicACLsOf(t, tgtAdm); !slices.Equal(got, want) {
		t.Fatalf("after more syncs B has %q, want %q", got, want)
	}
	r.waitState("acls-source", "RUNNING", 2)
	logText, err := os.ReadFile(w.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"topic ACL sync failed", "could not sync ACL of topic", "No ACL authorizer"} {
		if strings.Contains(string(logText), bad) {
			t.Errorf("worker log has %q:\n%s", bad, tailFile(w.LogPath(), 30))
		}
	}
}

// TestMirrorACLsNoSourceAuthorizer mirrors a bundled broker without an
// authorizer to one with it: DescribeAcls answers SECURITY_DISABLED, the
// connector says so once in its log and goes on replicating, and no ACL
// appears on the target.
func TestMirrorACLsNoSourceAuthorizer(t *testing.T) {
	t.Parallel()
	a := harness.TributaryBroker(t).Bootstrap()
	b := authorizerBroker(t).Bootstrap()
	src := mirrorClient(t, a)
	mirrorCreateTopic(t, src, "orders", 2, nil)
	first := mirrorProduce(t, src, "orders", 2, 0, 100)

	r, w, _ := mirrorWorker(t, b, "mirror-noauth")
	startMirror(r, "noauth", mirrorConfigs("A", a, "B", b, map[string]string{"sync.topic.acls.interval.seconds": "1"}))
	r.waitState("noauth-source", "RUNNING", 2)
	if got := readPartitions(t, b, "A.orders", len(first), 60*time.Second); len(got[0])+len(got[1]) != len(first) {
		t.Fatalf("A.orders: %d+%d records, want %d", len(got[0]), len(got[1]), len(first))
	}
	time.Sleep(4 * time.Second) // several ACL sync intervals
	more := mirrorProduce(t, src, "orders", 2, len(first), 50)
	if got := readPartitions(t, b, "A.orders", len(first)+len(more), 60*time.Second); len(got[0])+len(got[1]) != len(first)+len(more) {
		t.Fatalf("A.orders after the syncs: %d+%d records, want %d", len(got[0]), len(got[1]), len(first)+len(more))
	}
	r.waitState("noauth-source", "RUNNING", 2)
	if got := topicACLsOf(t, kadmClient(t, b)); len(got) != 0 {
		t.Errorf("B has topic ACLs %q", got)
	}
	logText, err := os.ReadFile(w.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logText), "No ACL authorizer is configured on the source Kafka cluster"); n != 1 {
		t.Errorf("the missing authorizer is logged %d times, want once:\n%s", n, tailFile(w.LogPath(), 30))
	}
	if strings.Contains(string(logText), "topic ACL sync failed") {
		t.Errorf("ACL sync failure logged:\n%s", tailFile(w.LogPath(), 30))
	}
}
