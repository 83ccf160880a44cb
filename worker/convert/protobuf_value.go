package convert

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// --- Connect value → Protobuf message (ProtobufData.fromConnectData) ---

type pbWriter struct{ opts *protoOptions }

// root builds the message of md holding a Connect value: a struct's
// fields, or a primitive in its wrapper message.
func (w pbWriter) root(md protoreflect.MessageDescriptor, s *schema.Schema, v any) (protoreflect.Message, error) {
	msg := dynamicpb.NewMessage(md)
	if s.Type != schema.TypeStruct {
		fd := md.Fields().ByName("value")
		if fd == nil {
			return nil, fmt.Errorf("convert: message %s has no field value for a %v", md.FullName(), s.Type)
		}
		return msg, w.set(msg, fd, s, v)
	}
	return msg, w.fill(msg, s, v)
}

func (w pbWriter) name(n string) protoreflect.Name {
	if w.opts.scrubInvalidNames {
		n = scrubProtoName(n)
	}
	return protoreflect.Name(n)
}

func isPbUnion(s *schema.Schema) bool {
	return s.Type == schema.TypeStruct && strings.HasPrefix(s.Name, pbUnionPrefix)
}

// fill sets msg's fields from a Connect struct.
func (w pbWriter) fill(msg protoreflect.Message, s *schema.Schema, v any) error {
	st, ok := v.(*schema.Struct)
	if !ok {
		return fmt.Errorf("convert: invalid type for struct: %T", v)
	}
	if st.Schema() != s && !schema.Equal(st.Schema(), s) {
		return errors.New("convert: mismatching struct schema")
	}
	md := msg.Descriptor()
	for i, f := range s.Fields {
		fv := st.GetIndex(i)
		if fv == nil {
			continue
		}
		if isPbUnion(f.Schema) {
			u, ok := fv.(*schema.Struct)
			if !ok {
				return fmt.Errorf("convert: field %s: invalid type for union: %T", f.Name, fv)
			}
			set := false
			for j, uf := range f.Schema.Fields {
				e := u.GetIndex(j)
				if e == nil {
					continue
				}
				fd := md.Fields().ByName(w.name(uf.Name))
				if fd == nil {
					return fmt.Errorf("convert: message %s has no field %s", md.FullName(), uf.Name)
				}
				if err := w.set(msg, fd, uf.Schema, e); err != nil {
					return fmt.Errorf("field %s: %w", uf.Name, err)
				}
				set = true
				break
			}
			if !set {
				return fmt.Errorf("convert: field %s: union has no non-null field", f.Name)
			}
			continue
		}
		fd := md.Fields().ByName(w.name(f.Name))
		if fd == nil {
			return fmt.Errorf("convert: message %s has no field %s", md.FullName(), f.Name)
		}
		if err := w.set(msg, fd, f.Schema, fv); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}

// set sets one field of msg from a non-null Connect value.
func (w pbWriter) set(msg protoreflect.Message, fd protoreflect.FieldDescriptor, s *schema.Schema, v any) error {
	switch {
	case fd.IsMap():
		if s.Type != schema.TypeMap {
			return fmt.Errorf("convert: %v for the map field %s", s.Type, fd.Name())
		}
		m := msg.Mutable(fd).Map()
		var err error
		for k, e := range mapEntries(v) {
			if k == nil {
				return errors.New("convert: null map key")
			}
			var key, val protoreflect.Value
			if key, err = w.value(m, fd.MapKey(), s.KeySchema, k); err != nil {
				return err
			}
			if e == nil {
				val = m.NewValue()
			} else if val, err = w.value(m, fd.MapValue(), s.ValueSchema, e); err != nil {
				return err
			}
			m.Set(key.MapKey(), val)
		}
		if !isMapValue(v) {
			return fmt.Errorf("convert: invalid type for map: %T", v)
		}
		return nil
	case fd.IsList():
		l := msg.Mutable(fd).List()
		if s.Type == schema.TypeMap {
			// The repeated key/value messages Confluent's converter
			// writes for a Connect map.
			if !isMapValue(v) {
				return fmt.Errorf("convert: invalid type for map: %T", v)
			}
			md := fd.Message()
			kf, vf := md.Fields().ByName("key"), md.Fields().ByName("value")
			if kf == nil || vf == nil {
				return fmt.Errorf("convert: %s is not a key/value message", md.FullName())
			}
			for k, e := range mapEntries(v) {
				entry := l.NewElement().Message()
				if k != nil {
					if err := w.set(entry, kf, s.KeySchema, k); err != nil {
						return err
					}
				}
				if e != nil {
					if err := w.set(entry, vf, s.ValueSchema, e); err != nil {
						return err
					}
				}
				l.Append(protoreflect.ValueOfMessage(entry))
			}
			return nil
		}
		list, ok := v.([]any)
		if !ok || s.Type != schema.TypeArray {
			return fmt.Errorf("convert: invalid type %T for the repeated field %s", v, fd.Name())
		}
		for _, e := range list {
			if e == nil {
				return fmt.Errorf("convert: null element in the repeated field %s", fd.Name())
			}
			val, err := w.value(l, fd, s.ValueSchema, e)
			if err != nil {
				return err
			}
			l.Append(val)
		}
		if l.Len() == 0 {
			msg.Clear(fd)
		}
		return nil
	}
	val, err := w.value(msg, fd, s, v)
	if err != nil {
		return err
	}
	msg.Set(fd, val)
	return nil
}

func isMapValue(v any) bool {
	switch v.(type) {
	case map[string]any, map[any]any:
		return true
	}
	return false
}

// newer makes new message values of the right type: a message, list or
// map of dynamicpb.
type newer interface{ NewValue() protoreflect.Value }

type newElement interface{ NewElement() protoreflect.Value }

// value converts one non-null Connect value to the Protobuf value of a
// singular field (or element) fd.
func (w pbWriter) value(parent any, fd protoreflect.FieldDescriptor, s *schema.Schema, v any) (protoreflect.Value, error) {
	newMessage := func() protoreflect.Message {
		switch p := parent.(type) {
		case protoreflect.Message:
			return p.NewField(fd).Message()
		case newElement:
			return p.NewElement().Message()
		case newer:
			return p.NewValue().Message()
		}
		return dynamicpb.NewMessage(fd.Message())
	}
	bad := func() (protoreflect.Value, error) {
		return protoreflect.Value{}, fmt.Errorf("convert: invalid type for %v: %T (field %s, %v)", s.Type, v, fd.Name(), fd.Kind())
	}
	if fd.Kind() == protoreflect.MessageKind {
		full := string(fd.Message().FullName())
		switch s.Name {
		case schema.DecimalName, schema.DateName, schema.TimeName, schema.TimestampName:
			m := newMessage()
			if err := pbLogical(m, s, v); err != nil {
				return protoreflect.Value{}, err
			}
			return protoreflect.ValueOfMessage(m), nil
		}
		if _, ok := pbWrappers[full]; ok && s.Type != schema.TypeStruct {
			m := newMessage()
			vf := m.Descriptor().Fields().ByName("value")
			val, err := w.value(m, vf, s, v)
			if err != nil {
				return protoreflect.Value{}, err
			}
			m.Set(vf, val)
			return protoreflect.ValueOfMessage(m), nil
		}
		if s.Type != schema.TypeStruct {
			return bad()
		}
		m := newMessage()
		if err := w.fill(m, s, v); err != nil {
			return protoreflect.Value{}, err
		}
		return protoreflect.ValueOfMessage(m), nil
	}
	if fd.Kind() == protoreflect.EnumKind {
		switch x := v.(type) {
		case string:
			tag, ok := s.Parameters[pbEnumParam+"."+x]
			if ok {
				n, err := strconv.Atoi(tag)
				if err == nil {
					return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
				}
			}
			if ev := fd.Enum().Values().ByName(protoreflect.Name(x)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
			return protoreflect.Value{}, fmt.Errorf("convert: %q is not a value of enum %s", x, fd.Enum().FullName())
		default:
			n, ok := intOf(v)
			if !ok {
				return bad()
			}
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
		}
	}
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n, ok := intOf(v); ok {
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if n, ok := intOf(v); ok {
			return protoreflect.ValueOfUint32(uint32(n)), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if n, ok := intOf(v); ok {
			return protoreflect.ValueOfInt64(n), nil
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n, ok := intOf(v); ok {
			return protoreflect.ValueOfUint64(uint64(n)), nil
		}
	case protoreflect.FloatKind:
		switch f := v.(type) {
		case float32:
			return protoreflect.ValueOfFloat32(f), nil
		case float64:
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
	case protoreflect.DoubleKind:
		switch f := v.(type) {
		case float32:
			return protoreflect.ValueOfFloat64(float64(f)), nil
		case float64:
			return protoreflect.ValueOfFloat64(f), nil
		}
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
	case protoreflect.StringKind:
		if str, ok := v.(string); ok {
			return protoreflect.ValueOfString(str), nil
		}
	case protoreflect.BytesKind:
		if b, ok := v.([]byte); ok {
			return protoreflect.ValueOfBytes(b), nil
		}
	}
	return bad()
}

// pbLogical fills the message of a Connect logical type: Decimal as
// confluent.type.Decimal, Date as google.type.Date, Time as
// google.type.TimeOfDay, Timestamp as google.protobuf.Timestamp.
func pbLogical(m protoreflect.Message, s *schema.Schema, v any) error {
	f := m.Descriptor().Fields()
	set := func(name string, val protoreflect.Value) error {
		fd := f.ByName(protoreflect.Name(name))
		if fd == nil {
			return fmt.Errorf("convert: %s has no field %s for %s", m.Descriptor().FullName(), name, s.Name)
		}
		m.Set(fd, val)
		return nil
	}
	if s.Name == schema.DecimalName {
		x, ok := v.(*big.Int)
		if !ok {
			return fmt.Errorf("convert: invalid type for Decimal, expected *big.Int but was %T", v)
		}
		scale, err := s.Scale()
		if err != nil {
			return err
		}
		precision := len(new(big.Int).Abs(x).String())
		return errors.Join(set("value", protoreflect.ValueOfBytes(schema.AppendDecimal(nil, x))),
			set("precision", protoreflect.ValueOfUint32(uint32(precision))),
			set("scale", protoreflect.ValueOfInt32(scale)))
	}
	t, ok := v.(time.Time)
	if !ok {
		return fmt.Errorf("convert: invalid type for %s, expected time.Time but was %T", s.Name, v)
	}
	t = t.UTC()
	switch s.Name {
	case schema.DateName:
		if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond()/1e6 != 0 {
			return errors.New("convert: Kafka Connect Date type should not have any time fields set to non-zero values")
		}
		return errors.Join(set("year", protoreflect.ValueOfInt32(int32(t.Year()))),
			set("month", protoreflect.ValueOfInt32(int32(t.Month()))),
			set("day", protoreflect.ValueOfInt32(int32(t.Day()))))
	case schema.TimeName:
		ms := t.UnixMilli()
		if ms < 0 || ms > 86400000 {
			return errors.New("convert: Time values must use number of millis greater than 0 and less than 86400000")
		}
		return errors.Join(set("hours", protoreflect.ValueOfInt32(int32(ms/3600000))),
			set("minutes", protoreflect.ValueOfInt32(int32(ms/60000%60))),
			set("seconds", protoreflect.ValueOfInt32(int32(ms/1000%60))),
			set("nanos", protoreflect.ValueOfInt32(int32(ms%1000*1e6))))
	}
	ms := t.UnixMilli()
	return errors.Join(set("seconds", protoreflect.ValueOfInt64(floorDiv(ms, 1000))),
		set("nanos", protoreflect.ValueOfInt32(int32(floorMod(ms, 1000)*1e6))))
}

// --- Protobuf message → Connect value (ProtobufData.toConnectData) ---

type pbReader struct{ opts *protoOptions }

// root reads the value of a message whose Connect schema is s.
func (r pbReader) root(msg protoreflect.Message, s *schema.Schema) (any, error) {
	if s.Type != schema.TypeStruct {
		fd := msg.Descriptor().Fields().ByName("value")
		if fd == nil {
			return nil, fmt.Errorf("convert: message %s has no field value", msg.Descriptor().FullName())
		}
		return r.single(fd, s, msg.Get(fd))
	}
	return r.message(msg, s)
}

func (r pbReader) message(msg protoreflect.Message, s *schema.Schema) (*schema.Struct, error) {
	md := msg.Descriptor()
	st := schema.NewStruct(s)
	for i, f := range s.Fields {
		if isPbUnion(f.Schema) && !r.opts.flattenUnions {
			name := strings.TrimPrefix(f.Schema.Name, pbUnionPrefix)
			name = name[strings.LastIndexByte(name, '.')+1:]
			od := md.Oneofs().ByName(protoreflect.Name(name))
			if od == nil {
				return nil, fmt.Errorf("convert: message %s has no oneof %s", md.FullName(), name)
			}
			fd := msg.WhichOneof(od)
			if fd == nil {
				continue
			}
			u := schema.NewStruct(f.Schema)
			for j, uf := range f.Schema.Fields {
				if uf.Name == string(fd.Name()) {
					v, err := r.field(msg, fd, uf.Schema)
					if err != nil {
						return nil, fmt.Errorf("field %s: %w", fd.Name(), err)
					}
					u.SetIndex(j, v)
				}
			}
			st.SetIndex(i, u)
			continue
		}
		fd := md.Fields().ByName(protoreflect.Name(f.Name))
		if fd == nil {
			return nil, fmt.Errorf("convert: message %s has no field %s", md.FullName(), f.Name)
		}
		inOneof := fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic()
		optional := fd.HasOptionalKeyword() && (fd.Syntax() != protoreflect.Proto2 || r.opts.optionalForProto2)
		primitiveOrRepeated := fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap()
		if inOneof && !msg.Has(fd) ||
			!inOneof && !(primitiveOrRepeated && !optional || r.opts.structForNulls || msg.Has(fd)) {
			continue
		}
		v, err := r.field(msg, fd, f.Schema)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		st.SetIndex(i, v)
	}
	return st, nil
}

// field reads one field of msg (repeated, map or singular).
func (r pbReader) field(msg protoreflect.Message, fd protoreflect.FieldDescriptor, s *schema.Schema) (any, error) {
	val := msg.Get(fd)
	switch {
	case fd.IsMap():
		out := newConnectMap(s)
		var err error
		val.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var ck, cv any
			if ck, err = r.single(fd.MapKey(), s.KeySchema, k.Value()); err != nil {
				return false
			}
			if cv, err = r.single(fd.MapValue(), s.ValueSchema, v); err != nil {
				return false
			}
			err = putConnectMap(out, ck, cv)
			return err == nil
		})
		return out, err
	case fd.IsList() && s.Type == schema.TypeMap:
		out := newConnectMap(s)
		l := val.List()
		for i := 0; i < l.Len(); i++ {
			entry := l.Get(i).Message()
			md := entry.Descriptor()
			kf, vf := md.Fields().ByName("key"), md.Fields().ByName("value")
			ck, err := r.single(kf, s.KeySchema, entry.Get(kf))
			if err != nil {
				return nil, err
			}
			cv, err := r.single(vf, s.ValueSchema, entry.Get(vf))
			if err != nil {
				return nil, err
			}
			if err := putConnectMap(out, ck, cv); err != nil {
				return nil, err
			}
		}
		return out, nil
	case fd.IsList():
		if s.Type != schema.TypeArray {
			return nil, fmt.Errorf("convert: repeated field %s has the Connect type %v", fd.Name(), s.Type)
		}
		l := val.List()
		out := make([]any, l.Len())
		for i := range out {
			v, err := r.single(fd, s.ValueSchema, l.Get(i))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return r.single(fd, s, val)
}

func newConnectMap(s *schema.Schema) any {
	if s.Type == schema.TypeMap && s.KeySchema.Type == schema.TypeString {
		return map[string]any{}
	}
	return map[any]any{}
}

func putConnectMap(m, k, v any) error {
	switch m := m.(type) {
	case map[string]any:
		ks, ok := k.(string)
		if !ok {
			return fmt.Errorf("convert: map key %T is not a string", k)
		}
		m[ks] = v
	case map[any]any:
		switch k.(type) {
		case []byte, *schema.Struct, []any, map[string]any, map[any]any, *big.Int:
			return fmt.Errorf("convert: a map key of Go type %T cannot be a key of a Connect map here", k)
		}
		m[k] = v
	}
	return nil
}

// single converts one singular Protobuf value of field fd to Connect.
func (r pbReader) single(fd protoreflect.FieldDescriptor, s *schema.Schema, v protoreflect.Value) (any, error) {
	if fd.Kind() == protoreflect.MessageKind {
		m := v.Message()
		switch s.Name {
		case schema.DecimalName, schema.DateName, schema.TimeName, schema.TimestampName:
			return pbLogicalToConnect(m, s)
		}
		if s.Type == schema.TypeStruct {
			return r.message(m, s)
		}
		// A wrapper message holding a primitive.
		vf := m.Descriptor().Fields().ByName("value")
		if vf == nil || vf.IsList() || vf.IsMap() {
			return nil, fmt.Errorf("convert: message %s for a Connect %v", m.Descriptor().FullName(), s.Type)
		}
		return r.single(vf, s, m.Get(vf))
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		var n int64
		switch fd.Kind() {
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			n = int64(v.Int())
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			n = int64(uint32(v.Uint()))
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			n = v.Int()
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			n = int64(v.Uint())
		case protoreflect.EnumKind:
			n = int64(v.Enum())
		default:
			return nil, fmt.Errorf("convert: field %s of kind %v for a Connect %v", fd.Name(), fd.Kind(), s.Type)
		}
		return NarrowInt(s.Type, n), nil
	case schema.TypeFloat32, schema.TypeFloat64:
		if fd.Kind() != protoreflect.FloatKind && fd.Kind() != protoreflect.DoubleKind {
			return nil, fmt.Errorf("convert: field %s of kind %v for a Connect %v", fd.Name(), fd.Kind(), s.Type)
		}
		if s.Type == schema.TypeFloat32 {
			return float32(v.Float()), nil
		}
		return v.Float(), nil
	case schema.TypeBoolean:
		if fd.Kind() == protoreflect.BoolKind {
			return v.Bool(), nil
		}
	case schema.TypeString:
		switch fd.Kind() {
		case protoreflect.StringKind:
			return v.String(), nil
		case protoreflect.EnumKind:
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				return string(ev.Name()), nil
			}
			// As Java's descriptor for a number the enum does not name.
			return fmt.Sprintf("UNKNOWN_ENUM_VALUE_%s_%d", fd.Enum().Name(), v.Enum()), nil
		}
	case schema.TypeBytes:
		if fd.Kind() == protoreflect.BytesKind {
			return append([]byte{}, v.Bytes()...), nil
		}
	}
	return nil, fmt.Errorf("convert: field %s of kind %v for a Connect %v", fd.Name(), fd.Kind(), s.Type)
}

// pbLogicalToConnect reads confluent.type.Decimal, google.type.Date,
// google.type.TimeOfDay and google.protobuf.Timestamp (by field name, as
// ProtobufData does).
func pbLogicalToConnect(m protoreflect.Message, s *schema.Schema) (any, error) {
	f := m.Descriptor().Fields()
	get := func(name string) protoreflect.Value {
		fd := f.ByName(protoreflect.Name(name))
		if fd == nil || fd.IsList() || fd.IsMap() || fd.Kind() == protoreflect.MessageKind {
			return protoreflect.Value{}
		}
		return m.Get(fd)
	}
	num := func(name string) int64 {
		v := get(name)
		if !v.IsValid() {
			return 0
		}
		switch x := v.Interface().(type) {
		case int32:
			return int64(x)
		case int64:
			return x
		case uint32:
			return int64(x)
		case uint64:
			return int64(x)
		}
		return 0
	}
	switch s.Name {
	case schema.DecimalName:
		var raw []byte
		if v := get("value"); v.IsValid() {
			if b, ok := v.Interface().([]byte); ok {
				raw = b
			}
		}
		x := schema.DecimalFromBytes(raw)
		want, err := s.Scale()
		if err != nil {
			return nil, err
		}
		return rescaleDecimal(&jdecimal{unscaled: x, scale: int32(num("scale"))}, want)
	case schema.DateName:
		y, mo, d := num("year"), num("month"), num("day")
		if mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1 || y > 9999 {
			return nil, fmt.Errorf("convert: invalid google.type.Date %d-%d-%d", y, mo, d)
		}
		t := time.Date(int(y), time.Month(mo), int(d), 0, 0, 0, 0, time.UTC)
		if t.Day() != int(d) {
			return nil, fmt.Errorf("convert: invalid google.type.Date %d-%d-%d", y, mo, d)
		}
		return t, nil
	case schema.TimeName:
		h, mi, sec, ns := num("hours"), num("minutes"), num("seconds"), num("nanos")
		if h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ns < 0 || ns > 999999999 {
			return nil, fmt.Errorf("convert: invalid google.type.TimeOfDay %d:%d:%d.%09d", h, mi, sec, ns)
		}
		return time.UnixMilli((h*3600+mi*60+sec)*1000 + ns/1e6).UTC(), nil
	}
	sec, ns := num("seconds"), num("nanos")
	if ns < 0 || ns > 999999999 || sec < -62135596800 || sec > 253402300799 {
		return nil, fmt.Errorf("convert: invalid google.protobuf.Timestamp %d s %d ns", sec, ns)
	}
	return time.UnixMilli(sec*1000 + ns/1e6).UTC(), nil
}
