package jackson

import (
	"encoding/base64"
	"math/big"
	"strconv"
)

// AppendBigDecimal appends unscaled×10^-scale as Java's BigDecimal.toString.
func AppendBigDecimal(b []byte, unscaled *big.Int, scale int32) []byte {
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

// AppendBase64 appends data as a JSON string in standard padded base64, as
// Jackson writes binary values.
func AppendBase64(b []byte, data []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, '"')
}
