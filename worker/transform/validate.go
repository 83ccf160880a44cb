package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// This file validates the transformation and predicate settings of a
// connector as Kafka Connect 4.4 does (ConnectorConfig.enrich and
// ConfigDef.validate): for each alias a type key and a plugin.version key,
// then the plugin's own keys under the alias's prefix, in the group
// "Transforms: <alias>" or "Predicates: <alias>".
//
// Tributary refuses more than Kafka Connect: a transformation or predicate
// that its own configure() would refuse when the task starts (InsertField
// with nothing to insert, HeaderFrom with fields and headers of different
// lengths, …) and a predicate alias that names no predicate. Kafka Connect
// accepts both and the task fails; here the connector is refused with the
// error on the alias's type (or predicate) key.

// Validation is what Validate found.
type Validation struct {
	// Configs are the entries of the aliases, in Kafka Connect's order.
	Configs []sdk.ConfigInfo
	// Groups are their groups ("Transforms: a", "Predicates: p").
	Groups []string
	// AliasErrors are errors of the transforms and predicates keys
	// themselves (a duplicate alias).
	AliasErrors map[string][]string
}

// Validate validates the transforms and predicates settings of a connector
// config; kafkaVersion is the version of Kafka's own plugins (the default
// of their plugin.version keys).
func Validate(props map[string]string, kafkaVersion string) Validation {
	v := Validation{AliasErrors: map[string][]string{}}
	predicates := map[string]bool{}
	for _, kind := range []struct {
		key, group, noun, title string
		kind                    Kind
	}{
		{TransformsKey, "Transforms", "transformation", "Transformation", KindTransformation},
		{PredicatesKey, "Predicates", "predicate", "Predicate", KindPredicate},
	} {
		raw, set := props[kind.key]
		if !set {
			continue
		}
		list, err := parseType(kind.key, raw, TypeList)
		if err != nil {
			continue
		}
		all := list.([]string)
		if len(distinct(slices.Clone(all))) != len(all) {
			v.AliasErrors[kind.key] = append(v.AliasErrors[kind.key], invalid(kind.key, all, "Duplicate alias provided.").Error())
		}
		for _, alias := range distinct(slices.Clone(all)) {
			if kind.kind == KindPredicate {
				predicates[alias] = true
			}
			prefix := kind.key + "." + alias + "."
			group := kind.group + ": " + alias
			typeKey, versionKey := prefix+"type", prefix+"plugin.version"
			class, typeSet := props[typeKey]
			class = javaTrim(class)
			p := lookup(class, kind.kind)

			typ := entry(sdk.ConfigKeyInfo{Name: typeKey, Type: string(TypeClass), Required: true, Importance: "HIGH",
				Documentation: fmt.Sprintf("Class for the '%s' %s.", alias, kind.noun), Group: &group, Order: 0,
				Width: "LONG", DisplayName: fmt.Sprintf("%s type for %s", kind.title, alias), Dependents: []string{}})
			typ.Value.RecommendedValues = classes(kind.kind)
			if kind.kind == KindTransformation {
				// Kafka's typeValidator checks this first, set or not.
				if _, neg := props[prefix+"negate"]; neg {
					if _, pred := props[prefix+"predicate"]; !pred {
						typ.Value.Errors = append(typ.Value.Errors, fmt.Sprintf("Config '%snegate' was provided but there is no config '%spredicate' defining a predicate to be negated.", prefix, prefix))
					}
				}
			}
			switch {
			case !typeSet:
				typ.Value.Errors = append([]string{fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", typeKey)}, typ.Value.Errors...)
			case p == nil:
				msg := unknownClass(typeKey, props[typeKey]).Error()
				other := KindPredicate
				if kind.kind == KindPredicate {
					other = KindTransformation
				}
				if lookup(class, other) != nil {
					// A class, of the other kind.
					typ.Value.Value = &class
					msg = fmt.Sprintf("Class class %s does not implement the %s interface", class, kind.title)
				}
				typ.Value.Errors = append([]string{msg}, typ.Value.Errors...)
			default:
				typ.Value.Value = &p.class
			}
			version := entry(sdk.ConfigKeyInfo{Name: versionKey, Type: string(TypeString), Importance: "HIGH",
				Documentation: fmt.Sprintf("Version of the '%s' %s.", alias, kind.noun), Group: &group, Order: 1,
				Width: "LONG", DisplayName: fmt.Sprintf("%s version for %s", kind.title, alias), Dependents: []string{}})
			if p != nil {
				ver := kafkaVersion
				if p.debezium {
					ver = DebeziumVersion
				}
				version.Definition.DefaultValue = &ver
				version.Value.RecommendedValues = []string{ver}
				given, vset := props[versionKey]
				switch {
				case !vset:
					version.Value.Value = &ver
				default:
					g := javaTrim(given)
					version.Value.Value = &g
					if g != ver {
						// Kafka Connect reports it on both keys and does
						// not describe the plugin's own keys.
						r := g
						if !strings.HasPrefix(r, "[") && !strings.HasPrefix(r, "(") {
							r = "[" + r + "," + r + "]"
						}
						msg := fmt.Sprintf("Plugin %s not found that matches the version range %s, available versions: [%s]", p.class, r, ver)
						typ.Value.Errors = append(typ.Value.Errors, msg)
						version.Value.Errors = append(version.Value.Errors, msg)
						p = nil
					}
				}
			} else if given, vset := props[versionKey]; vset {
				g := javaTrim(given)
				version.Value.Value = &g
			}
			typeAt := len(v.Configs)
			v.Configs = append(v.Configs, typ, version)
			v.Groups = append(v.Groups, group)
			if p == nil {
				continue
			}
			keys := slices.Clone(p.keys)
			if kind.kind == KindTransformation {
				keys = append([]Key{
					{Name: "predicate", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "The alias of a predicate used to determine whether to apply this transformation."},
					{Name: "negate", Type: TypeBoolean, Default: false, Importance: "MEDIUM", Doc: "Whether the configured predicate should be negated."},
				}, keys...)
			}
			keys = slices.DeleteFunc(keys, func(k Key) bool { return k.Hidden })
			sortKeys(keys)
			sub := withPrefix(props, prefix)
			configOK := true
			for i := range keys {
				k := keys[i]
				raw, set := sub[k.Name]
				val, errs := validateKey(&k, prefix+k.Name, raw, set)
				configOK = configOK && len(errs) == 0
				info := k.Info()
				info.Name = prefix + k.Name
				g := group
				if k.Group != "" {
					g = group + ": " + k.Group
				}
				info.Group = &g
				info.Order = 2 + i
				ci := entry(info)
				if val != nil {
					s := renderValue(k.Type, val)
					ci.Value.Value = &s
				}
				ci.Value.Errors = append(ci.Value.Errors, errs...)
				v.Configs = append(v.Configs, ci)
			}
			// What the plugin's configure() would refuse when the task
			// starts (Tributary refuses it now).
			if configOK {
				delete(sub, "predicate")
				delete(sub, "negate")
				var err error
				if kind.kind == KindTransformation {
					_, err = p.transformation(sub)
				} else {
					_, err = p.predicate(sub)
				}
				if err != nil {
					v.Configs[typeAt].Value.Errors = append(v.Configs[typeAt].Value.Errors, err.Error())
				}
			}
		}
	}
	// A transformation's predicate must be one of the predicates.
	for i := range v.Configs {
		c := &v.Configs[i]
		rest, ok := strings.CutPrefix(c.Value.Name, TransformsKey+".")
		if !ok || !strings.HasSuffix(rest, ".predicate") || c.Value.Value == nil || *c.Value.Value == "" {
			continue
		}
		if alias := *c.Value.Value; !predicates[alias] {
			c.Value.Errors = append(c.Value.Errors, invalid(c.Value.Name, alias, "Predicate "+alias+" is not listed in predicates").Error())
		}
	}
	return v
}

func entry(k sdk.ConfigKeyInfo) sdk.ConfigInfo {
	return sdk.ConfigInfo{Definition: k, Value: sdk.ConfigValueInfo{Name: k.Name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}}
}

// classes lists the plugin classes of a kind, Kafka Connect's
// recommendation for a type key.
func classes(kind Kind) []string {
	var out []string
	for _, p := range catalog {
		if p.kind == kind {
			out = append(out, p.class)
		}
	}
	return out
}

var importanceRank = map[string]int{"HIGH": 0, "MEDIUM": 1, "LOW": 2}

// sortKeys is ConfigDef.sortedConfigs for keys of no group: by order in
// group, then keys without a default first, then by importance, then by
// name.
func sortKeys(keys []Key) {
	slices.SortStableFunc(keys, func(a, b Key) int {
		ao, bo := a.Order, b.Order
		if ao == 0 {
			ao = -1
		}
		if bo == 0 {
			bo = -1
		}
		if ao != bo {
			return ao - bo
		}
		if a.Required() != b.Required() {
			if a.Required() {
				return -1
			}
			return 1
		}
		if d := importanceRank[a.Importance] - importanceRank[b.Importance]; d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
}
