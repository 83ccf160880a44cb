package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFailFastAnswers checks the answers for the features this broker
// lacks (each as Apache Kafka gives it with the feature off) and the admin
// calls added for them: ACLs, share groups (and KIP-848's refusal of a bad join), DescribeLogDirs,
// authorized operations and broker DescribeConfigs.
func TestFailFastAnswers(t *testing.T) {
	b := startBroker(t, "")
	createTopic(t, b, "ff", 2, nil)
	cl := newClient(t, b)
	ctx := testCtx(t)
	do := func(req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		return resp
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "ff", Partition: 0, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Group, cgh.MemberID, cgh.RebalanceTimeoutMillis = "g", "m", 30000
	// KIP-848 is served: a join without its (empty) owned partitions is
	// refused as Kafka refuses it.
	if r := do(cgh).(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != 42 || r.ErrorMessage == nil || *r.ErrorMessage != "TopicPartitions must be empty when (re-)joining." {
		t.Errorf("ConsumerGroupHeartbeat: error %d %v, want INVALID_REQUEST", r.ErrorCode, r.ErrorMessage)
	}
	sgh := kmsg.NewPtrShareGroupHeartbeatRequest()
	sgh.GroupID, sgh.MemberID = "sg", "m"
	if r := do(sgh).(*kmsg.ShareGroupHeartbeatResponse); r.ErrorCode != errUnsupportedVersion {
		t.Errorf("ShareGroupHeartbeat: error %d, want UNSUPPORTED_VERSION", r.ErrorCode)
	}
	da := kmsg.NewPtrDescribeACLsRequest()
	da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 1, 1, 1, 1
	if r := do(da).(*kmsg.DescribeACLsResponse); r.ErrorCode != errSecurityDisabled || r.ErrorMessage == nil {
		t.Errorf("DescribeAcls: error %d %v, want SECURITY_DISABLED with a message", r.ErrorCode, r.ErrorMessage)
	}
	ca := kmsg.NewPtrCreateACLsRequest()
	ca.Creations = append(ca.Creations, kmsg.NewCreateACLsRequestCreation())
	if r := do(ca).(*kmsg.CreateACLsResponse); len(r.Results) != 1 || r.Results[0].ErrorCode != errSecurityDisabled {
		t.Errorf("CreateAcls: %+v, want one SECURITY_DISABLED result", r.Results)
	}

	// Straight to the broker: kgo's sharding of DescribeLogDirs rebuilds
	// the directories without their v4+ volume sizes.
	ldr, err := cl.Broker(int(b.cfg.NodeID)).Request(ctx, kmsg.NewPtrDescribeLogDirsRequest())
	if err != nil {
		t.Fatal(err)
	}
	ld := ldr.(*kmsg.DescribeLogDirsResponse)
	if len(ld.Dirs) != 1 || (ld.Version >= 4 && ld.Dirs[0].TotalBytes <= 0) {
		t.Fatalf("DescribeLogDirs v%d: %+v", ld.Version, ld.Dirs)
	}
	sizes := map[string][]int64{}
	for _, dt := range ld.Dirs[0].Topics {
		for _, p := range dt.Partitions {
			sizes[dt.Topic] = append(sizes[dt.Topic], p.Size)
		}
	}
	if s := sizes["ff"]; len(s) != 2 || s[0]+s[1] == 0 {
		t.Errorf("DescribeLogDirs sizes of ff = %v, want 2 partitions holding a record", s)
	}
	t.Logf("DescribeLogDirs v%d: %s total %d usable %d", ld.Version, ld.Dirs[0].Dir, ld.Dirs[0].TotalBytes, ld.Dirs[0].UsableBytes)

	md := kmsg.NewPtrMetadataRequest()
	md.IncludeTopicAuthorizedOperations = true
	for _, mt := range do(md).(*kmsg.MetadataResponse).Topics {
		if mt.AuthorizedOperations != topicAuthorizedOps {
			t.Errorf("topic %v authorized operations %d, want %d", mt.Topic, mt.AuthorizedOperations, topicAuthorizedOps)
		}
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	if r := do(dc).(*kmsg.DescribeClusterResponse); r.ClusterAuthorizedOperations != clusterAuthorizedOps {
		t.Errorf("cluster authorized operations %d", r.ClusterAuthorizedOperations)
	}

	dcfg := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = resourceBroker, "1"
	dcfg.Resources = append(dcfg.Resources, rr)
	got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range do(dcfg).(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		got[c.Name] = c
	}
	for name, want := range map[string]string{"broker.id": "1", "log.retention.hours": "168", "transaction.max.timeout.ms": "900000", "num.partitions": "1"} {
		c, ok := got[name]
		if !ok || c.Value == nil || *c.Value != want {
			t.Errorf("broker config %s = %+v, want %s", name, c.Value, want)
		}
	}
	if c := got["log.dirs"]; c.Source != kmsg.ConfigSource(sourceStaticBroker) {
		t.Errorf("log.dirs source %v, want STATIC_BROKER_CONFIG", c.Source)
	}
	if c := got["log.retention.ms"]; c.Value != nil || c.Source != kmsg.ConfigSource(sourceDefault) {
		t.Errorf("log.retention.ms = %v %v, want null DEFAULT_CONFIG", c.Value, c.Source)
	}
}
