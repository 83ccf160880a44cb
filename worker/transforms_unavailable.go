package worker

import (
	"fmt"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// transformsUnavailable is the stopgap until the worker has transforms and
// predicates (issue 19): it describes, as Kafka Connect 4.4's validation
// does, the type and plugin.version keys of every alias listed in
// transforms and predicates, and refuses each type with Kafka Connect's
// message for a class it cannot find, so that such a connector is refused
// on validate and create instead of running with its transforms ignored.
// It returns the entries, which come after the common keys, and their
// groups. Delete this file, and its one call in Validation, when
// transforms land.
func transformsUnavailable(config map[string]string) ([]sdk.ConfigInfo, []string) {
	var out []sdk.ConfigInfo
	var groups []string
	for _, kind := range []struct{ key, group, noun string }{
		{"transforms", "Transforms", "transformation"},
		{"predicates", "Predicates", "predicate"},
	} {
		raw, ok := config[kind.key]
		if !ok || strings.TrimSpace(raw) == "" {
			continue
		}
		// Kafka's LIST parsing keeps empty elements between commas.
		for _, alias := range strings.Split(strings.TrimSpace(raw), ",") {
			alias = strings.TrimSpace(alias)
			group := kind.group + ": " + alias
			title := strings.ToUpper(kind.noun[:1]) + kind.noun[1:]
			typeKey, versionKey := kind.key+"."+alias+".type", kind.key+"."+alias+".plugin.version"
			typ := sdk.ConfigInfo{
				Definition: sdk.ConfigKeyInfo{Name: typeKey, Type: "CLASS", Required: true, Importance: "HIGH",
					Documentation: fmt.Sprintf("Class for the '%s' %s.", alias, kind.noun), Group: &group, Order: 0,
					Width: "LONG", DisplayName: fmt.Sprintf("%s type for %s", title, alias), Dependents: []string{}},
				Value: sdk.ConfigValueInfo{Name: typeKey, RecommendedValues: []string{}, Errors: []string{}, Visible: true},
			}
			if class, set := config[typeKey]; set {
				typ.Value.Errors = append(typ.Value.Errors, fmt.Sprintf("Invalid value %s for configuration %s: Class %s could not be found.", class, typeKey, class))
			} else {
				typ.Value.Errors = append(typ.Value.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", typeKey))
			}
			version := sdk.ConfigInfo{
				Definition: sdk.ConfigKeyInfo{Name: versionKey, Type: "STRING", Importance: "HIGH",
					Documentation: fmt.Sprintf("Version of the '%s' %s.", alias, kind.noun), Group: &group, Order: 1,
					Width: "LONG", DisplayName: fmt.Sprintf("%s version for %s", title, alias), Dependents: []string{}},
				Value: sdk.ConfigValueInfo{Name: versionKey, RecommendedValues: []string{}, Errors: []string{}, Visible: true},
			}
			out = append(out, typ, version)
			groups = append(groups, group)
		}
	}
	return out, groups
}
