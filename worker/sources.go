package worker

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/tributary-dev/tributary/internal/configprovider"
	"github.com/tributary-dev/tributary/internal/kafkaauth"
	"github.com/tributary-dev/tributary/internal/properties"
)

// Sources are the places a worker's settings come from, lowest precedence
// first: Defaults, the properties File, the CONNECT_* variables of Environ
// (and, with ShortForms, the Debezium image's short variables), then the
// Overrides ("key=value"). Load merges them.
type Sources struct {
	// Defaults sit below everything else: a container image's defaults,
	// say (see ContainerDefaults). Nil for none.
	Defaults properties.Properties
	// File is a connect-distributed.properties file; "" for none.
	File string
	// Environ is the process environment, as os.Environ returns it.
	Environ []string
	// ShortForms also reads the short variables of Debezium's connect
	// image (BOOTSTRAP_SERVERS, GROUP_ID, …; see DebeziumShortForms).
	ShortForms bool
	// Overrides are --override settings, applied last, in order.
	Overrides []string
}

// Merge returns the merged properties without parsing them, so that a
// caller can show what a worker would run with (tributary worker
// --print-config).
func (s Sources) Merge() (properties.Properties, error) {
	p := properties.Properties{}
	maps.Copy(p, s.Defaults)
	if s.File != "" {
		loaded, err := properties.Load(s.File)
		if err != nil {
			return nil, err
		}
		maps.Copy(p, loaded)
	}
	env, err := EnvSettings(s.Environ, s.ShortForms)
	if err != nil {
		return nil, err
	}
	maps.Copy(p, env)
	for _, o := range s.Overrides {
		k, v, err := properties.ParseOverride(o)
		if err != nil {
			return nil, fmt.Errorf("--override: %w", err)
		}
		p[k] = v
	}
	return p, nil
}

// Load merges the sources, resolves their references (see
// ResolveReferences) and parses the result (see FromProperties).
func (s Sources) Load() (Config, []string, error) {
	p, err := s.Merge()
	if err != nil {
		return Config{}, nil, err
	}
	p, warnings, err := ResolveReferences(p, s.Environ)
	if err != nil {
		return Config{}, nil, err
	}
	c, more, err := FromProperties(p)
	return c, append(warnings, more...), err
}

// ResolveReferences replaces the ${provider:[path:]key} references in
// worker properties with what the config providers the properties
// configure (config.providers, config.providers.NAME.class, …) give, as
// Kafka does for every configuration (KIP-421). A reference that does not
// resolve stays as it is, with a warning saying why; a provider that fails
// (an unreadable file) is an error. environ is what ${env:…} reads.
func ResolveReferences(p properties.Properties, environ []string) (properties.Properties, []string, error) {
	providers, err := configprovider.New(p, environ)
	if err != nil {
		return nil, nil, err
	}
	in := map[string]string{}
	for k, v := range p {
		if !strings.HasPrefix(k, "config.providers") && configprovider.HasReference(v) {
			in[k] = v
		}
	}
	if len(in) == 0 {
		return p, nil, nil
	}
	res, err := providers.Resolve(in)
	if err != nil {
		return nil, nil, fmt.Errorf("config providers: %w", err)
	}
	out := maps.Clone(p)
	maps.Copy(out, res.Values)
	var warnings []string
	for _, k := range slices.Sorted(maps.Keys(res.Unresolved)) {
		for _, why := range res.Unresolved[k] {
			warnings = append(warnings, fmt.Sprintf("%s: the reference %s; the value is used as it is", k, why))
		}
	}
	return out, warnings, nil
}

// EnvOverrides turns Confluent-image style environment variables into
// properties: CONNECT_BOOTSTRAP_SERVERS=x sets bootstrap.servers=x (one
// underscore is a dot, two are a dash, three an underscore), as
// confluentinc/cp-kafka-connect reads them.
func EnvOverrides(environ []string) properties.Properties {
	p := properties.Properties{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "CONNECT_") {
			continue
		}
		p[EnvKey(strings.TrimPrefix(k, "CONNECT_"))] = v
	}
	return p
}

// EnvKey turns the part of a CONNECT_* variable's name after the prefix into
// a property name: lower case, _ a dot, __ a dash, ___ an underscore.
func EnvKey(name string) string {
	name = strings.ToLower(name)
	name = strings.ReplaceAll(name, "___", "\x00")
	name = strings.ReplaceAll(name, "__", "-")
	name = strings.ReplaceAll(name, "_", ".")
	return strings.ReplaceAll(name, "\x00", "_")
}

// DebeziumShortForms maps the short environment variables of Debezium's
// connect image (quay.io/debezium/connect, docker-entrypoint.sh) to the
// worker property each one sets. Variables that image reads for two
// settings at once (HOST_NAME, REST_HOST_NAME) or for settings Kafka Connect
// 4 no longer has (REST_PORT) are left out.
var DebeziumShortForms = map[string]string{
	"BOOTSTRAP_SERVERS":        "bootstrap.servers",
	"GROUP_ID":                 "group.id",
	"CONFIG_STORAGE_TOPIC":     "config.storage.topic",
	"OFFSET_STORAGE_TOPIC":     "offset.storage.topic",
	"STATUS_STORAGE_TOPIC":     "status.storage.topic",
	"KEY_CONVERTER":            "key.converter",
	"VALUE_CONVERTER":          "value.converter",
	"OFFSET_FLUSH_INTERVAL_MS": "offset.flush.interval.ms",
	"OFFSET_FLUSH_TIMEOUT_MS":  "offset.flush.timeout.ms",
	"SHUTDOWN_TIMEOUT":         "task.shutdown.graceful.timeout.ms",
	"ADVERTISED_HOST_NAME":     "rest.advertised.host.name",
	"ADVERTISED_PORT":          "rest.advertised.port",
}

// EnvSettings returns the settings the environment gives: every CONNECT_*
// variable (see EnvOverrides) and, with shortForms, Debezium's short
// variables (see DebeziumShortForms). A short variable and the CONNECT_*
// variable of the same setting may both be set only to the same value:
// with two values the setting would be ambiguous, and it is an error
// naming both.
func EnvSettings(environ []string, shortForms bool) (properties.Properties, error) {
	p := EnvOverrides(environ)
	if !shortForms {
		return p, nil
	}
	var conflicts []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		key, short := DebeziumShortForms[k]
		if !ok || !short {
			continue
		}
		if prev, set := p[key]; set && prev != v {
			conflicts = append(conflicts, fmt.Sprintf("%s=%q and CONNECT_%s=%q both set %s: unset one of them",
				k, v, strings.ToUpper(strings.ReplaceAll(key, ".", "_")), prev, key))
			continue
		}
		p[key] = v
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return nil, fmt.Errorf("ambiguous environment: %s", strings.Join(conflicts, "; "))
	}
	return p, nil
}

// ContainerDefaults are the defaults of a worker in Tributary's container
// image, below the properties file and the environment: JsonConverter for
// keys and values, as Debezium's image defaults them. (The REST API already
// listens on all interfaces by default, as Kafka Connect's does, and is
// then advertised by the host name, the container's; see Config.WorkerID.)
func ContainerDefaults() properties.Properties {
	return properties.Properties{
		"key.converter":   JSONConverter,
		"value.converter": JSONConverter,
	}
}

// secretKey reports whether a setting's value is a secret that must not be
// shown: a password, a secret, a JAAS configuration or a key's material.
func secretKey(k string) bool {
	if kafkaauth.IsSecret(k) {
		return true
	}
	k = strings.ToLower(k)
	for _, s := range []string{"password", "secret", "jaas.config", "credentials", "token", "keystore.key"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// Printable returns p as sorted "key=value" lines with the values of
// secret settings replaced by [hidden].
func Printable(p properties.Properties) []string {
	lines := make([]string, 0, len(p))
	for _, k := range p.Keys() {
		v := p[k]
		if secretKey(k) {
			v = "[hidden]"
		}
		lines = append(lines, k+"="+v)
	}
	return lines
}
