// Package log is the partition log of Tributary's broker: an append-only
// sequence of Kafka v2 record batches stored verbatim in segment files.
//
// A Log is one partition. Batches are appended exactly as the producer sent
// them; only the base offset (and partition leader epoch) are stamped, which
// the batch CRC does not cover, so nothing is recompressed. Each segment file
// is named by its 20-digit base offset and has a sparse offset index and a
// sparse time index beside it. See docs/format/log.md for the byte layout.
//
// Durability is split in two steps so that the broker can group-commit: Append
// writes to the page cache and Sync fsyncs everything appended so far. The
// high watermark (what consumers may read) only moves forward on Sync, so no
// reader ever sees a record that a crash could take away.
//
// Typical use:
//
//	l, err := log.Open(dir, cfg, logger)
//	res, err := l.Append(batch, time.Now())   // batch bytes from a Produce request
//	err = l.Sync()                            // usually from a group-commit loop
//	rd, err := l.Read(offset, maxBytes)       // a chunk of whole batches to send
//	defer rd.Release()
//	l.Close()
//
// Recovery: Open validates the CRC of every batch in the last segment (the
// only one that can have a torn tail, since a segment is fsynced before the
// next one is created), truncates at the first invalid batch, rebuilds the
// indexes it cannot trust and rebuilds idempotent-producer state.
package log
