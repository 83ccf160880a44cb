package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// DeleteTopics: v0-6 (v6 also by topic id). Data is removed at once.

func handleDeleteTopics(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	for _, n := range req.TopicNames {
		n := n
		targets = append(targets, target{name: &n})
	}
	for _, t := range req.Topics {
		targets = append(targets, target{name: t.Topic, id: t.TopicID})
	}
	for _, tg := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic = tg.name
		st.TopicID = tg.id
		var t *topic
		if tg.name != nil {
			t = b.topic(*tg.name)
		} else {
			b.mu.RLock()
			t = b.topicIDs[tg.id]
			b.mu.RUnlock()
		}
		name := ""
		if tg.name != nil {
			name = *tg.name
		} else if t != nil {
			name = t.name
		}
		switch {
		case (tg.name != nil || t != nil) && !c.allowedTopic(acl.OpDelete, name):
			st.ErrorCode = errTopicAuthorizationFailed
		case !b.cfg.DeleteTopicEnable:
			st.ErrorCode = errTopicDeletionDisabled
		case t == nil && tg.name == nil:
			st.ErrorCode = errUnknownTopicID
		case t == nil:
			st.ErrorCode = errUnknownTopicOrPartition
		case t.internal:
			// Deleting __consumer_offsets would drop every group's
			// committed offsets.
			st.ErrorCode = errInvalidTopic
			msg := "Topic " + t.name + " is an internal topic and cannot be deleted."
			st.ErrorMessage = &msg
		default:
			name := t.name
			st.Topic, st.TopicID = &name, t.id
			if err := b.deleteTopic(t); err != nil {
				st.ErrorCode = errUnknownServerError
				msg := err.Error()
				st.ErrorMessage = &msg
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return &reply{resp: resp}
}
