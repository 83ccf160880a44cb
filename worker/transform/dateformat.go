package transform

import (
	"strconv"
	"strings"
	"time"
)

// dateFormat is java.text.SimpleDateFormat in the UTC time zone and the
// en_US locale (how TimestampConverter and TimestampRouter use it), for
// the proleptic Gregorian calendar: dates before the Gregorian reform of
// 1582 are formatted and parsed as proleptic Gregorian, where Java switches
// to the Julian calendar.
type dateFormat struct {
	pattern string
	items   []dateItem
}

// dateItem is a run of one pattern letter (count > 0) or literal text.
type dateItem struct {
	letter byte
	count  int
	text   string
}

const dateLetters = "GyYMLwWDdFEuaHkKhmsSzZX"

// newDateFormat compiles a SimpleDateFormat pattern; the error is Java's
// IllegalArgumentException message.
func newDateFormat(pattern string) (*dateFormat, error) {
	f := &dateFormat{pattern: pattern}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.items = append(f.items, dateItem{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			end := strings.IndexByte(pattern[i+1:], '\'')
			for end >= 0 && i+1+end+1 < len(pattern) && pattern[i+1+end+1] == '\'' {
				// '' inside quotes is one quote.
				next := strings.IndexByte(pattern[i+1+end+2:], '\'')
				if next < 0 {
					end = -1
					break
				}
				end += 2 + next
			}
			if end < 0 {
				return nil, failure(IllegalArgumentException, "Unterminated quote")
			}
			lit.WriteString(strings.ReplaceAll(pattern[i+1:i+1+end], "''", "'"))
			i += end + 2
		case isASCIILetter(c):
			if !strings.ContainsRune(dateLetters, rune(c)) {
				return nil, failure(IllegalArgumentException, "Illegal pattern character '%c'", c)
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			flush()
			f.items = append(f.items, dateItem{letter: c, count: n})
			i += n
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return f, nil
}

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
	dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// format formats the instant ms milliseconds after the epoch.
func (f *dateFormat) format(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	var b []byte
	for _, it := range f.items {
		if it.letter == 0 {
			b = append(b, it.text...)
			continue
		}
		n := it.count
		switch it.letter {
		case 'G':
			if t.Year() <= 0 {
				b = append(b, "BC"...)
			} else {
				b = append(b, "AD"...)
			}
		case 'y', 'Y':
			y := t.Year()
			if it.letter == 'Y' {
				y = weekYear(t)
			}
			if y <= 0 {
				y = 1 - y // the year of the era
			}
			if n == 2 {
				b = pad(b, int64(y%100), 2)
			} else {
				b = pad(b, int64(y), n)
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b = append(b, monthNames[t.Month()-1]...)
			case n == 3:
				b = append(b, monthNames[t.Month()-1][:3]...)
			default:
				b = pad(b, int64(t.Month()), n)
			}
		case 'd':
			b = pad(b, int64(t.Day()), n)
		case 'D':
			b = pad(b, int64(t.YearDay()), n)
		case 'F':
			b = pad(b, int64((t.Day()-1)/7+1), n)
		case 'E':
			if n >= 4 {
				b = append(b, dayNames[t.Weekday()]...)
			} else {
				b = append(b, dayNames[t.Weekday()][:3]...)
			}
		case 'u':
			d := int64(t.Weekday())
			if d == 0 {
				d = 7
			}
			b = pad(b, d, n)
		case 'w':
			b = pad(b, int64(weekOfYear(t)), n)
		case 'W':
			b = pad(b, int64(weekOfMonth(t)), n)
		case 'a':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'H':
			b = pad(b, int64(t.Hour()), n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b = pad(b, int64(h), n)
		case 'K':
			b = pad(b, int64(t.Hour()%12), n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, int64(h), n)
		case 'm':
			b = pad(b, int64(t.Minute()), n)
		case 's':
			b = pad(b, int64(t.Second()), n)
		case 'S':
			b = pad(b, int64(t.Nanosecond()/1e6), n)
		case 'z':
			if n >= 4 {
				b = append(b, "Coordinated Universal Time"...)
			} else {
				b = append(b, "UTC"...)
			}
		case 'Z':
			b = append(b, "+0000"...)
		case 'X':
			b = append(b, 'Z')
		}
	}
	return string(b)
}

func pad(b []byte, n int64, width int) []byte {
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// Week numbering of en_US: weeks start on Sunday, and week 1 is the week
// holding January 1.
func weekOfYear(t time.Time) int {
	jan1 := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	w := (t.YearDay()-1+int(jan1.Weekday()))/7 + 1
	// The days of the last week that reach into next year belong to its
	// week 1.
	next := time.Date(t.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	if next.Sub(t) <= time.Duration(next.Weekday())*24*time.Hour && next.Weekday() != time.Sunday {
		return 1
	}
	return w
}

func weekYear(t time.Time) int {
	if t.Month() == time.December && weekOfYear(t) == 1 {
		return t.Year() + 1
	}
	return t.Year()
}

func weekOfMonth(t time.Time) int {
	first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return (t.Day()-1+int(first.Weekday()))/7 + 1
}

// parse is DateFormat.parse(String) with the lenient default: fields may
// overflow (month 13 is January of the next year), text after the pattern
// is ignored, and ok is false where Java throws ParseException.
func (f *dateFormat) parse(s string) (ms int64, ok bool) {
	year, month, day := int64(1970), int64(1), int64(1)
	var hour, minute, second, milli int64
	var hour12 int64 = -1
	pm := -1
	var offset int64 // minutes east of UTC
	bc := false
	pos := 0
	for i, it := range f.items {
		if it.letter == 0 {
			if !strings.HasPrefix(s[pos:], it.text) {
				return 0, false
			}
			pos += len(it.text)
			continue
		}
		// A number directly followed by another numeric field takes only
		// as many digits as its pattern letters.
		limit := 0
		if i+1 < len(f.items) && f.items[i+1].letter != 0 && numericField(f.items[i+1]) {
			limit = it.count
		}
		switch it.letter {
		case 'G':
			switch {
			case hasFold(s[pos:], "AD"):
				pos += 2
			case hasFold(s[pos:], "BC"):
				bc = true
				pos += 2
			default:
				return 0, false
			}
		case 'M', 'L':
			if it.count >= 3 {
				m, n := matchName(s[pos:], monthNames[:])
				if n == 0 {
					return 0, false
				}
				month, pos = int64(m+1), pos+n
				continue
			}
			fallthrough
		default:
			if it.letter == 'E' {
				_, n := matchName(s[pos:], dayNames[:])
				if n == 0 {
					return 0, false
				}
				pos += n
				continue
			}
			if it.letter == 'a' {
				switch {
				case hasFold(s[pos:], "AM"):
					pm = 0
				case hasFold(s[pos:], "PM"):
					pm = 1
				default:
					return 0, false
				}
				pos += 2
				continue
			}
			if it.letter == 'z' || it.letter == 'Z' || it.letter == 'X' {
				off, n := parseZone(s[pos:])
				if n == 0 {
					return 0, false
				}
				offset, pos = off, pos+n
				continue
			}
			v, n := parseNumber(s[pos:], limit)
			if n == 0 {
				return 0, false
			}
			digits := n
			if s[pos] == '-' || s[pos] == '+' {
				digits--
			}
			pos += n
			switch it.letter {
			case 'y', 'Y':
				year = v
				if it.count <= 2 && digits == 2 {
					year = twoDigitYear(v)
				}
			case 'M', 'L':
				month = v
			case 'd':
				day = v
			case 'D':
				month, day = 1, v
			case 'H':
				hour = v
			case 'k':
				if v == 24 {
					v = 0
				}
				hour = v
			case 'K':
				hour12 = v
			case 'h':
				if v == 12 {
					v = 0
				}
				hour12 = v
			case 'm':
				minute = v
			case 's':
				second = v
			case 'S':
				milli = v
			}
		}
	}
	if pos == 0 && len(f.items) > 0 {
		return 0, false
	}
	if hour12 >= 0 {
		hour = hour12
		if pm == 1 {
			hour += 12
		}
	}
	if bc {
		year = 1 - year
	}
	t := time.Date(int(year), time.Month(month), int(day), int(hour), int(minute), int(second), 0, time.UTC)
	return t.UnixMilli() + milli - offset*60000, true
}

func numericField(it dateItem) bool {
	switch it.letter {
	case 'y', 'Y', 'd', 'D', 'F', 'u', 'w', 'W', 'H', 'k', 'K', 'h', 'm', 's', 'S':
		return true
	case 'M', 'L':
		return it.count <= 2
	}
	return false
}

// parseNumber reads an optionally signed decimal number (at most limit
// characters when limit > 0).
func parseNumber(s string, limit int) (int64, int) {
	if limit > 0 && limit < len(s) {
		s = s[:limit]
	}
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return 0, 0
	}
	v, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, 0
	}
	return v, i
}

// twoDigitYear places a two-digit year within the century that starts 80
// years before now, as SimpleDateFormat does.
func twoDigitYear(v int64) int64 {
	start := time.Now().UTC().Year() - 80
	y := int64(start/100*100) + v
	if y < int64(start) {
		y += 100
	}
	return y
}

func hasFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// matchName finds the longest full or three-letter name at the start of s,
// case-insensitively: its index and length.
func matchName(s string, names []string) (int, int) {
	best, n := -1, 0
	for i, name := range names {
		for _, cand := range []string{name, name[:3]} {
			if len(cand) > n && hasFold(s, cand) {
				best, n = i, len(cand)
			}
		}
	}
	return best, n
}

// parseZone reads Z, UTC, GMT, GMT±hh:mm, ±hhmm or ±hh:mm: minutes east of
// UTC and the length read.
func parseZone(s string) (int64, int) {
	switch {
	case strings.HasPrefix(s, "Z"):
		return 0, 1
	case strings.HasPrefix(s, "UTC"):
		return 0, 3
	case strings.HasPrefix(s, "GMT"):
		if off, n := parseOffset(s[3:]); n > 0 {
			return off, 3 + n
		}
		return 0, 3
	}
	return parseOffset(s)
}

func parseOffset(s string) (int64, int) {
	if len(s) < 3 || s[0] != '+' && s[0] != '-' {
		return 0, 0
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	digits := func(p string) (int64, bool) {
		if len(p) != 2 || p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' {
			return 0, false
		}
		return int64(p[0]-'0')*10 + int64(p[1]-'0'), true
	}
	h, ok := digits(s[1:3])
	if !ok {
		return 0, 0
	}
	switch {
	case len(s) >= 6 && s[3] == ':':
		if m, ok := digits(s[4:6]); ok {
			return sign * (h*60 + m), 6
		}
	case len(s) >= 5:
		if m, ok := digits(s[3:5]); ok {
			return sign * (h*60 + m), 5
		}
	}
	return sign * h * 60, 3
}
