package mirror

// syncRule is the state of one replicated partition deciding when an
// offset sync is due (Kafka's OffsetSyncWriter.PartitionState). Update is
// called for every replicated record, in order.
type syncRule struct {
	maxLag                             int64
	prevUpstream, prevDownstream, last int64
	due                                bool
}

func newSyncRule(maxLag int64) *syncRule {
	return &syncRule{maxLag: maxLag, prevUpstream: -1, prevDownstream: -1, last: -1}
}

// update records that upstream landed at downstream and reports whether
// its sync must be sent now; otherwise it is a delayed sync, sent at the
// next offsets commit if no newer sync replaced it. A sync is due for the
// first record of the task's lifetime, when the downstream offset is
// offset.lag.max past the last sync plus one (translation goes one past a
// sync), when upstream skipped offsets (compaction, transaction markers),
// and when the downstream offset went backwards (a truncated target).
func (r *syncRule) update(upstream, downstream int64) bool {
	first := r.last == -1
	stale := downstream-(r.last+1) >= r.maxLag
	skipped := upstream-r.prevUpstream != 1
	truncated := downstream < r.prevDownstream
	if first || stale || skipped || truncated {
		r.last = downstream
		r.due = true
	}
	r.prevUpstream, r.prevDownstream = upstream, downstream
	due := r.due
	r.due = false
	return due
}
