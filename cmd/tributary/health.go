package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// waitHealthy polls GET /health until it answers 200.
func waitHealthy(ctx context.Context, url string, client *http.Client, user, password string) error {
	if client == nil {
		client = http.DefaultClient
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("GET /health answered %s", resp.Status)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitHerderHealthy waits for the worker's own health check (for a REST
// API the caller cannot authenticate to).
func waitHerderHealthy(ctx context.Context, rw *runningWorker) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := rw.w.Herder().Health(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
