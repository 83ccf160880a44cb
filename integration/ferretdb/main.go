// Command ferretdb runs FerretDB v1 (a MongoDB wire-protocol server on a
// SQLite backend) for Tributary's integration tests and benchmarks. It is a
// module of its own so that FerretDB and its dependencies stay out of the
// product's go.mod; integration/harness builds it once (cached by the hash of
// this directory) and starts it as a process.
//
// It listens on --listen (default 127.0.0.1:0, a free port), keeps its data
// in --data, prints one line "ready <mongodb URI>" on stdout once it accepts
// connections, and stops on SIGINT or SIGTERM (or when its parent dies, on
// Linux). FerretDB's own log goes to stderr at --log-level.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on (port 0: a free port)")
	data := flag.String("data", "", "directory of the SQLite databases (required)")
	level := flag.String("log-level", "warn", "log level of FerretDB's log on stderr: debug, info, warn or error")
	flag.Parse()
	if err := run(*listen, *data, *level); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, data, level string) error {
	if data == "" {
		return fmt.Errorf("--data is required")
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go watchParent(ctx, cancel)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// MongoDBURI waits until the listener is bound.
	fmt.Printf("ready %s\n", f.MongoDBURI())
	return <-done
}
