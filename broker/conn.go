package broker

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"
)

// maxInflight bounds how many requests of one connection may wait for their
// responses; it is the backpressure for pipelining clients.
const maxInflight = 64

// reply is the response to one request, possibly not ready yet.
type reply struct {
	corr     int32
	key      int16
	start    time.Time // when the request was read (kafka_network_requestmetrics_totaltimems)
	flexible bool
	ready    chan struct{} // nil when the response is ready at once
	resp     kmsg.Response
	fetch    *fetchReply // a fetch response streamed from segment files
	none     bool        // acks=0 produce: nothing is sent
	fail     error       // close the connection instead of answering

	raw        []byte        // a bare SASL token (after SaslHandshake v0)
	rawSet     bool          // raw is the answer
	closeAfter bool          // close the connection once this is written (failed authentication)
	delay      time.Duration // wait this long before writing (connection.failed.authentication.delay.ms)
}

// conn is one client connection.
type conn struct {
	b      *Broker
	nc     net.Conn
	l      *listener
	logger *slog.Logger
	client string

	// host is the client's IP address, principal who it is ("User:…"),
	// for the authorizer. Only the read loop (and the handlers it calls)
	// touch them and sasl.
	host      string
	principal string
	sasl      saslSession
}

// tlsHandshakeTimeout bounds a TLS handshake.
const tlsHandshakeTimeout = 10 * time.Second

func (b *Broker) serveConn(nc net.Conn, l *listener) {
	c := &conn{b: b, nc: nc, l: l, logger: b.logger.With("remote", nc.RemoteAddr().String(), "listener", l.cfg.Name), principal: anonymous}
	c.host, _, _ = net.SplitHostPort(nc.RemoteAddr().String())
	if l.cfg.tlsOn() {
		tc := tls.Server(nc, l.cfg.TLS)
		tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
		if err := tc.HandshakeContext(b.ctx); err != nil {
			level := slog.LevelInfo
			if errors.Is(err, io.EOF) {
				level = slog.LevelDebug // a port probe: connected and closed
			}
			c.logger.Log(b.ctx, level, "TLS handshake failed", "reason", err)
			nc.Close()
			return
		}
		tc.SetDeadline(time.Time{})
		if l.cfg.Protocol == ProtocolSSL {
			if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
				name, err := mapPrincipal(l.rules, certificateDN(certs[0]))
				if err != nil {
					c.logger.Warn("closing connection: SSL authentication failed", "reason", err)
					nc.Close()
					return
				}
				c.principal = "User:" + name
			}
		}
		c.nc = tc
	}
	replies := make(chan *reply, maxInflight)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.writeLoop(replies)
	}()
	err := c.readLoop(replies)
	close(replies)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		c.logger.Info("closing connection", "client_id", c.client, "reason", err)
	}
	<-done
	c.nc.Close()
}

// readLoop reads and handles requests in order until the connection fails.
func (c *conn) readLoop(replies chan<- *reply) error {
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var sizeBuf [4]byte
	for {
		if _, err := io.ReadFull(br, sizeBuf[:]); err != nil {
			return err
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		if c.l.cfg.sasl() && !c.sasl.authenticated && (size < 0 || size > saslMaxReceive) {
			return fmt.Errorf("SASL frame of %d bytes is outside [0, %d] (sasl.server.max.receive.size)", size, saslMaxReceive)
		}
		if c.sasl.rawTokens {
			// SaslHandshake v0: a bare token.
			if size < 0 || size > saslMaxReceive {
				return fmt.Errorf("SASL token of %d bytes is outside [0, %d]", size, saslMaxReceive)
			}
			tok := make([]byte, size)
			if _, err := io.ReadFull(br, tok); err != nil {
				return fmt.Errorf("read SASL token: %w", err)
			}
			r := c.rawSASLToken(tok)
			replies <- r
			if r.fail != nil {
				return nil
			}
			continue
		}
		if size < 10 || size > c.b.cfg.MaxRequestBytes {
			return fmt.Errorf("request frame of %d bytes is outside [10, %d] (socket.request.max.bytes)", size, c.b.cfg.MaxRequestBytes)
		}
		frame, release, err := c.readFrame(br, size)
		if err != nil {
			return fmt.Errorf("read request frame: %w", err)
		}
		start := time.Now()
		r, err := c.handleFrame(frame)
		release()
		if err != nil {
			return err
		}
		r.start = start
		select {
		case replies <- r:
		case <-c.b.ctx.Done():
			return net.ErrClosed
		}
		if r.closeAfter {
			return nil // the writer answers, then closes
		}
	}
}

// maxPooledFrame bounds the Produce frames whose buffers are pooled; larger
// ones are allocated each time, so a rare huge request pins no memory.
const maxPooledFrame = 16 << 20

// readFrame reads a request frame of size bytes. A Produce frame, a
// producer's whole batch data, goes into a pooled buffer, to be handed back
// with release once the request is handled: handleProduce keeps nothing of
// it. Other requests may keep slices of their frame (group metadata,
// SASL tokens), so theirs are their own.
func (c *conn) readFrame(br *bufio.Reader, size int32) (frame []byte, release func(), err error) {
	release = func() {}
	if key, err := br.Peek(2); err == nil && int16(binary.BigEndian.Uint16(key)) == produceKey && size <= maxPooledFrame {
		pool := &c.b.produceFrames
		buf, _ := pool.Get().(*[]byte)
		if buf == nil || cap(*buf) < int(size) {
			b := make([]byte, size)
			buf = &b
		}
		frame = (*buf)[:size]
		release = func() { pool.Put(buf) }
	} else {
		frame = make([]byte, size)
	}
	if _, err := io.ReadFull(br, frame); err != nil {
		release()
		return nil, nil, err
	}
	return frame, release, nil
}

// handleFrame parses one request frame and starts handling it. An error
// closes the connection: an unknown key, an unsupported version or a body
// that does not parse.
func (c *conn) handleFrame(frame []byte) (r *reply, err error) {
	rd := kbin.Reader{Src: frame}
	key := rd.Int16()
	version := rd.Int16()
	corr := rd.Int32()
	client := rd.NullableString()
	if rd.Complete() != nil {
		return nil, errors.New("malformed request header")
	}
	if client != nil {
		c.client = *client
	}
	api, known := apiByKey[key]
	req := kmsg.RequestForKey(key)
	if !known || req == nil {
		return nil, fmt.Errorf("unsupported API key %d", key)
	}
	if key == apiVersionsKey && (version < api.min || version > api.max) {
		// KIP-511: answer with v0 and the supported ranges so the client
		// can retry with a version we know.
		resp := c.b.apiVersionsResponse(0)
		resp.ErrorCode = errUnsupportedVersion
		return &reply{corr: corr, key: key, resp: resp}, nil
	}
	if version < api.min || version > api.max {
		return nil, fmt.Errorf("unsupported version %d of %s (supported %d-%d)", version, kmsg.NameForKey(key), api.min, api.max)
	}
	if err := c.gate(key); err != nil {
		return nil, err
	}
	c.b.requests.request(key, version)
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&rd)
		if rd.Complete() != nil {
			return nil, errors.New("malformed request header tags")
		}
	}
	if err := req.ReadFrom(rd.Src); err != nil {
		return nil, fmt.Errorf("malformed %s v%d request: %w", kmsg.NameForKey(key), version, err)
	}
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("request handler panicked", "api", kmsg.NameForKey(key), "panic", p, "stack", string(debug.Stack()))
			r, err = nil, fmt.Errorf("internal error handling %s", kmsg.NameForKey(key))
		}
	}()
	if key == apiVersionsKey {
		r = &reply{resp: c.b.apiVersionsResponse(version)}
	} else {
		r = api.handle(c, req)
	}
	r.corr, r.key, r.flexible = corr, key, req.IsFlexible()
	return r, nil
}

// writeLoop writes responses in request order.
func (c *conn) writeLoop(replies <-chan *reply) {
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var buf []byte
	broken := false
	for r := range replies {
		if !broken && r.ready != nil {
			select {
			case <-r.ready:
			case <-c.b.ctx.Done():
				// Shutting down: the reply may still be in the making,
				// so none of its fields may be read.
				broken = true
				c.nc.Close()
				continue
			}
		}
		if broken {
			if r.ready == nil {
				r.fetch.release()
			} else {
				// The reply is still being made (a long-poll fetch):
				// release what it holds once it is done.
				go func(r *reply) {
					<-r.ready
					r.fetch.release()
				}(r)
			}
			continue // drain so the reader never blocks
		}
		if r.fail != nil {
			c.logger.Warn("closing connection", "client_id", c.client, "reason", r.fail)
			broken = true
			if r.fetch != nil {
				r.fetch.release()
			}
			c.nc.Close()
			continue
		}
		if r.none {
			continue
		}
		if r.delay > 0 {
			select {
			case <-time.After(r.delay):
			case <-c.b.ctx.Done():
			}
		}
		var err error
		if r.rawSet {
			buf = binary.BigEndian.AppendUint32(buf[:0], uint32(len(r.raw)))
			buf = append(buf, r.raw...)
			_, err = bw.Write(buf)
		} else if r.fetch != nil {
			err = c.writeFetch(bw, r)
			if err == nil {
				c.b.fetched(r.fetch)
			}
			r.fetch.release()
		} else {
			buf = appendResponse(buf[:0], r.corr, r.flexible && r.key != apiVersionsKey, r.resp)
			_, err = bw.Write(buf)
		}
		if err == nil && (len(replies) == 0 || r.closeAfter) {
			err = bw.Flush()
		}
		if r.closeAfter {
			c.logger.Info("closing connection after failed authentication", "client_id", c.client)
			broken = true
			c.nc.Close()
			continue
		}
		if err != nil {
			broken = true
			c.nc.Close()
			continue
		}
		if !r.start.IsZero() {
			c.b.requests.answered(r.key, r.start)
		}
	}
	if !broken {
		bw.Flush()
	}
}

// appendResponse frames a response: size, correlation id, header tags.
func appendResponse(dst []byte, corr int32, flexibleHeader bool, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, corr)
	if flexibleHeader {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// writeFetch writes a fetch response whose record data goes from the segment
// files to the socket with sendfile.
func (c *conn) writeFetch(bw *bufio.Writer, r *reply) error {
	f := r.fetch
	for _, part := range f.encode(r.corr) {
		if part.chunk == nil {
			if _, err := bw.Write(part.bytes); err != nil {
				return err
			}
			continue
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := sendChunk(c.nc, part.chunk.File(), part.chunk.Pos, part.chunk.Len, &c.b.copyBufs); err != nil {
			return err
		}
	}
	return nil
}

// sendChunk copies n bytes at off of file to the connection, with sendfile
// when the connection is a TCP socket, else (TLS) through a buffer of bufs.
func sendChunk(nc net.Conn, file interface {
	io.ReaderAt
	Fd() uintptr
}, off, n int64, bufs *sync.Pool) error {
	if sc, ok := nc.(syscall.Conn); ok {
		raw, err := sc.SyscallConn()
		if err == nil {
			var serr error
			infd := int(file.Fd())
			werr := raw.Write(func(fd uintptr) bool {
				for n > 0 {
					w, err := unix.Sendfile(int(fd), infd, &off, int(min(n, 1<<30)))
					if w > 0 {
						n -= int64(w)
					}
					if err == unix.EAGAIN {
						return false
					}
					if err == unix.EINTR {
						continue
					}
					if err != nil {
						serr = err
						return true
					}
					if w == 0 {
						serr = io.ErrUnexpectedEOF
						return true
					}
				}
				return true
			})
			if werr != nil {
				return werr
			}
			return serr
		}
	}
	// TLS: through a large buffer, so the TLS layer writes full records.
	buf := bufs.Get().(*[]byte)
	defer bufs.Put(buf)
	_, err := io.CopyBuffer(onlyWriter{nc}, io.NewSectionReader(file, off, n), *buf)
	return err
}

// onlyWriter hides a writer's ReadFrom, so io.CopyBuffer uses the buffer.
type onlyWriter struct{ io.Writer }
