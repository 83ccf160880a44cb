package postgres

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// streamedTxs holds the changes of the in-progress transactions that the
// server streams (pgoutput protocol 2, streaming on) until their Stream
// Commit, when they are replayed as one transaction, exactly as protocol 1
// would have sent it at commit. A Stream Abort drops a transaction, or
// only the changes of the aborted subtransaction.
//
// The messages are kept as the server sent them (without the xid), which
// is several times smaller than the events they become. Memory is bounded:
// when the buffered messages of all transactions exceed limit bytes, the
// largest transaction in memory moves to a temporary file, unlinked as
// soon as it is created so that nothing is left behind by a crash; its
// next messages go there too.
type streamedTxs struct {
	limit int64  // bytes in memory before spilling
	dir   string // directory of the spill files ("" is os.TempDir)
	mem   int64  // bytes in memory, over all transactions
	txs   map[uint32]*streamedTx
	buf   []byte // replay scratch of spilled messages
}

// streamedTx is one in-progress transaction.
type streamedTx struct {
	xid    uint32
	data   []byte // the messages in memory, back to back
	frames []frameRef
	// A spilled transaction's messages are all in its file.
	file    *os.File
	w       *bufio.Writer
	spilled int64           // frames in the file
	aborted map[uint32]bool // subtransactions rolled back (for the file)
}

// frameRef is a message in streamedTx.data.
type frameRef struct {
	lsn    uint64
	subxid uint32
	off    int
	n      int
}

// frameOverhead is what a message costs besides its bytes.
const frameOverhead = 24

// frameHeader is the size of a message's header in a spill file: LSN,
// subtransaction, length.
const frameHeader = 16

func newStreamedTxs(limit int64, dir string) *streamedTxs {
	return &streamedTxs{limit: limit, dir: dir, txs: map[uint32]*streamedTx{}}
}

// schemaMessage reports whether a message of kind b describes the schema
// (relation, type): those stay when a subtransaction is rolled back, for
// the server does not send them again.
func schemaMessage(b byte) bool { return b == 'R' || b == 'Y' }

// add buffers a message (kind and body, without the xid) of subtransaction
// subxid of transaction xid, at lsn. kind and body are copied.
func (b *streamedTxs) add(xid, subxid uint32, lsn uint64, kind byte, body []byte) error {
	tx := b.txs[xid]
	if tx == nil {
		tx = &streamedTx{xid: xid}
		b.txs[xid] = tx
	}
	if schemaMessage(kind) {
		subxid = xid
	}
	if tx.file != nil {
		tx.spilled++
		return tx.write(lsn, subxid, kind, body)
	}
	off := len(tx.data)
	tx.data = append(tx.data, kind)
	tx.data = append(tx.data, body...)
	tx.frames = append(tx.frames, frameRef{lsn: lsn, subxid: subxid, off: off, n: 1 + len(body)})
	b.mem += int64(1+len(body)) + frameOverhead
	if b.mem > b.limit {
		return b.spillLargest()
	}
	return nil
}

func (tx *streamedTx) write(lsn uint64, subxid uint32, kind byte, body []byte) error {
	var h [frameHeader]byte
	binary.BigEndian.PutUint64(h[0:], lsn)
	binary.BigEndian.PutUint32(h[8:], subxid)
	binary.BigEndian.PutUint32(h[12:], uint32(1+len(body)))
	tx.w.Write(h[:])
	tx.w.WriteByte(kind)
	if _, err := tx.w.Write(body); err != nil {
		return fmt.Errorf("postgres: write the in-progress transaction %d to its spill file: %w", tx.xid, err)
	}
	return nil
}

// spillLargest moves the transaction with the most bytes in memory to a
// file.
func (b *streamedTxs) spillLargest() error {
	var big *streamedTx
	for _, tx := range b.txs {
		if tx.file == nil && (big == nil || len(tx.data) > len(big.data)) {
			big = tx
		}
	}
	if big == nil || len(big.frames) == 0 {
		return nil
	}
	f, err := os.CreateTemp(b.dir, "tributary-pgstream-*")
	if err != nil {
		return fmt.Errorf("postgres: spill the in-progress transaction %d (%d bytes buffered, over pgoutput.stream.buffer.bytes=%d) to a file: %w",
			big.xid, len(big.data), b.limit, err)
	}
	// Unlinked at once: the open file lives until it is closed, and a
	// crash leaves nothing behind.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return fmt.Errorf("postgres: unlink spill file %s: %w", f.Name(), err)
	}
	big.file = f
	big.w = bufio.NewWriterSize(f, 256<<10)
	for _, fr := range big.frames {
		d := big.data[fr.off : fr.off+fr.n]
		if err := big.write(fr.lsn, fr.subxid, d[0], d[1:]); err != nil {
			return err
		}
	}
	big.spilled = int64(len(big.frames))
	b.mem -= int64(len(big.data)) + int64(len(big.frames))*frameOverhead
	big.data, big.frames = nil, nil
	return nil
}

// abort drops subtransaction subxid of transaction xid, or the whole
// transaction when subxid is xid.
func (b *streamedTxs) abort(xid, subxid uint32) {
	tx := b.txs[xid]
	if tx == nil {
		return
	}
	if subxid == xid {
		b.drop(tx)
		return
	}
	if tx.file != nil {
		if tx.aborted == nil {
			tx.aborted = map[uint32]bool{}
		}
		tx.aborted[subxid] = true
		return
	}
	// Compact the kept messages to the front.
	kept := tx.frames[:0]
	end := 0
	for _, fr := range tx.frames {
		if fr.subxid == subxid {
			b.mem -= int64(fr.n) + frameOverhead
			continue
		}
		copy(tx.data[end:], tx.data[fr.off:fr.off+fr.n])
		fr.off = end
		end += fr.n
		kept = append(kept, fr)
	}
	tx.frames = kept
	tx.data = tx.data[:end]
}

func (b *streamedTxs) drop(tx *streamedTx) {
	if tx.file != nil {
		tx.file.Close()
	} else {
		b.mem -= int64(len(tx.data)) + int64(len(tx.frames))*frameOverhead
	}
	delete(b.txs, tx.xid)
}

// commit replays transaction xid's messages in order, through fn, and
// forgets it. The message fn gets is valid only during the call.
func (b *streamedTxs) commit(xid uint32, fn func(lsn uint64, msg []byte) error) error {
	tx := b.txs[xid]
	if tx == nil {
		return nil // a transaction with no change streamed
	}
	defer b.drop(tx)
	if tx.file == nil {
		for _, fr := range tx.frames {
			if err := fn(fr.lsn, tx.data[fr.off:fr.off+fr.n]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := tx.w.Flush(); err != nil {
		return fmt.Errorf("postgres: write the in-progress transaction %d to its spill file: %w", xid, err)
	}
	if _, err := tx.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("postgres: read back the spill file of transaction %d: %w", xid, err)
	}
	r := bufio.NewReaderSize(tx.file, 256<<10)
	var h [frameHeader]byte
	for i := int64(0); i < tx.spilled; i++ {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return fmt.Errorf("postgres: read back the spill file of transaction %d: %w", xid, err)
		}
		lsn := binary.BigEndian.Uint64(h[0:])
		subxid := binary.BigEndian.Uint32(h[8:])
		n := int(binary.BigEndian.Uint32(h[12:]))
		b.buf = slices.Grow(b.buf[:0], n)[:n]
		if _, err := io.ReadFull(r, b.buf); err != nil {
			return fmt.Errorf("postgres: read back the spill file of transaction %d: %w", xid, err)
		}
		if tx.aborted[subxid] {
			continue
		}
		if err := fn(lsn, b.buf); err != nil {
			return err
		}
	}
	return nil
}

// pending reports whether a transaction is buffered.
func (b *streamedTxs) pending() bool { return len(b.txs) > 0 }

// close drops every buffered transaction (their spill files go).
func (b *streamedTxs) close() error {
	var errs []error
	for _, tx := range b.txs {
		if tx.file != nil {
			if err := tx.file.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	clear(b.txs)
	b.mem = 0
	return errors.Join(errs...)
}
