package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetFetch: v0-9: null topics (v2+) return every committed partition,
// v8+ asks for several groups at once. RequireStable (v7+) needs nothing:
// there are no transactional offset commits. With v9 a member of a KIP-848
// group gives its member id and epoch, checked as Kafka checks them
// (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); without a member id anyone reads.

func handleOffsetFetch(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.OffsetFetchRequest)
	return c.offsetFetch(req)
}
