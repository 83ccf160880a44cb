package worker

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/convert"
	"github.com/tributary-dev/tributary/worker/task"
	"github.com/tributary-dev/tributary/worker/transform"
)

// commonDef is one of the configuration keys Kafka Connect 4.4 defines for
// every connector (ConnectorConfig, SourceConnectorConfig,
// SinkConnectorConfig), as its GET /connector-plugins/{plugin}/config and
// validate answers show them.
type commonDef struct {
	name, typ, importance, doc, group, width, display string
	def                                               *string // nil: required
	order                                             int
	only                                              sdk.ConnectorType // "" for both
	kind                                              defKind
	// check is the key's validator in Kafka (its type is checked apart);
	// nonNull: the validator also refuses a value that is not of the
	// type, which Kafka hands it as null.
	check   func(v string) string
	nonNull bool
}

// defKind says where a key's default and value come from.
type defKind int

const (
	kindPlain            defKind = iota
	kindConnectorVersion         // the plugin's version (KIP-891)
	kindConverter                // the worker's converter of the same name
	kindConverterVersion         // the version of that converter
)

func ptr(s string) *string { return &s }

var nullDefault = ptr("\x00null") // a default of null, rendered as JSON null

// commonDefs are in Kafka Connect 4.4's order: ConnectorConfig's keys,
// then a sink's or a source's own.
var commonDefs = []commonDef{
	{name: "name", typ: "STRING", importance: "HIGH", doc: "Globally unique name to use for this connector.", group: "Common", order: 1, width: "MEDIUM", display: "Connector name", check: CheckConnectorName},
	{name: "connector.class", typ: "STRING", importance: "HIGH", doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter", group: "Common", order: 2, width: "LONG", display: "Connector class"},
	{name: "connector.plugin.version", typ: "STRING", def: nullDefault, importance: "MEDIUM", doc: "Version of the connector.", group: "Common", order: 3, width: "MEDIUM", display: "Connector version", kind: kindConnectorVersion},
	{name: "tasks.max", typ: "INT", def: ptr("1"), importance: "HIGH", doc: "Maximum number of tasks to use for this connector.", group: "Common", order: 4, width: "SHORT", display: "Tasks max", check: atLeast(1), nonNull: true},
	{name: "tasks.max.enforce", typ: "BOOLEAN", def: ptr("true"), importance: "LOW", doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.", group: "Common", order: 5, width: "SHORT", display: "Enforce tasks max"},
	{name: "key.converter", typ: "CLASS", def: nullDefault, importance: "LOW", doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.", group: "Common", order: 6, width: "SHORT", display: "Key converter class", kind: kindConverter},
	{name: "key.converter.plugin.version", typ: "STRING", def: nullDefault, importance: "LOW", doc: "Version of the key converter.", group: "Common", order: 7, width: "SHORT", display: "Key converter version", kind: kindConverterVersion},
	{name: "value.converter", typ: "CLASS", def: nullDefault, importance: "LOW", doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.", group: "Common", order: 8, width: "SHORT", display: "Value converter class", kind: kindConverter},
	{name: "value.converter.plugin.version", typ: "STRING", def: nullDefault, importance: "LOW", doc: "Version of the value converter.", group: "Common", order: 9, width: "SHORT", display: "Value converter version", kind: kindConverterVersion},
	{name: "header.converter", typ: "CLASS", def: nullDefault, importance: "LOW", doc: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.", group: "Common", order: 10, width: "SHORT", display: "Header converter class", kind: kindConverter},
	{name: "header.converter.plugin.version", typ: "STRING", def: nullDefault, importance: "LOW", doc: "Version of the header converter.", group: "Common", order: 11, width: "SHORT", display: "Header converter version", kind: kindConverterVersion},
	{name: "transforms", typ: "LIST", def: ptr(""), importance: "LOW", doc: "Aliases for the transformations to be applied to records.", group: "Transforms", order: 12, width: "LONG", display: "Transforms"},
	{name: "predicates", typ: "LIST", def: ptr(""), importance: "LOW", doc: "Aliases for the predicates used by transformations.", group: "Predicates", order: 13, width: "LONG", display: "Predicates"},
	{name: "config.action.reload", typ: "STRING", def: ptr("restart"), importance: "LOW", doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future.", group: "Common", order: 14, width: "MEDIUM", display: "Reload Action", check: oneOf("none", "restart")},
	{name: "errors.retry.timeout", typ: "LONG", def: ptr("0"), importance: "MEDIUM", doc: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.", group: "Error Handling", order: 1, width: "MEDIUM", display: "Retry Timeout for Errors"},
	{name: "errors.retry.delay.max.ms", typ: "LONG", def: ptr("60000"), importance: "MEDIUM", doc: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.", group: "Error Handling", order: 2, width: "MEDIUM", display: "Maximum Delay Between Retries for Errors"},
	{name: "errors.tolerance", typ: "STRING", def: ptr("none"), importance: "MEDIUM", doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.", group: "Error Handling", order: 3, width: "SHORT", display: "Error Tolerance", check: oneOf("none", "all")},
	{name: "errors.log.enable", typ: "BOOLEAN", def: ptr("false"), importance: "MEDIUM", doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.", group: "Error Handling", order: 4, width: "SHORT", display: "Log Errors"},
	{name: "errors.log.include.messages", typ: "BOOLEAN", def: ptr("false"), importance: "MEDIUM", doc: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.", group: "Error Handling", order: 5, width: "SHORT", display: "Log Error Details"},
	{name: "topics", typ: "LIST", def: ptr(""), importance: "HIGH", doc: "List of topics to consume, separated by commas", group: "Common", order: 4, width: "LONG", display: "Topics", only: sdk.Sink},
	{name: "topics.regex", typ: "STRING", def: ptr(""), importance: "HIGH", doc: "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified.", group: "Common", order: 4, width: "LONG", display: "Topics regex", only: sdk.Sink, check: isRegex},
	{name: "errors.deadletterqueue.topic.name", typ: "STRING", def: ptr(""), importance: "MEDIUM", doc: "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.", group: "Error Handling", order: 6, width: "MEDIUM", display: "Dead Letter Queue Topic Name", only: sdk.Sink},
	{name: "errors.deadletterqueue.topic.replication.factor", typ: "SHORT", def: ptr("3"), importance: "MEDIUM", doc: "Replication factor used to create the dead letter queue topic when it doesn't already exist.", group: "Error Handling", order: 7, width: "MEDIUM", display: "Dead Letter Queue Topic Replication Factor", only: sdk.Sink},
	{name: "errors.deadletterqueue.context.headers.enable", typ: "BOOLEAN", def: ptr("false"), importance: "MEDIUM", doc: "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>", group: "Error Handling", order: 8, width: "MEDIUM", display: "Enable Error Context Headers", only: sdk.Sink},
	{name: "topic.creation.groups", typ: "LIST", def: ptr(""), importance: "LOW", doc: "Groups of configurations for topics created by source connectors", group: "Topic Creation", order: 1, width: "LONG", display: "Topic Creation Groups", only: sdk.Source},
	{name: "exactly.once.support", typ: "STRING", def: ptr("requested"), importance: "MEDIUM", doc: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.", group: "Exactly Once Support", order: 2, width: "SHORT", display: "Exactly once support", only: sdk.Source, check: oneOfFold("REQUIRED, REQUESTED", "requested", "required")},
	{name: "transaction.boundary", typ: "STRING", def: ptr("poll"), importance: "MEDIUM", doc: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.", group: "Exactly Once Support", order: 3, width: "SHORT", display: "Transaction Boundary", only: sdk.Source, check: oneOfFold("INTERVAL, POLL, CONNECTOR", "poll", "interval", "connector")},
	{name: "transaction.boundary.interval.ms", typ: "LONG", def: nullDefault, importance: "LOW", doc: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.", group: "Exactly Once Support", order: 4, width: "SHORT", display: "Transaction boundary interval", only: sdk.Source, check: atLeast64(0)},
	{name: "offsets.storage.topic", typ: "STRING", def: nullDefault, importance: "LOW", doc: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.", group: "offsets.topic", order: 1, width: "LONG", display: "Offsets topic", only: sdk.Source, check: nonEmpty},
}

func isRegex(v string) string {
	if _, err := regexp.Compile(v); err != nil {
		return "Must be a valid regular expression: " + err.Error()
	}
	return ""
}

func atLeast(n int64) func(string) string {
	return func(v string) string {
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return "Not a number of type INT"
		}
		if x < n {
			return fmt.Sprintf("Value must be at least %d", n)
		}
		return ""
	}
}

// atLeast64 is Kafka's Range.atLeast for a LONG.
func atLeast64(n int64) func(string) string {
	return func(v string) string {
		x, err := strconv.ParseInt(javaTrim(v), 10, 64)
		if err != nil {
			return "Not a number of type LONG"
		}
		if x < n {
			return fmt.Sprintf("Value must be at least %d", n)
		}
		return ""
	}
}

// nonEmpty is Kafka's NonEmptyString (a STRING value is trimmed).
func nonEmpty(v string) string {
	if javaTrim(v) == "" {
		return "String must be non-empty"
	}
	return ""
}

// oneOfFold is Kafka's CaseInsensitiveValidString; its message lists the
// values upper case in the order of the Java HashSet that holds them
// (listed, as Kafka Connect 4.4 words it).
func oneOfFold(listed string, vals ...string) func(string) string {
	return func(v string) string {
		for _, x := range vals {
			if strings.EqualFold(javaTrim(v), x) {
				return ""
			}
		}
		return "String must be one of (case insensitive): " + listed
	}
}

func oneOf(vals ...string) func(string) string {
	return func(v string) string {
		for _, x := range vals {
			if strings.EqualFold(strings.TrimSpace(v), x) {
				return ""
			}
		}
		return "String must be one of: " + strings.Join(vals, ", ")
	}
}

// javaTrim is Java's String.trim, which ConfigDef.parseType applies: it
// strips the characters up to U+0020 only (strings.TrimSpace would strip
// U+0085 and other Unicode spaces too, which Kafka keeps).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// parseValue is Kafka's ConfigDef.parseType for the types the common keys
// use: the value as Kafka renders it back (trimmed, a LIST with its
// elements trimmed, a number in canonical form), or ok false with the
// message of a value that is not of the type (the key's value is then
// null in a validation, as in Kafka Connect).
func parseValue(typ, v string) (rendered string, ok bool, msg string) {
	t := javaTrim(v)
	switch typ {
	case "INT", "LONG", "SHORT":
		bits := map[string]int{"INT": 32, "LONG": 64, "SHORT": 16}[typ]
		n, err := strconv.ParseInt(t, 10, bits)
		if err != nil {
			return "", false, "Not a number of type " + typ
		}
		return strconv.FormatInt(n, 10), true, ""
	case "BOOLEAN":
		switch strings.ToLower(t) {
		case "true", "false":
			return strings.ToLower(t), true, ""
		}
		return "", false, "Expected value to be either true or false"
	case "LIST":
		if t == "" {
			return "", true, ""
		}
		parts := strings.Split(t, ",")
		for i := range parts {
			parts[i] = javaTrim(parts[i])
		}
		return strings.Join(parts, ","), true, ""
	case "STRING":
		return t, true, ""
	}
	return v, true, ""
}

// converterClasses are the converter classes recommended for key.converter
// and value.converter; headerConverterClasses those for header.converter
// (every converter, and SimpleHeaderConverter). Kafka's own only, as
// Kafka Connect recommends them: the schema-registry converters
// (Confluent's plugins there) are accepted but not listed.
func converterClasses(header bool) []string {
	var out []string
	for _, c := range convert.Classes() {
		if c == SimpleHeaderConverter && !header || !strings.HasPrefix(c, "org.apache.kafka.") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// commonGroups are the groups of the common keys, in Kafka's order.
func commonGroups(t sdk.ConnectorType) []string {
	if t == "sink" {
		return []string{"Common", "Transforms", "Predicates", "Error Handling"}
	}
	return []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"}
}

// keyInfo is the definition of d; connectorVersion is the plugin's
// version, the default of connector.plugin.version.
func (d *commonDef) keyInfo(connectorVersion string) sdk.ConfigKeyInfo {
	group := d.group
	k := sdk.ConfigKeyInfo{
		Name: d.name, Type: d.typ, Required: d.def == nil, Importance: d.importance, Documentation: d.doc,
		Group: &group, Order: d.order, Width: d.width, DisplayName: d.display, Dependents: []string{},
	}
	if d.def != nil && d.def != nullDefault {
		v := *d.def
		k.DefaultValue = &v
	}
	if d.kind == kindConnectorVersion && connectorVersion != "" {
		k.DefaultValue = &connectorVersion
	}
	return k
}

// ConnectorConfigDefs is GET /connector-plugins/{plugin}/config of a
// connector plugin, as Kafka Connect 4.4 answers it: the plugin's own keys,
// then the keys the worker defines for every connector of its type.
func ConnectorConfigDefs(spec sdk.Spec) []sdk.ConfigKeyInfo {
	out := append([]sdk.ConfigKeyInfo(nil), spec.Config...)
	for i := range commonDefs {
		d := &commonDefs[i]
		if d.only == "" || d.only == spec.Type {
			out = append(out, d.keyInfo(spec.Version))
		}
	}
	return out
}

// ClientOverrides is what validating a connector's client overrides takes
// of the worker: connector.client.config.override.policy and the worker's
// own settings of each kind of client, by override prefix
// (producer.override. → the producer.* settings).
type ClientOverrides struct {
	Policy OverridePolicy
	Base   map[string]map[string]string
	// JAASFile is the worker's JAAS file (java.security.auth.login.config),
	// whose KafkaClient section stands in for an unset sasl.jaas.config.
	JAASFile string
}

// Converters names the worker's converters (key.converter,
// value.converter, header.converter): the defaults of every connector's.
type Converters struct {
	Key, Value, Header string
}

// converterFor returns the worker's converter of a converter key
// (key.converter, …), by class name.
func (w Converters) converterFor(key string) string {
	var c string
	switch key {
	case "key.converter":
		c = w.Key
	case "value.converter":
		c = w.Value
	default:
		c = w.Header
		if strings.TrimSpace(c) == "" {
			c = SimpleHeaderConverter
		}
	}
	if full, ok := convert.Canonical(c); ok {
		return full
	}
	return c
}

// commonConfigInfos validates the common keys of config and describes them,
// in Kafka's order, for a connector of spec's type, with the worker's
// converters w as the converters' defaults.
func commonConfigInfos(spec sdk.Spec, w Converters, config map[string]string) []sdk.ConfigInfo {
	var out []sdk.ConfigInfo
	for i := range commonDefs {
		d := &commonDefs[i]
		if d.only != "" && d.only != spec.Type {
			continue
		}
		ci := sdk.ConfigInfo{Definition: d.keyInfo(spec.Version), Value: sdk.ConfigValueInfo{Name: d.name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}}
		v, set := config[d.name]
		def := ci.Definition.DefaultValue
		switch d.kind {
		case kindConnectorVersion:
			ci.Value.RecommendedValues = []string{spec.Version}
			if set && strings.TrimSpace(v) != spec.Version {
				r := strings.TrimSpace(v)
				if !strings.HasPrefix(r, "[") && !strings.HasPrefix(r, "(") {
					r = "[" + r + "," + r + "]"
				}
				ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Plugin %s not found that matches the version range %s, available versions: [%s]", spec.Class, r, spec.Version))
			}
		case kindConverter:
			header := d.name == "header.converter"
			ci.Value.RecommendedValues = converterClasses(header)
			wc := w.converterFor(d.name)
			ci.Definition.DefaultValue = &wc
			def = &wc
			if set {
				if full, ok := convert.Canonical(v); ok {
					v = full
				} else {
					ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: Class %s could not be found.", v, d.name, strings.TrimSpace(v)))
					out = append(out, ci)
					continue
				}
			}
		case kindConverterVersion:
			class := strings.TrimSpace(config[strings.TrimSuffix(d.name, ".plugin.version")])
			if class == "" {
				class = w.converterFor(strings.TrimSuffix(d.name, ".plugin.version"))
			}
			if _, ok := convert.Canonical(class); ok {
				ci.Definition.DefaultValue = ptr(Version)
				def = ci.Definition.DefaultValue
				ci.Value.RecommendedValues = []string{Version}
			}
		}
		switch {
		case set:
			rendered, ok, msg := parseValue(d.typ, v)
			if !ok {
				ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: %s", v, d.name, msg))
				if d.nonNull {
					ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value null for configuration %s: Value must be non-null", d.name))
				}
				break
			}
			ci.Value.Value = &rendered
			if d.check != nil {
				if msg := d.check(v); msg != "" {
					// Kafka's validators get the parsed value (a STRING trimmed).
					ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: %s", clip(rendered), d.name, msg))
				}
			}
		case d.def == nil:
			ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", d.name))
		case def != nil:
			val := *def
			ci.Value.Value = &val
		}
		out = append(out, ci)
	}
	if spec.Type == sdk.Sink {
		topics, regex := strings.TrimSpace(config["topics"]), strings.TrimSpace(config["topics.regex"])
		var msg string
		switch {
		case topics == "" && regex == "":
			msg = "Must configure one of topics or topics.regex"
		case topics != "" && regex != "":
			msg = "topics and topics.regex are mutually exclusive options, but both are set."
		}
		if msg != "" {
			for i := range out {
				if out[i].Value.Name == "topics" || out[i].Value.Name == "topics.regex" {
					out[i].Value.Errors = append(out[i].Value.Errors, msg)
				}
			}
		}
		// The dead letter queue may not be a topic the sink reads
		// (SinkConnectorConfig.validate, which lists the error under the
		// topics or topics.regex key).
		if dlq := strings.TrimSpace(config["errors.deadletterqueue.topic.name"]); dlq != "" {
			topicList := splitTopics(topics)
			msg, key := "", ""
			if slices.Contains(topicList, dlq) {
				msg, key = fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=[%s]') consumed by the connector", dlq, strings.Join(topicList, ", ")), "topics"
			} else if re, err := regexp.Compile(task.AnchoredRegex(regex)); regex != "" && err == nil && re.MatchString(dlq) {
				msg, key = fmt.Sprintf("The DLQ topic '%s' may not be matched by the regex for the topics ('topics.regex=%s') consumed by the connector", dlq, regex), "topics.regex"
			}
			for i := range out {
				if msg != "" && out[i].Value.Name == key {
					out[i].Value.Errors = append(out[i].Value.Errors, msg)
				}
			}
		}
	}
	return out
}

// splitTopics is a sink's topics setting as a list: comma-separated,
// spaces around names and empty names dropped.
func splitTopics(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Validation is PUT /connector-plugins/{plugin}/config/validate of a
// connector plugin as Kafka Connect 4.4's AbstractHerder answers it: the
// worker's validation of the keys every connector has (with the worker's
// converters w as the converters' defaults), then the plugin's validation
// of its own keys (plugin), then the settings of the converters the config
// names, then the client overrides (producer.override.* and the like)
// against clients, the worker's override policy and client settings. Its
// name is the connector.class given.
func Validation(spec sdk.Spec, w Converters, config map[string]string, plugin sdk.ConfigInfos, clients ClientOverrides) sdk.ConfigInfos {
	out := sdk.ConfigInfos{Name: config["connector.class"], Groups: commonGroups(spec.Type)}
	out.Configs = commonConfigInfos(spec, w, config)
	out.Configs, out.Groups = withTransforms(config, out.Configs, out.Groups)
	seen := map[string]int{} // key → its entry in out.Configs
	for i, c := range out.Configs {
		seen[c.Definition.Name] = i
	}
	addGroup := func(g string) {
		if !slices.Contains(out.Groups, g) {
			out.Groups = append(out.Groups, g)
		}
	}
	for _, g := range plugin.Groups {
		addGroup(g)
	}
	for _, c := range plugin.Configs {
		i, ok := seen[c.Definition.Name]
		if !ok {
			out.Configs = append(out.Configs, c)
			continue
		}
		// A key the worker defines too (topics, for a sink): the
		// connector's own errors for it count, as in Kafka Connect, where
		// both validations are listed.
		v := &out.Configs[i].Value
		for _, e := range c.Value.Errors {
			if !slices.Contains(v.Errors, e) {
				v.Errors = append(v.Errors, e)
			}
		}
	}
	for _, c := range converterConfigInfos(config) {
		if c.Definition.Group != nil {
			addGroup(*c.Definition.Group)
		}
		out.Configs = append(out.Configs, c)
	}
	// Client overrides the client or the policy would refuse (Kafka
	// Connect lists every override key; only refused ones are listed
	// here, with the error).
	errs := overrideErrors(config, clients.Policy, clients.Base, clients.JAASFile)
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		v := config[k]
		msg := fmt.Sprintf("Invalid value %s for configuration %s: %s", v, k, errs[k])
		if i, ok := seen[k]; ok {
			out.Configs[i].Value.Errors = append(out.Configs[i].Value.Errors, msg)
			continue
		}
		out.Configs = append(out.Configs, sdk.ConfigInfo{
			Definition: sdk.ConfigKeyInfo{Name: k, Type: "STRING", Importance: "LOW", Width: "NONE", DisplayName: k, Dependents: []string{}},
			Value:      sdk.ConfigValueInfo{Name: k, Value: &v, RecommendedValues: []string{}, Errors: []string{msg}, Visible: true},
		})
	}
	for _, c := range out.Configs {
		out.ErrorCount += len(c.Value.Errors)
	}
	return out
}

// transformsVersion is the version of the transformations and predicates
// Kafka Connect ships, whose behaviour worker/transform follows. It is
// their plugin.version, so that a connector config written for Kafka
// Connect 4.4 that pins it is accepted unchanged.
const transformsVersion = "4.4.0"

// withTransforms adds the validation of the transforms and predicates
// settings after the common keys, as Kafka Connect 4.4 lists them: the
// errors of the alias lists on the transforms and predicates entries, then
// each alias's type, plugin.version and own keys in a group of its own.
func withTransforms(config map[string]string, configs []sdk.ConfigInfo, groups []string) ([]sdk.ConfigInfo, []string) {
	v := transform.Validate(config, transformsVersion)
	for i := range configs {
		if errs := v.AliasErrors[configs[i].Definition.Name]; len(errs) > 0 {
			configs[i].Value.Errors = append(configs[i].Value.Errors, errs...)
		}
	}
	return append(configs, v.Configs...), append(groups, v.Groups...)
}

// converterConfigInfos validates the settings of the converters config
// names itself (key.converter=… and its key.converter.* keys), as Kafka
// Connect 4.4 does: the converter's definitions under the prefix,
// converter.type set to key, value or header. Converters are taken in
// Kafka Connect's order (header, key, value) and each one's keys in the
// order of Java's HashMap, which Kafka Connect lists them in.
func converterConfigInfos(config map[string]string) []sdk.ConfigInfo {
	var out []sdk.ConfigInfo
	for _, which := range []string{"header", "key", "value"} {
		class, set := config[which+".converter"]
		if !set {
			continue
		}
		defs, ok := ConverterConfig(strings.TrimSpace(class))
		if !ok {
			continue
		}
		prefix := which + ".converter."
		names := make([]string, len(defs))
		for i, d := range defs {
			names[i] = d.Name
		}
		for _, i := range javaHashMapOrder(names) {
			d := defs[i]
			ci := sdk.ConfigInfo{Definition: d, Value: sdk.ConfigValueInfo{RecommendedValues: []string{}, Errors: []string{}, Visible: true}}
			ci.Definition.Name = prefix + d.Name
			ci.Value.Name = ci.Definition.Name
			v, set := config[prefix+d.Name]
			if d.Name == "converter.type" {
				v, set = which, true
			}
			switch {
			case set:
				rendered, ok, msg := parseValue(d.Type, v)
				if !ok {
					ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: %s", v, d.Name, msg))
					break
				}
				ci.Value.Value = &rendered
				if d.Name == "decimal.format" && !strings.EqualFold(rendered, "BASE64") && !strings.EqualFold(rendered, "NUMERIC") {
					ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: String must be one of (case insensitive): NUMERIC, BASE64", v, d.Name))
				}
			case d.Required:
				ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", d.Name))
			default:
				ci.Value.Value = d.DefaultValue
			}
			out = append(out, ci)
		}
	}
	return out
}

// javaHashMapOrder returns the indexes of keys in the order a Java HashMap
// holding them (inserted in this order, at the default capacity and load
// factor) iterates them: by bucket, then by insertion.
func javaHashMapOrder(keys []string) []int {
	size := 16
	for float64(len(keys)) > 0.75*float64(size) {
		size *= 2
	}
	bucket := func(k string) int {
		var h int32
		for _, r := range k { // Java's String.hashCode over UTF-16 units
			for _, u := range utf16.Encode([]rune{r}) {
				h = 31*h + int32(u)
			}
		}
		return int(uint32(h)^uint32(h)>>16) & (size - 1)
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return bucket(keys[idx[a]]) < bucket(keys[idx[b]]) })
	return idx
}

// ValidationError turns a validation with errors into Kafka Connect's 400.
func ValidationError(infos sdk.ConfigInfos) error {
	if infos.ErrorCount == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):\n", infos.ErrorCount)
	for _, c := range infos.Configs {
		for _, e := range c.Value.Errors {
			b.WriteString(e)
			b.WriteString("\n")
		}
	}
	b.WriteString("You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return &Error{Kind: KindBadRequest, Message: b.String()}
}
