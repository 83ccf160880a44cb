// Command tributary-bench measures Tributary against its references in one
// run: the bundled broker against franz-go's kfake and Apache Kafka
// (tributary-bench broker), the Connect worker against Kafka Connect
// (tributary-bench connect), its REST API under a burst of creates
// against Kafka Connect's (tributary-bench rest), and many connectors on
// one worker or a cluster against Kafka Connect (tributary-bench many), and
// MirrorMaker 2 replication against Kafka's (tributary-bench mirror). It
// lives under integration/ because it starts
// its peers with the test harness (kfake, the Apache Kafka and Kafka
// Connect jars), which the product binary does not link:
//
//	go run ./integration/cmd/tributary-bench broker --help
//	go run ./integration/cmd/tributary-bench connect --help
//	go run ./integration/cmd/tributary-bench rest --help
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runBench(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
