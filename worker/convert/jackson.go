package convert

import (
	"encoding/base64"
	"math/big"
	"strconv"
)

// This file writes the JSON that Jackson (Kafka's JSON library) writes and
// package internal/jackson does not: BigDecimal as BigDecimal.toString,
// bytes as base64. Strings and floats come from internal/jackson.

// appendBigDecimal appends unscaled×10^-scale as Java's BigDecimal.toString.
func appendBigDecimal(b []byte, unscaled *big.Int, scale int32) []byte {
	coeff := new(big.Int).Abs(unscaled).String()
	if unscaled.Sign() < 0 {
		b = append(b, '-')
	}
	adjusted := -int64(scale) + int64(len(coeff)-1)
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			return append(b, coeff...)
		case len(coeff) > int(scale):
			b = append(b, coeff[:len(coeff)-int(scale)]...)
			b = append(b, '.')
			return append(b, coeff[len(coeff)-int(scale):]...)
		default:
			b = append(b, '0', '.')
			for range int(scale) - len(coeff) {
				b = append(b, '0')
			}
			return append(b, coeff...)
		}
	}
	b = append(b, coeff[0])
	if len(coeff) > 1 {
		b = append(b, '.')
		b = append(b, coeff[1:]...)
	}
	b = append(b, 'E')
	if adjusted >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, adjusted, 10)
}

// appendBase64 appends data as a JSON string in standard padded base64, as
// Jackson writes binary values.
func appendBase64(b []byte, data []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, '"')
}

// twosComplement returns x as Java's BigInteger.toByteArray: big-endian
// two's complement in the fewest bytes.
func twosComplement(x *big.Int) []byte {
	switch x.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := x.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// n bytes hold x when -2^(8n-1) <= x, i.e. bitlen(-x-1) < 8n.
	m := new(big.Int).Neg(x)
	m.Sub(m, big.NewInt(1))
	n := m.BitLen()/8 + 1
	v := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	v.Add(v, x)
	out := make([]byte, n)
	return v.FillBytes(out)
}

// fromTwosComplement is the inverse of twosComplement.
func fromTwosComplement(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}
