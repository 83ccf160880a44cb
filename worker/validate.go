package worker

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/task"
	"github.com/tributary-dev/tributary/worker/transform"
)

// commonDef is one of the configuration keys Kafka Connect defines for every
// connector (ConnectorConfig, SourceConnectorConfig, SinkConnectorConfig).
type commonDef struct {
	name, typ, importance, doc, group, width, display string
	def                                               *string // nil: required
	order                                             int
	only                                              sdk.ConnectorType // "" for both
	check                                             func(v string) string
}

func ptr(s string) *string { return &s }

var nullDefault = ptr("\x00null") // a default of null, rendered as JSON null

var commonDefs = []commonDef{
	{name: "name", typ: "STRING", importance: "HIGH", doc: "Globally unique name to use for this connector.", group: "Common", order: 1, width: "MEDIUM", display: "Connector name", check: func(v string) string {
		if strings.TrimSpace(v) == "" {
			return "String may not be empty"
		}
		return ""
	}},
	{name: "connector.class", typ: "STRING", importance: "HIGH", doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter", group: "Common", order: 2, width: "LONG", display: "Connector class"},
	{name: "tasks.max", typ: "INT", def: ptr("1"), importance: "HIGH", doc: "Maximum number of tasks to use for this connector.", group: "Common", order: 3, width: "SHORT", display: "Tasks max", check: atLeast(1)},
	{name: "tasks.max.enforce", typ: "BOOLEAN", def: ptr("true"), importance: "LOW", doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector.", group: "Common", order: 4, width: "SHORT", display: "Enforce tasks max", check: isBool},
	{name: "topics", typ: "LIST", def: ptr(""), importance: "HIGH", doc: "List of topics to consume, separated by commas", group: "Common", order: 4, width: "LONG", display: "Topics", only: "sink"},
	{name: "topics.regex", typ: "STRING", def: ptr(""), importance: "HIGH", doc: "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified.", group: "Common", order: 4, width: "LONG", display: "Topics regex", only: "sink", check: func(v string) string {
		if _, err := regexp.Compile(v); err != nil {
			return "Must be a valid regular expression: " + err.Error()
		}
		return ""
	}},
	{name: "key.converter", typ: "CLASS", def: nullDefault, importance: "LOW", doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.", group: "Common", order: 5, width: "SHORT", display: "Key converter class", check: isConverter},
	{name: "value.converter", typ: "CLASS", def: nullDefault, importance: "LOW", doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.", group: "Common", order: 6, width: "SHORT", display: "Value converter class", check: isConverter},
	{name: "header.converter", typ: "CLASS", def: nullDefault, importance: "LOW", doc: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.", group: "Common", order: 7, width: "SHORT", display: "Header converter class", check: isConverter},
	{name: "config.action.reload", typ: "STRING", def: ptr("restart"), importance: "LOW", doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future.", group: "Common", order: 8, width: "MEDIUM", display: "Reload Action", check: oneOf("none", "restart")},
	{name: "transforms", typ: "LIST", def: ptr(""), importance: "LOW", doc: "Aliases for the transformations to be applied to records.", group: "Transforms", order: 1, width: "LONG", display: "Transforms"},
	{name: "predicates", typ: "LIST", def: ptr(""), importance: "LOW", doc: "Aliases for the predicates used by transformations.", group: "Predicates", order: 1, width: "LONG", display: "Predicates"},
	{name: "errors.retry.timeout", typ: "LONG", def: ptr("0"), importance: "MEDIUM", doc: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.", group: "Error Handling", order: 1, width: "MEDIUM", display: "Retry Timeout for Errors", check: isLong},
	{name: "errors.retry.delay.max.ms", typ: "LONG", def: ptr("60000"), importance: "MEDIUM", doc: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.", group: "Error Handling", order: 2, width: "MEDIUM", display: "Maximum Delay Between Retries for Errors", check: isLong},
	{name: "errors.tolerance", typ: "STRING", def: ptr("none"), importance: "MEDIUM", doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.", group: "Error Handling", order: 3, width: "SHORT", display: "Error Tolerance", check: oneOf("none", "all")},
	{name: "errors.log.enable", typ: "BOOLEAN", def: ptr("false"), importance: "MEDIUM", doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.", group: "Error Handling", order: 4, width: "SHORT", display: "Log Errors", check: isBool},
	{name: "errors.log.include.messages", typ: "BOOLEAN", def: ptr("false"), importance: "MEDIUM", doc: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.", group: "Error Handling", order: 5, width: "SHORT", display: "Log Error Details", check: isBool},
	{name: "errors.deadletterqueue.topic.name", typ: "STRING", def: ptr(""), importance: "MEDIUM", doc: "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.", group: "Error Handling", order: 6, width: "MEDIUM", display: "Dead Letter Queue Topic Name", only: "sink"},
	{name: "errors.deadletterqueue.topic.replication.factor", typ: "SHORT", def: ptr("3"), importance: "MEDIUM", doc: "Replication factor used to create the dead letter queue topic when it doesn't already exist.", group: "Error Handling", order: 7, width: "MEDIUM", display: "Dead Letter Queue Topic Replication Factor", only: "sink", check: isLong},
	{name: "errors.deadletterqueue.context.headers.enable", typ: "BOOLEAN", def: ptr("false"), importance: "MEDIUM", doc: "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>", group: "Error Handling", order: 8, width: "MEDIUM", display: "Enable Error Context Headers", only: "sink", check: isBool},
	{name: "topic.creation.groups", typ: "LIST", def: ptr(""), importance: "LOW", doc: "Groups of configurations for topics created by source connectors", group: "Topic Creation", order: 1, width: "LONG", display: "Topic Creation Groups", only: "source"},
	{name: "exactly.once.support", typ: "STRING", def: ptr("requested"), importance: "MEDIUM", doc: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.", group: "Exactly Once Support", order: 1, width: "SHORT", display: "Exactly once support", only: "source", check: oneOf("requested", "required")},
	{name: "transaction.boundary", typ: "STRING", def: ptr("poll"), importance: "MEDIUM", doc: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.", group: "Exactly Once Support", order: 2, width: "SHORT", display: "Transaction Boundary", only: "source", check: oneOf("poll", "interval", "connector")},
	{name: "transaction.boundary.interval.ms", typ: "LONG", def: nullDefault, importance: "LOW", doc: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.", group: "Exactly Once Support", order: 3, width: "SHORT", display: "Transaction boundary interval", only: "source", check: isLong},
	{name: "offsets.storage.topic", typ: "STRING", def: nullDefault, importance: "LOW", doc: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.", group: "offsets.topic", order: 1, width: "LONG", display: "Offsets topic", only: "source"},
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

func isBool(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false":
		return ""
	}
	return "Expected value to be either true or false"
}

func isLong(v string) string {
	if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
		return "Not a number of type LONG"
	}
	return ""
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

// knownConverters are the converter classes (and short names) this worker has.
var knownConverters = map[string]bool{
	JSONConverter: true, StringConverter: true, ByteArrayConverter: true, SimpleHeaderConverter: true,
	"JsonConverter": true, "StringConverter": true, "ByteArrayConverter": true, "SimpleHeaderConverter": true,
}

func isConverter(v string) string {
	if knownConverters[strings.TrimSpace(v)] {
		return ""
	}
	return "Class " + v + " could not be found."
}

// commonGroups are the groups of the common keys, in Kafka's order.
func commonGroups(t sdk.ConnectorType) []string {
	if t == "sink" {
		return []string{"Common", "Transforms", "Predicates", "Error Handling"}
	}
	return []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"}
}

func (d *commonDef) keyInfo() sdk.ConfigKeyInfo {
	group := d.group
	k := sdk.ConfigKeyInfo{
		Name: d.name, Type: d.typ, Required: d.def == nil, Importance: d.importance, Documentation: d.doc,
		Group: &group, Order: d.order, Width: d.width, DisplayName: d.display, Dependents: []string{},
	}
	if d.def != nil && d.def != nullDefault {
		v := *d.def
		k.DefaultValue = &v
	}
	return k
}

// commonConfigInfos validates the common keys of config and describes them,
// in Kafka's order, for a connector of type t.
func commonConfigInfos(t sdk.ConnectorType, config map[string]string) []sdk.ConfigInfo {
	var out []sdk.ConfigInfo
	for i := range commonDefs {
		d := &commonDefs[i]
		if d.only != "" && d.only != t {
			continue
		}
		ci := sdk.ConfigInfo{Definition: d.keyInfo(), Value: sdk.ConfigValueInfo{Name: d.name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}}
		v, set := config[d.name]
		switch {
		case set:
			val := v
			ci.Value.Value = &val
			if d.check != nil {
				if msg := d.check(v); msg != "" {
					ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: %s", v, d.name, msg))
				}
			}
		case d.def == nil:
			ci.Value.Errors = append(ci.Value.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", d.name))
		case d.def != nullDefault:
			val := *d.def
			ci.Value.Value = &val
		}
		out = append(out, ci)
	}
	if t == "sink" {
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
		// (SinkConnectorConfig.validate).
		if dlq := strings.TrimSpace(config["errors.deadletterqueue.topic.name"]); dlq != "" {
			topicList := splitTopics(topics)
			msg = ""
			if slices.Contains(topicList, dlq) {
				msg = fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=[%s]') consumed by the connector", dlq, strings.Join(topicList, ", "))
			} else if re, err := regexp.Compile(task.AnchoredRegex(regex)); regex != "" && err == nil && re.MatchString(dlq) {
				msg = fmt.Sprintf("The DLQ topic '%s' may not be included in the regex matching the topics ('topics.regex=%s') consumed by the connector", dlq, regex)
			}
			for i := range out {
				if msg != "" && out[i].Value.Name == "errors.deadletterqueue.topic.name" {
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

// mergeValidation puts the worker's common keys in front of the plugin's
// validation of its own keys, as Kafka Connect's AbstractHerder does.
func mergeValidation(t sdk.ConnectorType, class string, config map[string]string, plugin sdk.ConfigInfos) sdk.ConfigInfos {
	out := sdk.ConfigInfos{Name: class, Groups: commonGroups(t)}
	out.Configs = commonConfigInfos(t, config)
	out.Configs, out.Groups = withTransforms(config, out.Configs, out.Groups)
	seen := map[string]int{} // key → its entry in out.Configs
	for i, c := range out.Configs {
		seen[c.Definition.Name] = i
	}
	for _, g := range plugin.Groups {
		dup := false
		for _, have := range out.Groups {
			dup = dup || have == g
		}
		if !dup {
			out.Groups = append(out.Groups, g)
		}
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
	// Client overrides the client would refuse (Kafka Connect lists every
	// override key; only refused ones are listed here, with the error).
	errs := overrideErrors(config)
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

// validationError turns a validation with errors into Kafka Connect's 400.
func validationError(infos sdk.ConfigInfos) error {
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
