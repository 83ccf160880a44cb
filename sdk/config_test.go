package sdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type exampleConfig struct {
	Topic    string        `key:"topic" importance:"high" validate:"nonempty" doc:"The topic to publish data to" group:"Data"`
	Batch    int32         `key:"batch.size" default:"2000" validate:"min=1,max=10000" doc:"Max records per poll"`
	Mode     string        `key:"mode" default:"bulk" validate:"enum=bulk|incrementing" doc:"How to read" group:"Data" order:"2" width:"short" display:"Mode"`
	Tables   []string      `key:"tables" optional:"" doc:"Tables to copy" dependents:"mode"`
	Pass     Password      `key:"password" optional:"" importance:"medium" doc:"Database password"`
	Interval time.Duration `key:"poll.interval.ms" default:"5000" doc:"Poll interval"`
	Ratio    float64       `key:"ratio" default:"0.5" doc:"A ratio"`
	Flag     bool          `key:"flag" default:"false" doc:"A flag"`
	//lint:ignore U1000 an untagged field must not become a key
	internal int
}

func (c *exampleConfig) Validate() []FieldError {
	if c.Mode == "incrementing" && len(c.Tables) == 0 {
		return []FieldError{{Key: "tables", Message: "incrementing mode needs tables"}}
	}
	return nil
}

var exampleConnector = SourceConnector[exampleConfig]{Class: "com.example.jdbc.JdbcSourceConnector", Version: "1.0",
	NewTask: func(exampleConfig) SourceTask { return nil }}

func TestConfigKeyInfoJSONIsKafkaConnects(t *testing.T) {
	spec := exampleConnector.Spec()
	b, err := json.Marshal(spec.Config[:3])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"topic","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"The topic to publish data to","group":"Data","order":-1,"width":"NONE","display_name":"topic","dependents":[]},` +
		`{"name":"batch.size","type":"INT","required":false,"default_value":"2000","importance":"LOW","documentation":"Max records per poll","group":null,"order":-1,"width":"NONE","display_name":"batch.size","dependents":[]},` +
		`{"name":"mode","type":"STRING","required":false,"default_value":"bulk","importance":"LOW","documentation":"How to read","group":"Data","order":2,"width":"SHORT","display_name":"Mode","dependents":[]}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	types := map[string]string{}
	for _, k := range spec.Config {
		types[k.Name] = k.Type
	}
	for k, typ := range map[string]string{"tables": "LIST", "password": "PASSWORD", "poll.interval.ms": "LONG", "ratio": "DOUBLE", "flag": "BOOLEAN"} {
		if types[k] != typ {
			t.Errorf("%s has type %s, want %s", k, types[k], typ)
		}
	}
	if len(spec.Config) != 8 {
		t.Errorf("%d keys: the untagged field must not become a key", len(spec.Config))
	}
	if !spec.Matches("JdbcSourceConnector") || !spec.Matches("JdbcSource") || spec.Type != Source {
		t.Errorf("aliases %v", spec.Aliases)
	}
}

func TestValidateProducesConfigInfos(t *testing.T) {
	infos, err := exampleConnector.Validate(context.Background(), map[string]string{
		"batch.size": "0", "mode": "sideways", "password": "s3cret", "flag": "yes",
	})
	if err != nil {
		t.Fatal(err)
	}
	if infos.Name != "com.example.jdbc.JdbcSourceConnector" || infos.ErrorCount != 4 {
		t.Fatalf("infos %+v", infos)
	}
	if len(infos.Groups) != 1 || infos.Groups[0] != "Data" {
		t.Errorf("groups %v", infos.Groups)
	}
	errs := infos.Errors()
	want := map[string]string{
		"topic":      `Missing required configuration "topic" which has no default value.`,
		"batch.size": "Invalid value 0 for configuration batch.size: Value must be at least 1",
		"mode":       "Invalid value sideways for configuration mode: String must be one of: bulk, incrementing",
		"flag":       "Invalid value yes for configuration flag: Expected value to be either true or false",
	}
	for k, msg := range want {
		if len(errs[k]) != 1 || errs[k][0] != msg {
			t.Errorf("%s: %v, want %q", k, errs[k], msg)
		}
	}
	b, _ := json.Marshal(infos)
	if strings.Contains(string(b), "s3cret") || !strings.Contains(string(b), `"value":"[hidden]"`) {
		t.Errorf("password leaked or not hidden: %s", b)
	}
	for _, ci := range infos.Configs {
		if ci.Definition.Name == "mode" && strings.Join(ci.Value.RecommendedValues, ",") != "bulk,incrementing" {
			t.Errorf("recommended values %v", ci.Value.RecommendedValues)
		}
		if ci.Definition.Name == "poll.interval.ms" && (ci.Value.Value == nil || *ci.Value.Value != "5000") {
			t.Errorf("default value not reported: %v", ci.Value.Value)
		}
	}
	// Cross-field rule runs once every key is valid.
	infos, _ = exampleConnector.Validate(context.Background(), map[string]string{"topic": "t", "mode": "incrementing"})
	if e := infos.Errors(); infos.ErrorCount != 1 || e["tables"][0] != "incrementing mode needs tables" {
		t.Errorf("cross-field: %v", e)
	}
}

func TestParseConfigAndTaskConfigsRoundTrip(t *testing.T) {
	raw := map[string]string{"topic": " t ", "tables": "a, b,c", "poll.interval.ms": "250", "password": "pw", "name": "x"}
	c, err := ParseConfig[exampleConfig](raw)
	if err != nil {
		t.Fatal(err)
	}
	if c.Topic != "t" || len(c.Tables) != 3 || c.Tables[1] != "b" || c.Interval != 250*time.Millisecond || c.Pass.Value() != "pw" || c.Batch != 2000 {
		t.Fatalf("parsed %+v", c)
	}
	rc, err := exampleConnector.Start(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := rc.TaskConfigs(context.Background(), 2)
	if err != nil || len(cfgs) != 1 {
		t.Fatalf("task configs %v %v", cfgs, err)
	}
	back, err := ParseConfig[exampleConfig](cfgs[0])
	if err != nil || back.Interval != c.Interval || back.Pass != c.Pass || len(back.Tables) != 3 || cfgs[0]["name"] != "x" {
		t.Fatalf("task config %v does not round-trip: %+v %v", cfgs[0], back, err)
	}
	if _, err := ParseConfig[exampleConfig](map[string]string{}); err == nil || !strings.Contains(err.Error(), "topic") {
		t.Fatalf("missing topic: %v", err)
	}
}

func TestBadConfigStructsAreRejected(t *testing.T) {
	type noType struct {
		C chan int `key:"c" doc:"x"`
	}
	type badDefault struct {
		N int32 `key:"n" default:"0" validate:"min=1" doc:"x"`
	}
	type dup struct {
		A string `key:"a" doc:"x"`
		B string `key:"a" doc:"y"`
	}
	for name, err := range map[string]error{
		"type":    func() error { _, err := ParseConfig[noType](nil); return err }(),
		"default": func() error { _, err := ParseConfig[badDefault](nil); return err }(),
		"dup":     func() error { _, err := ParseConfig[dup](nil); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckHostVersions(t *testing.T) {
	if err := checkHostVersions("2"); err != nil {
		t.Error(err)
	}
	if err := checkHostVersions("3,2,1"); err != nil {
		t.Error(err)
	}
	// Version 1 hosts wait for each Put's answer: this SDK's dropping of
	// records sent before a rewind was applied needs version 2.
	err := checkHostVersions("1,3")
	if err == nil || !strings.Contains(err.Error(), "incompatible plugin protocol") || !strings.Contains(err.Error(), "[1 3]") {
		t.Errorf("no shared version: %v", err)
	}
}

func TestRetriableAndSafeCall(t *testing.T) {
	err := Retriable(context.DeadlineExceeded)
	if !IsRetriable(err) || IsRetriable(context.Canceled) || Retriable(nil) != nil {
		t.Error("Retriable marks")
	}
	err = SafeCall(func() error { panic("oops") })
	pe, ok := err.(*PanicError)
	if !ok || pe.Error() != "panic: oops" || !strings.Contains(pe.Stack, "TestRetriableAndSafeCall") {
		t.Errorf("SafeCall: %v", err)
	}
	f := failure(err)
	if f.GetMessage() != "panic: oops" || !strings.Contains(f.GetTrace(), "goroutine") {
		t.Errorf("failure %v", f)
	}
}

func TestOffsetInt64(t *testing.T) {
	o := Offset{"a": int64(1 << 60), "b": float64(7), "c": json.Number("9007199254740993"), "d": "x", "e": 1.5}
	if v, ok := o.Int64("a"); !ok || v != 1<<60 {
		t.Error("int64")
	}
	if v, ok := o.Int64("b"); !ok || v != 7 {
		t.Error("float64")
	}
	if v, ok := o.Int64("c"); !ok || v != 9007199254740993 {
		t.Error("json.Number above 2^53")
	}
	if _, ok := o.Int64("d"); ok {
		t.Error("string")
	}
	if _, ok := o.Int64("e"); ok {
		t.Error("fraction")
	}
	var none Offset
	if _, ok := none.Int64("a"); ok {
		t.Error("nil offset")
	}
}

// TestRegexAndListValidators: a regex= pattern may hold commas (it takes
// the rest of the tag), and enum= and regex= check each element of a list.
func TestRegexAndListValidators(t *testing.T) {
	type cfg struct {
		Code  string   `key:"code" default:"ab" validate:"nonempty,regex=^[a-z]{1,3}$"`
		Modes []string `key:"modes" default:"a" validate:"enum=a|b"`
		Names []string `key:"names" optional:"" validate:"regex=^[a-z]+(,[a-z]+)*$"`
	}
	c := SourceConnector[cfg]{Class: "com.example.Regex", NewTask: func(cfg) SourceTask { return nil }}
	_ = c.Spec() // panicked on the comma inside the pattern
	infos, err := c.Validate(context.Background(), map[string]string{"code": "abcd", "modes": "a,c", "names": "x,Y"})
	if err != nil {
		t.Fatal(err)
	}
	errs := infos.Errors()
	for k, want := range map[string]string{
		"code":  "String must match ^[a-z]{1,3}$",
		"modes": "String must be one of: a, b",
		"names": "String must match ^[a-z]+(,[a-z]+)*$",
	} {
		if len(errs[k]) != 1 || !strings.HasSuffix(errs[k][0], want) {
			t.Errorf("%s: %v, want one error ending %q", k, errs[k], want)
		}
	}
	if infos, _ = c.Validate(context.Background(), map[string]string{"code": "abc", "modes": "a,b", "names": "x,y"}); infos.ErrorCount != 0 {
		t.Errorf("valid config refused: %v", infos.Errors())
	}
}
