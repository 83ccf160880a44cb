package transform

import (
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// Kind says whether a plugin is a transformation or a predicate, as Kafka
// Connect's plugin listing types them.
type Kind string

// The kinds.
const (
	KindTransformation Kind = "transformation"
	KindPredicate      Kind = "predicate"
)

// Class name prefixes.
const (
	kafkaTransforms = "org.apache.kafka.connect.transforms."
	kafkaPredicates = "org.apache.kafka.connect.transforms.predicates."
	debeziumPrefix  = "io.debezium.transforms."
)

// plugin is one transformation or predicate class.
type plugin struct {
	class string
	kind  Kind
	// debezium: a Debezium transformation (its version is Debezium's).
	debezium bool
	keys     []Key
	// newT or newP configures an instance from its settings.
	newT func(props map[string]string) (Transformation, error)
	newP func(props map[string]string) (Predicate, error)
}

func (p *plugin) transformation(props map[string]string) (Transformation, error) {
	return p.newT(props)
}

func (p *plugin) predicate(props map[string]string) (Predicate, error) {
	return p.newP(props)
}

// keyValue registers the $Key and $Value classes of a transformation that
// works on either.
func keyValue(name string, keys []Key, build func(c Config, s side) (Transformation, error)) []*plugin {
	var out []*plugin
	for _, s := range []side{keySide, valueSide} {
		suffix := "$Value"
		if s == keySide {
			suffix = "$Key"
		}
		out = append(out, &plugin{class: kafkaTransforms + name + suffix, kind: KindTransformation, keys: keys,
			newT: func(props map[string]string) (Transformation, error) {
				c, err := parse(keys, props)
				if err != nil {
					return nil, err
				}
				return build(c, s)
			}})
	}
	return out
}

// single registers a transformation with one class.
func single(class string, keys []Key, build func(c Config) (Transformation, error)) *plugin {
	return &plugin{class: class, kind: KindTransformation, keys: keys, debezium: strings.HasPrefix(class, "io.debezium."),
		newT: func(props map[string]string) (Transformation, error) {
			c, err := parse(keys, props)
			if err != nil {
				return nil, err
			}
			return build(c)
		}}
}

// predicatePlugin registers a predicate.
func predicatePlugin(class string, keys []Key, build func(c Config) (Predicate, error)) *plugin {
	return &plugin{class: class, kind: KindPredicate, keys: keys,
		newP: func(props map[string]string) (Predicate, error) {
			c, err := parse(keys, props)
			if err != nil {
				return nil, err
			}
			return build(c)
		}}
}

// catalog lists every transformation and predicate, sorted by class. It is
// built once and never changed.
var catalog = func() []*plugin {
	var ps []*plugin
	ps = append(ps, keyValue("Cast", castKeys, newCast)...)
	ps = append(ps, single(kafkaTransforms+"DropHeaders", dropHeadersKeys, newDropHeaders))
	ps = append(ps, keyValue("ExtractField", extractFieldKeys, newExtractField)...)
	ps = append(ps, single(kafkaTransforms+"Filter", nil, newFilter))
	ps = append(ps, keyValue("Flatten", flattenKeys, newFlatten)...)
	ps = append(ps, keyValue("HeaderFrom", headerFromKeys, newHeaderFrom)...)
	ps = append(ps, keyValue("HoistField", hoistFieldKeys, newHoistField)...)
	ps = append(ps, keyValue("InsertField", insertFieldKeys, newInsertField)...)
	ps = append(ps, single(kafkaTransforms+"InsertHeader", insertHeaderKeys, newInsertHeader))
	ps = append(ps, keyValue("MaskField", maskFieldKeys, newMaskField)...)
	ps = append(ps, single(kafkaTransforms+"RegexRouter", regexRouterKeys, newRegexRouter))
	ps = append(ps, keyValue("ReplaceField", replaceFieldKeys, newReplaceField)...)
	ps = append(ps, keyValue("SetSchemaMetadata", setSchemaMetadataKeys, newSetSchemaMetadata)...)
	ps = append(ps, keyValue("TimestampConverter", timestampConverterKeys, newTimestampConverter)...)
	ps = append(ps, single(kafkaTransforms+"TimestampRouter", timestampRouterKeys, newTimestampRouter))
	ps = append(ps, single(kafkaTransforms+"ValueToKey", valueToKeyKeys, newValueToKey))
	ps = append(ps, predicatePlugin(kafkaPredicates+"HasHeaderKey", hasHeaderKeyKeys, newHasHeaderKey))
	ps = append(ps, predicatePlugin(kafkaPredicates+"RecordIsTombstone", nil, newRecordIsTombstone))
	ps = append(ps, predicatePlugin(kafkaPredicates+"TopicNameMatches", topicNameMatchesKeys, newTopicNameMatches))
	ps = append(ps, single(debeziumPrefix+"ByLogicalTableRouter", byLogicalTableRouterKeys, newByLogicalTableRouter))
	ps = append(ps, single(debeziumPrefix+"ExtractNewRecordState", extractNewRecordStateKeys, newExtractNewRecordState))
	ps = append(ps, single(mongoUnwrapClass, extractNewDocumentStateKeys, newExtractNewDocumentState))
	slices.SortFunc(ps, func(a, b *plugin) int { return strings.Compare(a.class, b.class) })
	return ps
}()

// lookup finds a plugin of the kind by class name or alias: as in Kafka
// Connect, a class's simple name (RegexRouter, ExtractNewRecordState),
// except for the $Key and $Value classes, whose simple names are shared.
func lookup(class string, kind Kind) *plugin {
	if class == "" {
		return nil
	}
	for _, p := range catalog {
		if p.kind == kind && (p.class == class || alias(p.class) == class) {
			return p
		}
	}
	return nil
}

// alias is a class's simple name, "" for a nested class.
func alias(class string) string {
	if strings.Contains(class, "$") {
		return ""
	}
	return class[strings.LastIndexByte(class, '.')+1:]
}

// DebeziumVersion is the Debezium release whose transformations this
// package follows.
const DebeziumVersion = "3.6.1.Final"

// PluginInfo is one plugin of GET /connector-plugins?connectorsOnly=false.
type PluginInfo struct {
	Class   string
	Kind    Kind
	Version string
}

// Plugins lists the transformations and predicates, sorted by class;
// kafkaVersion is the version the worker reports for Kafka's own.
func Plugins(kafkaVersion string) []PluginInfo {
	out := make([]PluginInfo, 0, len(catalog))
	for _, p := range catalog {
		v := kafkaVersion
		if p.debezium {
			v = DebeziumVersion
		}
		out = append(out, PluginInfo{Class: p.class, Kind: p.kind, Version: v})
	}
	return out
}

// Definition is GET /connector-plugins/{class}/config of a transformation
// or predicate: its keys in the order they are defined. ok is false for a
// class that is neither.
func Definition(class string) (keys []sdk.ConfigKeyInfo, kind Kind, ok bool) {
	for _, p := range catalog {
		if p.class == class {
			out := make([]sdk.ConfigKeyInfo, 0, len(p.keys))
			for i := range p.keys {
				if !p.keys[i].Hidden {
					out = append(out, p.keys[i].Info())
				}
			}
			return out, p.kind, true
		}
	}
	return nil, "", false
}
