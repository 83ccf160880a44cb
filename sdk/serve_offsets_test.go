package sdk

import (
	"context"
	"errors"
	"testing"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// TestAlterOffsetsRPC: the plugin side of AlterOffsets reads numbers as
// Kafka Connect's JsonConverter does and reports each kind of answer.
func TestAlterOffsetsRPC(t *testing.T) {
	type cfg struct {
		Mode string `key:"mode" default:"ok" doc:"m"`
	}
	var got []SourceOffset
	withHook := SourceConnector[cfg]{Class: "a.Hooked", NewTask: func(cfg) SourceTask { return nil },
		AlterOffsets: func(_ context.Context, c cfg, offs []SourceOffset) error {
			got = offs
			switch c.Mode {
			case "refuse":
				return errors.New("no, thanks")
			case "unsupported":
				return ErrOffsetsUnsupported
			}
			return nil
		}}
	without := SourceConnector[cfg]{Class: "a.Plain", NewTask: func(cfg) SourceTask { return nil }}
	s, err := newServer(nil, []Connector{withHook, without})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	body := []byte(`[{"partition":{"p":"x","n":3},"offset":{"i":5,"f":5.0,"e":1e3,"big":9223372036854775808,"max":9223372036854775807}},{"partition":{"p":"y"},"offset":null}]`)
	resp, err := s.AlterOffsets(ctx, &pluginpb.AlterOffsetsRequest{Class: "a.Hooked", SourceOffsetsJson: body})
	if err != nil || !resp.GetAccepted() {
		t.Fatalf("accepted: %v %v", resp, err)
	}
	want := map[string]any{"i": int64(5), "f": 5.0, "e": 1000.0, "big": 9223372036854775808.0, "max": int64(9223372036854775807)}
	for k, v := range want {
		if got[0].Offset[k] != v {
			t.Errorf("offset %s = %#v, want %#v", k, got[0].Offset[k], v)
		}
	}
	if got[0].Partition["n"] != int64(3) || got[1].Offset != nil {
		t.Errorf("partitions/reset: %#v", got)
	}
	resp, _ = s.AlterOffsets(ctx, &pluginpb.AlterOffsetsRequest{Class: "a.Hooked", Config: map[string]string{"mode": "refuse"}, SourceOffsetsJson: body})
	if resp.GetRefused().GetMessage() != "no, thanks" || resp.GetAccepted() {
		t.Errorf("refused: %v", resp)
	}
	resp, _ = s.AlterOffsets(ctx, &pluginpb.AlterOffsetsRequest{Class: "a.Hooked", Config: map[string]string{"mode": "unsupported"}})
	if !resp.GetUnsupported() {
		t.Errorf("unsupported: %v", resp)
	}
	resp, err = s.AlterOffsets(ctx, &pluginpb.AlterOffsetsRequest{Class: "a.Plain", SourceOffsetsJson: body})
	if err != nil || resp.GetAccepted() || resp.GetRefused() != nil || resp.GetUnsupported() {
		t.Errorf("no hook: %v %v; want an empty answer", resp, err)
	}
}

// FuzzDecodeOffsetChange: whatever source_offsets_json a host sends, the
// plugin answers with a change or an error, never a panic, and every
// number it hands the connector is an int64 or a float64 as Kafka
// Connect's JsonConverter makes them.
func FuzzDecodeOffsetChange(f *testing.F) {
	for _, s := range []string{
		`[{"partition":{"filename":"/tmp/a"},"offset":{"position":5}}]`,
		`[{"partition":{"a":[1,2.5,{"b":1e3}]},"offset":null}]`,
		`[{"partition":null,"offset":{"x":99999999999999999999}}]`,
		`[]`, `null`, `{}`, `[1]`, `[{"partition":[1]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ch, err := decodeOffsetChange(&pluginpb.AlterOffsetsRequest{SourceOffsetsJson: b})
		if err != nil {
			return
		}
		var check func(v any)
		check = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for _, e := range x {
					check(e)
				}
			case []any:
				for _, e := range x {
					check(e)
				}
			case nil, bool, string, int64, float64:
			default:
				t.Fatalf("%s: a %T reached the connector", b, v)
			}
		}
		for _, o := range ch.Source {
			check(map[string]any(o.Partition))
			check(map[string]any(o.Offset))
		}
	})
}
