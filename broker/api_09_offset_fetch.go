package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetFetch: v0-9: null topics (v2+) return every committed partition,
// v8+ asks for several groups at once. RequireStable (v7+) needs nothing:
// there are no transactional offset commits. The v9 member id and epoch
// (KIP-848 groups) are ignored.

func handleOffsetFetch(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.OffsetFetchRequest)
	return c.offsetFetch(req)
}
