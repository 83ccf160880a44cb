package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunEnv(t *testing.T) {
	host := func() (string, error) { return "c0ffee", nil }
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == containerEnv {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		value     string
		container bool
		hostname  string
		bind      string
	}{
		{"", false, "", "127.0.0.1"},
		{"false", false, "", "127.0.0.1"},
		{"garbage", false, "", "127.0.0.1"},
		{"true", true, "c0ffee", "0.0.0.0"},
		{"1", true, "c0ffee", "0.0.0.0"},
	} {
		e := newRunEnv(env(c.value), host)
		if e.container != c.container || e.hostname != c.hostname || e.bindHost() != c.bind {
			t.Errorf("%s=%q: %+v (bind %s)", containerEnv, c.value, e, e.bindHost())
		}
	}
	e := newRunEnv(env("true"), func() (string, error) { return "", errors.New("no name") })
	if !e.container || e.hostname != "" {
		t.Errorf("without a host name: %+v", e)
	}
}

func TestDialable(t *testing.T) {
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv4zero, Port: 8083}:          "127.0.0.1:8083",
		&net.TCPAddr{IP: net.IPv6unspecified, Port: 8083}:   "127.0.0.1:8083",
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}:  "127.0.0.1:80",
		&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 9092}: "10.1.2.3:9092",
	} {
		if got := dialable(addr); got != want {
			t.Errorf("dialable(%s) = %s, want %s", addr, got, want)
		}
	}
}

// TestWorkerPrintConfig: --print-config shows the merged settings of the
// file, the environment and the overrides with secrets hidden, and in the
// container image also the image's defaults and Debezium's short variables.
func TestWorkerPrintConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.properties")
	if err := os.WriteFile(file, []byte("bootstrap.servers=file:9092\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nsasl.jaas.config=secret stuff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	printConfig := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := runWorker(context.Background(), append([]string{"--print-config"}, args...), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	t.Setenv("CONNECT_BOOTSTRAP_SERVERS", "env:9092")
	t.Setenv("GROUP_ID", "short")
	out, errOut, code := printConfig(file, "--override", "key.converter=k", "--override", "value.converter=v")
	want := "bootstrap.servers=env:9092\nconfig.storage.topic=c\ngroup.id=g\nkey.converter=k\noffset.storage.topic=o\nsasl.jaas.config=[hidden]\nstatus.storage.topic=s\nvalue.converter=v\n"
	if code != 0 || out != want {
		t.Errorf("outside a container: exit %d, stderr %q, printed\n%s\nwant\n%s", code, errOut, out, want)
	}
	t.Setenv(containerEnv, "true")
	out, errOut, code = printConfig(file)
	want = "bootstrap.servers=env:9092\nconfig.storage.topic=c\ngroup.id=short\nkey.converter=org.apache.kafka.connect.json.JsonConverter\noffset.storage.topic=o\nsasl.jaas.config=[hidden]\nstatus.storage.topic=s\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\n"
	if code != 0 || out != want {
		t.Errorf("in a container: exit %d, stderr %q, printed\n%s\nwant\n%s", code, errOut, out, want)
	}
	t.Setenv("CONNECT_GROUP_ID", "other")
	if _, errOut, code = printConfig(file); code != 2 || !strings.Contains(errOut, "GROUP_ID") {
		t.Errorf("ambiguous GROUP_ID: exit %d, stderr %q", code, errOut)
	}
	t.Setenv(containerEnv, "false")
	if _, errOut, code = printConfig(); code != 2 || !strings.Contains(errOut, "config.storage.topic: missing") {
		t.Errorf("no file: exit %d, stderr %q", code, errOut)
	}
}
