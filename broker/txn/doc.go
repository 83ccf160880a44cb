// Package txn is the broker's transaction coordinator: the state of every
// transactional id (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
// EndTxn, the transaction timeout, DescribeTransactions, ListTransactions)
// and the checks the broker applies to transactional produce requests and
// TxnOffsetCommit.
//
// Like package group it is a pure state machine in the style of etcd/raft:
// no goroutines, no clock, no I/O. Every input carries the time; requests
// carry an opaque token identifying the caller. A transaction moves through
// Kafka's states (Empty, Ongoing, PrepareCommit/PrepareAbort,
// CompleteCommit/CompleteAbort), and its state is persisted as records of
// Kafka's __transaction_state formats (kmsg.TxnMetadataKey/Value).
//
// The caller (package broker) must, for every batch of work:
//
//  1. call one method;
//  2. take Ready: append Ready.Records to the transaction state log in
//     order, before handling the next input;
//  3. send the replies marked Durable only after those records are on disk,
//     the others at once;
//  4. for each Ready.Markers job, once the records of the same Ready are on
//     disk (never before: a marker must never exist for a transaction whose
//     prepared state could still be lost), write a commit or abort control
//     batch with the job's producer id and epoch to each of its partitions,
//     make them durable, then call MarkersWritten. The EndTxn reply comes out
//     of that call.
//  5. call Tick periodically: it aborts transactions past their timeout and
//     expires idle transactional ids.
//
// On start, feed every record of the log to Replay in log order, then call
// Recover: transactions that were prepared but not completed come back as
// marker jobs, so a transaction is always completed the way it was decided,
// never left half-visible. Ongoing transactions are aborted by their
// timeout (or by their producer's next InitProducerId), as in Kafka.
//
// Transaction version 2 (KIP-890 part 2) applies to a transaction whose
// producer uses EndTxn v5+: every EndTxn bumps the producer epoch (a new
// producer id when it is exhausted), Produce v12+ and TxnOffsetCommit v5+
// add partitions implicitly (AddImplicit), and an EndTxn retried with the
// previous epoch succeeds. KIP-360: InitProducerId with the current (or
// previous) producer id and epoch bumps the epoch instead of fencing.
//
// A Coordinator is not safe for concurrent use; the caller serializes calls.
package txn
