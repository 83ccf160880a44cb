package mirror

// syncsPerPartition is how many syncs the store keeps per partition: one
// per bit of an offset.
const syncsPerPartition = 64

// SyncStore translates upstream offsets to downstream ones from the
// offset syncs read (Kafka's OffsetSyncStore): per partition, syncs[0] is
// the latest sync and older ones are kept at roughly exponential distances
// (invariants B and C of Kafka's class), so that offsets near the end
// translate precisely and old ones still translate. It is not safe for
// concurrent use.
type SyncStore struct {
	syncs map[partitionKey]*[syncsPerPartition]*OffsetSync
	// mustReadToEnd: while the initial read is not done keep only the
	// latest sync of each partition (the checkpoints could not be read, so
	// monotonicity must be kept this way).
	mustReadToEnd bool
	readToEnd     bool
}

type partitionKey struct {
	topic     string
	partition int32
}

// NewSyncStore returns an empty store. mustReadToEnd is Kafka's
// initializationMustReadToEnd: true when the checkpoints topic could not
// be read, so that only the latest sync of the initial read is kept.
func NewSyncStore(mustReadToEnd bool) *SyncStore {
	return &SyncStore{syncs: map[partitionKey]*[syncsPerPartition]*OffsetSync{}, mustReadToEnd: mustReadToEnd}
}

// ReadToEnd marks the initial read of the offset-syncs topic done: only
// then does Translate answer.
func (s *SyncStore) ReadToEnd() { s.readToEnd = true }

// Add applies a sync read from the offset-syncs topic.
func (s *SyncStore) Add(sync OffsetSync) {
	k := partitionKey{sync.Topic, sync.Partition}
	n := &sync
	old := s.syncs[k]
	if old == nil {
		arr := new([syncsPerPartition]*OffsetSync)
		for i := range arr {
			arr[i] = n
		}
		s.syncs[k] = arr
		return
	}
	cur := *old // the original
	arr := new([syncsPerPartition]*OffsetSync)
	*arr = cur
	s.update(arr, &cur, n)
	s.syncs[k] = arr
}

func (s *SyncStore) update(syncs, original *[syncsPerPartition]*OffsetSync, n *OffsetSync) {
	onlyLast := !s.readToEnd && s.mustReadToEnd
	if onlyLast || n.Upstream < syncs[0].Upstream {
		for i := range syncs {
			syncs[i] = n
		}
		return
	}
	replacement := n
	ri := 0
	syncs[0] = replacement
	for cur := 1; cur < syncsPerPartition; cur++ {
		prev := cur - 1
		for {
			old := original[ri]
			isRecent := invariantB(syncs[prev], old, prev, cur)
			sepPrev := invariantC(syncs[prev], old, prev)
			next := cur + 1
			sepNext := next >= syncsPerPartition || invariantC(old, syncs[next], cur)
			dup := ri+1 < syncsPerPartition && old == original[ri+1]
			promote := isRecent && sepPrev && sepNext
			if promote {
				replacement = old
			}
			skip := dup || !sepPrev
			if promote || skip {
				ri++
			}
			if !(ri < cur && skip) {
				break
			}
		}
		if invariantB(syncs[prev], syncs[cur], prev, cur) {
			break
		}
		syncs[cur] = replacement
	}
}

func invariantB(iSync, jSync *OffsetSync, i, j int) bool {
	bound := jSync.Upstream + (int64(1) << j) - (int64(1) << i)
	return iSync == jSync || bound < 0 || iSync.Upstream <= bound
}

func invariantC(iSync, jSync *OffsetSync, i int) bool {
	bound := jSync.Upstream + (int64(1) << max(i-2, 0))
	return iSync == jSync || (bound >= 0 && iSync.Upstream >= bound)
}

// Translate returns the downstream offset for a consumer group's
// committed upstream offset of topic/partition: the downstream offset of
// the latest sync at or before upstream, plus one if upstream is past it
// (never more: the records after a sync may not all be replicated). ok is
// false when there is no answer (the initial read is not done, or no sync
// is known); -1 with ok means the syncs kept are all newer than upstream.
func (s *SyncStore) Translate(topic string, partition int32, upstream int64) (downstream int64, ok bool) {
	if !s.readToEnd {
		return 0, false
	}
	syncs := s.syncs[partitionKey{topic, partition}]
	if syncs == nil {
		return 0, false
	}
	sync := syncs[syncsPerPartition-1]
	for _, c := range syncs {
		if c.Upstream <= upstream {
			sync = c
			break
		}
	}
	if sync.Upstream > upstream {
		return -1, true
	}
	if sync.Upstream == upstream {
		return sync.Downstream, true
	}
	return sync.Downstream + 1, true
}
