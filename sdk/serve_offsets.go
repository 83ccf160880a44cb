package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// AlterOffsets serves the protocol's AlterOffsets: it asks the connector's
// hook (OffsetApprover) about a change to a stopped instance's offsets.
func (s *server) AlterOffsets(ctx context.Context, req *pluginpb.AlterOffsetsRequest) (*pluginpb.AlterOffsetsResponse, error) {
	c, err := s.find(req.GetClass())
	if err != nil {
		return nil, err
	}
	oa, ok := c.(OffsetApprover)
	if !ok {
		return &pluginpb.AlterOffsetsResponse{}, nil
	}
	change, err := decodeOffsetChange(req)
	if err != nil {
		return nil, err
	}
	accepted, err := oa.ApproveOffsets(ctx, req.GetConfig(), change)
	var pe *PanicError
	switch {
	case errors.As(err, &pe):
		s.logger.Error("AlterOffsets panicked", "connector", req.GetConnector(), "panic", pe.Value, "stack", pe.Stack)
		return nil, fmt.Errorf("sdk: %s: AlterOffsets: %w", req.GetClass(), err)
	case errors.Is(err, ErrOffsetsUnsupported):
		return &pluginpb.AlterOffsetsResponse{Unsupported: true}, nil
	case err != nil:
		return &pluginpb.AlterOffsetsResponse{Refused: &pluginpb.Failure{Message: err.Error(), Trace: err.Error()}}, nil
	}
	return &pluginpb.AlterOffsetsResponse{Accepted: accepted}, nil
}

// decodeOffsetChange reads the change an AlterOffsetsRequest carries.
func decodeOffsetChange(req *pluginpb.AlterOffsetsRequest) (OffsetChange, error) {
	var ch OffsetChange
	if b := req.GetSourceOffsetsJson(); len(b) > 0 {
		var raw []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return ch, fmt.Errorf("sdk: AlterOffsets: source offsets: %w", err)
		}
		for _, r := range raw {
			so := SourceOffset{Partition: Partition(jsonNumbers(r.Partition).(map[string]any))}
			if r.Offset != nil {
				so.Offset = Offset(jsonNumbers(r.Offset).(map[string]any))
			}
			ch.Source = append(ch.Source, so)
		}
	}
	if len(req.GetSinkOffsets())+len(req.GetSinkResets()) > 0 {
		ch.Sink = map[TopicPartition]*int64{}
		for _, tp := range req.GetSinkOffsets() {
			off := tp.GetOffset()
			ch.Sink[TopicPartition{Topic: tp.GetTopic(), Partition: tp.GetPartition()}] = &off
		}
		for _, tp := range req.GetSinkResets() {
			ch.Sink[TopicPartition{Topic: tp.GetTopic(), Partition: tp.GetPartition()}] = nil
		}
	}
	return ch, nil
}

// jsonNumbers replaces the json.Numbers in v (decoded with UseNumber) by
// int64 for integers written without a fraction or exponent that fit, and
// float64 for the others: what Kafka Connect's JsonConverter makes of them
// (Long and Double).
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case map[string]any:
		if x == nil {
			return x
		}
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
		return x
	}
	return v
}
