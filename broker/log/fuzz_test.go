package log

import (
	"bytes"
	"testing"
)

func fuzzSeeds(f *testing.F) [][]byte {
	a := makeBatch(f, batchSpec{Values: []string{"a"}})
	b := makeBatch(f, batchSpec{Values: vals("b", 0, 5), Timestamp: 1234})
	c := makeBatch(f, batchSpec{Values: vals("c", 0, 3), Gzip: true})
	d := makeBatch(f, batchSpec{Idempotent: true, ProducerID: 9, ProducerEpoch: 1, BaseSequence: 4, Values: []string{"d", ""}})
	ab := append(append([]byte(nil), a...), b...)
	return [][]byte{a, b, c, d, ab, a[:HeaderSize], a[:len(a)-1], nil}
}

// FuzzSplitBatches feeds arbitrary Produce records fields to SplitBatches:
// it never panics, and what it accepts is exactly the input cut into valid
// batches.
func FuzzSplitBatches(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		batches, hdrs, err := SplitBatches(in)
		if err != nil {
			if batches != nil || hdrs != nil {
				t.Fatalf("error %v with %d batches", err, len(batches))
			}
			return
		}
		if len(batches) == 0 || len(batches) != len(hdrs) {
			t.Fatalf("%d batches, %d headers", len(batches), len(hdrs))
		}
		var joined []byte
		for i, b := range batches {
			h, err := ValidateBatch(b)
			if err != nil {
				t.Fatalf("accepted batch %d does not validate: %v", i, err)
			}
			if h != hdrs[i] || h.Size() != len(b) {
				t.Fatalf("batch %d: header %+v, returned %+v", i, h, hdrs[i])
			}
			joined = append(joined, b...)
		}
		if !bytes.Equal(joined, in) {
			t.Fatal("batches do not add up to the input")
		}
	})
}

// FuzzRecords feeds arbitrary batches to the record decoder (used on stored
// batches by ListOffsets): it never panics and offsets stay in the batch.
func FuzzRecords(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d Decompressor
		defer d.Close()
		recs, err := d.Records(in)
		if err != nil {
			return
		}
		h, _ := ParseHeader(in)
		if len(recs) != int(h.NumRecords) {
			t.Fatalf("%d records for NumRecords %d", len(recs), h.NumRecords)
		}
	})
}
