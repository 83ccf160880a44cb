package main

import (
	"testing"

	"github.com/tributary-dev/tributary/internal/properties"
)

func TestRegistryProperties(t *testing.T) {
	props := properties.Properties{"listeners": "PLAINTEXT://127.0.0.1:9092", propRegistryListeners: "http://127.0.0.1:8081", propRegistryTopic: "_s"}
	reg := takeRegistryProps(props)
	if len(props) != 1 || reg[propRegistryTopic] != "_s" || reg[propRegistryListeners] == "" {
		t.Fatalf("broker props %v, registry props %v", props, reg)
	}
	for in, want := range map[string]string{
		"":                      "",
		"http://127.0.0.1:8081": "127.0.0.1:8081",
		"0.0.0.0:8081":          "0.0.0.0:8081",
	} {
		if got, err := parseRegistryListener(in); err != nil || got != want {
			t.Errorf("parseRegistryListener(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"https://127.0.0.1:8081", "http://a:1,http://b:2", "http://nohost"} {
		if _, err := parseRegistryListener(bad); err == nil {
			t.Errorf("parseRegistryListener(%q) accepted", bad)
		}
	}
}
