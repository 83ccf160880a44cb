package sdk

import "testing"

func TestPollSize(t *testing.T) {
	for _, tc := range []struct {
		maxRecords, maxBytes, size, count, want int
	}{
		{2000, 1 << 20, 0, 0, 2000},                   // nothing sent yet
		{2000, 1 << 20, 1 << 20, 1024, 1024},          // 1 KiB records: one message's worth
		{2000, 1 << 20, 100 << 10, 1000, 2000},        // small records: maxRecords
		{2000, 1 << 20, 3 << 20, 1, minPollRecords},   // a record larger than maxBytes
		{2000, 1 << 20, 1 << 20, 256, minPollRecords}, // 4 KiB records: not below the floor
		{100, 1 << 20, 1 << 20, 1, 100},               // nor above maxRecords
		{500, 1 << 20, 1 << 20, 4096, 500},            // never above maxRecords
		{2000, 1 << 20, 1 << 20, 1 << 21, 2000},       // size rounds to 0 per record
	} {
		if got := pollSize(tc.maxRecords, tc.maxBytes, tc.size, tc.count); got != tc.want {
			t.Errorf("pollSize(%d, %d, %d, %d) = %d, want %d", tc.maxRecords, tc.maxBytes, tc.size, tc.count, got, tc.want)
		}
	}
}
