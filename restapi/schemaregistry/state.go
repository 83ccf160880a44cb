package schemaregistry

import (
	"fmt"
	"sort"
	"strings"
)

// State is the registry's view of the _schemas topic: what applying its
// records in offset order gives. It is not safe for concurrent use; the
// Registry guards it.
type State struct {
	subjects map[string]map[int]*SchemaValue // subject → version → value
	ids      map[int]*SchemaValue            // id → the first value read with it
	idUsers  map[int]int                     // id → live (not hard-deleted) versions using it
	content  map[string]int                  // contentKey → id
	configs  map[string]ConfigValue          // "" is the global config
	modes    map[string]string               // "" is the global mode
	maxID    int                             // the largest id ever read, deleted or not
}

// NewState returns an empty state.
func NewState() *State {
	return &State{
		subjects: map[string]map[int]*SchemaValue{},
		ids:      map[int]*SchemaValue{},
		idUsers:  map[int]int{},
		content:  map[string]int{},
		configs:  map[string]ConfigValue{},
		modes:    map[string]string{},
	}
}

// contentKey identifies a schema's content: its type, canonical text and
// references, so that the same schema gets the same id in every subject.
func contentKey(typ, canonical string, refs []Reference) string {
	var b strings.Builder
	b.WriteString(normType(typ))
	b.WriteByte(0)
	b.WriteString(identity(typ, canonical))
	for _, r := range refs {
		fmt.Fprintf(&b, "\x00%s\x00%s\x00%d", r.Name, r.Subject, r.Version)
	}
	return b.String()
}

// identity is the part of a schema's text that decides whether two
// schemas of a type are the same.
func identity(typ, text string) string {
	if normType(typ) == TypeProtobuf {
		return protoIdentity(text)
	}
	return text
}

// sameSchema says whether a stored version holds the schema p with refs.
func sameSchema(v *SchemaValue, p Parsed, refs []Reference) bool {
	return v.SchemaType == p.Type() && identity(v.SchemaType, v.Schema) == identity(p.Type(), p.Canonical()) && sameRefs(v.References, refs)
}

func normType(t string) string {
	if t == "" {
		return TypeAvro
	}
	return t
}

// Apply folds one record into the state. A record it cannot decode is an
// error and changes nothing (the reader logs it and goes on, as Confluent's
// does); unknown key types are ignored.
func (s *State) Apply(r Record) error {
	switch r.Key.Type {
	case KeySchema:
		if r.Value == nil {
			s.removeVersion(r.Key.Subject, r.Key.Version)
			return nil
		}
		var v SchemaValue
		if err := decodeValue(r.Value, &v); err != nil {
			return err
		}
		if v.ID < 0 || v.Schema == "" {
			return fmt.Errorf("schemaregistry: SCHEMA value for %s/%d has no id or schema", r.Key.Subject, r.Key.Version)
		}
		// The key is authoritative for where the value lives.
		v.Subject, v.Version = r.Key.Subject, r.Key.Version
		v.SchemaType = normType(v.SchemaType)
		s.removeVersion(v.Subject, v.Version)
		vs := s.subjects[v.Subject]
		if vs == nil {
			vs = map[int]*SchemaValue{}
			s.subjects[v.Subject] = vs
		}
		vs[v.Version] = &v
		if _, ok := s.ids[v.ID]; !ok {
			s.ids[v.ID] = &v
			s.content[contentKey(v.SchemaType, v.Schema, v.References)] = v.ID
		}
		s.idUsers[v.ID]++
		s.maxID = max(s.maxID, v.ID)
	case KeyConfig:
		if r.Value == nil {
			delete(s.configs, r.Key.Subject)
			return nil
		}
		var v ConfigValue
		if err := decodeValue(r.Value, &v); err != nil {
			return err
		}
		s.configs[r.Key.Subject] = v
	case KeyMode:
		if r.Value == nil {
			delete(s.modes, r.Key.Subject)
			return nil
		}
		var v ModeValue
		if err := decodeValue(r.Value, &v); err != nil {
			return err
		}
		s.modes[r.Key.Subject] = v.Mode
	case KeyDeleteSubject:
		if r.Value == nil {
			return nil
		}
		var v DeleteSubjectValue
		if err := decodeValue(r.Value, &v); err != nil {
			return err
		}
		for ver, sv := range s.subjects[r.Key.Subject] {
			if ver <= v.Version {
				sv.Deleted = true
			}
		}
	case KeyClearSubject:
		// Confluent's CLEAR_SUBJECT drops a subject from its caches after
		// the tombstones that follow it; the tombstones do that here.
	}
	return nil
}

func (s *State) removeVersion(subject string, version int) {
	vs := s.subjects[subject]
	old, ok := vs[version]
	if !ok {
		return
	}
	delete(vs, version)
	if len(vs) == 0 {
		delete(s.subjects, subject)
	}
	s.idUsers[old.ID]--
	if s.idUsers[old.ID] <= 0 {
		delete(s.idUsers, old.ID)
		if first := s.ids[old.ID]; first != nil {
			delete(s.content, contentKey(first.SchemaType, first.Schema, first.References))
		}
		delete(s.ids, old.ID)
	}
}

// MaxID is the largest schema id the topic has ever held.
func (s *State) MaxID() int { return s.maxID }

// Subjects lists subject names in order; with deleted, subjects whose
// versions are all soft-deleted too.
func (s *State) Subjects(deleted bool) []string {
	var out []string
	for name, vs := range s.subjects {
		for _, v := range vs {
			if deleted || !v.Deleted {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// Versions returns a subject's versions in ascending order, soft-deleted
// ones only with deleted.
func (s *State) Versions(subject string, deleted bool) []*SchemaValue {
	var out []*SchemaValue
	for _, v := range s.subjects[subject] {
		if deleted || !v.Deleted {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// Version returns one version of a subject, soft-deleted or not.
func (s *State) Version(subject string, version int) *SchemaValue {
	return s.subjects[subject][version]
}

// HasSubject says whether the subject has any version, deleted or not.
func (s *State) HasSubject(subject string) bool { return len(s.subjects[subject]) > 0 }

// MaxVersion is the largest version of the subject, deleted or not; 0 if
// none.
func (s *State) MaxVersion(subject string) int {
	m := 0
	for v := range s.subjects[subject] {
		m = max(m, v)
	}
	return m
}

// ByID returns the schema with the id, or nil.
func (s *State) ByID(id int) *SchemaValue { return s.ids[id] }

// IDFor returns the id of the schema with this content, or 0.
func (s *State) IDFor(typ, canonical string, refs []Reference) int {
	return s.content[contentKey(typ, canonical, refs)]
}

// UsersOf lists the subject versions that use an id, in order.
func (s *State) UsersOf(id int, deleted bool) []*SchemaValue {
	var out []*SchemaValue
	for _, vs := range s.subjects {
		for _, v := range vs {
			if v.ID == id && (deleted || !v.Deleted) {
				out = append(out, v)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// ReferencedBy returns the ids of live schemas that reference subject's
// version, in order.
func (s *State) ReferencedBy(subject string, version int) []int {
	seen := map[int]bool{}
	for _, vs := range s.subjects {
		for _, v := range vs {
			if v.Deleted {
				continue
			}
			for _, r := range v.References {
				if r.Subject == subject && r.Version == version {
					seen[v.ID] = true
				}
			}
		}
	}
	out := make([]int, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// Config returns the subject's ("" global) config and whether one is set.
func (s *State) Config(subject string) (ConfigValue, bool) {
	c, ok := s.configs[subject]
	return c, ok
}

// Mode returns the subject's ("" global) mode and whether one is set.
func (s *State) Mode(subject string) (string, bool) {
	m, ok := s.modes[subject]
	return m, ok
}
