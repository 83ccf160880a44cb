package schemaregistry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
)

// Compatibility levels (Confluent's CompatibilityLevel).
const (
	LevelNone               = "NONE"
	LevelBackward           = "BACKWARD"
	LevelBackwardTransitive = "BACKWARD_TRANSITIVE"
	LevelForward            = "FORWARD"
	LevelForwardTransitive  = "FORWARD_TRANSITIVE"
	LevelFull               = "FULL"
	LevelFullTransitive     = "FULL_TRANSITIVE"
)

// Modes (Confluent's Mode).
const (
	ModeReadWrite        = "READWRITE"
	ModeReadOnly         = "READONLY"
	ModeReadOnlyOverride = "READONLY_OVERRIDE"
	ModeImport           = "IMPORT"
	ModeForward          = "FORWARD"
)

// ParseLevel returns the level named by s (any case), or ok false.
func ParseLevel(s string) (string, bool) {
	u := strings.ToUpper(s)
	switch u {
	case LevelNone, LevelBackward, LevelBackwardTransitive, LevelForward, LevelForwardTransitive, LevelFull, LevelFullTransitive:
		return u, true
	}
	return "", false
}

// Incompatibilities lists why a new schema breaks the level against the
// previous versions (oldest first): empty means it is compatible. BACKWARD
// levels need the new schema to read data written with the old, FORWARD
// the old to read the new, FULL both; non-transitive levels check only the
// latest previous version.
func Incompatibilities(level string, newer Parsed, previous []Parsed) []string {
	if level == LevelNone || len(previous) == 0 {
		return nil
	}
	check := previous
	if !strings.HasSuffix(level, "_TRANSITIVE") {
		check = previous[len(previous)-1:]
	}
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	var out []string
	for i := len(check) - 1; i >= 0; i-- {
		old := check[i]
		if base == LevelBackward || base == LevelFull {
			out = append(out, CanRead(newer, old)...)
		}
		if base == LevelForward || base == LevelFull {
			out = append(out, CanRead(old, newer)...)
		}
	}
	return out
}

// Log is where the registry's records live: the _schemas topic. Write runs
// decide as the only writer (no other writer's record can land between
// decide's reading the state and the log's appending what decide returned)
// and returns once the state reflects the records; Sync returns once the
// state reflects every record written before the call.
type Log interface {
	Write(ctx context.Context, decide func() ([]Record, error)) error
	Sync(ctx context.Context) error
}

// Registry implements the registry's operations on a State kept up to date
// by a Log. Its methods are safe for concurrent use; reads see the state as
// of their call, writes are serialized.
type Registry struct {
	mu    sync.RWMutex // guards state
	state *State
	log   Log
	wmu   sync.Mutex // one write at a time in this process
}

// NewRegistry returns a registry over state (which Apply keeps current).
func NewRegistry(log Log) *Registry {
	return &Registry{state: NewState(), log: log}
}

// Apply folds a record read from the log into the state.
func (r *Registry) Apply(rec Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.Apply(rec)
}

// SetLog sets the log, for a registry made before its log.
func (r *Registry) SetLog(l Log) { r.log = l }

// read runs fn with the state read-locked.
func (r *Registry) read(fn func(s *State) error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fn(r.state)
}

// write runs decide as the log's only writer, with the state read-locked
// while decide runs.
func (r *Registry) write(ctx context.Context, decide func(s *State) ([]Record, error)) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	err := r.log.Write(ctx, func() ([]Record, error) {
		r.mu.RLock()
		defer r.mu.RUnlock()
		return decide(r.state)
	})
	var e *Error
	switch {
	case err == nil, errors.As(err, &e):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return errTimeout("Write to the Kafka store timed out: %v", err)
	}
	return errStore("Error while writing to the Kafka store: %v", err)
}

// SchemaRequest is the body of a register, lookup or compatibility
// request.
type SchemaRequest struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	ID         *int        `json:"id,omitempty"`
	Version    *int        `json:"version,omitempty"`
}

// resolveDeps resolves a schema's references to their texts, transitively
// and dependencies first.
func resolveDeps(s *State, refs []Reference) ([]Dep, error) {
	var out []Dep
	seen := map[string]bool{}
	var visit func(refs []Reference, depth int) error
	visit = func(refs []Reference, depth int) error {
		if depth > 32 {
			return errInvalidSchema("Invalid schema: references nest deeper than 32")
		}
		for _, ref := range refs {
			if ref.Name == "" || ref.Subject == "" {
				return errInvalidSchema("Invalid schema: a reference lacks its name or subject")
			}
			v := s.Version(ref.Subject, ref.Version)
			if ref.Version == -1 {
				if vs := s.Versions(ref.Subject, false); len(vs) > 0 {
					v = vs[len(vs)-1]
				}
			}
			if v == nil {
				return errInvalidSchema("Invalid schema: reference %s (subject %s version %d) not found", ref.Name, ref.Subject, ref.Version)
			}
			if seen[ref.Name] {
				continue
			}
			seen[ref.Name] = true
			if err := visit(v.References, depth+1); err != nil {
				return err
			}
			out = append(out, Dep{Name: ref.Name, Schema: v.Schema})
		}
		return nil
	}
	return out, visit(refs, 0)
}

func (r *Registry) parseRequest(s *State, req SchemaRequest) (Parsed, error) {
	if req.Schema == "" {
		return nil, errInvalidSchema("Empty schema")
	}
	deps, err := resolveDeps(s, req.References)
	if err != nil {
		return nil, err
	}
	return Parse(req.SchemaType, req.Schema, deps)
}

// parseStored parses a stored version for a compatibility check.
func parseStored(s *State, v *SchemaValue) (Parsed, error) {
	deps, err := resolveDeps(s, v.References)
	if err != nil {
		return nil, err
	}
	return Parse(v.SchemaType, v.Schema, deps)
}

// level is the subject's compatibility level, else the global one, else
// BACKWARD.
func level(s *State, subject string) string {
	if c, ok := s.Config(subject); ok && c.CompatibilityLevel != "" {
		return c.CompatibilityLevel
	}
	if c, ok := s.Config(""); ok && c.CompatibilityLevel != "" {
		return c.CompatibilityLevel
	}
	return LevelBackward
}

// mode is the subject's mode, else the global one, else READWRITE.
func mode(s *State, subject string) string {
	if m, ok := s.Mode(subject); ok {
		return m
	}
	if m, ok := s.Mode(""); ok {
		return m
	}
	return ModeReadWrite
}

func validSubject(subject string) bool {
	if subject == "" || strings.ContainsRune(subject, 0) {
		return false
	}
	for _, r := range subject {
		if r < 0x20 {
			return false
		}
	}
	return true
}

// Register registers a schema under a subject and returns its id: the
// existing id when the subject already has it, the id of the same schema
// in another subject, else a new one.
func (r *Registry) Register(ctx context.Context, subject string, req SchemaRequest) (int, error) {
	if !validSubject(subject) {
		return 0, errInvalidSubject(subject)
	}
	// Registering what the subject already has writes nothing: answer
	// from the state without taking the writer's turn.
	var id int
	if req.ID == nil {
		_ = r.read(func(s *State) error {
			p, err := r.parseRequest(s, req)
			if err != nil {
				return nil
			}
			for _, v := range s.Versions(subject, false) {
				if sameSchema(v, p, req.References) {
					id = v.ID
				}
			}
			return nil
		})
		if id > 0 {
			return id, nil
		}
	}
	err := r.write(ctx, func(s *State) ([]Record, error) {
		m := mode(s, subject)
		if m == ModeReadOnly || m == ModeReadOnlyOverride {
			return nil, errNotPermitted("Subject %s in context  is in read-only mode", subject)
		}
		if req.ID != nil && m != ModeImport {
			// Confluent accepts an explicit id outside IMPORT mode only
			// when it names the schema the registry would pick anyway.
			if *req.ID < 0 {
				return nil, errIDDoesNotMatch("Schema id %d is not valid", *req.ID)
			}
		}
		p, err := r.parseRequest(s, req)
		if err != nil {
			return nil, err
		}
		typ, canon := p.Type(), p.Canonical()
		live := s.Versions(subject, false)
		for _, v := range live {
			if sameSchema(v, p, req.References) {
				if req.ID != nil && *req.ID != v.ID {
					return nil, errIDDoesNotMatch("Schema already registered with id %d instead of input id %d", v.ID, *req.ID)
				}
				id = v.ID
				return nil, nil
			}
		}
		if m != ModeImport {
			prev := make([]Parsed, 0, len(live))
			for _, v := range live {
				pp, err := parseStored(s, v)
				if err != nil {
					continue // a stored schema this build cannot parse constrains nothing
				}
				prev = append(prev, pp) // another type is incompatible, as in Confluent
			}
			if problems := Incompatibilities(level(s, subject), p, prev); len(problems) > 0 {
				details := append(problems, fmt.Sprintf("{oldSchemaVersion: %d}", live[len(live)-1].Version),
					fmt.Sprintf("{oldSchema: '%s'}", live[len(live)-1].Schema),
					fmt.Sprintf("{compatibility: '%s'}", level(s, subject)))
				return nil, errIncompatible(subject, details)
			}
		}
		existing := s.IDFor(typ, canon, req.References)
		switch {
		case req.ID != nil:
			if other := s.ByID(*req.ID); other != nil && (other.SchemaType != typ || identity(typ, other.Schema) != identity(typ, canon)) {
				return nil, errIDDoesNotMatch("Overwrite new schema with id %d is not permitted.", *req.ID)
			}
			id = *req.ID
		case existing > 0:
			id = existing
		default:
			if s.MaxID() == math.MaxInt32 {
				return nil, errStore("no schema id left")
			}
			id = s.MaxID() + 1
		}
		version := s.MaxVersion(subject) + 1
		if req.Version != nil && *req.Version > 0 {
			if m != ModeImport {
				if *req.Version != version {
					return nil, errInvalidSchema("Version %d is not one more than the latest version %d", *req.Version, version-1)
				}
			}
			version = *req.Version
		}
		v := SchemaValue{Subject: subject, Version: version, ID: id, Schema: canon, SchemaType: typ, References: req.References}
		return []Record{{Key: SchemaKey(subject, version), Value: EncodeValue(v)}}, nil
	})
	return id, err
}

func sameRefs(a, b []Reference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Lookup finds the version of a subject that holds the schema.
func (r *Registry) Lookup(subject string, req SchemaRequest, deleted bool) (*SchemaValue, error) {
	var out *SchemaValue
	err := r.read(func(s *State) error {
		if !s.HasSubject(subject) || (!deleted && len(s.Versions(subject, false)) == 0) {
			return errSubjectNotFound(subject)
		}
		p, err := r.parseRequest(s, req)
		if err != nil {
			return err
		}
		for _, v := range s.Versions(subject, deleted) {
			if sameSchema(v, p, req.References) {
				c := *v
				out = &c
				return nil
			}
		}
		return errSchemaNotFound()
	})
	return out, err
}

// Subjects lists the subjects.
func (r *Registry) Subjects(deleted bool) []string {
	var out []string
	_ = r.read(func(s *State) error { out = s.Subjects(deleted); return nil })
	return out
}

// AllVersions lists the versions of every subject whose name starts with
// prefix, by subject and version; with latestOnly only each subject's
// latest.
func (r *Registry) AllVersions(prefix string, deleted, latestOnly bool) []SchemaValue {
	var out []SchemaValue
	_ = r.read(func(s *State) error {
		for _, name := range s.Subjects(deleted) {
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			vs := s.Versions(name, deleted)
			if latestOnly && len(vs) > 0 {
				vs = vs[len(vs)-1:]
			}
			for _, v := range vs {
				out = append(out, *v)
			}
		}
		return nil
	})
	return out
}

// Versions lists a subject's versions.
func (r *Registry) Versions(subject string, deleted bool) ([]int, error) {
	var out []int
	err := r.read(func(s *State) error {
		vs := s.Versions(subject, deleted)
		if len(vs) == 0 {
			return errSubjectNotFound(subject)
		}
		for _, v := range vs {
			out = append(out, v.Version)
		}
		return nil
	})
	return out, err
}

// parseVersion parses a version path segment: a number in [1, 2^31-1],
// "latest" or -1 (both the latest).
func parseVersion(v string) (int, error) {
	if v == "latest" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 0 || n < -1 || n > math.MaxInt32 {
		return 0, errInvalidVersion(v)
	}
	return n, nil
}

// findVersion resolves a version of a subject; -1 is the latest live one.
func findVersion(s *State, subject string, version int, deleted bool) (*SchemaValue, error) {
	if !s.HasSubject(subject) {
		return nil, errSubjectNotFound(subject)
	}
	if version == -1 {
		vs := s.Versions(subject, deleted)
		if len(vs) == 0 {
			return nil, errSubjectNotFound(subject)
		}
		return vs[len(vs)-1], nil
	}
	v := s.Version(subject, version)
	if v == nil || (v.Deleted && !deleted) {
		return nil, errVersionNotFound(version)
	}
	return v, nil
}

// GetVersion returns one version of a subject.
func (r *Registry) GetVersion(subject, version string, deleted bool) (*SchemaValue, error) {
	n, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	var out *SchemaValue
	err = r.read(func(s *State) error {
		v, err := findVersion(s, subject, n, deleted)
		if err == nil {
			c := *v
			out = &c
		}
		return err
	})
	return out, err
}

// ReferencedBy lists the ids of schemas that reference a version.
func (r *Registry) ReferencedBy(subject, version string) ([]int, error) {
	n, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	var out []int
	err = r.read(func(s *State) error {
		v, err := findVersion(s, subject, n, false)
		if err != nil {
			return err
		}
		out = s.ReferencedBy(subject, v.Version)
		return nil
	})
	return out, err
}

// SchemaByID returns the schema with an id.
func (r *Registry) SchemaByID(id int) (*SchemaValue, error) {
	var out *SchemaValue
	err := r.read(func(s *State) error {
		v := s.ByID(id)
		if v == nil {
			return errSchemaIDNotFound(id)
		}
		c := *v
		out = &c
		return nil
	})
	return out, err
}

// Formatted returns a stored schema's text in a format of the REST API's
// format parameter: "serialized" renders a Protobuf schema as the
// base64-encoded FileDescriptorProto Confluent's clients ask for (its
// dependencies named by their reference names); any other format, and any
// other schema type, is the stored text.
func (r *Registry) Formatted(v *SchemaValue, format string) (string, error) {
	if format != "serialized" || normType(v.SchemaType) != TypeProtobuf {
		return v.Schema, nil
	}
	var p Parsed
	err := r.read(func(s *State) error {
		var err error
		p, err = parseStored(s, v)
		return err
	})
	if err != nil {
		return "", err
	}
	b, err := proto.Marshal(protodesc.ToFileDescriptorProto(p.(*protoSchema).fd))
	if err != nil {
		return "", errStore("serializing schema %d: %v", v.ID, err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// UsersOfID lists the subject versions that hold an id.
func (r *Registry) UsersOfID(id int, deleted bool) ([]SchemaValue, error) {
	var out []SchemaValue
	err := r.read(func(s *State) error {
		if s.ByID(id) == nil {
			return errSchemaIDNotFound(id)
		}
		for _, v := range s.UsersOf(id, deleted) {
			out = append(out, *v)
		}
		return nil
	})
	return out, err
}

// DeleteSubject soft-deletes a subject (every live version), or with
// permanent hard-deletes a soft-deleted one; it returns the versions.
func (r *Registry) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	var out []int
	err := r.write(ctx, func(s *State) ([]Record, error) {
		out = nil
		if m := mode(s, subject); m == ModeReadOnly || m == ModeReadOnlyOverride {
			return nil, errNotPermitted("Subject %s in context  is in read-only mode", subject)
		}
		if !s.HasSubject(subject) {
			return nil, errSubjectNotFound(subject)
		}
		all := s.Versions(subject, true)
		live := s.Versions(subject, false)
		if !permanent && len(live) == 0 {
			return nil, errSubjectSoftDeleted(subject)
		}
		if permanent && len(live) > 0 {
			return nil, errSubjectNotSoftDeleted(subject)
		}
		targets := live
		if permanent {
			targets = all
		}
		for _, v := range targets {
			for _, id := range s.ReferencedBy(subject, v.Version) {
				for _, u := range s.UsersOf(id, false) {
					if u.Subject != subject {
						return nil, errReferenceExists(fmt.Sprintf("{subject=%s,version=%d}", subject, v.Version))
					}
				}
			}
			out = append(out, v.Version)
		}
		if !permanent {
			return []Record{{Key: DeleteSubjectKey(subject), Value: EncodeValue(DeleteSubjectValue{Subject: subject, Version: targets[len(targets)-1].Version})}}, nil
		}
		var recs []Record
		for i := len(targets) - 1; i >= 0; i-- {
			recs = append(recs, Record{Key: SchemaKey(subject, targets[i].Version)})
		}
		if _, ok := s.Mode(subject); ok {
			recs = append(recs, Record{Key: ModeKey(subject)})
		}
		if _, ok := s.Config(subject); ok {
			recs = append(recs, Record{Key: ConfigKey(subject)})
		}
		return recs, nil
	})
	return out, err
}

// DeleteVersion soft-deletes a version, or with permanent hard-deletes a
// soft-deleted one; it returns the version number.
func (r *Registry) DeleteVersion(ctx context.Context, subject, version string, permanent bool) (int, error) {
	n, err := parseVersion(version)
	if err != nil {
		return 0, err
	}
	var out int
	err = r.write(ctx, func(s *State) ([]Record, error) {
		if m := mode(s, subject); m == ModeReadOnly || m == ModeReadOnlyOverride {
			return nil, errNotPermitted("Subject %s in context  is in read-only mode", subject)
		}
		if !s.HasSubject(subject) {
			return nil, errSubjectNotFound(subject)
		}
		// Soft-deleted versions are found too (Confluent looks them up
		// with lookupDeleted), so a second soft delete is a 40406.
		v, err := findVersion(s, subject, n, true)
		if err != nil {
			return nil, err
		}
		if !permanent && v.Deleted {
			return nil, errVersionSoftDeleted(subject, v.Version)
		}
		if permanent && !v.Deleted {
			return nil, errVersionNotSoftDeleted(subject, v.Version)
		}
		if len(s.ReferencedBy(subject, v.Version)) > 0 {
			return nil, errReferenceExists(fmt.Sprintf("{subject=%s,version=%d}", subject, v.Version))
		}
		out = v.Version
		if permanent {
			recs := []Record{{Key: SchemaKey(subject, v.Version)}}
			if len(s.Versions(subject, true)) == 1 {
				if _, ok := s.Mode(subject); ok {
					recs = append(recs, Record{Key: ModeKey(subject)})
				}
				if _, ok := s.Config(subject); ok {
					recs = append(recs, Record{Key: ConfigKey(subject)})
				}
			}
			return recs, nil
		}
		d := *v
		d.Deleted = true
		return []Record{{Key: SchemaKey(subject, v.Version), Value: EncodeValue(d)}}, nil
	})
	return out, err
}

// TestCompatibility checks a schema against one version of a subject (or,
// for "" as version, against the versions the subject's level names).
func (r *Registry) TestCompatibility(subject, version string, req SchemaRequest) (bool, []string, error) {
	var ok bool
	var msgs []string
	n := 0
	if version != "" {
		var err error
		if n, err = parseVersion(version); err != nil {
			return false, nil, err
		}
	}
	err := r.read(func(s *State) error {
		p, err := r.parseRequest(s, req)
		if err != nil {
			return err
		}
		lvl := level(s, subject)
		var prev []Parsed
		if version == "" {
			for _, v := range s.Versions(subject, false) {
				if pp, err := parseStored(s, v); err == nil {
					prev = append(prev, pp)
				}
			}
		} else {
			v, err := findVersion(s, subject, n, false)
			if err != nil {
				if n != -1 {
					return errVersionNotFound(n)
				}
				ok = true // no live version: anything is compatible (Confluent's "latest")
				return nil
			}
			pp, err := parseStored(s, v)
			if err != nil {
				return err
			}
			prev = []Parsed{pp}
		}
		msgs = Incompatibilities(lvl, p, prev)
		if len(msgs) > 0 {
			msgs = append(msgs, fmt.Sprintf("{compatibility: '%s'}", lvl))
		}
		ok = len(msgs) == 0
		return nil
	})
	return ok, msgs, err
}

// Config returns a subject's ("" global) compatibility level; with
// defaultToGlobal a subject without one gets the global one.
func (r *Registry) Config(subject string, defaultToGlobal bool) (string, error) {
	var out string
	err := r.read(func(s *State) error {
		if subject == "" {
			out = level(s, "")
			return nil
		}
		if c, ok := s.Config(subject); ok && c.CompatibilityLevel != "" {
			out = c.CompatibilityLevel
			return nil
		}
		if defaultToGlobal {
			out = level(s, "")
			return nil
		}
		return errSubjectCompatNotSet(subject)
	})
	return out, err
}

// SetConfig sets a subject's ("" global) compatibility level.
func (r *Registry) SetConfig(ctx context.Context, subject, lvl string) (string, error) {
	l, ok := ParseLevel(lvl)
	if !ok {
		return "", errInvalidCompatibility()
	}
	err := r.write(ctx, func(s *State) ([]Record, error) {
		if subject != "" {
			if m := mode(s, subject); m == ModeReadOnly || m == ModeReadOnlyOverride {
				return nil, errNotPermitted("Subject %s in context  is in read-only mode", subject)
			}
		}
		return []Record{{Key: ConfigKey(subject), Value: EncodeValue(ConfigValue{Subject: subject, CompatibilityLevel: l})}}, nil
	})
	return l, err
}

// DeleteConfig removes a subject's ("" global) level and returns it.
func (r *Registry) DeleteConfig(ctx context.Context, subject string) (string, error) {
	var old string
	err := r.write(ctx, func(s *State) ([]Record, error) {
		c, ok := s.Config(subject)
		if !ok {
			if subject == "" {
				old = LevelBackward
				return nil, nil
			}
			if !s.HasSubject(subject) {
				return nil, errSubjectNotFound(subject)
			}
			return nil, errSubjectCompatNotSet(subject)
		}
		old = c.CompatibilityLevel
		return []Record{{Key: ConfigKey(subject)}}, nil
	})
	return old, err
}

// Mode returns a subject's ("" global) mode; with defaultToGlobal a subject
// without one gets the global one.
func (r *Registry) Mode(subject string, defaultToGlobal bool) (string, error) {
	var out string
	err := r.read(func(s *State) error {
		if m, ok := s.Mode(subject); ok {
			out = m
			return nil
		}
		if subject == "" || defaultToGlobal {
			out = mode(s, "")
			return nil
		}
		return errSubjectModeNotSet(subject)
	})
	return out, err
}

// SetMode sets a subject's ("" global) mode. IMPORT needs an empty
// registry (or subject) unless force.
func (r *Registry) SetMode(ctx context.Context, subject, m string, force bool) (string, error) {
	u := strings.ToUpper(m)
	switch u {
	case ModeReadWrite, ModeReadOnly, ModeReadOnlyOverride, ModeImport, ModeForward:
	default:
		return "", errInvalidMode()
	}
	err := r.write(ctx, func(s *State) ([]Record, error) {
		if u == ModeImport && !force {
			if (subject == "" && len(s.Subjects(true)) > 0) || (subject != "" && s.HasSubject(subject)) {
				return nil, errNotPermitted("Cannot import since found existing subjects")
			}
		}
		return []Record{{Key: ModeKey(subject), Value: EncodeValue(ModeValue{Subject: subject, Mode: u})}}, nil
	})
	return u, err
}

// DeleteMode removes a subject's mode and returns it.
func (r *Registry) DeleteMode(ctx context.Context, subject string) (string, error) {
	var old string
	err := r.write(ctx, func(s *State) ([]Record, error) {
		m, ok := s.Mode(subject)
		if !ok {
			if !s.HasSubject(subject) {
				return nil, errSubjectNotFound(subject)
			}
			return nil, errSubjectModeNotSet(subject)
		}
		old = m
		return []Record{{Key: ModeKey(subject)}}, nil
	})
	return old, err
}

// statusOf maps an error to its HTTP status and Confluent body.
func statusOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return newErr(http.StatusInternalServerError, CodeInternal, "%v", err)
}
