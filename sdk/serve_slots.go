package sdk

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/shm"
)

// slotWriter is a source plugin's side of the shared memory its host
// offered (pluginpb.SharedMemory): batches are encoded straight into a free
// slot, and only the slot's number travels on the stream.
type slotWriter struct {
	region    *shm.Region
	slotBytes int
	free      chan uint32 // slots the host gave back (all, at first)
	held      int         // the slot the encoder writes into; -1 for none
	// lent has bit i set while slot i is the host's (sent, not yet
	// freed): a SlotFree for any other slot is ignored, so that a
	// confused host cannot have a slot written while it reads it.
	lent atomic.Uint64
}

// openSlots maps the shared memory offered; it returns nil (batches then go
// through the stream) when none was offered or it cannot be mapped.
func openSlots(m *pluginpb.SharedMemory) (*slotWriter, error) {
	if m == nil {
		return nil, nil
	}
	if os.Getenv(shm.EnvOff) == "off" {
		return nil, fmt.Errorf("sdk: %s=off", shm.EnvOff)
	}
	// At most 64 slots (lent has a bit per slot), each no larger than a
	// message.
	if m.GetSlots() == 0 || m.GetSlots() > 64 || m.GetSlotBytes() == 0 || m.GetSlotBytes() > pluginpb.MaxMessageSize {
		return nil, fmt.Errorf("sdk: shared memory of %d slots of %d bytes", m.GetSlots(), m.GetSlotBytes())
	}
	n, size := int(m.GetSlots()), int(m.GetSlotBytes())
	r, err := shm.Open(m.GetName(), n*size)
	if err != nil {
		return nil, err
	}
	w := &slotWriter{region: r, slotBytes: size, free: make(chan uint32, n), held: -1}
	for i := range n {
		w.free <- uint32(i)
	}
	return w, nil
}

// slot returns slot i's memory, capped so that an encoder outgrowing it
// moves to a buffer of its own instead of writing into the next slot.
func (w *slotWriter) slot(i int) []byte {
	off := i * w.slotBytes
	return w.region.Bytes()[off : off : off+w.slotBytes]
}

// holds reports whether b (an encoded batch) still lies in the held slot.
func (w *slotWriter) holds(b []byte) bool {
	return w != nil && w.held >= 0 && len(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(w.region.Bytes()[w.held*w.slotBytes:])
}

// lend hands the held slot, holding a batch, to the host, and returns its
// number.
func (w *slotWriter) lend() uint32 {
	slot := uint32(w.held)
	w.lent.Or(1 << slot)
	w.held = -1
	return slot
}

// release takes back a slot the host is done with. It reports false (and
// ignores it) for a slot that is not the host's.
func (w *slotWriter) release(slot uint32) bool {
	if w == nil || slot >= 64 {
		return false
	}
	bit := uint64(1) << slot
	if w.lent.And(^bit)&bit == 0 {
		return false
	}
	w.free <- slot // never blocks: the slot was out of the channel
	return true
}

func (w *slotWriter) close() {
	if w != nil {
		w.region.Close()
	}
}
