package sdk

import (
	"errors"
	"testing"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/shm"
)

func openTestSlots(t *testing.T, n, size int) *slotWriter {
	t.Helper()
	r, err := shm.Create(n * size)
	if errors.Is(err, shm.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	w, err := openSlots(&pluginpb.SharedMemory{Name: r.Name(), Slots: uint32(n), SlotBytes: uint32(size)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.close)
	return w
}

// TestSlotWriterLending: the host frees only slots it holds; a repeated or
// unknown SlotFree never puts a slot in the free list twice.
func TestSlotWriterLending(t *testing.T) {
	w := openTestSlots(t, 3, 4096)
	w.held = int(<-w.free)
	slot := w.lend()
	if w.held != -1 || slot != 0 {
		t.Fatalf("lend: slot %d, held %d", slot, w.held)
	}
	for _, bad := range []uint32{1, 2, 3, 64, 1 << 31} {
		if w.release(bad) {
			t.Errorf("release(%d) of a slot the host does not hold accepted", bad)
		}
	}
	if !w.release(slot) {
		t.Fatal("release of a lent slot refused")
	}
	if w.release(slot) {
		t.Error("second release of the same slot accepted")
	}
	if len(w.free) != 3 {
		t.Errorf("%d free slots, want 3", len(w.free))
	}
}

// TestSlotWriterBounds: an encoder outgrowing a slot moves to memory of its
// own instead of writing into the next slot, and holds tells the two apart.
func TestSlotWriterBounds(t *testing.T) {
	w := openTestSlots(t, 2, 4096)
	w.held = 0
	b := w.slot(0)
	b = append(b, make([]byte, 4096)...)
	if !w.holds(b) {
		t.Fatal("a full slot is not held")
	}
	w.region.Bytes()[4096] = 7
	b = append(b, 1)
	if w.holds(b) || w.region.Bytes()[4096] != 7 {
		t.Fatal("appending past the slot wrote into the next one")
	}
	var none *slotWriter
	if none.holds(b) || none.release(0) {
		t.Error("nil slotWriter holds or releases")
	}
}

func TestOpenSlotsRefuses(t *testing.T) {
	for _, m := range []*pluginpb.SharedMemory{
		{Name: "/proc/1/fd/1", Slots: 0, SlotBytes: 4096},
		{Name: "/proc/1/fd/1", Slots: 65, SlotBytes: 4096},
		{Name: "/proc/1/fd/1", Slots: 3, SlotBytes: 0},
		{Name: "/etc/passwd", Slots: 1, SlotBytes: 4096},
	} {
		if w, err := openSlots(m); err == nil {
			w.close()
			t.Errorf("openSlots(%v) succeeded", m)
		}
	}
	if w, err := openSlots(nil); w != nil || err != nil {
		t.Errorf("openSlots(nil) = %v, %v", w, err)
	}
}
