package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// kafkaUnknownClass is Kafka Connect 4.4's answer to a create with
// connector.class FileStreamSourc, as the harness's worker gave it.
const kafkaUnknownClass = `{"error_code":400,"message":"Failed to find any class that implements Connector and which name matches FileStreamSourc, available connectors are: ` +
	`PluginDesc{klass=class io.debezium.connector.mongodb.MongoDbConnector, name='io.debezium.connector.mongodb.MongoDbConnector', version='3.6.1.Final', encodedVersion=3.6.1.Final, type=source, typeName='source', location='classpath'}, ` +
	`PluginDesc{klass=class io.debezium.connector.mongodb.MongoDbSinkConnector, name='io.debezium.connector.mongodb.MongoDbSinkConnector', version='3.6.1.Final', encodedVersion=3.6.1.Final, type=sink, typeName='sink', location='classpath'}, ` +
	`PluginDesc{klass=class io.debezium.connector.postgresql.PostgresConnector, name='io.debezium.connector.postgresql.PostgresConnector', version='3.6.1.Final', encodedVersion=3.6.1.Final, type=source, typeName='source', location='classpath'}, ` +
	`PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSinkConnector, name='org.apache.kafka.connect.file.FileStreamSinkConnector', version='4.4.0', encodedVersion=4.4.0, type=sink, typeName='sink', location='classpath'}, ` +
	`PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSourceConnector, name='org.apache.kafka.connect.file.FileStreamSourceConnector', version='4.4.0', encodedVersion=4.4.0, type=source, typeName='source', location='classpath'}"}`

func matches(t *testing.T, actual, template string) error {
	t.Helper()
	var a, e any
	if err := json.Unmarshal([]byte(actual), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(template), &e); err != nil {
		t.Fatalf("template: %v", err)
	}
	return Match(a, e, "$")
}

// The unknown-class template takes Kafka Connect's recorded answer and
// Tributary's (other plugins, a -tributary version), and refuses the form
// Tributary had before (four fields, the loader's order).
func TestUnknownClassTemplate(t *testing.T) {
	tmpl := unknownClass("FileStreamSourc")
	if err := matches(t, kafkaUnknownClass, tmpl); err != nil {
		t.Errorf("Kafka Connect's answer: %v", err)
	}
	if swapFileStream(kafkaUnknownClass) == kafkaUnknownClass {
		t.Fatal("swapFileStream changed nothing")
	}
	trib := strings.NewReplacer("version='4.4.0'", "version='4.4.0-tributary'", "encodedVersion=4.4.0", "encodedVersion=4.4.0-tributary").Replace(kafkaUnknownClass)
	if err := matches(t, trib, tmpl); err != nil {
		t.Errorf("Tributary's answer: %v", err)
	}
	for name, bad := range map[string]string{
		"old form": `{"error_code":400,"message":"Failed to find any class that implements Connector and which name matches FileStreamSourc, available connectors are: ` +
			`PluginDesc{klass=org.apache.kafka.connect.file.FileStreamSinkConnector, name='org.apache.kafka.connect.file.FileStreamSinkConnector', version='4.4.0', type=sink}, ` +
			`PluginDesc{klass=org.apache.kafka.connect.file.FileStreamSourceConnector, name='org.apache.kafka.connect.file.FileStreamSourceConnector', version='4.4.0', type=source}"}`,
		"source before sink": swapFileStream(kafkaUnknownClass),
		"another class":      strings.Replace(kafkaUnknownClass, "matches FileStreamSourc,", "matches Other,", 1),
		"a 500":              strings.Replace(kafkaUnknownClass, `"error_code":400`, `"error_code":500`, 1),
	} {
		if err := matches(t, bad, tmpl); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// swapFileStream puts the FileStream source's entry before the sink's.
func swapFileStream(answer string) string {
	const sink = `PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSinkConnector, name='org.apache.kafka.connect.file.FileStreamSinkConnector', version='4.4.0', encodedVersion=4.4.0, type=sink, typeName='sink', location='classpath'}`
	const source = `PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSourceConnector, name='org.apache.kafka.connect.file.FileStreamSourceConnector', version='4.4.0', encodedVersion=4.4.0, type=source, typeName='source', location='classpath'}`
	return strings.Replace(answer, sink+", "+source, source+", "+sink, 1)
}

func TestOneOfAndRegexPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		actual, template string
		ok               bool
	}{
		{`"UNASSIGNED"`, `"{{oneof:UNASSIGNED|RUNNING}}"`, true},
		{`"RUNNING"`, `"{{oneof:UNASSIGNED|RUNNING}}"`, true},
		{`"FAILED"`, `"{{oneof:UNASSIGNED|RUNNING}}"`, false},
		{`1`, `"{{oneof:1|2}}"`, false},
		{`"abc"`, `"{{re:a.c}}"`, true},
		{`"xabc"`, `"{{re:a.c}}"`, false}, // anchored
		{`"abcx"`, `"{{re:a.c}}"`, false},
		{`"a|b"`, `"{{re:a\\|b}}"`, true},
		{`"b"`, `"{{re:a|b}}"`, true}, // the alternation is anchored as a whole
		{`"ab"`, `"{{re:a|b}}"`, false},
	} {
		if err := matches(t, tc.actual, tc.template); (err == nil) != tc.ok {
			t.Errorf("%s against %s: %v, want ok=%v", tc.actual, tc.template, err, tc.ok)
		}
	}
}

// Tributary answers an exchange right after a create the same every
// time: the cases accept one answer from it (Want), and other answers only
// from Kafka Connect, each named; every such exchange is played
// afterCreateRounds times, sent at once.
func TestAfterCreateCasesShape(t *testing.T) {
	n := 0
	for _, c := range afterCreateCases() {
		if !c.Live || c.Repeat != afterCreateRounds || afterCreateRounds < 20 {
			t.Errorf("%s: live %v, %d rounds", c.Name, c.Live, c.Repeat)
		}
		for i, s := range c.Steps {
			if !s.Immediate {
				continue
			}
			n++
			if i == 0 || c.Steps[i-1].Path != "/connectors" || c.Steps[i-1].Method != "POST" {
				t.Errorf("%s: step %d does not follow the create", c.Name, i+1)
			}
			for _, k := range s.KafkaRace {
				if k.Note == "" {
					t.Errorf("%s: step %d: an answer of Kafka Connect's race has no note", c.Name, i+1)
				}
			}
		}
	}
	if n != 2 {
		t.Errorf("%d exchanges right after a create, want the task restart and the status", n)
	}
}
