package broker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/broker/log"
)

// cleanerLoop compacts the partitions of topics with cleanup.policy
// containing compact, every log.cleaner.backoff.ms. Compaction reads closed
// segments without holding a partition's lock, so produce and fetch go on.
func (b *Broker) cleanerLoop(ctx context.Context) {
	tick := time.NewTicker(b.cfg.CleanerBackoff)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			b.compactAll(ctx, time.Now())
		}
	}
}

// compactAll runs one cleaning pass over every compacted partition.
func (b *Broker) compactAll(ctx context.Context, now time.Time) {
	b.mu.RLock()
	var work []*partition
	for _, t := range b.topics {
		if b.topicHasPolicy(t.configs(), "compact") {
			work = append(work, t.partitions()...)
		}
	}
	b.mu.RUnlock()
	for _, p := range work {
		if ctx.Err() != nil {
			return
		}
		cc := b.compactConfig(p.topic.configs())
		st, err := p.log.Compact(now, cc)
		if err != nil && !errors.Is(err, log.ErrClosed) {
			b.logger.Warn("compaction failed", "topic", p.topic.name, "partition", p.index, "err", err)
			continue
		}
		if st.Segments > 0 {
			b.logger.Info("compacted partition", "topic", p.topic.name, "partition", p.index,
				"segments", st.Segments, "bytes_before", st.BytesBefore, "bytes_after", st.BytesAfter,
				"records_before", st.RecordsBefore, "records_after", st.RecordsAfter)
		}
	}
}

func (b *Broker) compactConfig(overrides map[string]string) log.CompactConfig {
	ms := func(name string) time.Duration {
		n := b.intTopicConfig(overrides, name)
		if n > int64(time.Duration(1<<62)/time.Millisecond) {
			return 0 // "never": Long.MAX_VALUE
		}
		return time.Duration(n) * time.Millisecond
	}
	ratio, _ := strconv.ParseFloat(strings.TrimSpace(b.strTopicConfig(overrides, "min.cleanable.dirty.ratio")), 64)
	return log.CompactConfig{
		DeleteRetention:  ms("delete.retention.ms"),
		MinCompactionLag: ms("min.compaction.lag.ms"),
		MaxCompactionLag: ms("max.compaction.lag.ms"),
		MinCleanableRate: ratio,
	}
}
