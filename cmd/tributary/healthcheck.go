package main

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func healthcheckCommand() command {
	return command{name: "healthcheck", summary: "exit 0 if the worker, dev or broker on this host is ready (for container health checks)",
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return runHealthcheck(ctx, args, os.Getenv, stdout, stderr)
		}}
}

const healthcheckHelp = `Usage: tributary healthcheck [--url URL] [--kafka HOST:PORT] [--timeout D]

Exits 0 when the Tributary process on this host is ready, 1 (saying why on
stderr) when it is not: the container image's HEALTHCHECK, which has no shell
or curl to run. It asks, in order:

  1. the REST API's GET /health (a worker or dev): ready when it answers 200;
  2. if nothing listens there, the Kafka listener (a broker): ready when it
     answers an ApiVersions request without an error.

A REST API behind basic authentication (rest.extension.classes) is asked
with the credentials of TRIBUTARY_USER and TRIBUTARY_PASSWORD; an HTTPS one
on 127.0.0.1 without checking its certificate.

Flags:
  --url URL          the REST API [http://127.0.0.1:8083, or the port of
                     CONNECT_LISTENERS when that variable is set]
  --kafka HOST:PORT  the Kafka listener [127.0.0.1:9092]
  --timeout D        how long each check may take [3s]
  -h, --help         show this help

In a compose file whose worker serves its REST API on another port:
  healthcheck:
    test: ["CMD", "tributary", "healthcheck", "--url", "http://127.0.0.1:8084"]
`

func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	restURL := fs.String("url", "", "")
	kafka := fs.String("kafka", "127.0.0.1:9092", "")
	timeout := fs.Duration("timeout", 3*time.Second, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, healthcheckHelp)
			return 0
		}
		fmt.Fprintf(stderr, "tributary healthcheck: %v (see --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tributary healthcheck: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	if *restURL == "" {
		*restURL = healthURL(getenv("CONNECT_LISTENERS"))
	}
	err := checkREST(ctx, *restURL, *timeout, getenv("TRIBUTARY_USER"), getenv("TRIBUTARY_PASSWORD"))
	if errors.Is(err, syscall.ECONNREFUSED) {
		if kerr := checkKafka(ctx, *kafka, *timeout); kerr != nil {
			fmt.Fprintf(stderr, "tributary healthcheck: not ready: nothing listens at %s, and the Kafka listener: %v\n", *restURL, kerr)
			return 1
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "tributary healthcheck: not ready: %v\n", err)
		return 1
	}
	return 0
}

// healthURL is the local REST URL of the first listener in listeners (a
// worker's listeners setting), or http://127.0.0.1:8083.
func healthURL(listeners string) string {
	first, _, _ := strings.Cut(listeners, ",")
	u, err := url.Parse(strings.TrimSpace(first))
	if err != nil || u.Port() == "" {
		return defaultConnectURL
	}
	scheme := u.Scheme
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + net.JoinHostPort("127.0.0.1", u.Port())
}

// checkREST asks base/health once, with basic credentials when user is
// set. An HTTPS listener on the loopback is asked without checking its
// certificate: the probe runs beside the process it probes.
func checkREST(ctx context.Context, base string, timeout time.Duration, user, password string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/health", nil)
	if err != nil {
		return err
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	client := http.DefaultClient
	if ip := net.ParseIP(req.URL.Hostname()); req.URL.Scheme == "https" && (ip.IsLoopback() || req.URL.Hostname() == "localhost") {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // loopback only: see above
		client = &http.Client{Transport: tr}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("GET %s answered %s: the REST API requires credentials: set TRIBUTARY_USER and TRIBUTARY_PASSWORD", req.URL, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s: %s", req.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// checkKafka sends one ApiVersions request to addr and reads its answer.
func checkKafka(ctx context.Context, addr string, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "tributary-healthcheck"
	req.ClientSoftwareVersion = version
	const correlationID = 1
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("tributary-healthcheck")).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(frame); err != nil {
		return fmt.Errorf("send ApiVersions to %s: %w", addr, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return fmt.Errorf("read the ApiVersions answer from %s: %w", addr, err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return fmt.Errorf("%s answered a frame of %d bytes: not a Kafka listener", addr, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return fmt.Errorf("read the ApiVersions answer from %s: %w", addr, err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != correlationID {
		return fmt.Errorf("%s answered correlation id %d, want %d: not a Kafka listener", addr, got, correlationID)
	}
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.Version = req.Version
	// ApiVersions answers with response header v0 (no tagged fields) at
	// every version, so the body follows the correlation id.
	if err := resp.ReadFrom(body[4:]); err != nil {
		return fmt.Errorf("%s answered a malformed ApiVersions response: %w", addr, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("%s answered ApiVersions with %w", addr, err)
	}
	return nil
}
