package schema

import (
	"math/big"
	"math/bits"
)

// DecimalLen is the length of AppendDecimal's bytes for x.
func DecimalLen(x *big.Int) int {
	if x.Sign() >= 0 {
		return x.BitLen()/8 + 1 // the magnitude after a zero sign bit
	}
	// n bytes hold x when -2^(8n-1) <= x, i.e. bitlen(-x-1) < 8n.
	m := new(big.Int).Neg(x)
	return m.Sub(m, big.NewInt(1)).BitLen()/8 + 1
}

// AppendDecimal appends the unscaled value x of a Decimal as Kafka Connect
// carries it: the minimal big-endian two's complement, exactly Java's
// BigInteger.toByteArray. A non-negative x is written in place, without
// allocating.
func AppendDecimal(dst []byte, x *big.Int) []byte {
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

// smallInt is a big.Int and its one digit, allocated together.
type smallInt struct {
	i big.Int
	w [1]big.Word
}

// DecimalFromBytes is the inverse of AppendDecimal. A non-negative value
// of one machine word costs one allocation.
func DecimalFromBytes(b []byte) *big.Int {
	if len(b) > 0 && len(b) <= bits.UintSize/8 && b[0]&0x80 == 0 {
		var u uint64
		for _, c := range b {
			u = u<<8 | uint64(c)
		}
		x := &smallInt{}
		x.w[0] = big.Word(u)
		return x.i.SetBits(x.w[:])
	}
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}
