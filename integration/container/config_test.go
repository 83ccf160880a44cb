package container

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/tributary-dev/tributary/integration/harness"
)

// envName is the CONNECT_* variable that sets key (Confluent's spelling:
// a dot is _, a dash __, an underscore ___).
func envName(key string) string {
	key = strings.ReplaceAll(key, "_", "___")
	key = strings.ReplaceAll(key, "-", "__")
	return "CONNECT_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// propertiesFile writes props as a properties file the image's user can
// read and returns its path.
func propertiesFile(t *testing.T, props map[string]string) string {
	t.Helper()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strings.ReplaceAll(props[k], `\`, `\\`) + "\n")
	}
	path := filepath.Join(hostDir(t), "worker.properties")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// printConfig runs `worker --print-config ARGS` in the image with env and
// the host file mounted at /etc/tributary/worker.properties (if not ""),
// and returns what it printed; it fails t unless the exit code is 0.
func printConfig(t *testing.T, image string, env map[string]string, file string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd(append([]string{"worker", "--print-config"}, args...)...),
		testcontainers.WithEnv(env),
		testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(30 * time.Second)),
	}
	if file != "" {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: file, Target: "/etc/tributary/worker.properties", ReadOnly: true})
		}))
	}
	c, err := testcontainers.Run(ctx, image, opts...)
	if c != nil {
		terminate(t, c)
	}
	if err != nil {
		t.Fatalf("run worker --print-config: %v", err)
	}
	st, err := c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Logs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, _ := io.ReadAll(r)
	if st.ExitCode != 0 {
		t.Fatalf("worker --print-config in the container: exit %d\n%s", st.ExitCode, out)
	}
	return string(out)
}

// TestImageWorkerConfiguration: CONNECT_* variables, Debezium's short
// variables and a mounted properties file configure the worker in the
// image exactly as the same properties configure `tributary worker FILE`
// outside it (compared with --print-config, which prints the merged
// settings the worker would run with).
func TestImageWorkerConfiguration(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	bin := harness.BuildTributary(t)
	base := map[string]string{
		"bootstrap.servers": "broker-1:9092,broker-2:9092", "group.id": "connect-cluster",
		"config.storage.topic": "connect-configs", "offset.storage.topic": "connect-offsets",
		"status.storage.topic": "connect-status",
		"key.converter":        "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":      "org.apache.kafka.connect.json.JsonConverter",
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name  string
		props map[string]string
		// short: the settings given as Debezium's short variables
		// instead of CONNECT_* ones.
		short map[string]string
	}{
		{name: "required settings", props: with(nil)},
		{name: "families, dashes, underscores and secrets", props: with(map[string]string{
			"value.converter.schemas.enable":    "false",
			"config.storage.replication.factor": "1", "offset.storage.partitions": "5",
			"listeners": "http://0.0.0.0:8084", "rest.advertised.host.name": "worker-1", "rest.advertised.port": "18084",
			"offset.flush.interval.ms": "1000", "scheduled.rebalance.max.delay.ms": "5000",
			"producer.linger.ms": "5", "producer.client-id": "dashed", "consumer.max.poll.records": "500",
			"admin.request.timeout.ms": "20000", "plugin.path": "/opt/plugins,/usr/share/plugins",
			"a_key.with_underscores": "x", "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
			"producer.ssl.key.password": "secret",
		})},
		{name: "Debezium's short variables", props: with(map[string]string{
			"offset.flush.interval.ms": "2000", "task.shutdown.graceful.timeout.ms": "7000",
		}), short: map[string]string{
			"BOOTSTRAP_SERVERS": "broker-1:9092,broker-2:9092", "GROUP_ID": "connect-cluster",
			"CONFIG_STORAGE_TOPIC": "connect-configs", "OFFSET_STORAGE_TOPIC": "connect-offsets",
			"STATUS_STORAGE_TOPIC": "connect-status", "KEY_CONVERTER": "org.apache.kafka.connect.storage.StringConverter",
			"VALUE_CONVERTER": "org.apache.kafka.connect.json.JsonConverter", "OFFSET_FLUSH_INTERVAL_MS": "2000",
			"SHUTDOWN_TIMEOUT": "7000",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := propertiesFile(t, c.props)
			local := harness.RunTributary(t, bin, 30*time.Second, "worker", file, "--print-config")
			if local.ExitCode != 0 {
				t.Fatalf("tributary worker %s --print-config: exit %d\n%s", file, local.ExitCode, local.Stderr)
			}
			want := local.Stdout
			for k := range c.props {
				if !strings.Contains(want, "\n"+k+"=") && !strings.HasPrefix(want, k+"=") {
					t.Errorf("tributary worker --print-config does not show %s:\n%s", k, want)
				}
			}
			if strings.Contains(want, "password=\"p\"") || strings.Contains(want, "=secret") {
				t.Errorf("a secret was printed:\n%s", want)
			}
			env := c.short
			if env == nil {
				env = map[string]string{}
				for k, v := range c.props {
					env[envName(k)] = v
				}
			}
			if got := printConfig(t, image, env, ""); got != want {
				t.Errorf("from the environment:\n%s\nwant, as tributary worker FILE:\n%s", got, want)
			}
			if got := printConfig(t, image, nil, file, "--config", "/etc/tributary/worker.properties"); got != want {
				t.Errorf("from the mounted file:\n%s\nwant, as tributary worker FILE:\n%s", got, want)
			}
		})
	}
}
