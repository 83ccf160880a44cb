package worker

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxConnectorNameBytes bounds a connector name, in bytes of UTF-8.
//
// A name travels in Kafka protocol strings, which carry at most 32,767
// bytes: in the group assignment (once per connector and per task, in
// every member's metadata and assignment) and in a sink's consumer group
// (connect-<name>); and in the keys of the config, status and offsets
// records. 1,024 bytes keeps all of them far from that limit, and the
// assignment of a cluster with hundreds of connectors far below the 1 MB a
// broker keeps per group. (Task client ids, connector-producer-<name>-<task>,
// are shortened to the 256 bytes franz-go allows.)
const MaxConnectorNameBytes = 1024

// maxCarriedNameBytes is the longest name the worker can carry at all: the
// longest string it derives from a name (a sink's consumer group) is then a
// Kafka string of 32,767 bytes. A stored connector (written by Kafka
// Connect or an older version) with a longer name is never assigned; it is
// FAILED, saying so, and can be deleted.
const maxCarriedNameBytes = math.MaxInt16 - len("connect-")

// CheckConnectorName returns what is wrong with a connector name, worded as
// Kafka Connect's config validators word it, or "" when it is fine: not
// empty and without ISO control characters (Kafka Connect's rules), valid
// UTF-8, at most MaxConnectorNameBytes bytes, and
// nothing a URL path could not name unambiguously: '/', '\', '%', "." and
// "..", which Kafka Connect's Jetty refuses in an encoded path (in Kafka
// Connect such a connector can be created but never read or deleted).
func CheckConnectorName(name string) string {
	if strings.TrimSpace(name) == "" {
		return "String may not be empty"
	}
	var controls []string
	for _, r := range name {
		if r <= 0x1f || r >= 0x7f && r <= 0x9f { // Java's Character.isISOControl
			controls = append(controls, strconv.Itoa(int(r)))
		}
	}
	if len(controls) > 0 {
		return "String may not contain control sequences but had the following ASCII chars: " + strings.Join(controls, ", ")
	}
	if !utf8.ValidString(name) {
		return "String must be valid UTF-8"
	}
	if len(name) > MaxConnectorNameBytes {
		return fmt.Sprintf("String may not be longer than %d bytes (UTF-8), but is %d bytes long", MaxConnectorNameBytes, len(name))
	}
	if strings.ContainsAny(name, `/\%`) || name == "." || name == ".." {
		return `String may not contain '/', '\' or '%', nor be '.' or '..': no URL could name the connector (/connectors/{name})`
	}
	return ""
}

// unassignableName says why the worker cannot carry a stored connector's
// name ("" when it can).
func unassignableName(name string) string {
	if len(name) <= maxCarriedNameBytes {
		return ""
	}
	return fmt.Sprintf("The connector name is %d bytes long; Kafka's group protocol carries at most %d, so no worker can be assigned this connector. "+
		"Delete it (DELETE /connectors/{name}) and create it again under a name of at most %d bytes.", len(name), maxCarriedNameBytes, MaxConnectorNameBytes)
}

// clip shortens a value quoted in an error message to its first bytes.
func clip(v string) string {
	const keep = 64
	if len(v) <= MaxConnectorNameBytes {
		return v
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", v[:cut], len(v))
}
