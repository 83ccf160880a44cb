package sdk

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/tributary-dev/tributary/plugins/pluginpb"
	"github.com/tributary-dev/tributary/plugins/shm"
)

// slotWriter is a source plugin's side of the shared memory its host
// offered (pluginpb.SharedMemory): batches are encoded straight into a free
// slot, and only the slot's number travels on the stream.
type slotWriter struct {
	region    *shm.Region
	slotBytes int
	free      chan uint32 // slots the host gave back (all, at first)
	held      int         // the slot the encoder writes into; -1 for none
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
	n, size := int(m.GetSlots()), int(m.GetSlotBytes())
	if n <= 0 || n > 64 || size <= 0 || size > pluginpb.MaxMessageSize {
		return nil, fmt.Errorf("sdk: shared memory of %d slots of %d bytes", n, size)
	}
	r, err := shm.Open(m.GetPath(), n*size)
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

// release takes back a slot the host is done with.
func (w *slotWriter) release(slot uint32) {
	if w == nil {
		return
	}
	select {
	case w.free <- slot:
	default: // more than there are slots: the host is confused; ignore
	}
}

func (w *slotWriter) close() {
	if w != nil {
		w.region.Close()
	}
}
