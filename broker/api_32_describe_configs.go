package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs: v0-4 for topics (resource type 2) and this broker
// (resource type 4), with Kafka's names, defaults, sources, synonyms (v1+),
// types and documentation (v3+).

const (
	resourceTopic  kmsg.ConfigResourceType = 2
	resourceBroker kmsg.ConfigResourceType = 4
)

func handleDescribeConfigs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		want := func(name string) bool {
			if rr.ConfigNames == nil {
				return true
			}
			for _, n := range rr.ConfigNames {
				if n == name {
					return true
				}
			}
			return false
		}
		if code, denied := c.configDenied(rr.ResourceType, rr.ResourceName, acl.OpDescribeConfigs); denied {
			sr.ErrorCode = code
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		switch rr.ResourceType {
		case resourceTopic:
			t := b.topic(rr.ResourceName)
			if t == nil {
				sr.ErrorCode = errUnknownTopicOrPartition
				msg := "Topic " + rr.ResourceName + " does not exist."
				if validateTopicName(rr.ResourceName) != nil {
					sr.ErrorCode, msg = errInvalidTopic, "Invalid topic name: "+rr.ResourceName
				}
				sr.ErrorMessage = &msg
				break
			}
			overrides := t.configs()
			for _, name := range sortedConfigNames() {
				if !want(name) {
					continue
				}
				sr.Configs = append(sr.Configs, b.describeTopicConfig(req, overrides, name))
			}
		case resourceBroker:
			if rr.ResourceName != "" && rr.ResourceName != strconv.Itoa(int(b.cfg.NodeID)) {
				sr.ErrorCode = errInvalidRequest
				msg := "Unexpected broker id, expected " + strconv.Itoa(int(b.cfg.NodeID)) + " or empty string, but received " + rr.ResourceName
				sr.ErrorMessage = &msg
				break
			}
			for _, rc := range b.brokerConfigs() {
				if !want(rc.Name) {
					continue
				}
				if req.Version < 1 || !req.IncludeSynonyms {
					rc.ConfigSynonyms = nil
				}
				if req.Version < 3 || !req.IncludeDocumentation {
					rc.Documentation = nil
				}
				sr.Configs = append(sr.Configs, rc)
			}
		default:
			sr.ErrorCode = errInvalidRequest
			msg := "Unsupported resource type " + strconv.Itoa(int(rr.ResourceType))
			sr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return &reply{resp: resp}
}

func (b *Broker) describeTopicConfig(req *kmsg.DescribeConfigsRequest, overrides map[string]string, name string) kmsg.DescribeConfigsResponseResourceConfig {
	d := topicConfigByName[name]
	v, src := b.effectiveTopicConfig(overrides, name)
	rc := kmsg.NewDescribeConfigsResponseResourceConfig()
	rc.Name = name
	val := v
	rc.Value = &val
	rc.Source = kmsg.ConfigSource(src)
	rc.IsDefault = src == sourceDefault
	rc.ConfigType = kmsg.ConfigType(d.typ)
	if req.Version >= 1 && req.IncludeSynonyms {
		if ov, ok := overrides[name]; ok {
			s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			s.Name, s.Value, s.Source = name, &ov, kmsg.ConfigSource(sourceDynamicTopic)
			rc.ConfigSynonyms = append(rc.ConfigSynonyms, s)
		}
		if bk, ok := brokerKeyForTopic[name]; ok {
			if bv, ok := b.cfg.TopicDefaults[name]; ok {
				s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				s.Name, s.Value, s.Source = bk, &bv, kmsg.ConfigSource(sourceStaticBroker)
				rc.ConfigSynonyms = append(rc.ConfigSynonyms, s)
			}
			s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			def := d.def
			s.Name, s.Value, s.Source = bk, &def, kmsg.ConfigSource(sourceDefault)
			rc.ConfigSynonyms = append(rc.ConfigSynonyms, s)
		}
	}
	if req.Version >= 3 && req.IncludeDocumentation && d.doc != "" {
		doc := d.doc
		rc.Documentation = &doc
	}
	return rc
}
