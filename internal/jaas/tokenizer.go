package jaas

// tokenizer is java.io.StreamTokenizer as Kafka's JaasConfig and Java's
// JAAS ConfigFile set it up: the default syntax (letters and chars from
// 160 up are word characters, bytes up to ' ' whitespace, double and single
// quotes quote characters, '/' a comment character, digits, '.' and '-' numeric)
// with // and /* */ comments and '-', '_', '$' (and, for files, '*') made
// word characters too. The rules that surprise users come from there: an
// unquoted value that starts with a digit, '.' or '-' is a number, which
// JAAS refuses; an unterminated quote ends at the end of the line.
type tokenizer struct {
	src    []rune
	pos    int
	peek   rune // the next character when >= 0 (Java's peekc)
	line   int
	star   bool // '*' is a word character (JAAS files)
	ttype  int
	sval   string
	hasVal bool // sval is set (a word or a quoted string)
}

// Token types besides ordinary characters (which are their own code).
const (
	ttEOF    = -1
	ttWord   = -3
	ttNumber = -2
	needChar = -4
)

const (
	ctWhitespace = 1
	ctDigit      = 2
	ctAlpha      = 4
	ctQuote      = 8
	ctComment    = 16
)

func newTokenizer(s string, star bool) *tokenizer {
	return &tokenizer{src: []rune(s), peek: needChar, line: 1, star: star}
}

func (t *tokenizer) ctype(c rune) int {
	switch {
	case c >= 256:
		return ctAlpha
	case c <= ' ':
		return ctWhitespace
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= 160:
		return ctAlpha
	case c >= '0' && c <= '9', c == '.':
		return ctDigit
	case c == '-':
		return ctDigit | ctAlpha
	case c == '_', c == '$':
		return ctAlpha
	case c == '*' && t.star:
		return ctAlpha
	case c == '"', c == '\'':
		return ctQuote
	case c == '/':
		return ctComment
	}
	return 0
}

func (t *tokenizer) read() rune {
	if t.pos >= len(t.src) {
		return -1
	}
	c := t.src[t.pos]
	t.pos++
	return c
}

// next reads the next token, as StreamTokenizer.nextToken.
func (t *tokenizer) next() int {
	t.sval, t.hasVal = "", false
	c := t.peek
	if c == needChar {
		c = t.read()
		if c < 0 {
			t.ttype = ttEOF
			return t.ttype
		}
	}
	t.peek = needChar
	ct := t.ctype(c)
	for ct&ctWhitespace != 0 {
		if c == '\n' {
			t.line++
		}
		c = t.read()
		if c < 0 {
			t.ttype = ttEOF
			return t.ttype
		}
		ct = t.ctype(c)
	}
	if ct&ctDigit != 0 {
		if c == '-' {
			c = t.read()
			if c != '.' && (c < '0' || c > '9') {
				t.peek = c
				t.ttype = '-'
				return t.ttype
			}
		}
		dot := false
		for {
			if c == '.' && !dot {
				dot = true
			} else if c < '0' || c > '9' {
				break
			}
			c = t.read()
		}
		t.peek = c
		t.ttype = ttNumber
		return t.ttype
	}
	if ct&ctAlpha != 0 {
		var b []rune
		for {
			b = append(b, c)
			c = t.read()
			if c < 0 || t.ctype(c)&(ctAlpha|ctDigit) == 0 {
				break
			}
		}
		t.peek = c
		t.sval, t.hasVal = string(b), true
		t.ttype = ttWord
		return t.ttype
	}
	if ct&ctQuote != 0 {
		quote := c
		var b []rune
		d := t.read()
		for d >= 0 && d != quote && d != '\n' && d != '\r' {
			if d == '\\' {
				c = t.read()
				first := c
				if c >= '0' && c <= '7' {
					c -= '0'
					c2 := t.read()
					if c2 >= '0' && c2 <= '7' {
						c = c<<3 + (c2 - '0')
						c2 = t.read()
						if c2 >= '0' && c2 <= '7' && first <= '3' {
							c = c<<3 + (c2 - '0')
							d = t.read()
						} else {
							d = c2
						}
					} else {
						d = c2
					}
				} else {
					switch c {
					case 'a':
						c = 7
					case 'b':
						c = '\b'
					case 'f':
						c = '\f'
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'v':
						c = '\v'
					}
					d = t.read()
				}
				if c < 0 { // a backslash at the very end
					break
				}
			} else {
				c = d
				d = t.read()
			}
			b = append(b, c)
		}
		if d != quote {
			t.peek = d
		}
		t.sval, t.hasVal = string(b), true
		t.ttype = int(quote)
		return t.ttype
	}
	if c == '/' {
		c = t.read()
		switch c {
		case '*':
			prev := rune(0)
			for {
				c = t.read()
				if c < 0 {
					t.ttype = ttEOF
					return t.ttype
				}
				if c == '\n' {
					t.line++
				}
				if c == '/' && prev == '*' {
					break
				}
				prev = c
			}
			return t.next()
		default: // "//", or '/' as the comment character it is
			for c >= 0 && c != '\n' && c != '\r' {
				c = t.read()
			}
			t.peek = c
			return t.next()
		}
	}
	t.ttype = int(c)
	return t.ttype
}

// describe names the current token for an error message.
func (t *tokenizer) describe() string {
	switch t.ttype {
	case ttEOF:
		return "the end of the text"
	case ttNumber:
		return "a number (quote values that start with a digit, '.' or '-')"
	case ttWord:
		return "'" + t.sval + "'"
	case '"', '\'':
		return "a quoted string"
	}
	return "'" + string(rune(t.ttype)) + "'"
}
