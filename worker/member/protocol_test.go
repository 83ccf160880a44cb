package member

import (
	"bufio"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"
)

// golden reads testdata/java-golden.tsv: name and hex of bytes written by
// Kafka 4.4's ConnectProtocol / IncrementalCooperativeConnectProtocol
// (see testdata/README.md for the program).
func golden(t testing.TB) map[string][]byte {
	t.Helper()
	f, err := os.Open("testdata/java-golden.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, h, _ := strings.Cut(sc.Text(), "\t")
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func TestEncodingsMatchJava(t *testing.T) {
	g := golden(t)
	prev := &Assignment{Leader: "leader-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Connectors: []string{"a", "b"}, Tasks: []TaskID{{"a", 0}, {"a", 1}, {"b", 0}}}
	a2 := Assignment{Leader: "leader-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"b", 1}},
		RevokedConnectors: []string{"c"}, RevokedTasks: []TaskID{{"c", 0}, {"c", 1}}, Delay: 5000}
	a1 := Assignment{Leader: "leader-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"b", 1}}}
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name string
		got  []byte
	}{
		{"meta0", must(EncodeMetadata(Metadata{Version: 0, URL: "http://w1:8083/", ConfigOffset: 42}))},
		{"meta1", must(EncodeMetadata(Metadata{Version: 1, URL: "http://w1:8083/", ConfigOffset: 42, Allocation: prev}))},
		{"meta2", must(EncodeMetadata(Metadata{Version: 2, URL: "http://w1:8083/", ConfigOffset: 42, Allocation: prev}))},
		{"meta2empty", must(EncodeMetadata(Metadata{Version: 2, URL: "http://w1:8083/", ConfigOffset: -1}))},
		{"assign0", must(EncodeAssignment(0, Assignment{Leader: "leader-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
			Connectors: []string{"a", "b"}, Tasks: []TaskID{{"a", 0}, {"a", 1}, {"c", 2}}}))},
		{"assign0err", must(EncodeAssignment(0, Assignment{Error: ConfigMismatch, Leader: "leader-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42}))},
		{"assign2", must(EncodeAssignment(2, a2))},
		{"assign1", must(EncodeAssignment(1, a1))},
	}
	for _, c := range cases {
		want, ok := g[c.name]
		if !ok {
			t.Fatalf("no golden %s", c.name)
		}
		if hex.EncodeToString(c.got) != hex.EncodeToString(want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, c.got, want)
		}
	}
	// Decoding Java's bytes gives the values back.
	md, err := DecodeMetadata(g["meta2"])
	if err != nil || md.Version != 2 || md.URL != "http://w1:8083/" || md.ConfigOffset != 42 || !reflect.DeepEqual(md.Allocation, prev) {
		t.Fatalf("meta2 decoded %+v %+v %v", md, md.Allocation, err)
	}
	if md, err := DecodeMetadata(g["meta2empty"]); err != nil || md.Allocation != nil || md.ConfigOffset != -1 {
		t.Fatalf("meta2empty decoded %+v %v", md, err)
	}
	da, err := DecodeAssignment(g["assign2"])
	if err != nil || !reflect.DeepEqual(da, a2) {
		t.Fatalf("assign2 decoded %+v %v", da, err)
	}
	if da, err := DecodeAssignment(g["assign0err"]); err != nil || da.Error != ConfigMismatch {
		t.Fatalf("assign0err decoded %+v %v", da, err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, b := range golden(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeMetadata(b)
		_, _ = DecodeAssignment(b)
	})
}

func TestProtocolsFor(t *testing.T) {
	for s, want := range map[string][]Protocol{"sessioned": {Sessioned, Compatible, Eager}, "compatible": {Compatible, Eager}, "eager": {Eager}} {
		got, err := ProtocolsFor(s)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ProtocolsFor("bogus"); err == nil {
		t.Error("bogus accepted")
	}
}

// A connector name longer than a Kafka string can carry is an encoding
// error, not a wrapped length that every member then fails to decode
// ("truncated connect protocol data") in an endless rejoin loop.
func TestEncodeRefusesOverlongStrings(t *testing.T) {
	long := strings.Repeat("n", MaxStringBytes+1)
	if _, err := EncodeAssignment(2, Assignment{Leader: "l", Connectors: []string{long}}); err == nil {
		t.Error("EncodeAssignment accepted a 32,768-byte connector name")
	}
	if _, err := EncodeMetadata(Metadata{Version: 1, URL: "http://w/", Allocation: &Assignment{Tasks: []TaskID{{long, 0}}}}); err == nil {
		t.Error("EncodeMetadata accepted a 32,768-byte connector name")
	}
	ok := strings.Repeat("n", MaxStringBytes)
	b, err := EncodeAssignment(2, Assignment{Leader: "l", Connectors: []string{ok}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := DecodeAssignment(b)
	if err != nil || len(a.Connectors) != 1 || a.Connectors[0] != ok {
		t.Fatalf("a 32,767-byte name did not round-trip: %v", err)
	}
}
