package worker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/internal/properties"
)

func TestEnvSettingsShortForms(t *testing.T) {
	cases := []struct {
		name    string
		environ []string
		short   bool
		want    map[string]string
		err     string
	}{
		{name: "short forms ignored outside the image",
			environ: []string{"BOOTSTRAP_SERVERS=b:9092", "GROUP_ID=g"},
			want:    map[string]string{}},
		{name: "each short form",
			environ: []string{"BOOTSTRAP_SERVERS=b:9092", "GROUP_ID=g", "CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o",
				"STATUS_STORAGE_TOPIC=s", "KEY_CONVERTER=k", "VALUE_CONVERTER=v", "OFFSET_FLUSH_INTERVAL_MS=1000",
				"OFFSET_FLUSH_TIMEOUT_MS=2000", "SHUTDOWN_TIMEOUT=3000", "ADVERTISED_HOST_NAME=w1", "ADVERTISED_PORT=8084",
				"HOST_NAME=ignored", "REST_PORT=ignored"},
			short: true,
			want: map[string]string{"bootstrap.servers": "b:9092", "group.id": "g", "config.storage.topic": "c",
				"offset.storage.topic": "o", "status.storage.topic": "s", "key.converter": "k", "value.converter": "v",
				"offset.flush.interval.ms": "1000", "offset.flush.timeout.ms": "2000", "task.shutdown.graceful.timeout.ms": "3000",
				"rest.advertised.host.name": "w1", "rest.advertised.port": "8084"}},
		{name: "short and CONNECT_ forms agree",
			environ: []string{"GROUP_ID=g", "CONNECT_GROUP_ID=g", "CONNECT_OFFSET_STORAGE_PARTITIONS=3"},
			short:   true,
			want:    map[string]string{"group.id": "g", "offset.storage.partitions": "3"}},
		{name: "short and CONNECT_ forms disagree",
			environ: []string{"GROUP_ID=a", "CONNECT_GROUP_ID=b", "CONFIG_STORAGE_TOPIC=x", "CONNECT_CONFIG_STORAGE_TOPIC=y"},
			short:   true,
			err:     `ambiguous environment: CONFIG_STORAGE_TOPIC="x" and CONNECT_CONFIG_STORAGE_TOPIC="y" both set config.storage.topic: unset one of them; GROUP_ID="a" and CONNECT_GROUP_ID="b" both set group.id: unset one of them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := EnvSettings(c.environ, c.short)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p) != len(c.want) {
				t.Errorf("got %v, want %v", p, c.want)
			}
			for k, v := range c.want {
				if p[k] != v {
					t.Errorf("%s = %q, want %q", k, p[k], v)
				}
			}
		})
	}
}

func TestSourcesPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.properties")
	if err := os.WriteFile(file, []byte("group.id=file\nconfig.storage.topic=file-configs\nkey.converter=file-key\nlisteners=http://0.0.0.0:9000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Sources{
		Defaults:   properties.Properties{"key.converter": "default-key", "value.converter": "default-value", "group.id": "default"},
		File:       file,
		Environ:    []string{"CONNECT_CONFIG_STORAGE_TOPIC=env-configs", "OFFSET_STORAGE_TOPIC=env-offsets", "CONNECT_LISTENERS=http://0.0.0.0:9001"},
		ShortForms: true,
		Overrides:  []string{"listeners=http://0.0.0.0:9002"},
	}
	p, err := s.Merge()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"group.id":             "file",          // file over defaults
		"key.converter":        "file-key",      // file over defaults
		"value.converter":      "default-value", // defaults where nothing else sets it
		"config.storage.topic": "env-configs",   // environment over file
		"offset.storage.topic": "env-offsets",   // short form
		"listeners":            "http://0.0.0.0:9002",
	}
	if len(p) != len(want) {
		t.Errorf("got %v", p)
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	if _, err := (Sources{File: filepath.Join(t.TempDir(), "missing")}).Merge(); err == nil {
		t.Error("a missing file merged without an error")
	}
	if _, err := (Sources{Overrides: []string{"novalue"}}).Merge(); err == nil || !strings.Contains(err.Error(), "--override") {
		t.Errorf("a bad override: err = %v", err)
	}
}

func TestPrintableHidesSecrets(t *testing.T) {
	got := strings.Join(Printable(properties.Properties{
		"bootstrap.servers": "b:9092", "sasl.jaas.config": "x required password=\"p\";",
		"producer.ssl.key.password": "p", "consumer.ssl.keystore.password": "p", "ssl.keystore.key": "PEM",
		"key.converter": "k",
	}), "\n")
	want := strings.Join([]string{"bootstrap.servers=b:9092", "consumer.ssl.keystore.password=[hidden]", "key.converter=k",
		"producer.ssl.key.password=[hidden]", "sasl.jaas.config=[hidden]", "ssl.keystore.key=[hidden]"}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
