package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreatePartitions: v0-3. Partitions can only be added; manual assignments
// must name this node.

// maxPartitionsPerTopic bounds CreateTopics and CreatePartitions: every
// partition holds open files, so one request asking for millions of them
// would exhaust file descriptors (and with them the listener's accept).
const maxPartitionsPerTopic = 10000

func handleCreatePartitions(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		fail := func(code int16, msg string) {
			st.ErrorCode = code
			st.ErrorMessage = &msg
		}
		t := b.topic(rt.Topic)
		switch {
		case !c.allowedTopic(acl.OpAlter, rt.Topic):
			fail(errTopicAuthorizationFailed, "Authorization failed.")
		case t == nil:
			fail(errUnknownTopicOrPartition, fmt.Sprintf("The topic '%s' does not exist.", rt.Topic))
		case rt.Count < int32(len(t.partitions())):
			fail(errInvalidPartitions, fmt.Sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, len(t.partitions()), rt.Count))
		case rt.Count == int32(len(t.partitions())):
			fail(errInvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", rt.Count))
		case rt.Count > maxPartitionsPerTopic:
			fail(errInvalidPartitions, fmt.Sprintf("Number of partitions %d is above this broker's limit of %d per topic.", rt.Count, maxPartitionsPerTopic))
		case rt.Assignment != nil && len(rt.Assignment) != int(rt.Count)-len(t.partitions()):
			fail(errInvalidReplicaAssignment, fmt.Sprintf("Increasing the number of partitions by %d but %d assignments provided.", int(rt.Count)-len(t.partitions()), len(rt.Assignment)))
		default:
			for _, a := range rt.Assignment {
				if len(a.Replicas) != 1 || a.Replicas[0] != b.cfg.NodeID {
					fail(errInvalidReplicaAssignment, fmt.Sprintf("Replica assignment %v names brokers other than the only broker %d.", a.Replicas, b.cfg.NodeID))
				}
			}
			if st.ErrorCode != errNone || req.ValidateOnly {
				break
			}
			if err := b.addPartitions(t, rt.Count); err != nil {
				fail(errUnknownServerError, err.Error())
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return &reply{resp: resp}
}
