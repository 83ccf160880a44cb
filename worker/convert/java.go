package convert

import (
	"math"
	"math/big"

	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// This file lends the Java renderings and parsers the converters need to
// the transformations (worker/transform), which must print and parse values
// exactly as Kafka's transformations do.

// BigDecimalString is Java's BigDecimal.toString of unscaled×10^-scale.
func BigDecimalString(unscaled *big.Int, scale int32) string {
	return string(jackson.AppendBigDecimal(nil, unscaled, scale))
}

// JavaDateString is Kafka's Values.dateFormatFor(d).format(d) in UTC for
// the instant ms milliseconds after the epoch: HH:mm:ss.SSS'Z' before
// 1970-01-02, yyyy-MM-dd at midnight, yyyy-MM-dd'T'HH:mm:ss.SSS'Z'
// otherwise.
func JavaDateString(ms int64) string { return string(appendJavaDate(nil, ms)) }

// JavaFloatString is Java's Float.toString (bits 32) or Double.toString
// (bits 64).
func JavaFloatString(f float64, bits int) string {
	return string(appendJavaFloatString(nil, f, bits))
}

// ParseBigDecimal is Java's new BigDecimal(String): the unscaled value and
// the scale, or ok false where Java throws NumberFormatException.
func ParseBigDecimal(s string) (unscaled *big.Int, scale int32, ok bool) {
	d, ok := parseBigDecimal(s)
	if !ok {
		return nil, 0, false
	}
	return d.unscaled, d.scale, true
}

// BigDecimalLong is BigDecimal.longValue: the value truncated toward zero,
// its low 64 bits.
func BigDecimalLong(unscaled *big.Int, scale int32) int64 {
	n := (&jdecimal{unscaled, scale}).integer()
	return int64(new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64)).Uint64())
}

// BigDecimalFloat is BigDecimal.floatValue (bits 32) or doubleValue (bits
// 64).
func BigDecimalFloat(unscaled *big.Int, scale int32, bits int) float64 {
	return (&jdecimal{unscaled, scale}).float(bits)
}

// JavaF2L is Java's (long) cast of a double: truncating, saturating, NaN 0.
func JavaF2L(f float64) int64 { return javaF2L(f) }

// JavaF2I is Java's (int) cast of a double.
func JavaF2I(f float64) int32 { return javaF2I(f) }
