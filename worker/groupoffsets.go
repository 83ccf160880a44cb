package worker

import (
	"context"
	"fmt"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/twmb/franz-go/pkg/kadm"
)

// kadmGroups implements groupOffsets with franz-go's admin client.
type kadmGroups struct{ adm *kadm.Client }

func (g kadmGroups) Fetch(ctx context.Context, group string) (map[sdk.TopicPartition]int64, error) {
	resp, err := g.adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, err)
	}
	out := map[sdk.TopicPartition]int64{}
	for t, ps := range resp {
		for p, o := range ps {
			if o.Err != nil {
				return nil, fmt.Errorf("fetch offsets of group %s: %w", group, o.Err)
			}
			out[sdk.TopicPartition{Topic: t, Partition: p}] = o.At
		}
	}
	return out, nil
}

func (g kadmGroups) Commit(ctx context.Context, group string, offsets map[sdk.TopicPartition]int64) error {
	var os kadm.Offsets
	for tp, o := range offsets {
		os.AddOffset(tp.Topic, tp.Partition, o, -1)
	}
	resp, err := g.adm.CommitOffsets(ctx, group, os)
	if err != nil {
		return fmt.Errorf("commit offsets of group %s: %w", group, err)
	}
	if err := resp.Error(); err != nil {
		return fmt.Errorf("commit offsets of group %s: %w", group, err)
	}
	return nil
}

func (g kadmGroups) Delete(ctx context.Context, group string, partitions []sdk.TopicPartition) error {
	ts := kadm.TopicsSet{}
	for _, tp := range partitions {
		ts.Add(tp.Topic, tp.Partition)
	}
	resp, err := g.adm.DeleteOffsets(ctx, group, ts)
	if err != nil {
		return fmt.Errorf("delete offsets of group %s: %w", group, err)
	}
	if err := resp.Error(); err != nil {
		return fmt.Errorf("delete offsets of group %s: %w", group, err)
	}
	return nil
}
