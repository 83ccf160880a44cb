package main

import (
	"net"
	"os"
	"strconv"
)

// containerEnv names the environment variable Tributary's container image
// sets (docker/Dockerfile). With it true, the commands take defaults that
// work inside a container, where a published port reaches the container's
// interface, not its loopback:
//
//   - broker: listeners PLAINTEXT://0.0.0.0:9092, advertised by the
//     container's host name (which the other containers of a user-defined
//     network resolve) unless advertised.listeners says otherwise;
//   - worker: Debezium's short variables (BOOTSTRAP_SERVERS, GROUP_ID, …)
//     besides CONNECT_*, and JsonConverter as the default key and value
//     converter (the REST API listens on all interfaces anyway, as Kafka
//     Connect's does, and is advertised by the host name);
//   - dev: the Kafka and REST listeners on all interfaces, the broker still
//     advertised as 127.0.0.1 so that clients on the host reach it through a
//     port published under the same number.
//
// Outside a container the defaults stay on 127.0.0.1. Anyone packaging the
// binary in an image of their own can set it too.
const containerEnv = "TRIBUTARY_CONTAINER"

// runEnv is what the commands need to know of where they run.
type runEnv struct {
	container bool   // TRIBUTARY_CONTAINER is true
	hostname  string // the host name (in a container, the container's)
}

// currentRunEnv reads the run environment of this process.
func currentRunEnv() runEnv {
	return newRunEnv(os.Getenv, os.Hostname)
}

// newRunEnv decides the run environment from getenv and hostname.
func newRunEnv(getenv func(string) string, hostname func() (string, error)) runEnv {
	on, _ := strconv.ParseBool(getenv(containerEnv))
	e := runEnv{container: on}
	if on {
		if h, err := hostname(); err == nil {
			e.hostname = h
		}
	}
	return e
}

// bindHost is the host the listeners of dev and of a broker without
// listeners bind: all interfaces in a container, else the loopback.
func (e runEnv) bindHost() string {
	if e.container {
		return "0.0.0.0"
	}
	return "127.0.0.1"
}

// dialable returns addr with a wildcard host replaced by 127.0.0.1, so that
// it can be printed as an address to connect to and dialled locally.
func dialable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
