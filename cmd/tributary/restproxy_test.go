package main

import (
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/internal/properties"
)

func TestTakeRESTProxySettings(t *testing.T) {
	props := properties.Properties{
		"rest.proxy.listeners":                             "http://127.0.0.1:8082",
		"rest.proxy.listeners.https.ssl.keystore.type":     "PEM",
		"rest.proxy.authentication.jaas.file":              "/etc/jaas.conf",
		"ssl.keystore.location":                            "/broker.pem",
		"rest.proxy.consumer.instance.timeout.ms":          "1000",
		"rest.proxy.listeners.https.ssl.keystore.location": "/proxy.pem",
	}
	s, err := takeRESTProxySettings(props)
	if err != nil {
		t.Fatal(err)
	}
	if s.listener != "127.0.0.1:8082" || s.https || s.jaasFile != "/etc/jaas.conf" || s.tls["ssl.keystore.location"] != "/proxy.pem" {
		t.Fatalf("settings %+v", s)
	}
	if len(props) != 1 || props["ssl.keystore.location"] != "/broker.pem" {
		t.Fatalf("left %v: only the broker's settings must stay", props)
	}
	// Without the proxy's own, the broker's ssl.* serve it, and stay.
	props = properties.Properties{"rest.proxy.listeners": "https://127.0.0.1:8082", "ssl.keystore.type": "PEM"}
	if _, err := takeRESTProxySettings(props); err == nil || !strings.Contains(err.Error(), "TLS settings") {
		t.Fatalf("https without a key store: %v", err)
	}
	if props["ssl.keystore.type"] != "PEM" {
		t.Fatalf("the broker's ssl.* were taken: %v", props)
	}
	for _, bad := range []string{"ftp://127.0.0.1:1", "https://nohost", "http://127.0.0.1:1/path"} {
		if _, err := takeRESTProxySettings(properties.Properties{"rest.proxy.listeners": bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
