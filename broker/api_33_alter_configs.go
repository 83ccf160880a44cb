package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterConfigs: v0-2. Replaces a topic's whole set of overrides, as Kafka's
// legacy API does. Broker configs are static (server.properties).

func handleAlterConfigs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.AlterConfigsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		next := map[string]string{}
		for _, cfg := range rr.Configs {
			if cfg.Value != nil {
				next[cfg.Name] = *cfg.Value
			}
		}
		code, msg := b.alterTopicConfigs(rr.ResourceType, rr.ResourceName, next, req.ValidateOnly)
		if dc, denied := c.configDenied(rr.ResourceType, rr.ResourceName, acl.OpAlterConfigs); denied {
			code, msg = dc, ""
		}
		sr.ErrorCode = code
		if msg != "" {
			sr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return &reply{resp: resp}
}

// alterTopicConfigs validates and applies a topic's complete new overrides.
func (b *Broker) alterTopicConfigs(rtype kmsg.ConfigResourceType, name string, next map[string]string, validateOnly bool) (int16, string) {
	switch rtype {
	case resourceTopic:
	case resourceBroker:
		return errInvalidRequest, "dynamic broker configs are not supported; set them in server.properties and restart"
	default:
		return errInvalidRequest, fmt.Sprintf("Unsupported resource type %d", rtype)
	}
	t := b.topic(name)
	if t == nil {
		return errUnknownTopicOrPartition, "Topic " + name + " does not exist."
	}
	for k, v := range next {
		if err := validateTopicConfig(k, v); err != nil {
			return errInvalidConfig, err.Error()
		}
	}
	if validateOnly {
		return errNone, ""
	}
	if err := b.setTopicConfigs(t, next); err != nil {
		return errUnknownServerError, err.Error()
	}
	return errNone, ""
}

func handleIncrementalAlterConfigs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		code, msg, denied := int16(0), "", false
		if code, denied = c.configDenied(rr.ResourceType, rr.ResourceName, acl.OpAlterConfigs); !denied {
			code, msg = b.incrementalAlter(rr, req.ValidateOnly)
		}
		sr.ErrorCode = code
		if msg != "" {
			sr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return &reply{resp: resp}
}

// IncrementalAlterConfigs operations.
const (
	opSet      kmsg.IncrementalAlterConfigOp = 0
	opDelete   kmsg.IncrementalAlterConfigOp = 1
	opAppend   kmsg.IncrementalAlterConfigOp = 2
	opSubtract kmsg.IncrementalAlterConfigOp = 3
)

func (b *Broker) incrementalAlter(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, string) {
	if rr.ResourceType != resourceTopic {
		return b.alterTopicConfigs(rr.ResourceType, rr.ResourceName, nil, validateOnly)
	}
	t := b.topic(rr.ResourceName)
	if t == nil {
		return errUnknownTopicOrPartition, "Topic " + rr.ResourceName + " does not exist."
	}
	next := map[string]string{}
	for k, v := range t.configs() {
		next[k] = v
	}
	seen := map[string]bool{}
	for _, cfg := range rr.Configs {
		if seen[cfg.Name] {
			return errInvalidRequest, "Error due to duplicate config keys"
		}
		seen[cfg.Name] = true
		d, ok := topicConfigByName[cfg.Name]
		if !ok {
			return errInvalidConfig, "Unknown topic config name: " + cfg.Name
		}
		switch cfg.Op {
		case opSet:
			if cfg.Value == nil {
				return errInvalidRequest, "Null value not supported for : " + cfg.Name
			}
			next[cfg.Name] = *cfg.Value
		case opDelete:
			delete(next, cfg.Name)
		case opAppend, opSubtract:
			if d.typ != typeList {
				return errInvalidConfig, fmt.Sprintf("Config value append is not allowed for config key: %s", cfg.Name)
			}
			cur, _ := b.effectiveTopicConfig(next, cfg.Name)
			items := splitList(cur)
			if cfg.Value != nil {
				for _, v := range splitList(*cfg.Value) {
					idx := indexOf(items, v)
					if cfg.Op == opAppend && idx < 0 {
						items = append(items, v)
					}
					if cfg.Op == opSubtract && idx >= 0 {
						items = append(items[:idx], items[idx+1:]...)
					}
				}
			}
			next[cfg.Name] = strings.Join(items, ",")
		default:
			return errInvalidRequest, fmt.Sprintf("Unknown operation type %d", cfg.Op)
		}
	}
	return b.alterTopicConfigs(resourceTopic, rr.ResourceName, next, validateOnly)
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
