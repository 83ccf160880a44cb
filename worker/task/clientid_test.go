package task

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClientID(t *testing.T) {
	if got := clientID("connector-producer", "orders", 3); got != "connector-producer-orders-3" {
		t.Errorf("short name: %q", got)
	}
	for _, name := range []string{strings.Repeat("n", 1024), strings.Repeat("é", 300), strings.Repeat("x", 236) + "✓✓"} {
		got := clientID("connector-consumer", name, 12)
		if len(got) > maxClientIDBytes || !utf8.ValidString(got) || !strings.HasPrefix(got, "connector-consumer-"+name[:10]) || !strings.HasSuffix(got, "-12") {
			t.Errorf("long name: %q (%d bytes)", got, len(got))
		}
	}
}
