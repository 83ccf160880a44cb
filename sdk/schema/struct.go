package schema

import "fmt"

// Struct is a value of a struct schema. Set records the first error and
// ignores later calls, so a chain of Sets needs one check (Err or Validate).
// A Struct is not safe for concurrent mutation.
type Struct struct {
	schema *Schema
	values []any
	err    error
}

// NewStruct returns an empty value of the struct schema s.
func NewStruct(s *Schema) *Struct {
	if s == nil || s.Type != TypeStruct {
		return &Struct{schema: s, err: fmt.Errorf("schema: NewStruct needs a struct schema, got %v", s)}
	}
	return &Struct{schema: s, values: make([]any, len(s.Fields))}
}

// NewStructs returns n empty values of the struct schema s allocated
// together, for decoders of many records: two allocations for n values
// instead of two per value. Each element is used through its address
// (&structs[i]) and keeps the whole block alive.
func NewStructs(s *Schema, n int) []Struct {
	out := make([]Struct, n)
	if s == nil || s.Type != TypeStruct {
		for i := range out {
			out[i] = *NewStruct(s)
		}
		return out
	}
	k := len(s.Fields)
	values := make([]any, n*k)
	for i := range out {
		out[i] = Struct{schema: s, values: values[i*k : (i+1)*k : (i+1)*k]}
	}
	return out
}

// Schema returns the struct's schema.
func (s *Struct) Schema() *Schema { return s.schema }

// Set sets a field after checking the value against the field's schema.
func (s *Struct) Set(name string, v any) *Struct {
	if s.err != nil {
		return s
	}
	f := s.schema.Field(name)
	if f == nil {
		s.err = fmt.Errorf("schema: struct %q has no field %q", s.schema.Name, name)
		return s
	}
	if err := Validate(f.Schema, v); err != nil {
		s.err = fmt.Errorf("schema: field %q: %w", name, err)
		return s
	}
	s.values[f.Index] = v
	return s
}

// SetIndex sets the i-th field without checking it; the record is checked
// as a whole before it leaves the task. It is the fast path for generated
// code and decoders.
func (s *Struct) SetIndex(i int, v any) { s.values[i] = v }

// Get returns a field's value, or the field's default when it is unset.
func (s *Struct) Get(name string) any {
	f := s.schema.Field(name)
	if f == nil {
		return nil
	}
	return s.GetIndex(f.Index)
}

// GetIndex returns the i-th field's value, or its default when unset.
func (s *Struct) GetIndex(i int) any {
	if v := s.values[i]; v != nil {
		return v
	}
	return s.schema.Fields[i].Schema.Default
}

// GetIndexWithoutDefault returns the i-th field's value as set, nil when
// unset even if the field has a default (Kafka's Struct.getWithoutDefault).
func (s *Struct) GetIndexWithoutDefault(i int) any { return s.values[i] }

// Err returns the first error recorded by Set.
func (s *Struct) Err() error { return s.err }

// Validate returns the first Set error, or checks every field against the
// schema (required fields must be set or have a default).
func (s *Struct) Validate() error {
	if s.err != nil {
		return s.err
	}
	return Validate(s.schema, s)
}

// String renders the struct for logs and test failures.
func (s *Struct) String() string {
	return fmt.Sprintf("Struct%v", s.values)
}
