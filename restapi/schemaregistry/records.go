package schemaregistry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Key types of _schemas records (Confluent's SchemaRegistryKeyType).
const (
	KeySchema        = "SCHEMA"
	KeyConfig        = "CONFIG"
	KeyMode          = "MODE"
	KeyNoop          = "NOOP"
	KeyDeleteSubject = "DELETE_SUBJECT"
	KeyClearSubject  = "CLEAR_SUBJECT"
)

// Key is a _schemas record key. Subject is "" for the global CONFIG and MODE
// keys; Version is set for SCHEMA keys only.
type Key struct {
	Type    string
	Subject string
	Version int
	Magic   int
}

// Encode renders k exactly as Confluent Schema Registry does (Jackson with
// @JsonPropertyOrder keytype, subject, version, magic and NON_EMPTY), so that
// records written by either compact against each other.
func (k Key) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(`{"keytype":`)
	writeJSONString(&b, k.Type)
	if k.Type != KeyNoop && k.Subject != "" {
		b.WriteString(`,"subject":`)
		writeJSONString(&b, k.Subject)
	}
	if k.Type == KeySchema {
		fmt.Fprintf(&b, `,"version":%d`, k.Version)
	}
	fmt.Fprintf(&b, `,"magic":%d}`, k.Magic)
	return b.Bytes()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always marshals
	b.Write(enc)
}

// SchemaKey, ConfigKey, ModeKey, DeleteSubjectKey and NoopKey build the keys
// with the magic numbers Confluent uses (1 for SCHEMA, 0 otherwise).
func SchemaKey(subject string, version int) Key {
	return Key{Type: KeySchema, Subject: subject, Version: version, Magic: 1}
}

// ConfigKey is the key of a subject's (or, for "", the global) config.
func ConfigKey(subject string) Key { return Key{Type: KeyConfig, Subject: subject} }

// ModeKey is the key of a subject's (or, for "", the global) mode.
func ModeKey(subject string) Key { return Key{Type: KeyMode, Subject: subject} }

// DeleteSubjectKey is the key of a subject's soft delete.
func DeleteSubjectKey(subject string) Key { return Key{Type: KeyDeleteSubject, Subject: subject} }

// NoopKey is the key of the record written to find the end of the topic.
func NoopKey() Key { return Key{Type: KeyNoop} }

// DecodeKey parses a _schemas key. Unknown key types decode without error
// (the caller skips them); malformed JSON is an error.
func DecodeKey(b []byte) (Key, error) {
	var raw struct {
		Type    string  `json:"keytype"`
		Subject *string `json:"subject"`
		Version *int    `json:"version"`
		Magic   int     `json:"magic"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Key{}, fmt.Errorf("schemaregistry: key %q: %w", truncate(b), err)
	}
	if raw.Type == "" {
		return Key{}, fmt.Errorf("schemaregistry: key %q has no keytype", truncate(b))
	}
	k := Key{Type: raw.Type, Magic: raw.Magic}
	if raw.Subject != nil {
		k.Subject = *raw.Subject
	}
	if raw.Version != nil {
		k.Version = *raw.Version
	}
	if k.Type == KeySchema && (raw.Subject == nil || raw.Version == nil || k.Version < 1) {
		return Key{}, fmt.Errorf("schemaregistry: SCHEMA key %q lacks subject or version", truncate(b))
	}
	return k, nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// Reference is a schema reference: the name the referring schema uses, and
// the subject and version that hold the referenced schema.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// SchemaValue is the value of a SCHEMA record (Confluent's SchemaValue).
type SchemaValue struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Deleted    bool        `json:"deleted"`
}

// ConfigValue is the value of a CONFIG record. Other Confluent fields
// (normalize, alias, metadata, rule sets) are kept as they were read.
type ConfigValue struct {
	Subject            string `json:"subject,omitempty"`
	CompatibilityLevel string `json:"compatibilityLevel,omitempty"`
	Normalize          *bool  `json:"normalize,omitempty"`
}

// ModeValue is the value of a MODE record.
type ModeValue struct {
	Subject string `json:"subject,omitempty"`
	Mode    string `json:"mode"`
}

// DeleteSubjectValue is the value of a DELETE_SUBJECT record: every version
// of Subject up to Version is soft-deleted.
type DeleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Record is one _schemas record: a key and its JSON value (nil for a
// tombstone).
type Record struct {
	Key   Key
	Value []byte
}

// EncodeValue renders a record value; nil stays nil (a tombstone).
func EncodeValue(v any) []byte {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and ints
	}
	return b
}

var errNoValue = errors.New("schemaregistry: record has no value")

func decodeValue(b []byte, v any) error {
	if b == nil {
		return errNoValue
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("schemaregistry: value %q: %w", truncate(b), err)
	}
	return nil
}
