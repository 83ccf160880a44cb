package restapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker"
)

// ConfigKeyInfo is a config key definition as Kafka Connect 4.x serialises
// it: like sdk.ConfigKeyInfo but the order field is "order_in_group" (what
// a Kafka Connect 4.4 worker answers).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	OrderInGroup  int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

func keyInfo(k sdk.ConfigKeyInfo) ConfigKeyInfo {
	deps := k.Dependents
	if deps == nil {
		deps = []string{}
	}
	return ConfigKeyInfo{
		Name: k.Name, Type: k.Type, Required: k.Required, DefaultValue: k.DefaultValue,
		Importance: k.Importance, Documentation: k.Documentation, Group: k.Group,
		OrderInGroup: k.Order, Width: k.Width, DisplayName: k.DisplayName, Dependents: deps,
	}
}

// ConfigValueInfo is a key's validation outcome (Kafka's JSON shape).
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a definition with its validation outcome.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigInfos is the body of PUT /connector-plugins/{plugin}/config/validate.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

func configInfos(c sdk.ConfigInfos) ConfigInfos {
	out := ConfigInfos{Name: c.Name, ErrorCount: c.ErrorCount, Groups: nonNil(c.Groups), Configs: make([]ConfigInfo, 0, len(c.Configs))}
	for _, ci := range c.Configs {
		out.Configs = append(out.Configs, ConfigInfo{
			Definition: keyInfo(ci.Definition),
			Value: ConfigValueInfo{
				Name: ci.Value.Name, Value: ci.Value.Value, Visible: ci.Value.Visible,
				RecommendedValues: nonNil(ci.Value.RecommendedValues), Errors: nonNil(ci.Value.Errors),
			},
		})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *api) plugins(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	ps, err := a.h.Plugins(ctx, !queryBool(r, "connectorsOnly", true))
	if ps == nil {
		ps = []worker.PluginInfo{}
	}
	reply(a, w, r, ps, err)
}

func (a *api) pluginConfig(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	keys, err := a.h.PluginConfig(ctx, pathParam(r, "plugin"))
	out := make([]ConfigKeyInfo, 0, len(keys))
	for _, k := range keys {
		out = append(out, keyInfo(k))
	}
	reply(a, w, r, out, err)
}

// normalizedPluginName strips a "Connector" suffix, as Kafka Connect does
// before comparing a validate request's connector.class with its path.
func normalizedPluginName(name string) string {
	return strings.TrimSuffix(name, "Connector")
}

func (a *api) validate(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	config, ok := decodeConfig(w, body)
	if !ok {
		return
	}
	plugin := pathParam(r, "plugin")
	class, ok := config["connector.class"]
	if !ok {
		badRequest(w, "Connector config contains no connector type")
		return
	}
	if !strings.HasSuffix(normalizedPluginName(class), normalizedPluginName(plugin)) {
		badRequest(w, fmt.Sprintf("Included connector type %s does not match request type %s", class, plugin))
		return
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	res, err := a.h.ValidateConfig(ctx, plugin, config)
	reply(a, w, r, configInfos(res), err)
}
