package worker

import (
	"testing"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// specLoader is a plugins.Loader that only lists specs, with a location
// for some classes.
type specLoader struct {
	plugins.Loader
	specs    []sdk.Spec
	location map[string]string
}

func (l specLoader) Specs() []sdk.Spec { return append([]sdk.Spec(nil), l.specs...) }

func (l specLoader) Location(class string) string { return l.location[class] }

// A connector.class that names no connector is Kafka Connect 4.4's 400,
// word for word: every connector as PluginDesc.toString renders it, in
// PluginDesc order (by class), whatever order the loader found them in.
// Recorded from Kafka Connect 4.4 (the Debezium entries of its answer,
// one FileStream entry per type).
func TestUnknownConnectorClassMessage(t *testing.T) {
	l := specLoader{specs: []sdk.Spec{
		{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: sdk.Source, Version: "4.4.0"},
		{Class: "io.debezium.connector.postgresql.PostgresConnector", Type: sdk.Source, Version: "3.6.1.Final"},
		{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: sdk.Sink, Version: "4.4.0"},
		{Class: "io.debezium.connector.mongodb.MongoDbSinkConnector", Type: sdk.Sink, Version: "3.6.1.Final"},
	}}
	err := unknownConnectorClass("FileStreamSourc", l)
	want := "Failed to find any class that implements Connector and which name matches FileStreamSourc, available connectors are: " +
		"PluginDesc{klass=class io.debezium.connector.mongodb.MongoDbSinkConnector, name='io.debezium.connector.mongodb.MongoDbSinkConnector', version='3.6.1.Final', encodedVersion=3.6.1.Final, type=sink, typeName='sink', location='classpath'}, " +
		"PluginDesc{klass=class io.debezium.connector.postgresql.PostgresConnector, name='io.debezium.connector.postgresql.PostgresConnector', version='3.6.1.Final', encodedVersion=3.6.1.Final, type=source, typeName='source', location='classpath'}, " +
		"PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSinkConnector, name='org.apache.kafka.connect.file.FileStreamSinkConnector', version='4.4.0', encodedVersion=4.4.0, type=sink, typeName='sink', location='classpath'}, " +
		"PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSourceConnector, name='org.apache.kafka.connect.file.FileStreamSourceConnector', version='4.4.0', encodedVersion=4.4.0, type=source, typeName='source', location='classpath'}"
	if KindOf(err) != KindBadRequest || err.Error() != want {
		t.Fatalf("got %d %q\nwant 400 %q", KindOf(err), err, want)
	}
	if l.specs[0].Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" {
		t.Error("the loader's own list was reordered")
	}
}

// A plugin from plugin.path shows its location, one without a version
// Kafka Connect's "undefined".
func TestPluginDescLocationAndVersion(t *testing.T) {
	l := specLoader{
		specs:    []sdk.Spec{{Class: "com.example.Src", Type: sdk.Source}},
		location: map[string]string{"com.example.Src": "file:/opt/plugins/example"},
	}
	want := "PluginDesc{klass=class com.example.Src, name='com.example.Src', version='undefined', encodedVersion=undefined, type=source, typeName='source', location='file:/opt/plugins/example'}"
	if got := pluginDescs(l); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
