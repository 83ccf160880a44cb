package task

import (
	"strconv"
	"unicode/utf8"
)

// maxClientIDBytes is the longest client id franz-go accepts (Kafka's
// protocol allows 32,767 bytes; franz-go keeps ids to 256).
const maxClientIDBytes = 256

// clientID is Kafka Connect's client id of a task's producer or consumer,
// <prefix>-<connector>-<task> (prefix connector-producer or
// connector-consumer), with the connector name shortened, at a UTF-8
// boundary, so that the id fits maxClientIDBytes: a client id only labels
// requests (logs, quotas), so a long connector name must not fail its
// tasks.
func clientID(prefix, connector string, task int) string {
	suffix := "-" + strconv.Itoa(task)
	room := maxClientIDBytes - len(prefix) - 1 - len(suffix)
	if len(connector) > room {
		cut := max(room, 0)
		for cut > 0 && !utf8.RuneStart(connector[cut]) {
			cut--
		}
		connector = connector[:cut]
	}
	return prefix + "-" + connector + suffix
}
