package task

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// Records carved from shared chunks stay intact while later ones are
// converted, whatever their sizes, and nulls stay nil.
func TestConvBufKeepsEveryRecord(t *testing.T) {
	json, err := convert.NewJSON(map[string]string{"schemas.enable": "false"})
	if err != nil {
		t.Fatal(err)
	}
	var b convBuf
	var got [][]byte
	var want []string
	sizes := []int{0, 5, 1000, 70_000, 3, 20_000, 1000, 1000, 200_000, 7}
	for i := range 300 {
		n := sizes[i%len(sizes)]
		s := strings.Repeat(string(rune('a'+i%26)), n)
		c := convert.Converter(json)
		if i%2 == 0 {
			c = convert.StringConverter{}
		}
		out, err := b.convert(c, "t", schema.String, s)
		if err != nil {
			t.Fatal(err)
		}
		exp, _ := c.FromConnect("t", schema.String, s)
		got = append(got, out)
		want = append(want, string(exp))
	}
	for i := range got {
		if !bytes.Equal(got[i], []byte(want[i])) {
			t.Fatalf("record %d changed: %.40q…, want %.40q…", i, got[i], want[i])
		}
	}
	if out, err := b.convert(json, "t", nil, nil); err != nil || out != nil {
		t.Fatalf("null: %q %v", out, err)
	}
	if out, err := b.convert(convert.StringConverter{}, "t", schema.OptionalString, nil); err != nil || out != nil {
		t.Fatalf("string null: %q %v", out, err)
	}
}
