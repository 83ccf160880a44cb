package sdk

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Password is a configuration value that is never shown: its type is
// PASSWORD and it renders as "[hidden]" in validation results and logs.
type Password string

// String hides the password.
func (Password) String() string { return "[hidden]" }

// LogValue hides the password from slog.
func (Password) LogValue() any { return "[hidden]" }

// Value returns the secret.
func (p Password) Value() string { return string(p) }

// ConfigKeyInfo is one configuration key as Kafka Connect's REST API serves
// it from GET /connector-plugins/{plugin}/config (field order and names are
// Kafka's).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Order         int      `json:"order"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is the validation outcome of one key.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a key's definition with its validation outcome.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigInfos is the body of Kafka Connect's
// PUT /connector-plugins/{plugin}/config/validate. The SDK fills in the
// connector's own keys; the worker adds its common keys (name, tasks.max, …).
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// Errors returns the validation errors by key.
func (c *ConfigInfos) Errors() map[string][]string {
	out := map[string][]string{}
	for _, ci := range c.Configs {
		if len(ci.Value.Errors) > 0 {
			out[ci.Value.Name] = append(out[ci.Value.Name], ci.Value.Errors...)
		}
	}
	return out
}

// Kafka Connect config types.
const (
	TypeBoolean  = "BOOLEAN"
	TypeString   = "STRING"
	TypeShort    = "SHORT"
	TypeInt      = "INT"
	TypeLong     = "LONG"
	TypeDouble   = "DOUBLE"
	TypeList     = "LIST"
	TypePassword = "PASSWORD"
)

// configField is one key derived from a tagged struct field.
type configField struct {
	index    []int
	info     ConfigKeyInfo
	kind     string // Kafka type
	duration bool
	checks   []check
	enum     []string
}

type check func(v any) string

// configDef is the reflected definition of a config struct C.
type configDef struct {
	typ    reflect.Type
	fields []configField
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	passwordType = reflect.TypeFor[Password]()
)

// defineConfig reflects the tagged fields of struct type t. Tags:
//
//	key:"batch.size"       the config key (required to be a config field)
//	default:"2000"         default value; without it the key is required
//	optional:""            no default, not required (null default)
//	importance:"high"      high, medium or low (default low)
//	doc:"…"                documentation, served verbatim
//	group:"…" order:"1" width:"short" display:"Batch size" dependents:"a,b"
//	validate:"min=1,max=100,nonempty,enum=a|b,regex=^x"
//
// regex= comes last: the rest of the tag is its pattern, commas included.
// enum= and regex= check each element of a LIST.
// Go types: string STRING, bool BOOLEAN, int16 SHORT, int32 INT,
// int/int64 LONG, float64 DOUBLE, []string LIST, time.Duration LONG
// (milliseconds), Password PASSWORD. Untagged fields are ignored; embedded
// structs are flattened.
func defineConfig(t reflect.Type) (*configDef, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("sdk: config type %v is not a struct", t)
	}
	d := &configDef{typ: t}
	if err := d.walk(t, nil); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range d.fields {
		if seen[f.info.Name] {
			return nil, fmt.Errorf("sdk: config %v: key %q defined twice", t, f.info.Name)
		}
		seen[f.info.Name] = true
	}
	return d, nil
}

func (d *configDef) walk(t reflect.Type, index []int) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		key, ok := sf.Tag.Lookup("key")
		if !ok {
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				if err := d.walk(sf.Type, idx); err != nil {
					return err
				}
			}
			continue
		}
		if !sf.IsExported() {
			return fmt.Errorf("sdk: config field %s (%q) is not exported", sf.Name, key)
		}
		f := configField{index: idx}
		switch {
		case sf.Type == durationType:
			f.kind, f.duration = TypeLong, true
		case sf.Type == passwordType:
			f.kind = TypePassword
		default:
			switch sf.Type.Kind() {
			case reflect.String:
				f.kind = TypeString
			case reflect.Bool:
				f.kind = TypeBoolean
			case reflect.Int16:
				f.kind = TypeShort
			case reflect.Int32:
				f.kind = TypeInt
			case reflect.Int, reflect.Int64:
				f.kind = TypeLong
			case reflect.Float64:
				f.kind = TypeDouble
			case reflect.Slice:
				if sf.Type.Elem().Kind() == reflect.String {
					f.kind = TypeList
				}
			}
		}
		if f.kind == "" {
			return fmt.Errorf("sdk: config field %s (%q) has unsupported type %v", sf.Name, key, sf.Type)
		}
		importance := strings.ToUpper(sf.Tag.Get("importance"))
		switch importance {
		case "":
			importance = "LOW"
		case "HIGH", "MEDIUM", "LOW":
		default:
			return fmt.Errorf("sdk: config %q: importance %q is not high, medium or low", key, importance)
		}
		width := strings.ToUpper(sf.Tag.Get("width"))
		switch width {
		case "":
			width = "NONE"
		case "NONE", "SHORT", "MEDIUM", "LONG":
		default:
			return fmt.Errorf("sdk: config %q: width %q is not none, short, medium or long", key, width)
		}
		order := -1
		if o := sf.Tag.Get("order"); o != "" {
			n, err := strconv.Atoi(o)
			if err != nil {
				return fmt.Errorf("sdk: config %q: order %q: %w", key, o, err)
			}
			order = n
		}
		display := sf.Tag.Get("display")
		if display == "" {
			display = key
		}
		f.info = ConfigKeyInfo{
			Name: key, Type: f.kind, Importance: importance, Documentation: sf.Tag.Get("doc"),
			Order: order, Width: width, DisplayName: display, Dependents: splitList(sf.Tag.Get("dependents")),
		}
		if f.info.Dependents == nil {
			f.info.Dependents = []string{}
		}
		if g, ok := sf.Tag.Lookup("group"); ok {
			f.info.Group = &g
		}
		if v, ok := sf.Tag.Lookup("validate"); ok {
			if err := f.parseValidators(v); err != nil {
				return fmt.Errorf("sdk: config %q: %w", key, err)
			}
		}
		if def, ok := sf.Tag.Lookup("default"); ok {
			parsed, err := f.parse(def)
			if err != nil {
				return fmt.Errorf("sdk: config %q: default %q: %w", key, def, err)
			}
			if msg := f.validate(parsed); msg != "" {
				return fmt.Errorf("sdk: config %q: default %q is invalid: %s", key, def, msg)
			}
			s := f.format(parsed)
			f.info.DefaultValue = &s
		} else if _, ok := sf.Tag.Lookup("optional"); !ok {
			f.info.Required = true
		}
		d.fields = append(d.fields, f)
	}
	return nil
}

// eachString applies check to a string value, or to each element of a
// list, and returns the first complaint.
func eachString(v any, check func(string) string) string {
	switch x := v.(type) {
	case string:
		return check(x)
	case []string:
		for _, s := range x {
			if msg := check(s); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func (f *configField) parseValidators(spec string) error {
	var rules []string
	// regex= takes the rest of the tag: a pattern may hold commas.
	if i := strings.Index(spec, "regex="); i >= 0 && (i == 0 || spec[i-1] == ',' || spec[i-1] == ' ') {
		rules = append(strings.Split(spec[:i], ","), spec[i:])
	} else {
		rules = strings.Split(spec, ",")
	}
	for _, rule := range rules {
		rule = strings.TrimSpace(rule)
		name, arg, _ := strings.Cut(rule, "=")
		switch name {
		case "":
		case "nonempty":
			f.checks = append(f.checks, func(v any) string {
				if s, ok := v.(string); ok && s == "" {
					return "String must be non-empty"
				}
				return ""
			})
		case "min", "max":
			limit, err := strconv.ParseFloat(arg, 64)
			if err != nil {
				return fmt.Errorf("validator %q: %w", rule, err)
			}
			isMin := name == "min"
			f.checks = append(f.checks, func(v any) string {
				x, ok := number(v)
				if !ok {
					return ""
				}
				if isMin && x < limit {
					return "Value must be at least " + arg
				}
				if !isMin && x > limit {
					return "Value must be no more than " + arg
				}
				return ""
			})
		case "enum":
			f.enum = strings.Split(arg, "|")
			allowed := f.enum
			f.checks = append(f.checks, func(v any) string {
				return eachString(v, func(s string) string {
					if slices.Contains(allowed, s) {
						return ""
					}
					return "String must be one of: " + strings.Join(allowed, ", ")
				})
			})
		case "regex":
			re, err := regexp.Compile(arg)
			if err != nil {
				return fmt.Errorf("validator %q: %w", rule, err)
			}
			f.checks = append(f.checks, func(v any) string {
				return eachString(v, func(s string) string {
					if !re.MatchString(s) {
						return "String must match " + arg
					}
					return ""
				})
			})
		default:
			return fmt.Errorf("unknown validator %q", rule)
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case time.Duration:
		return float64(x.Milliseconds()), true
	}
	return 0, false
}

// parse converts a raw string to the field's value: string, bool, int64,
// float64, []string or Password (int kinds are range-checked by kind).
func (f *configField) parse(raw string) (any, error) {
	s := strings.TrimSpace(raw)
	switch f.kind {
	case TypeString:
		return s, nil
	case TypePassword:
		return Password(raw), nil
	case TypeBoolean:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, kafkaMessage("Expected value to be either true or false")
	case TypeShort, TypeInt, TypeLong:
		bits := map[string]int{TypeShort: 16, TypeInt: 32, TypeLong: 64}[f.kind]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, kafkaMessage("Not a number of type " + f.kind)
		}
		if f.duration {
			return time.Duration(n) * time.Millisecond, nil
		}
		return n, nil
	case TypeDouble:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, kafkaMessage("Not a number of type DOUBLE")
		}
		return x, nil
	case TypeList:
		return splitList(s), nil
	}
	return nil, fmt.Errorf("unsupported type %s", f.kind)
}

// kafkaMessage is an error whose text is Kafka Connect's, verbatim.
type kafkaMessage string

func (m kafkaMessage) Error() string { return string(m) }

func (f *configField) validate(v any) string {
	for _, c := range f.checks {
		if msg := c(v); msg != "" {
			return msg
		}
	}
	return ""
}

func (f *configField) format(v any) string {
	switch x := v.(type) {
	case []string:
		return strings.Join(x, ",")
	case time.Duration:
		return strconv.FormatInt(x.Milliseconds(), 10)
	case Password:
		return "[hidden]"
	}
	return fmt.Sprint(v)
}

func splitList(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func (f *configField) set(dst reflect.Value, v any) {
	fv := dst.FieldByIndex(f.index)
	switch x := v.(type) {
	case string:
		fv.SetString(x)
	case Password:
		fv.SetString(string(x))
	case bool:
		fv.SetBool(x)
	case int64:
		fv.SetInt(x)
	case time.Duration:
		fv.SetInt(int64(x))
	case float64:
		fv.SetFloat(x)
	case []string:
		fv.Set(reflect.ValueOf(x))
	}
}

func (f *configField) get(src reflect.Value) string {
	fv := src.FieldByIndex(f.index)
	switch f.kind {
	case TypeList:
		return strings.Join(fv.Interface().([]string), ",")
	case TypePassword:
		return fv.String()
	}
	if f.duration {
		return strconv.FormatInt(time.Duration(fv.Int()).Milliseconds(), 10)
	}
	return fmt.Sprint(fv.Interface())
}

// keyInfos returns the definitions in declaration order.
func (d *configDef) keyInfos() []ConfigKeyInfo {
	out := make([]ConfigKeyInfo, len(d.fields))
	for i, f := range d.fields {
		out[i] = f.info
	}
	return out
}

// parseInto fills dst (a pointer to the config struct) from raw and returns
// the per-key validation result. Keys not in the definition are ignored.
func (d *configDef) parseInto(dst reflect.Value, raw map[string]string) []ConfigInfo {
	infos := make([]ConfigInfo, len(d.fields))
	for i := range d.fields {
		f := &d.fields[i]
		ci := ConfigInfo{Definition: f.info, Value: ConfigValueInfo{
			Name: f.info.Name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}}
		if f.enum != nil {
			ci.Value.RecommendedValues = append([]string(nil), f.enum...)
		}
		s, present := raw[f.info.Name]
		switch {
		case !present && f.info.Required:
			ci.Value.Errors = append(ci.Value.Errors,
				fmt.Sprintf("Missing required configuration %q which has no default value.", f.info.Name))
		case !present && f.info.DefaultValue == nil:
			// optional with a null default: leave the zero value
		default:
			if !present {
				s = *f.info.DefaultValue
			}
			v, err := f.parse(s)
			parsed := err == nil
			if parsed {
				if msg := f.validate(v); msg != "" {
					err = fmt.Errorf("%s", msg)
				}
			}
			shown := s
			if f.kind == TypePassword {
				shown = "[hidden]"
			}
			if err != nil {
				ci.Value.Errors = append(ci.Value.Errors,
					fmt.Sprintf("Invalid value %s for configuration %s: %s", shown, f.info.Name, err))
			} else {
				f.set(dst.Elem(), v)
				shown = f.format(v)
			}
			// As Kafka's ConfigDef: a value that is not of the key's type
			// is null in the result; one its validator refuses is shown.
			if parsed {
				ci.Value.Value = &shown
			}
		}
		infos[i] = ci
	}
	return infos
}

// format renders a config struct back to a string map (for task configs).
func (d *configDef) format(src reflect.Value) map[string]string {
	out := make(map[string]string, len(d.fields))
	for _, f := range d.fields {
		out[f.info.Name] = f.get(src)
	}
	return out
}

// Validator is implemented by a config struct (on its pointer) that has
// rules spanning several keys. It runs after every key parsed cleanly.
type Validator interface {
	Validate() []FieldError
}

func addFieldErrors(infos []ConfigInfo, errs []FieldError) []FieldError {
	var unmatched []FieldError
	for _, fe := range errs {
		found := false
		for i := range infos {
			if infos[i].Value.Name == fe.Key {
				infos[i].Value.Errors = append(infos[i].Value.Errors, fe.Message)
				found = true
				break
			}
		}
		if !found {
			unmatched = append(unmatched, fe)
		}
	}
	return unmatched
}

func buildInfos(class string, infos []ConfigInfo) ConfigInfos {
	out := ConfigInfos{Name: class, Groups: []string{}, Configs: infos}
	seen := map[string]bool{}
	for _, ci := range infos {
		out.ErrorCount += len(ci.Value.Errors)
		if g := ci.Definition.Group; g != nil && !seen[*g] {
			seen[*g] = true
			out.Groups = append(out.Groups, *g)
		}
	}
	return out
}

// ParseConfig parses raw into a C the way the runtime does before calling
// NewTask, returning a *ConfigError listing every invalid key. Use it in
// tests.
func ParseConfig[C any](raw map[string]string) (C, error) {
	var c C
	def, err := defineConfig(reflect.TypeFor[C]())
	if err != nil {
		return c, err
	}
	infos := def.parseInto(reflect.ValueOf(&c), raw)
	if v, ok := any(&c).(Validator); ok && buildInfos("", infos).ErrorCount == 0 {
		for _, fe := range addFieldErrors(infos, v.Validate()) {
			infos = append(infos, ConfigInfo{Value: ConfigValueInfo{Name: fe.Key, Errors: []string{fe.Message}}})
		}
	}
	res := buildInfos("", infos)
	if res.ErrorCount > 0 {
		return c, &ConfigError{Errors: res.Errors()}
	}
	return c, nil
}

// ConfigError lists configuration errors by key.
type ConfigError struct {
	Errors map[string][]string
}

func (e *ConfigError) Error() string {
	var parts []string
	for k, msgs := range e.Errors {
		for _, m := range msgs {
			parts = append(parts, k+": "+m)
		}
	}
	sortStrings(parts)
	return "sdk: invalid configuration: " + strings.Join(parts, "; ")
}
