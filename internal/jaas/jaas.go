// Package jaas reads Java Authentication and Authorization Service (JAAS)
// login configurations as Kafka writes them: the value of a client's
// sasl.jaas.config (Parse, ParseClient: Kafka's JaasConfig rules) and a
// login configuration file with named sections (ParseFile: the file that
// -Djava.security.auth.login.config names, e.g. Kafka Connect's
// "KafkaConnect" section for its basic-auth REST extension).
//
// Both follow java.io.StreamTokenizer's rules as Kafka and the JDK
// configure it: options are key=value pairs whose values are words or
// "double" or 'single' quoted strings with backslash escapes; // and /* */
// comments; an entry ends with ';'. An unquoted value that starts with a
// digit is a number to the tokenizer and refused, as Kafka refuses it.
//
// Errors never quote option values (they are passwords, usually).
package jaas

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Module is one login module entry: its class, its control flag (lower
// case: required, requisite, sufficient or optional) and its options.
type Module struct {
	Class   string
	Flag    string
	Options map[string]string
}

// DisallowedModules are refused by ParseClient, as Kafka 3.4+ refuses them
// by default (CVE-2023-25194).
var DisallowedModules = []string{"com.sun.security.auth.module.JndiLoginModule"}

// Parse reads a sasl.jaas.config value: one or more entries
// "<LoginModuleClass> <flag> (<key>=<value>)* ;". Its errors are Kafka's
// messages (lower-cased, as Go's are), with the position where that helps.
func Parse(s string) ([]Module, error) {
	t := newTokenizer(s, false)
	var mods []Module
	for t.next() != ttEOF {
		m, err := parseEntry(t)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, errors.New("login module not specified in JAAS config")
	}
	return mods, nil
}

// ParseClient reads a client's sasl.jaas.config, which must hold exactly
// one login module that is not disallowed (Kafka's
// JaasContext.loadClientContext).
func ParseClient(s string) (Module, error) {
	mods, err := Parse(s)
	if err != nil {
		return Module{}, err
	}
	if len(mods) != 1 {
		return Module{}, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(mods))
	}
	return mods[0], checkAllowed(mods[0])
}

func checkAllowed(m Module) error {
	for _, d := range DisallowedModules {
		if strings.TrimSpace(m.Class) == d {
			return fmt.Errorf("%s is not allowed", d)
		}
	}
	return nil
}

// parseEntry reads one entry, the tokenizer on its first token (Kafka's
// JaasConfig.parseAppConfigurationEntry).
func parseEntry(t *tokenizer) (Module, error) {
	if t.ttype != ttWord {
		return Module{}, fmt.Errorf("JAAS config: expected a login module class name, found %s on line %d", t.describe(), t.line)
	}
	m := Module{Class: t.sval, Options: map[string]string{}}
	if t.next() == ttEOF {
		return Module{}, errors.New("login module control flag not specified in JAAS config")
	}
	if !t.hasVal {
		return Module{}, errors.New("login module control flag is not available in the JAAS config")
	}
	switch f := strings.ToLower(t.sval); f {
	case "required", "requisite", "sufficient", "optional":
		m.Flag = f
	default:
		return Module{}, fmt.Errorf("invalid login module control flag '%s' in JAAS config", t.sval)
	}
	for t.next() != ttEOF && t.ttype != ';' {
		key := t.sval
		if !t.hasVal {
			return Module{}, fmt.Errorf("JAAS config: expected an option name or ';' after %s, found %s on line %d", m.Class, t.describe(), t.line)
		}
		if t.next() != '=' || t.next() == ttEOF || !t.hasVal {
			return Module{}, fmt.Errorf("value not specified for key '%s' in JAAS config", key)
		}
		m.Options[key] = t.sval
	}
	if t.ttype != ';' {
		return Module{}, errors.New("JAAS config entry not terminated by semi-colon")
	}
	return m, nil
}

// File is a JAAS login configuration file: its sections (login contexts)
// by name, each with its modules in order.
type File map[string][]Module

// LoadFile reads and parses a JAAS login configuration file.
func LoadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("JAAS configuration file: %w", err)
	}
	f, err := ParseFile(string(b))
	if err != nil {
		return nil, fmt.Errorf("JAAS configuration file %s: %w", path, err)
	}
	return f, nil
}

// ParseFile reads a JAAS login configuration file's text: sections
// "Name { <entry>; <entry>; };" as the JDK's ConfigFile reads them. A
// section named twice has the modules of both, in order, as in the JDK.
func ParseFile(s string) (File, error) {
	t := newTokenizer(s, true)
	f := File{}
	for t.next() != ttEOF {
		if !t.hasVal {
			return nil, fmt.Errorf("line %d: expected a login context name, found %s", t.line, t.describe())
		}
		name := t.sval
		if t.next() != '{' {
			return nil, fmt.Errorf("line %d: expected '{' after %s, found %s", t.line, name, t.describe())
		}
		mods := f[name]
		for {
			if t.next() == '}' {
				break
			}
			if t.ttype == ttEOF {
				return nil, fmt.Errorf("line %d: section %s is not closed with '};'", t.line, name)
			}
			m, err := parseEntry(t)
			if err != nil {
				return nil, fmt.Errorf("line %d: section %s: %w", t.line, name, err)
			}
			if err := checkAllowed(m); err != nil {
				return nil, fmt.Errorf("section %s: %w", name, err)
			}
			mods = append(mods, m)
		}
		if t.next() != ';' {
			return nil, fmt.Errorf("line %d: expected ';' after the '}' of section %s, found %s", t.line, name, t.describe())
		}
		if len(mods) == 0 {
			return nil, fmt.Errorf("line %d: section %s has no login module", t.line, name)
		}
		f[name] = mods
	}
	return f, nil
}

// Section returns the modules of the section name, or an error naming the
// sections there are.
func (f File) Section(name string) ([]Module, error) {
	if mods, ok := f[name]; ok {
		return mods, nil
	}
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no %s section (the file has no section)", name)
	}
	return nil, fmt.Errorf("no %s section (it has %s)", name, strings.Join(sorted(names), ", "))
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
