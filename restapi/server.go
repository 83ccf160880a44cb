package restapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server runs an http.Server for the REST API with its own goroutine,
// stopped by Shutdown.
type Server struct {
	srv  *http.Server
	log  *slog.Logger
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	up   bool // Start was called
	err  error
}

// NewServer returns a server for h (usually the handler from New); logger
// may be nil.
func NewServer(h http.Handler, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Server{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second, // bodies: Options.BodyTimeout
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		log:  logger,
		done: make(chan struct{}),
	}
}

// Start serves on ln in a new goroutine until Shutdown. It must be called
// at most once.
func (s *Server) Start(ln net.Listener) {
	s.log.Info("rest: listening", "addr", ln.Addr().String())
	s.mu.Lock()
	s.up = true
	s.mu.Unlock()
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("rest: serve %s: %w", ln.Addr(), err)
		}
	}()
}

// Shutdown stops accepting connections and waits for in-flight requests
// until ctx ends, then closes the remaining connections. It returns the
// serve error, if serving failed, or ctx's error if requests had to be cut.
// It is safe to call more than once and without Start.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		err = s.srv.Shutdown(ctx)
		if err != nil {
			_ = s.srv.Close()
		}
	})
	s.mu.Lock()
	up := s.up
	s.mu.Unlock()
	if !up {
		return err
	}
	<-s.done
	return errors.Join(err, s.err)
}
