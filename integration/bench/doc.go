// Package bench measures Tributary's bundled broker against reference
// brokers with the same franz-go producer and consumer, all on 127.0.0.1 and
// in one process run, as asked by issue 2 ("Benchmark"). It backs the
// `tributary-bench broker` command (integration/cmd/tributary-bench).
//
// Targets (see Target):
//
//   - tributary: package broker in-process, with its own durability policy
//     (acks=all answered after a group-committed fsync);
//   - kfake-memory: franz-go's kfake, one broker, in memory (an upper bound);
//   - kfake-sync: kfake with DataDir and SyncWrites (fsync of every batch);
//   - kafka: Apache Kafka 4.4 (KRaft, one node) with its defaults, which
//     leave flushing to the page cache;
//   - kafka-durable: the same with log.flush.interval.messages=1, durable
//     like Tributary.
//
// Apache Kafka is started through integration/harness (a java process from
// the jars that integration/fetch-jars.sh downloads); when java or the jars
// are missing those targets are reported as skipped.
//
// Each target is started once and runs every workload (record size x
// partition count): a warm-up on its own topic (produce and read back), then
// Runs measured runs, each on a fresh topic. A run produces N records with
// franz-go's defaults (acks=all, idempotent, linger 10 ms, 1 MB batches)
// except compression, which is off unless asked for (franz-go defaults to
// snappy); values are random (incompressible), without keys. Produce is
// timed from the first Produce call to the end of Flush. Then a new client
// reads all N back from the start, timed from its creation until the last
// record arrives, verifying count, per-partition order (every value carries
// its sequence number), contiguous offsets and no duplicates. The report
// keeps the median run. MB/s counts record values only, 1 MB = 10^6 bytes.
//
// Report computes the ratios the issue sets targets for: Tributary's produce
// rate at least 1.5x kfake-sync's and at least kafka-durable's, and its
// consume rate at least kfake-memory's.
//
// With Options.Groups, the targets tributary, kfake-memory and kafka also
// run the consumer group benchmarks of issue 3 (groups.go): a consume run
// by 3 members of one group on 6 partitions, and a rebalance run that
// SIGKILLs one of 3 members (a child process, see RunMemberChild) and times
// how long the survivors take to consume its partitions, with
// session.timeout.ms = 6 s and heartbeat.interval.ms = 1 s; the goal is
// 8 s. group.initial.rebalance.delay.ms is 0 on tributary and kafka.
package bench
