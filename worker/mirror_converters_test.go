package worker

import (
	"testing"

	"github.com/tributary-dev/tributary/sdk"
)

// TestForceByteArray: the MirrorMaker 2 connectors get ByteArrayConverter
// for keys, values and headers whatever their config says; others keep
// theirs.
func TestForceByteArray(t *testing.T) {
	conn := map[string]string{"key.converter": JSONConverter, "name": "m"}
	got := forceByteArray(sdk.Spec{Class: "org.apache.kafka.connect.mirror.MirrorSourceConnector"}, conn)
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if got[k] != ByteArrayConverter {
			t.Errorf("%s = %q", k, got[k])
		}
	}
	if conn["key.converter"] != JSONConverter || got["name"] != "m" {
		t.Error("the connector's config was changed in place or lost a key")
	}
	if other := forceByteArray(sdk.Spec{Class: "FileStreamSource"}, conn); other["key.converter"] != JSONConverter {
		t.Error("another connector's converter was forced")
	}
}
