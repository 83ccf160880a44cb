package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"path/filepath"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"
)

// DescribeLogDirs: v1-5. One log directory (log.dirs' first entry, as an
// absolute path) holding every partition; null topics ask for all of them,
// unknown partitions are left out (as Kafka does). Sizes are the bytes of
// each partition's segment files; the offset lag is 0 (no replicas). v4+
// report the volume's total and usable bytes.

func handleDescribeLogDirs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !c.allowedCluster(acl.OpDescribe) {
		resp.ErrorCode = errClusterAuthorizationFailed
		return &reply{resp: resp}
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = b.cfg.LogDir
	if abs, err := filepath.Abs(b.cfg.LogDir); err == nil {
		dir.Dir = abs
	}
	var st unix.Statfs_t
	if err := unix.Statfs(b.cfg.LogDir, &st); err == nil {
		dir.TotalBytes = int64(st.Blocks) * st.Bsize
		dir.UsableBytes = int64(st.Bavail) * st.Bsize
	}
	add := func(t *topic, parts []int32) {
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = t.name
		all := t.partitions()
		for _, p := range parts {
			if p < 0 || int(p) >= len(all) {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition, dp.Size = p, all[p].log.Size()
			dt.Partitions = append(dt.Partitions, dp)
		}
		if len(dt.Partitions) > 0 {
			dir.Topics = append(dir.Topics, dt)
		}
	}
	if req.Topics == nil {
		b.mu.RLock()
		names := make([]string, 0, len(b.topics))
		for n := range b.topics {
			names = append(names, n)
		}
		b.mu.RUnlock()
		sort.Strings(names)
		for _, n := range names {
			if t := b.topic(n); t != nil {
				parts := make([]int32, len(t.partitions()))
				for i := range parts {
					parts[i] = int32(i)
				}
				add(t, parts)
			}
		}
	} else {
		for _, rt := range req.Topics {
			if t := b.topic(rt.Topic); t != nil {
				add(t, rt.Partitions)
			}
		}
	}
	resp.Dirs = append(resp.Dirs, dir)
	return &reply{resp: resp}
}
