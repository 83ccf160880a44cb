// Package properties reads Java .properties files, the format of Kafka's
// server.properties and Kafka Connect's connect-distributed.properties.
//
// It follows java.util.Properties.load: '=', ':' or whitespace separate key
// and value; lines starting with '#' or '!' are comments; a backslash at the
// end of a line continues it; \t \n \r \f \uXXXX and escaped separators are
// decoded.
package properties

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Properties is an ordered-by-key set of string settings.
type Properties map[string]string

// Load reads a properties file.
func Load(path string) (Properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read properties: %w", err)
	}
	defer f.Close()
	p, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Parse reads properties from r.
func Parse(r io.Reader) (Properties, error) {
	p := Properties{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var logical strings.Builder
	lineNo, startLine := 0, 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if logical.Len() == 0 {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			startLine = lineNo
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		// An odd number of trailing backslashes continues the line.
		n := 0
		for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
			n++
		}
		if n%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v, err := splitLine(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		p[k] = v
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if logical.Len() > 0 {
		k, v, err := splitLine(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		p[k] = v
	}
	return p, nil
}

func splitLine(s string) (string, string, error) {
	// The key ends at the first unescaped '=', ':' or whitespace.
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i > len(s) {
		i = len(s)
	}
	key, rest := s[:i], s[i:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescape(key)
	if err != nil {
		return "", "", fmt.Errorf("key: %w", err)
	}
	v, err := unescape(rest)
	if err != nil {
		// Not quoting the value: it may be a password.
		return "", "", fmt.Errorf("value of %s: %w", k, err)
	}
	return k, v, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", errors.New("malformed \\uxxxx escape")
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", errors.New("malformed \\uxxxx escape")
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", errors.New("invalid UTF-8")
	}
	return b.String(), nil
}

// Keys returns the keys in sorted order.
func (p Properties) Keys() []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseOverride splits a "key=value" command-line override.
func ParseOverride(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("override %q is not key=value", s)
	}
	return k, v, nil
}

// Format writes p as a properties file that Parse reads back to p: one
// "key=value" line per key, sorted, with what would be read otherwise
// escaped.
func Format(p Properties) string {
	var b strings.Builder
	for _, k := range p.Keys() {
		b.WriteString(escape(k, true))
		b.WriteByte('=')
		b.WriteString(escape(p[k], false))
		b.WriteByte('\n')
	}
	return b.String()
}

func escape(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\f':
			b.WriteString(`\f`)
		case key && (r == '=' || r == ':' || r == ' ' || r == '#' || r == '!'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && (r == ' ' || (key && (r == '#' || r == '!'))):
			b.WriteString(`\ `)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
