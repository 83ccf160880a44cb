package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetCommit: v0-9. Members commit with their generation and member id;
// simple commits (generation -1) are accepted while the group has no
// members; members of a KIP-848 group commit with v9+, their member id and
// current member epoch in the generation field (STALE_MEMBER_EPOCH
// otherwise). Offsets are written to __consumer_offsets and answered after the
// group commit fsynced them (acks=all). RetentionTimeMillis (v2-4) is
// ignored: offsets do not expire.

func handleOffsetCommit(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.OffsetCommitRequest)
	return c.offsetCommit(req)
}
