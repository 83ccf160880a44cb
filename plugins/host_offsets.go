package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// AlterOffsets implements Loader. It starts a short-lived plugin process,
// as Validate does.
func (h *Host) AlterOffsets(ctx context.Context, class, name string, config map[string]string, change sdk.OffsetChange) (bool, error) {
	pi, err := h.find(class)
	if err != nil {
		return false, err
	}
	req := &pluginpb.AlterOffsetsRequest{Class: pi.Spec.Class, Connector: name, Config: config}
	if change.Source != nil {
		if req.SourceOffsetsJson, err = encodeSourceOffsets(change.Source); err != nil {
			return false, fmt.Errorf("plugins: alter offsets of %s: %w", name, err)
		}
	}
	for tp, off := range change.Sink {
		m := &pluginpb.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
		if off == nil {
			req.SinkResets = append(req.SinkResets, m)
			continue
		}
		m.Offset = *off
		req.SinkOffsets = append(req.SinkOffsets, m)
	}
	p, err := h.launch(ctx, pi.Command, h.pluginLogs(pi.Spec.Class, "connector", name))
	if err != nil {
		return false, err
	}
	defer p.kill()
	resp, err := p.rpc.AlterOffsets(ctx, req)
	accepted, err := offsetsAnswer(resp, err)
	if err != nil && !errors.Is(err, sdk.ErrOffsetsUnsupported) && !errors.As(err, new(*OffsetsRefusedError)) {
		return false, p.wrap(fmt.Errorf("plugins: alter offsets of %s: %w", name, plainError(err)))
	}
	return accepted, err
}

// offsetsAnswer turns the plugin's answer to AlterOffsets (or the error of
// the call) into Loader.AlterOffsets' results.
func offsetsAnswer(resp *pluginpb.AlterOffsetsResponse, err error) (bool, error) {
	switch {
	case status.Code(err) == codes.Unimplemented:
		// A plugin built before the question: a connector without the hook.
		return false, nil
	case err != nil:
		return false, err
	case resp.GetUnsupported():
		return false, sdk.ErrOffsetsUnsupported
	case resp.GetRefused() != nil:
		return false, &OffsetsRefusedError{Message: resp.GetRefused().GetMessage()}
	}
	return resp.GetAccepted(), nil
}

// encodeSourceOffsets writes source offsets as the protocol's
// source_offsets_json: every float64 keeps a fraction or an exponent, so
// that the plugin reads 5.0 back as a float and 5 as an integer.
func encodeSourceOffsets(offs []sdk.SourceOffset) ([]byte, error) {
	type pair struct {
		Partition any `json:"partition"`
		Offset    any `json:"offset"`
	}
	out := make([]pair, len(offs))
	for i, o := range offs {
		out[i].Partition = floatsKept(map[string]any(o.Partition))
		if o.Offset != nil {
			out[i].Offset = floatsKept(map[string]any(o.Offset))
		}
	}
	return json.Marshal(out)
}

// floatsKept returns v with every float64 (and float32) replaced by a
// json.Number that reads back as a float.
func floatsKept(v any) any {
	switch x := v.(type) {
	case float64:
		return floatNumber(x, 64)
	case float32:
		return floatNumber(float64(x), 32)
	case map[string]any:
		if x == nil {
			return nil
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = floatsKept(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = floatsKept(e)
		}
		return a
	}
	return v
}

func floatNumber(f float64, bits int) json.Number {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eEIN") { // IN: Inf and NaN, which JSON cannot hold anyway
		s += ".0"
	}
	return json.Number(s)
}
