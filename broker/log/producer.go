package log

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// maxProducerBatches is how many recent batches are remembered per producer
// and partition: franz-go and the Java client keep at most 5 in flight.
const maxProducerBatches = 5

// Errors of the idempotent-producer checks; the broker maps them to Kafka codes.
var (
	ErrOutOfOrderSequence = errors.New("log: out of order sequence number")
	ErrInvalidEpoch       = errors.New("log: producer epoch is older than the current one")
)

type producerBatch struct {
	FirstSeq   int32 `json:"first_seq"`
	LastSeq    int32 `json:"last_seq"`
	BaseOffset int64 `json:"base_offset"`
}

// producerState is what the log remembers of one idempotent producer.
type producerState struct {
	Epoch   int16           `json:"epoch"`
	Batches []producerBatch `json:"batches"` // oldest first, at most maxProducerBatches
	// TxnFirst is the first offset of the producer's open transaction in
	// this partition, nil when it has none.
	TxnFirst *int64 `json:"txn_first_offset,omitempty"`
}

// check classifies a batch of producer id/epoch/sequence against the state:
// dup >= 0 is the base offset of the identical batch already in the log.
func (s *producerState) check(h *BatchHeader) (dup int64, err error) {
	if s == nil {
		return -1, nil
	}
	switch {
	case h.ProducerEpoch < s.Epoch:
		return -1, fmt.Errorf("%w: batch epoch %d, current %d", ErrInvalidEpoch, h.ProducerEpoch, s.Epoch)
	case h.ProducerEpoch > s.Epoch:
		if h.BaseSequence != 0 {
			return -1, fmt.Errorf("%w: first batch of epoch %d has sequence %d, want 0", ErrOutOfOrderSequence, h.ProducerEpoch, h.BaseSequence)
		}
		return -1, nil
	}
	last := h.BaseSequence + h.LastOffsetDelta
	for _, b := range s.Batches {
		if b.FirstSeq == h.BaseSequence && b.LastSeq == last {
			return b.BaseOffset, nil
		}
	}
	if n := len(s.Batches); n > 0 {
		if want := s.Batches[n-1].LastSeq + 1; h.BaseSequence != want && !(want < 0 && h.BaseSequence == 0) {
			return -1, fmt.Errorf("%w: got %d, want %d", ErrOutOfOrderSequence, h.BaseSequence, want)
		}
	}
	return -1, nil
}

// record remembers an appended batch.
func (s *producerState) record(h *BatchHeader) {
	if h.ProducerEpoch != s.Epoch {
		s.Epoch = h.ProducerEpoch
		s.Batches = s.Batches[:0]
	}
	if h.IsControl() {
		return
	}
	s.Batches = append(s.Batches, producerBatch{
		FirstSeq:   h.BaseSequence,
		LastSeq:    h.BaseSequence + h.LastOffsetDelta,
		BaseOffset: h.BaseOffset,
	})
	if len(s.Batches) > maxProducerBatches {
		s.Batches = append(s.Batches[:0], s.Batches[len(s.Batches)-maxProducerBatches:]...)
	}
}

// isIdempotent reports whether a batch carries producer id and sequence.
func isIdempotent(h *BatchHeader) bool { return h.ProducerID >= 0 && h.BaseSequence >= 0 }

// trackProducer updates producers with a batch that is in the log.
func trackProducer(producers map[int64]*producerState, h *BatchHeader) {
	if !isIdempotent(h) || h.IsControl() {
		return
	}
	s := producers[h.ProducerID]
	if s == nil {
		s = &producerState{Epoch: h.ProducerEpoch}
		producers[h.ProducerID] = s
	}
	s.record(h)
}

// snapshotName is the producer-state snapshot taken when the segment with the
// given base offset was created: the state of every batch before it.
func snapshotName(dir string, base int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d.snapshot", base))
}

type snapshotFile struct {
	Version   int                      `json:"version"`
	Producers map[int64]*producerState `json:"producers"`
}

func writeSnapshot(dir string, base int64, producers map[int64]*producerState) error {
	b, err := json.Marshal(snapshotFile{Version: 1, Producers: producers})
	if err != nil {
		return fmt.Errorf("encode producer snapshot: %w", err)
	}
	return writeFileAtomic(snapshotName(dir, base), b)
}

func readSnapshot(path string) (map[int64]*producerState, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s snapshotFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode producer snapshot %s: %w", path, err)
	}
	if s.Version != 1 {
		return nil, fmt.Errorf("producer snapshot %s: unknown version %d", path, s.Version)
	}
	if s.Producers == nil {
		s.Producers = map[int64]*producerState{}
	}
	return s.Producers, nil
}

// writeFileAtomic writes a file so that after a crash either the old or the
// new content is there: temp file, fsync, rename, fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return SyncDir(filepath.Dir(path))
}

// WriteFileAtomic is writeFileAtomic for the broker's metadata files.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data) }

// SyncDir fsyncs a directory so that created, renamed or removed entries in it
// survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}
