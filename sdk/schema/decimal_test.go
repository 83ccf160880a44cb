package schema

import (
	"bytes"
	"math/big"
	"testing"
)

// javaToByteArray is BigInteger.toByteArray by its definition: the fewest
// bytes whose two's complement is x.
func javaToByteArray(x *big.Int) []byte {
	for n := 1; ; n++ {
		lo := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)))
		hi := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1))
		if x.Cmp(lo) >= 0 && x.Cmp(hi) < 0 {
			v := new(big.Int).Mod(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
			return v.FillBytes(make([]byte, n))
		}
	}
}

// TestDecimalBytes: AppendDecimal writes Java's bytes and DecimalFromBytes
// reads them back, around every byte boundary, both signs, and past one
// machine word.
func TestDecimalBytes(t *testing.T) {
	var vals []*big.Int
	for bitsN := 0; bitsN <= 80; bitsN++ {
		p := new(big.Int).Lsh(big.NewInt(1), uint(bitsN))
		for _, d := range []int64{-1, 0, 1} {
			v := new(big.Int).Add(p, big.NewInt(d))
			vals = append(vals, v, new(big.Int).Neg(v))
		}
	}
	vals = append(vals, big.NewInt(0))
	for _, v := range vals {
		want := javaToByteArray(v)
		got := AppendDecimal([]byte{0xaa}, v)
		if !bytes.Equal(got[1:], want) || got[0] != 0xaa {
			t.Fatalf("%v: AppendDecimal %x, want %x after the prefix", v, got, want)
		}
		if n := DecimalLen(v); n != len(want) {
			t.Fatalf("%v: DecimalLen %d, want %d", v, n, len(want))
		}
		if back := DecimalFromBytes(want); back.Cmp(v) != 0 {
			t.Fatalf("%x: DecimalFromBytes %v, want %v", want, back, v)
		}
	}
	for _, tc := range []struct {
		v    int64
		want []byte
	}{{-129, []byte{0xff, 0x7f}}, {128, []byte{0x00, 0x80}}, {0, []byte{0}}, {-1, []byte{0xff}}} {
		if got := AppendDecimal(nil, big.NewInt(tc.v)); !bytes.Equal(got, tc.want) {
			t.Errorf("%d = %x, want %x", tc.v, got, tc.want)
		}
	}
}
