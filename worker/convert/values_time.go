package convert

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file reads dates and times as Values does: its ISO-8601 layouts
// through Java's SimpleDateFormat and GregorianCalendar in UTC.

// parseTemporal is ValueParser.parseAsTemporal: a token of the length of
// one of Kafka's ISO-8601 formats, parsed as Java's lenient
// SimpleDateFormat does in UTC, or nil.
func parseTemporal(token string) *schemaAndValue {
	token = strings.ReplaceAll(token, `\:`, ":")
	n := 0
	for _, r := range token {
		n++
		if r > 0xFFFF {
			n++
		}
		if n > isoTimestampLen {
			return nil
		}
	}
	var s *schema.Schema
	var layout string
	switch n {
	case isoTimeLen:
		s, layout = schema.Time, "H:m:s.S'Z"
	case isoTimestampLen:
		s, layout = schema.Timestamp, "y-M-d'TH:m:s.S'Z"
	case isoDateLen:
		s, layout = schema.Date, "y-M-d"
	default:
		return nil
	}
	var buf [isoTimestampLen]uint16
	text := buf[:0]
	for _, r := range token {
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			text = append(text, uint16(r1), uint16(r2))
		} else {
			text = append(text, uint16(r))
		}
	}
	ms, ok := parseJavaDate(text, layout)
	if !ok {
		return nil
	}
	return &schemaAndValue{s, jdate(ms)}
}

// parseJavaDate is Java's lenient SimpleDateFormat.parse(text, pos) in UTC
// for a layout of numeric fields (y, M, d, H, m, s, S) and literal
// characters (each quoted letter prefixed with '). The text need not be
// consumed entirely.
func parseJavaDate(text []uint16, layout string) (int64, bool) {
	var year, month, day, hour, minute, second, milli int32
	year, day = 1970, 1
	dateSet := false
	pos := 0
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c == '\'' || !strings.ContainsRune("yMdHmsS", rune(c)) {
			if c == '\'' {
				i++
				c = layout[i]
			}
			if pos >= len(text) || text[pos] != uint16(c) {
				return 0, false
			}
			pos++
			continue
		}
		// SimpleDateFormat.subParse skips spaces and tabs first.
		for pos < len(text) && (text[pos] == ' ' || text[pos] == '\t') {
			pos++
		}
		if pos >= len(text) {
			return 0, false
		}
		v, next, ok := parseJavaInt(text, pos)
		if !ok {
			return 0, false
		}
		pos = next
		switch c {
		case 'y':
			year, dateSet = v, true
		case 'M':
			month = v - 1
		case 'd':
			day = v
		case 'H':
			hour = v
		case 'm':
			minute = v
		case 's':
			second = v
		case 'S':
			milli = v
		}
	}
	return gregorianMillis(year, month, day, dateSet, hour, minute, second, milli), true
}

// parseJavaInt is the integer DecimalFormat of SimpleDateFormat (US
// locale, grouping off) followed by Number.intValue(): an optional minus,
// digits of any script, an optional exponent (E, optional minus, digits);
// "NaN" reads as 0 and "∞" as Integer.MAX_VALUE.
func parseJavaInt(text []uint16, pos int) (int32, int, bool) {
	if hasUTF16Prefix(text[pos:], "NaN") {
		return 0, pos + 3, true
	}
	neg := text[pos] == '-'
	p := pos
	if neg {
		p++
	}
	if p < len(text) && text[p] == '∞' {
		if neg {
			return math.MinInt32, p + 1, true
		}
		return math.MaxInt32, p + 1, true
	}
	digits, counted, sawDigit, p := javaDigits(text, p)
	decimalAt := int32(counted)
	if p < len(text) && text[p] == 'E' {
		// The exponent: taken only if it has digits and fits in a long.
		q := p + 1
		eneg := q < len(text) && text[q] == '-'
		if eneg {
			q++
		}
		edigits, ecounted, esaw, end := javaDigits(text, q)
		if esaw || ecounted > 0 {
			if n, fits := digitListLong(edigits, ecounted, !eneg); fits {
				e := int32(n)
				if eneg {
					e = -e
				}
				decimalAt += e
				p = end
			}
		}
	}
	if !sawDigit && counted == 0 {
		return 0, 0, false
	}
	if n, fits := digitListLong(digits, int(decimalAt), !neg); fits {
		if neg && n != math.MinInt64 {
			n = -n
		}
		return int32(n), p, true
	}
	trimmed := strings.TrimRight(string(digits), "0")
	f, _ := strconv.ParseFloat("0."+trimmed+"e"+strconv.Itoa(int(decimalAt)), 64)
	if neg {
		f = -f
	}
	return javaF2I(f), p, true
}

// javaDigits reads DecimalFormat's digits from text[p:]: the significant
// digits (leading zeros dropped), how many there were, whether any digit
// was seen and where the digits end.
func javaDigits(text []uint16, p int) ([]byte, int, bool, int) {
	var digits []byte
	saw := false
	for ; p < len(text); p++ {
		d := javaDigit(rune(text[p]))
		if d < 0 {
			break
		}
		saw = true
		if d == 0 && len(digits) == 0 {
			continue
		}
		digits = append(digits, byte('0'+d))
	}
	return digits, len(digits), saw, p
}

// digitListLong is DigitList.fitsIntoLong and getLong for the digits
// 0.digits × 10^decimalAt: the magnitude as a long, or false. The one
// magnitude past Long.MAX_VALUE that fits, when negative, is returned as
// Long.MIN_VALUE.
func digitListLong(digits []byte, decimalAt int, positive bool) (int64, bool) {
	count := len(digits)
	for count > 0 && digits[count-1] == '0' {
		count--
	}
	if count == 0 {
		return 0, true
	}
	if decimalAt < count || decimalAt > 19 {
		return 0, false
	}
	s := string(digits[:count]) + strings.Repeat("0", decimalAt-count)
	if decimalAt == 19 && s >= "9223372036854775808" {
		if s == "9223372036854775808" && !positive {
			return math.MinInt64, true
		}
		return 0, false
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n, true
}

func hasUTF16Prefix(text []uint16, prefix string) bool {
	if len(text) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if text[i] != uint16(prefix[i]) {
			return false
		}
	}
	return true
}

// Fixed dates (days from 0001-01-01 Gregorian, which is day 1) that Java's
// GregorianCalendar uses.
const (
	epochFixedDate   = 719163 // 1970-01-01
	cutoverFixedDate = 577736 // 1582-10-15, the first Gregorian day
)

// gregorianMillis is Java's lenient GregorianCalendar.computeTime in UTC:
// out-of-range fields carry over, and dates before 1582-10-15 are Julian.
// Arithmetic wraps as Java's int and long do.
func gregorianMillis(year, month, day int32, daySet bool, hour, minute, second, milli int32) int64 {
	timeOfDay := int64(hour)
	timeOfDay = timeOfDay*60 + int64(minute)
	timeOfDay = timeOfDay*60 + int64(second)
	timeOfDay = timeOfDay*1000 + int64(milli)
	fixed := timeOfDay / msPerDay
	timeOfDay %= msPerDay
	for timeOfDay < 0 {
		timeOfDay += msPerDay
		fixed--
	}
	if year >= 1582 {
		if g := fixed + calendarFixedDate(false, year, month, day, daySet); g >= cutoverFixedDate {
			fixed = g
		} else {
			fixed += calendarFixedDate(true, year, month, day, daySet)
		}
	} else {
		fixed += calendarFixedDate(true, year, month, day, daySet)
	}
	return (fixed-epochFixedDate)*msPerDay + timeOfDay
}

// calendarFixedDate is GregorianCalendar.getFixedDate for a year, a
// zero-based month and a day of the month, on the Julian or Gregorian
// calendar.
func calendarFixedDate(julian bool, year, month, day int32, daySet bool) int64 {
	if month > 11 {
		year += month / 12
		month %= 12
	} else if month < 0 {
		year += int32(floorDiv(int64(month), 12))
		month = int32(floorMod(int64(month), 12))
	}
	m := int64(month) + 1
	var fixed int64
	if julian {
		y := int64(year)
		fixed = -2 + 365*(y-1) + 1 + floorDiv(y-1, 4) + floorDiv(367*m-362, 12)
		if m > 2 {
			if year%4 == 0 {
				fixed--
			} else {
				fixed -= 2
			}
		}
	} else {
		prev := int64(year) - 1
		fixed = 1 + 365*prev + floorDiv(prev, 4) - floorDiv(prev, 100) + floorDiv(prev, 400) + (367*m-362)/12
		if m > 2 {
			if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
				fixed--
			} else {
				fixed -= 2
			}
		}
	}
	if daySet {
		fixed += int64(day) - 1
	}
	return fixed
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
