package s3

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jodaPart is one piece of a parsed Joda-Time pattern: a literal, or a
// field letter repeated count times.
type jodaPart struct {
	lit   string
	field byte
	count int
}

// jodaPattern is a Joda-Time DateTimeFormat pattern (what path.format holds)
// translated to Go: the letters Confluent users put in paths.
type jodaPattern []jodaPart

// parseJoda parses a Joda-Time pattern: letters are fields, text in single
// quotes is literal (” is a quote), other characters are literal.
func parseJoda(p string) (jodaPattern, error) {
	var out jodaPattern
	lit := func(s string) {
		if n := len(out); n > 0 && out[n-1].field == 0 {
			out[n-1].lit += s
			return
		}
		out = append(out, jodaPart{lit: s})
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			// Quoted text; '' inside it is a quote too.
			var text strings.Builder
			j := i + 1
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("path.format %q: unterminated quote", p)
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						text.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				text.WriteByte(p[j])
				j++
			}
			lit(text.String())
			i = j + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			if !strings.ContainsRune("GCYyxwewEDMdaKhHkmsSzZ", rune(c)) {
				return nil, fmt.Errorf("path.format %q: illegal pattern component: %c", p, c)
			}
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			out = append(out, jodaPart{field: c, count: n})
			i += n
		default:
			lit(string(c))
			i++
		}
	}
	return out, nil
}

func pad(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// format renders t (already in the wanted zone) as Joda-Time would with an
// English locale.
func (jp jodaPattern) format(t time.Time) string {
	var b []byte
	for _, p := range jp {
		if p.field == 0 {
			b = append(b, p.lit...)
			continue
		}
		switch p.field {
		case 'G':
			b = append(b, "AD"...)
		case 'C':
			b = pad(b, t.Year()/100, p.count)
		case 'Y', 'y', 'x':
			y := t.Year()
			if p.field == 'x' {
				y, _ = t.ISOWeek()
			}
			if p.count == 2 {
				b = pad(b, y%100, 2)
			} else {
				b = pad(b, y, p.count)
			}
		case 'w':
			_, w := t.ISOWeek()
			b = pad(b, w, p.count)
		case 'e':
			d := int(t.Weekday())
			if d == 0 {
				d = 7
			}
			b = pad(b, d, p.count)
		case 'E':
			if p.count >= 4 {
				b = append(b, t.Weekday().String()...)
			} else {
				b = append(b, t.Weekday().String()[:3]...)
			}
		case 'D':
			b = pad(b, t.YearDay(), p.count)
		case 'M':
			switch {
			case p.count >= 4:
				b = append(b, t.Month().String()...)
			case p.count == 3:
				b = append(b, t.Month().String()[:3]...)
			default:
				b = pad(b, int(t.Month()), p.count)
			}
		case 'd':
			b = pad(b, t.Day(), p.count)
		case 'a':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'K':
			b = pad(b, t.Hour()%12, p.count)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, h, p.count)
		case 'H':
			b = pad(b, t.Hour(), p.count)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b = pad(b, h, p.count)
		case 'm':
			b = pad(b, t.Minute(), p.count)
		case 's':
			b = pad(b, t.Second(), p.count)
		case 'S':
			ms := fmt.Sprintf("%09d", t.Nanosecond())
			for i := 0; i < p.count; i++ {
				if i < len(ms) {
					b = append(b, ms[i])
				} else {
					b = append(b, '0')
				}
			}
		case 'z':
			name, _ := t.Zone()
			b = append(b, name...)
		case 'Z':
			_, off := t.Zone()
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			b = append(b, sign)
			b = pad(b, off/3600, 2)
			if p.count >= 2 {
				b = append(b, ':')
			}
			b = pad(b, off%3600/60, 2)
		}
	}
	return string(b)
}

// loadZone resolves a Joda-Time zone ID: an IANA name, UTC, or a fixed
// offset such as +05:30.
func loadZone(id string) (*time.Location, error) {
	if id == "UTC" || id == "Z" {
		return time.UTC, nil
	}
	if len(id) > 0 && (id[0] == '+' || id[0] == '-') {
		hh, mm, _ := strings.Cut(id[1:], ":")
		h, err1 := strconv.Atoi(hh)
		m := 0
		var err2 error
		if mm != "" {
			m, err2 = strconv.Atoi(mm)
		}
		if err1 != nil || err2 != nil || h > 23 || m > 59 {
			return nil, fmt.Errorf("the datetime zone id '%s' is not recognised", id)
		}
		off := h*3600 + m*60
		if id[0] == '-' {
			off = -off
		}
		return time.FixedZone(id, off), nil
	}
	loc, err := time.LoadLocation(id)
	if err != nil {
		return nil, fmt.Errorf("the datetime zone id '%s' is not recognised", id)
	}
	return loc, nil
}
