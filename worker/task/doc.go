// Package task runs connector tasks: the source and sink data paths between
// a plugin task (plugins.SourceTask, plugins.SinkTask) and Kafka (franz-go).
//
// Source path (SourceRunner): Poll the plugin → transforms (SMTs,
// worker/transform; their errors follow errors.tolerance) → converters →
// produce (acks=all) → once the broker acked a record and every earlier
// record of its source partition, its offset becomes committable → every
// offset.flush.interval.ms and on Stop the committable offsets are written
// through the OffsetWriter (which returns once the offsets topic acked them)
// → then the plugin is told with Committed. Invariant 2 of DESIGN.md.
//
// Sink path (SinkRunner): consumer group connect-<connector> → converters →
// transforms → Put in batches of max.poll.records → every
// offset.flush.interval.ms Flush with the consumed positions, and commit to
// the group only what Flush returned as durable (invariant 3). Revocation
// flushes, commits, then calls Revoked. Each poll takes the whole buffered
// fetch, so the client fetches the next one during the work, and a batch is
// converted while the plugin processes the previous one; a rewind requested
// by the task drops what the poll still holds of that partition.
//
// What the caller (the herder) does, in order:
//
//	r, err := task.NewSource(task.SourceConfig{Info: info, Task: pluginTask,
//		Key: keyConv, Value: valConv, Header: hdrConv, Transform: chain.Source,
//		ClientOpts: []kgo.Opt{kgo.SeedBrokers(bootstrap...) /* producer. overrides */},
//		Offsets: offsetStore, Status: herder, FlushInterval: 60 * time.Second})
//	r.Start()             // reports RUNNING
//	r.Pause(); r.Resume() // connector PAUSED / RUNNING
//	<-r.Done()            // closed when the task failed (FAILED was reported)
//	r.Stop(ctx)           // always: graceful until ctx's deadline
//	                      // (task.shutdown.graceful.timeout.ms), flushes offsets
//
// Runners are safe for concurrent use of Pause, Resume and Stop.
package task
