package transform

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// javaRegexp is a java.util.regex.Pattern as transformations use it:
// Matcher.matches (the whole input) and Matcher.replaceFirst with Java's
// replacement syntax. Patterns are compiled by Go's regexp (RE2) after
// \Q…\E quoting is expanded: Java's backreferences and lookaround have no
// RE2 equivalent and are refused when the pattern is compiled, so a
// connector using them is refused at validation, not at run time.
type javaRegexp struct {
	src   string
	expr  string         // the pattern for Go
	re    *regexp.Regexp // finds, like Matcher.find
	whole *regexp.Regexp // matches the whole input, like Matcher.matches; made when first needed
	names map[string]int
}

// compileJava compiles a Java pattern.
func compileJava(pattern string) (*javaRegexp, error) {
	expr, err := expandQuotes(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s near %q (Tributary runs Java patterns on Go's regexp: no backreferences or lookaround)", errorCode(err), pattern)
	}
	j := &javaRegexp{src: pattern, expr: expr, re: re, names: map[string]int{}}
	for i, n := range re.SubexpNames() {
		if n != "" {
			j.names[n] = i
		}
	}
	return j, nil
}

// errorCode is the reason of a regexp/syntax error without the pattern.
func errorCode(err error) string {
	var e *syntax.Error
	if errors.As(err, &e) {
		return string(e.Code)
	}
	return err.Error()
}

// expandQuotes turns Java's \Q…\E literal sections into escaped text.
func expandQuotes(p string) (string, error) {
	if !strings.Contains(p, `\Q`) {
		return p, nil
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			if p[i+1] == 'Q' {
				rest := p[i+2:]
				end := strings.Index(rest, `\E`)
				if end < 0 {
					b.WriteString(regexp.QuoteMeta(rest))
					return b.String(), nil
				}
				b.WriteString(regexp.QuoteMeta(rest[:end]))
				i += 2 + end + 1
				continue
			}
			b.WriteByte(p[i])
			b.WriteByte(p[i+1])
			i++
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String(), nil
}

// matches is Matcher.matches: the whole input matches.
func (j *javaRegexp) matches(s string) bool {
	if j.whole == nil {
		// It compiles: the same pattern, anchored, did.
		j.whole = regexp.MustCompile(`^(?:` + j.expr + `)$`)
	}
	return j.whole.MatchString(s)
}

// replaceFirst is Matcher.replaceFirst: the first match (leftmost, found as
// Matcher.find does) replaced by the expanded replacement.
func (j *javaRegexp) replaceFirst(s, replacement string) (string, error) {
	m := j.re.FindStringSubmatchIndex(s)
	if m == nil {
		return s, nil
	}
	var b strings.Builder
	b.WriteString(s[:m[0]])
	if err := j.expand(&b, s, m, replacement); err != nil {
		return "", err
	}
	b.WriteString(s[m[1]:])
	return b.String(), nil
}

// expand is Matcher.appendExpandedReplacement: \x is x, $n a group by
// number (more digits while the number stays a group), ${name} a group by
// name; a group that did not take part adds nothing.
func (j *javaRegexp) expand(b *strings.Builder, s string, m []int, repl string) error {
	groups := len(m)/2 - 1
	group := func(n int) {
		if m[2*n] >= 0 {
			b.WriteString(s[m[2*n]:m[2*n+1]])
		}
	}
	for i := 0; i < len(repl); {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i >= len(repl) {
				return failure(IllegalArgumentException, "character to be escaped is missing")
			}
			b.WriteByte(repl[i])
			i++
		case '$':
			i++
			if i >= len(repl) {
				return failure(IllegalArgumentException, "Illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				i++
				start := i
				for i < len(repl) && (isASCIILetter(repl[i]) || repl[i] >= '0' && repl[i] <= '9') {
					i++
				}
				name := repl[start:i]
				if name == "" {
					return failure(IllegalArgumentException, "named capturing group has 0 length name")
				}
				if i >= len(repl) || repl[i] != '}' {
					return failure(IllegalArgumentException, "named capturing group is missing trailing '}'")
				}
				i++
				if !isASCIILetter(name[0]) {
					return failure(IllegalArgumentException, "capturing group name {%s} starts with digit character", name)
				}
				n, ok := j.names[name]
				if !ok {
					return failure(IllegalArgumentException, "No group with name {%s}", name)
				}
				group(n)
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return failure(IllegalArgumentException, "Illegal group reference")
			}
			n := int(repl[i] - '0')
			if n > groups {
				return failure("java.lang.IndexOutOfBoundsException", "No group %d", n)
			}
			i++
			for i < len(repl) && repl[i] >= '0' && repl[i] <= '9' {
				next := n*10 + int(repl[i]-'0')
				if next > groups {
					break
				}
				n = next
				i++
			}
			group(n)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
