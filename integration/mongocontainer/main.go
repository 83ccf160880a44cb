// Command mongocontainer starts a single-node MongoDB replica set in Docker,
// through testcontainers-go and its mongodb module, for Tributary's live
// change-stream tests. It is a module of its own so that testcontainers-go
// and its Docker client stay out of the product's go.mod; integration/harness
// builds it (only when a Docker engine answers) and starts it as a process.
//
// It checks that a Docker engine answers (DOCKER_HOST, else testcontainers'
// usual places such as /var/run/docker.sock) and fails within seconds when
// none does; starts --image with the replica set --replica-set initiated;
// waits until the node is the writable primary and a change stream opens;
// then prints one line "ready <mongodb URI>" on stdout and runs until its
// standard input closes (the process that started it exited or closed the
// pipe) or it gets SIGINT or SIGTERM, when it removes the container.
// testcontainers' reaper (Ryuk) removes the container too should this
// process be killed.
//
// The URI connects directly to the one member on its published port
// (directConnection=true): the member's name inside the replica set is the
// container's address, which the host may not reach.
//
// By hand, to run the live tests against a container kept between runs, run
// it in one terminal (Ctrl-D or Ctrl-C removes the container):
//
//	go run .       # prints: ready mongodb://127.0.0.1:32768/?directConnection=true
//
// and the tests in another:
//
//	TRIBUTARY_TEST_MONGODB_URI='<that URI>' go test -run TestMongoLive ./integration/
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mongocontainer:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, dockerStarter{}, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mongocontainer:", err)
		os.Exit(1)
	}
}

// settings are the command line's settings.
type settings struct {
	image      string
	replicaSet string
	timeout    time.Duration
}

func parseFlags(args []string, stderr io.Writer) (settings, error) {
	fs := flag.NewFlagSet("mongocontainer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mongocontainer [flags]")
		fmt.Fprintln(stderr, "Starts a single-node MongoDB replica set in Docker, prints \"ready <uri>\" and removes it when stdin closes or on SIGTERM.")
		fs.PrintDefaults()
	}
	var o settings
	fs.StringVar(&o.image, "image", "mongo:8.0", "official MongoDB image (7.0 or later has $changeStreamSplitLargeEvent and pre/post images)")
	fs.StringVar(&o.replicaSet, "replica-set", "rs0", "name of the replica set to initiate")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long the image pull and the replica set's start may take")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q (all settings are flags; see -h)", fs.Arg(0))
	case o.image == "":
		return o, errors.New("-image must name an image, e.g. mongo:8.0")
	case o.replicaSet == "":
		return o, errors.New("-replica-set must not be empty")
	case o.timeout <= 0:
		return o, fmt.Errorf("-timeout must be positive, not %v", o.timeout)
	}
	return o, nil
}

// starter starts the replica set; the Docker one is in docker.go.
type starter interface {
	// start returns the running replica set, ready for change streams,
	// or an error after removing whatever it had started.
	start(ctx context.Context, o settings, log io.Writer) (replicaSet, error)
}

// replicaSet is a running replica set.
type replicaSet interface {
	uri() string
	// remove stops and removes it.
	remove(ctx context.Context) error
}

// removeTimeout bounds the container's removal.
const removeTimeout = time.Minute

// run starts the replica set, announces it on stdout, and removes it when
// stdin closes or ctx ends (a signal); either during the start gives up
// the start.
func run(ctx context.Context, o settings, s starter, stdin io.Reader, stdout, log io.Writer) error {
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(eof)
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-eof:
			cancel()
		case <-ctx.Done():
		}
	}()
	startCtx, cancelStart := context.WithTimeout(ctx, o.timeout)
	rs, err := s.start(startCtx, o, log)
	cancelStart()
	if err != nil {
		select {
		case <-eof:
			return fmt.Errorf("stdin closed during the start: %w", err)
		default:
			return err
		}
	}
	if _, err := fmt.Fprintf(stdout, "ready %s\n", rs.uri()); err != nil {
		err = fmt.Errorf("announce the URI: %w", err)
		return errors.Join(err, removeNow(rs))
	}
	<-ctx.Done()
	select {
	case <-eof:
		fmt.Fprintln(log, "mongocontainer: stdin closed, removing the container")
	default:
		fmt.Fprintln(log, "mongocontainer: signalled, removing the container")
	}
	return removeNow(rs)
}

func removeNow(rs replicaSet) error {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if err := rs.remove(ctx); err != nil {
		return fmt.Errorf("remove the container (testcontainers' reaper removes it shortly, or: docker ps -a --filter label=org.testcontainers): %w", err)
	}
	return nil
}
