package postgres

import (
	"reflect"
	"slices"
	"testing"
)

// The tables of an END event are listed as Debezium's java.util.HashMap
// iterates them (observed from Debezium 3.6.1 for the first case).
func TestJavaHashMapOrder(t *testing.T) {
	if got := javaHashMapOrder([]string{"public.orders", "public.lines", "public.audit"}); !reflect.DeepEqual(got, []string{"public.orders", "public.lines", "public.audit"}) {
		t.Errorf("got %v", got)
	}
	// "Aa" and "BB" collide in Java (hash 2112): insertion order within
	// the bucket; "a" (97) comes in bucket 1, before them (bucket 0 is
	// 2112 & 15 = 0 — so they come first).
	if got := javaHashMapOrder([]string{"a", "BB", "Aa"}); !reflect.DeepEqual(got, []string{"BB", "Aa", "a"}) {
		t.Errorf("got %v", got)
	}
	// A resize keeps every key once.
	var keys []string
	for i := range 40 {
		keys = append(keys, "public.t"+string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	got := javaHashMapOrder(keys)
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	want := slices.Clone(keys)
	slices.Sort(want)
	if !reflect.DeepEqual(sorted, want) {
		t.Errorf("lost or doubled keys: %v", got)
	}
}
