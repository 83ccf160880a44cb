package main

import (
	"context"
	"os"
	"time"
)

// watchParent stops the server when the process that started it is gone
// (the harness was killed), so no server outlives its test.
func watchParent(ctx context.Context, stop context.CancelFunc) {
	ppid := os.Getppid()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != ppid {
				stop()
				return
			}
		}
	}
}
