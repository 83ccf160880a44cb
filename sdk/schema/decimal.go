package schema

import (
	"math/big"
	"math/bits"
)

// DecimalLen is the length of AppendDecimal's bytes for x.
func DecimalLen(x *big.Int) int {
	if x.IsInt64() {
		return int64DecimalLen(x.Int64())
	}
	if x.Sign() >= 0 {
		return x.BitLen()/8 + 1 // the magnitude after a zero sign bit
	}
	// n bytes hold x when -2^(8n-1) <= x, i.e. bitlen(-x-1) < 8n.
	m := new(big.Int).Neg(x)
	return m.Sub(m, big.NewInt(1)).BitLen()/8 + 1
}

// AppendDecimal appends the unscaled value x of a Decimal as Kafka Connect
// carries it: the minimal big-endian two's complement, exactly Java's
// BigInteger.toByteArray. An x that fits an int64, or is not negative, is
// written without allocating.
func AppendDecimal(dst []byte, x *big.Int) []byte {
	if x.IsInt64() {
		v := x.Int64()
		for i := int64DecimalLen(v) - 1; i >= 0; i-- {
			dst = append(dst, byte(v>>(8*i)))
		}
		return dst
	}
	n := DecimalLen(x)
	dst = append(dst, make([]byte, n)...)
	out := dst[len(dst)-n:]
	if x.Sign() >= 0 {
		x.FillBytes(out)
		return dst
	}
	v := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	v.Add(v, x).FillBytes(out)
	return dst
}

// int64DecimalLen is DecimalLen for a value that fits an int64 (most
// decimals do), without big.Int arithmetic: the bits of v's magnitude
// (of ^v, -v-1, when negative) and a sign bit.
func int64DecimalLen(v int64) int {
	return bits.Len64(uint64(v^v>>63))/8 + 1
}

// smallInt is a big.Int and its one digit, allocated together.
type smallInt struct {
	i big.Int
	w [1]big.Word
}

// DecimalFromInt64 returns v as a big.Int in one allocation (big.NewInt
// takes two for a value that outlives its caller), for the unscaled value
// of a decimal.
func DecimalFromInt64(v int64) *big.Int {
	if bits.UintSize < 64 {
		return big.NewInt(v)
	}
	x := &smallInt{}
	if v >= 0 {
		x.w[0] = big.Word(v)
		return x.i.SetBits(x.w[:])
	}
	x.w[0] = big.Word(-v) // the magnitude; -MinInt64 wraps to 1<<63, right as unsigned
	return x.i.Neg(x.i.SetBits(x.w[:]))
}

// DecimalFromBytes is the inverse of AppendDecimal. A value of one machine
// word costs one allocation.
func DecimalFromBytes(b []byte) *big.Int {
	if len(b) > 0 && len(b) <= bits.UintSize/8 {
		v := int64(int8(b[0])) // sign-extended
		for _, c := range b[1:] {
			v = v<<8 | int64(c)
		}
		return DecimalFromInt64(v)
	}
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}
