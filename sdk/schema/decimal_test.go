package schema

import (
	"bytes"
	"math"
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

// BenchmarkAppendDecimal encodes an unscaled value as a Connect Decimal's
// bytes (with DecimalLen, as the plugin wire encoding does), for a value
// of one machine word of each sign and one of three, and decodes them.
func BenchmarkAppendDecimal(b *testing.B) {
	for _, tc := range []struct {
		name string
		v    *big.Int
	}{
		{"int64", big.NewInt(123_456_789)},
		{"negative-int64", big.NewInt(-123_456_789)},
		{"192bit", new(big.Int).Lsh(big.NewInt(-123_456_789), 160)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf = AppendDecimal(buf[:0], tc.v)
				buf = append(buf, byte(DecimalLen(tc.v)))
			}
		})
		b.Run(tc.name+"/decode", func(b *testing.B) {
			enc := AppendDecimal(nil, tc.v)
			for b.Loop() {
				if DecimalFromBytes(enc).Sign() == 0 {
					b.Fatal("zero")
				}
			}
		})
	}
}

// FuzzDecimal: DecimalFromBytes reads any bytes as two's complement (as
// Java's BigInteger(byte[]) does), and AppendDecimal and DecimalLen write
// the value back as Java's toByteArray.
func FuzzDecimal(f *testing.F) {
	for _, s := range [][]byte{{0}, {0xff}, {0x80}, {0x00, 0x80}, {0xff, 0x7f}, {0x80, 0, 0, 0, 0, 0, 0, 0}, {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0xff, 1, 2, 3, 4, 5, 6, 7, 8}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		want := new(big.Int).SetBytes(b)
		if b[0]&0x80 != 0 {
			want.Sub(want, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		got := DecimalFromBytes(b)
		if got.Cmp(want) != 0 {
			t.Fatalf("DecimalFromBytes(%x) = %v, want %v", b, got, want)
		}
		enc := AppendDecimal(nil, got)
		if !bytes.Equal(enc, javaToByteArray(want)) || DecimalLen(got) != len(enc) {
			t.Fatalf("%v: AppendDecimal %x (DecimalLen %d), want %x", want, enc, DecimalLen(got), javaToByteArray(want))
		}
	})
}

// TestDecimalFromInt64: the value of every int64, in one allocation.
func TestDecimalFromInt64(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 123456, -123456, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		if got := DecimalFromInt64(v); got.Cmp(big.NewInt(v)) != 0 {
			t.Fatalf("DecimalFromInt64(%d) = %v", v, got)
		}
	}
	var sink *big.Int
	if n := testing.AllocsPerRun(100, func() { sink = DecimalFromInt64(-123456) }); n != 1 {
		t.Fatalf("DecimalFromInt64 makes %v allocations, want 1", n)
	}
	_ = sink
}
