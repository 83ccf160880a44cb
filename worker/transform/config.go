package transform

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// This file is Kafka's ConfigDef as transformations and predicates use it:
// typed keys with defaults and validators, parsed and validated with Kafka's
// rules and messages.

// Type is a ConfigDef type.
type Type string

// The ConfigDef types.
const (
	TypeBoolean  Type = "BOOLEAN"
	TypeString   Type = "STRING"
	TypeInt      Type = "INT"
	TypeShort    Type = "SHORT"
	TypeLong     Type = "LONG"
	TypeDouble   Type = "DOUBLE"
	TypeList     Type = "LIST"
	TypeClass    Type = "CLASS"
	TypePassword Type = "PASSWORD"
)

// required is the default of a key that has none (ConfigDef.NO_DEFAULT_VALUE).
type required struct{}

// NoDefault marks a Key without a default value: it must be set.
var NoDefault any = required{}

// Key is one configuration key of a transformation or predicate, as a
// ConfigDef.ConfigKey. Values are parsed into Go values: STRING, CLASS and
// PASSWORD string, INT int32, SHORT int16, LONG int64, DOUBLE float64,
// BOOLEAN bool, LIST []string; Java's null is nil.
type Key struct {
	Name string
	Type Type
	// Default is NoDefault, nil (a default of null) or a parsed value.
	Default    any
	Validator  Validator
	Importance string // HIGH, MEDIUM or LOW
	Doc        string
	// Group, Order, Width and Display are the key's place in a form; an
	// empty Width is NONE, an empty Display the key's name, Order 0 means
	// none (-1 in Kafka's answers).
	Group   string
	Order   int
	Width   string
	Display string
	// Hidden keys are read by the plugin but not part of its definition
	// (Debezium reads settings its ConfigDef does not list).
	Hidden bool
}

// Required reports whether the key has no default.
func (k *Key) Required() bool { return k.Default == NoDefault }

// Info is the key's definition as Kafka Connect's REST API describes it.
func (k *Key) Info() sdk.ConfigKeyInfo {
	info := sdk.ConfigKeyInfo{Name: k.Name, Type: string(k.Type), Required: k.Required(),
		Importance: k.Importance, Documentation: k.Doc, Order: -1, Width: "NONE", DisplayName: k.Name,
		Dependents: []string{}}
	if !k.Required() && k.Default != nil {
		s := renderValue(k.Type, k.Default)
		info.DefaultValue = &s
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	if k.Order != 0 {
		info.Order = k.Order
	}
	if k.Width != "" {
		info.Width = k.Width
	}
	if k.Display != "" {
		info.DisplayName = k.Display
	}
	return info
}

// renderValue is ConfigDef.convertToString: a parsed value as Kafka renders
// it in definitions and validations.
func renderValue(t Type, v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return javaDoubleString(x)
	}
	return fmt.Sprint(v)
}

// ConfigError is Kafka's ConfigException: a setting that cannot be used.
type ConfigError struct{ Message string }

func (e *ConfigError) Error() string { return e.Message }

// invalid is ConfigException(name, value, message).
func invalid(name string, value any, msg string) *ConfigError {
	text := "Invalid value " + javaString(value) + " for configuration " + name
	if msg != "" {
		text += ": " + msg
	}
	return &ConfigError{text}
}

// javaString renders a setting's value as Java's String.valueOf does in
// ConfigException messages.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	return renderValue("", v)
}

// A Validator checks a parsed value (nil when unset without a default or
// unparsable, as Kafka hands it), returning a *ConfigError.
type Validator func(name string, v any) error

// javaTrim is Java's String.trim: it strips characters up to U+0020.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

var commaWithSpace = regexp.MustCompile(`\s*,\s*`)

// parseType is ConfigDef.parseType for a string value.
func parseType(name, value string, t Type) (any, error) {
	trimmed := javaTrim(value)
	switch t {
	case TypeBoolean:
		switch strings.ToLower(trimmed) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, invalid(name, value, "Expected value to be either true or false")
	case TypeString, TypeClass:
		// A class is checked by its validator: it names a plugin of this
		// worker or not.
		return trimmed, nil
	case TypePassword:
		return value, nil
	case TypeInt:
		n, ok := javaParseInt(trimmed, 32)
		if !ok {
			return nil, invalid(name, value, "Not a number of type INT")
		}
		return int32(n), nil
	case TypeShort:
		n, ok := javaParseInt(trimmed, 16)
		if !ok {
			return nil, invalid(name, value, "Not a number of type SHORT")
		}
		return int16(n), nil
	case TypeLong:
		n, ok := javaParseInt(trimmed, 64)
		if !ok {
			return nil, invalid(name, value, "Not a number of type LONG")
		}
		return n, nil
	case TypeDouble:
		f, ok := javaParseDouble(trimmed, 64)
		if !ok {
			return nil, invalid(name, value, "Not a number of type DOUBLE")
		}
		return f, nil
	case TypeList:
		if trimmed == "" {
			return []string{}, nil
		}
		return commaWithSpace.Split(trimmed, -1), nil
	}
	return nil, invalid(name, value, "Unknown type.")
}

// javaParseInt is Integer/Short/Long.parseLong's grammar: an optional sign
// and ASCII digits, in range.
func javaParseInt(s string, bits int) (int64, bool) {
	if s == "" {
		return 0, false
	}
	digits := s
	if s[0] == '+' || s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, bits)
	return n, err == nil
}

// javaParseDouble is Double.parseDouble (bits 64) or Float.parseFloat (bits
// 32): surrounding whitespace, a sign, NaN, Infinity, decimal or
// hexadecimal digits with an exponent, and an optional f/F/d/D suffix.
func javaParseDouble(s string, bits int) (float64, bool) {
	s = javaTrim(s)
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 1 && strings.ContainsRune("fFdD", rune(body[n-1])) {
		body = body[:n-1]
	}
	if body == "" {
		return 0, false
	}
	if strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X") {
		if !strings.ContainsAny(body, "pP") || strings.Contains(body, "_") {
			return 0, false
		}
	} else {
		sawDigit, sawDot, sawExp := false, false, false
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case c >= '0' && c <= '9':
				sawDigit = true
			case c == '.' && !sawDot && !sawExp:
				sawDot = true
			case (c == 'e' || c == 'E') && sawDigit && !sawExp:
				sawExp = true
				if i+1 < len(body) && (body[i+1] == '+' || body[i+1] == '-') {
					i++
				}
				if i+1 >= len(body) {
					return 0, false
				}
			default:
				return 0, false
			}
		}
		if !sawDigit {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(body, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if neg {
		f = -f
	}
	return f, true
}

// Config is a transformation's parsed settings (AbstractConfig).
type Config struct {
	values map[string]any
	set    map[string]bool // the settings given, not defaulted
}

// String returns a STRING, CLASS or PASSWORD setting ("" for null).
func (c Config) String(name string) string {
	s, _ := c.values[name].(string)
	return s
}

// IsNull reports whether a setting is null.
func (c Config) IsNull(name string) bool { return c.values[name] == nil }

// Bool returns a BOOLEAN setting.
func (c Config) Bool(name string) bool {
	b, _ := c.values[name].(bool)
	return b
}

// Int returns an INT setting.
func (c Config) Int(name string) int32 {
	n, _ := c.values[name].(int32)
	return n
}

// List returns a LIST setting.
func (c Config) List(name string) []string {
	l, _ := c.values[name].([]string)
	return l
}

// Explicit reports whether the setting was given rather than defaulted.
func (c Config) Explicit(name string) bool { return c.set[name] }

// parse is ConfigDef.parse for a transformation's configure: every key
// parsed and validated, the first problem returned as Kafka's
// ConfigException would be. Duplicates in lists are dropped, as Kafka 4
// does (with a warning there).
func parse(keys []Key, props map[string]string) (Config, error) {
	out := Config{values: make(map[string]any, len(keys)), set: map[string]bool{}}
	for i := range keys {
		k := &keys[i]
		var v any
		if raw, ok := props[k.Name]; ok {
			var err error
			if v, err = parseType(k.Name, raw, k.Type); err != nil {
				return Config{}, err
			}
			out.set[k.Name] = true
		} else if k.Required() {
			return Config{}, &ConfigError{fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", k.Name)}
		} else {
			v = k.Default
		}
		if k.Validator != nil {
			if err := k.Validator(k.Name, v); err != nil {
				return Config{}, err
			}
		}
		if l, ok := v.([]string); ok {
			v = distinct(l)
		}
		out.values[k.Name] = v
	}
	return out, nil
}

func distinct(l []string) []string {
	seen := make(map[string]bool, len(l))
	out := l[:0:0]
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// validateKey is ConfigDef.validate for one key: the parsed value (nil
// when unset without default or unparsable) and the error messages. name
// is the key's name in the connector config (its prefixed name), which
// Kafka uses in the message for a missing key.
func validateKey(k *Key, name, raw string, set bool) (any, []string) {
	var errs []string
	var v any
	switch {
	case set:
		var err error
		if v, err = parseType(name, raw, k.Type); err != nil {
			errs = append(errs, err.Error())
		}
	case k.Required():
		errs = append(errs, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", name))
	default:
		v = k.Default
	}
	if k.Validator != nil {
		if err := k.Validator(k.Name, v); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return v, errs
}

// The validators transformations use, with Kafka's messages.

// nonNull is ConfigDef.NonNullValidator.
func nonNull(name string, v any) error {
	if v == nil {
		return invalid(name, nil, "entry must be non null")
	}
	return nil
}

// nonEmptyString is ConfigDef.NonEmptyString.
func nonEmptyString(name string, v any) error {
	if s, ok := v.(string); ok && s == "" {
		return invalid(name, v, "String must be non-empty")
	}
	return nil
}

// validString is ConfigDef.ValidString.in.
func validString(valid ...string) Validator {
	return func(name string, v any) error {
		s, ok := v.(string)
		for _, x := range valid {
			if ok && s == x {
				return nil
			}
		}
		return invalid(name, v, "String must be one of: "+strings.Join(valid, ", "))
	}
}

// caseInsensitiveString is ConfigDef.CaseInsensitiveValidString.in.
func caseInsensitiveString(valid ...string) Validator {
	return func(name string, v any) error {
		s, ok := v.(string)
		for _, x := range valid {
			if ok && strings.ToUpper(s) == x {
				return nil
			}
		}
		return invalid(name, v, "String must be one of (case insensitive): "+strings.Join(valid, ", "))
	}
}

// anyNonDuplicateValues is ConfigDef.ValidList.anyNonDuplicateValues.
func anyNonDuplicateValues(emptyAllowed, nullAllowed bool) Validator {
	return func(name string, v any) error {
		if v == nil {
			if nullAllowed {
				return nil
			}
			return &ConfigError{fmt.Sprintf("Configuration '%s' values must not be null.", name)}
		}
		l, _ := v.([]string)
		if !emptyAllowed && len(l) == 0 {
			return &ConfigError{fmt.Sprintf("Configuration '%s' must not be empty. Valid values include: any non-empty value", name)}
		}
		if len(distinct(append([]string(nil), l...))) != len(l) {
			return &ConfigError{fmt.Sprintf("Configuration '%s' values must not be duplicated.", name)}
		}
		for _, s := range l {
			if s == "" {
				return &ConfigError{fmt.Sprintf("Configuration '%s' values must not be empty.", name)}
			}
		}
		return nil
	}
}

// nonEmptyList is connect-transforms' NonEmptyListValidator.
func nonEmptyList(name string, v any) error {
	if l, _ := v.([]string); len(l) == 0 {
		return invalid(name, v, "Empty list")
	}
	return nil
}

// javaRegex is connect-transforms' RegexValidator: the value must compile.
func javaRegex(name string, v any) error {
	s, ok := v.(string)
	if !ok {
		return invalid(name, v, `Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null`)
	}
	if _, err := compileJava(s); err != nil {
		return invalid(name, v, "Invalid regex: "+err.Error())
	}
	return nil
}

// all is ConfigDef.CompositeValidator: the first failure.
func all(vs ...Validator) Validator {
	return func(name string, v any) error {
		for _, f := range vs {
			if err := f(name, v); err != nil {
				return err
			}
		}
		return nil
	}
}
