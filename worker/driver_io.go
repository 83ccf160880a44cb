package worker

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/herder"
	"github.com/tributary-dev/tributary/worker/store"
)

// statusWriter performs status writes in order. A worker whose membership
// lease is over writes none: another worker may own the work by now.
func (d *driver) statusWriter(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.statusQ.notify:
		}
		batch := d.statusQ.drain()
		if len(batch) == 0 {
			continue
		}
		if d.member != nil && d.member.Lease() <= 0 {
			n := 0
			for _, a := range batch {
				if r, ok := a.(herder.Reply); ok {
					d.deliver(r.To, r.Result)
				} else {
					n++
					d.statusesPending.Add(-1)
				}
			}
			d.logger.Warn("membership lease over: status updates dropped", "count", n)
			continue
		}
		// putSafe compares with the newest statuses: read them first.
		rctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
		d.statuses.Refresh(rctx)
		cancel()
		for _, a := range batch {
			d.writeStatus(ctx, a)
			if _, reply := a.(herder.Reply); !reply {
				d.statusesPending.Add(-1)
			}
		}
	}
}

func (d *driver) writeStatus(ctx context.Context, a herder.Action) {
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	switch a := a.(type) {
	case herder.Reply:
		d.deliver(a.To, a.Result)
	case herder.PutStatus:
		var err error
		if a.Task < 0 {
			err = d.statuses.PutConnector(ctx, a.Connector, ConnectorState{State: a.State, WorkerID: d.workerID, Trace: d.secrets.Scrub(a.Trace)}, a.Generation)
		} else {
			err = d.statuses.PutTask(ctx, TaskID{Connector: a.Connector, Task: a.Task}, TaskState{ID: a.Task, State: a.State, WorkerID: d.workerID, Trace: d.secrets.Scrub(a.Trace)}, a.Generation)
		}
		if err != nil {
			d.connLogger(a.Connector).Warn("writing a status failed", "task", a.Task, "state", a.State, "err", err)
		}
	case herder.CleanStatuses:
		d.cleanStatuses(ctx, a.Tasks)
	}
}

// cleanStatuses tombstones the statuses of connectors no longer in the
// config topic (their tasks' and active topics' too) and of tasks beyond
// their connector's task count, as Kafka Connect's leader does after a
// rebalance (updateDeletedConnectorStatus, updateDeletedTaskStatus). A
// connector or task counts as there if the herder's view (counts) or the
// config topic as read now has it.
func (d *driver) cleanStatuses(ctx context.Context, counts map[string]int) {
	snap := d.configs.Snapshot()
	for name, tasks := range d.statuses.All() {
		n, known := counts[name]
		count, exists := max(n, len(snap.Tasks[name])), known || snap.Connectors[name] != nil
		for _, id := range tasks {
			if !exists || id >= count {
				if err := d.statuses.DeleteTask(ctx, TaskID{Connector: name, Task: id}); err != nil {
					d.connLogger(name).Warn("deleting a task status failed", "task", id, "err", err)
				}
			}
		}
		if !exists {
			if err := d.statuses.DeleteConnector(ctx, name, 0); err != nil {
				d.connLogger(name).Warn("deleting statuses failed", "err", err)
			}
		}
	}
}

// configWriter writes config-topic changes, everything queued at once in
// one produce and one read-back, and reports each as Done.
func (d *driver) configWriter(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.writeQ.notify:
		}
		batch := d.writeQ.drain()
		if len(batch) == 0 {
			continue
		}
		var ws []store.Write
		for _, a := range batch {
			for _, w := range a.Writes {
				ws = append(ws, toStoreWrite(w))
			}
		}
		err := d.applyWrites(ctx, ws)
		var tooBig *store.RecordTooLargeError
		if errors.As(err, &tooBig) && len(batch) > 1 {
			// Nothing of the batch was written: one change too large must
			// not fail the others with it.
			for _, a := range batch {
				var ws []store.Write
				for _, w := range a.Writes {
					ws = append(ws, toStoreWrite(w))
				}
				err := d.writeError(d.applyWrites(ctx, ws))
				d.generatedWriteFailed(a, err)
				d.configQ.push(configEvent{done: &herder.Done{Op: a.Op, Err: coreErr(err)}})
			}
			continue
		}
		err = d.writeError(err)
		for _, a := range batch {
			d.generatedWriteFailed(a, err)
			d.configQ.push(configEvent{done: &herder.Done{Op: a.Op, Err: coreErr(err)}})
		}
	}
}

// generatedWriteFailed tells the core about the task configs of a that a
// connector generated and that could not be written: too large, the
// connector fails (writing them again cannot succeed); otherwise it
// generates them again a little later.
func (d *driver) generatedWriteFailed(a herder.WriteConfigs, err error) {
	if err == nil {
		return
	}
	for _, w := range a.Writes {
		if w.Kind != herder.WriteTasks || w.Run == 0 {
			continue
		}
		if KindOf(err) == KindTooLarge {
			d.connLogger(w.Name).Error("the connector's task configs are too large for the config topic; the connector fails", "err", err)
			d.send(herder.ConnectorFailed{Name: w.Name, Run: w.Run, Trace: err.Error()})
			continue
		}
		d.connLogger(w.Name).Warn("writing task configs failed; generating them again shortly", "err", err)
		d.goBg(func() {
			select {
			case <-time.After(time.Second):
				d.send(herder.ReconfigurationRequested{Name: w.Name, Run: w.Run})
			case <-d.ctx.Done():
			}
		})
	}
}

func (d *driver) applyWrites(ctx context.Context, ws []store.Write) error {
	wctx, cancel := context.WithTimeout(ctx, configWriteTimeout)
	defer cancel()
	return d.configs.Apply(wctx, ws)
}

// configWriteTimeout bounds a batch of config writes.
const configWriteTimeout = 30 * time.Second

// writeError is the answer to a config write that failed: a record larger
// than the config topic takes is a 413 (nothing was written); otherwise
// the records may have been stored or not (a broker that did not answer).
func (d *driver) writeError(err error) error {
	if err == nil {
		return nil
	}
	var e *store.RecordTooLargeError
	if errors.As(err, &e) {
		return &Error{Kind: KindTooLarge, Err: err, Message: fmt.Sprintf(
			"The configuration is %d bytes once stored, more than the %d bytes the config topic %s takes (its max.message.bytes); nothing was written. "+
				"Make the configuration smaller, or raise max.message.bytes of %s.", e.Bytes, e.Limit, e.Topic, e.Topic)}
	}
	d.logger.Error("writing to the config topic failed", "topic", d.cfg.ConfigTopic, "err", err)
	return &Error{Kind: KindInternal, Err: err, Message: fmt.Sprintf(
		"Writing to the config topic %s failed, and the change may or may not have been stored (GET /connectors/{name}/config shows which): %v", d.cfg.ConfigTopic, err)}
}

func toStoreWrite(w herder.Write) store.Write {
	sw := store.Write{Name: w.Name, Config: w.Config, Target: store.TargetState(w.Target), Tasks: w.Tasks,
		Restart: store.RestartRequest{IncludeTasks: w.IncludeTasks, OnlyFailed: w.OnlyFailed}}
	switch w.Kind {
	case herder.WriteConnector:
		sw.Kind = store.WriteConnector
	case herder.WriteTarget:
		sw.Kind = store.WriteTarget
	case herder.WriteTasks:
		sw.Kind = store.WriteTasks
	case herder.WriteRestart:
		sw.Kind = store.WriteRestart
	case herder.WriteTaskCount:
		sw.Kind, sw.TaskCount = store.WriteTaskCount, w.TaskCount
	case herder.WriteSessionKey:
		sw.Kind = store.WriteSessionKey
		key := make([]byte, 32) // KeyGenerator("HmacSHA256")'s default size
		rand.Read(key)
		sw.Key = store.SessionKey{Key: key, Algorithm: signatureAlgorithm, Created: time.Now().UnixMilli()}
	}
	return sw
}

// coreErr gives the herder core an *Error as its own kind of error, so
// that its status code reaches the client.
func coreErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &herder.Error{Code: int(e.Kind), Message: e.Message}
	}
	return err
}

// Internal requests between workers (KIP-507): a follower POSTs the task
// configs its connector generated to the leader, signed with the session
// key of the config topic.
const (
	signatureHeader          = "X-Connect-Authorization"
	signatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
	signatureAlgorithm       = "HmacSHA256"
)

// Signature is an internal request's signature: its headers and the raw
// body they sign.
type Signature struct {
	Algorithm string // X-Connect-Request-Signature-Algorithm
	Value     string // X-Connect-Authorization (base64)
	Body      []byte
}

func sign(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// checkSignature is DistributedHerder.requestNotSignedProperly: nil when
// the group does not sign requests or the signature is right.
func (d *driver) checkSignature(sig *Signature) error {
	if !d.sessioned.Load() {
		return nil
	}
	return verifySignature(sig, d.configs.SessionKey())
}

// verifySignature checks an internal request's signature with the session
// key (nil: none read yet).
func verifySignature(sig *Signature, key *store.SessionKey) error {
	if sig == nil || sig.Algorithm == "" || sig.Value == "" {
		return Errorf(KindBadRequest, "Internal request missing required signature")
	}
	if sig.Algorithm != signatureAlgorithm {
		return Errorf(KindBadRequest, "This worker does not support the '%s' key signing algorithm used by other workers. This worker is currently configured to use: [%s]. Check that all workers' configuration files permit the same set of signature algorithms, and correct any misconfigured worker and restart it.", sig.Algorithm, signatureAlgorithm)
	}
	got, err := base64.StdEncoding.DecodeString(sig.Value)
	if err != nil {
		return Errorf(KindBadRequest, "Illegal base64 character in the request signature: %v", err)
	}
	if key == nil {
		return Errorf(KindUnavailable, "This worker is still starting up and has not been able to read a session key from the config topic yet")
	}
	want, _ := base64.StdEncoding.DecodeString(sign(key.Key, sig.Body))
	if !hmac.Equal(got, want) {
		return Errorf(KindForbidden, "Internal request contained invalid signature.")
	}
	return nil
}

// forwardClient is the HTTP client for requests to other workers.
type forwardClient struct{ *http.Client }

func newForwardClient() forwardClient {
	return forwardClient{&http.Client{Timeout: 60 * time.Second}}
}

// sendTaskConfigs POSTs a connector's task configs to the leader.
func (d *driver) sendTaskConfigs(a herder.SendTaskConfigs) error {
	body, err := json.Marshal(a.Configs)
	if err != nil {
		return err
	}
	u := a.LeaderURL + "/connectors/" + url.PathEscape(a.Name) + "/tasks"
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.Signed {
		key := d.configs.SessionKey()
		if key == nil {
			return errors.New("no session key in the config topic yet to sign the request with")
		}
		req.Header.Set(signatureHeader, sign(key.Key, body))
		req.Header.Set(signatureAlgorithmHeader, signatureAlgorithm)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", u, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: the leader answered %s: %s", u, resp.Status, msg)
	}
	return nil
}

// offsetsChange is the payload of a ModifyOffsets request.
type offsetsChange struct {
	reset   bool
	offsets ConnectorOffsets
}

// modifyOffsets alters or resets a stopped connector's offsets: the
// consumer group's of a sink, the offsets topic's of a source. The
// connector decides first (Kafka Connect's alterOffsets, a reset being
// every stored partition to null); nothing is written unless it agrees.
func (d *driver) modifyOffsets(a herder.ModifyOffsetsAction) (string, error) {
	ch := a.Payload.(offsetsChange)
	ctx, cancel := context.WithTimeout(d.ctx, 60*time.Second)
	defer cancel()
	group := "connect-" + a.Name
	sink := d.connectorType(a.Config) == "sink"
	// A sink's partitions and offsets are checked as they are parsed below.
	if !ch.reset && !sink {
		if err := checkSourceOffsets(ch.offsets.Offsets); err != nil {
			return "", err
		}
	}
	op := "altered"
	var change sdk.OffsetChange
	switch {
	case ch.reset && sink:
		op = "reset"
		offs, err := d.groups.Fetch(ctx, group)
		if err != nil {
			return "", err
		}
		change.Sink = map[sdk.TopicPartition]*int64{}
		for tp := range offs {
			change.Sink[tp] = nil
		}
	case ch.reset:
		op = "reset"
		change.Source = []sdk.SourceOffset{}
		for _, o := range d.offsets.All(a.Name) {
			change.Source = append(change.Source, sdk.SourceOffset{Partition: o.Partition})
		}
	case sink:
		change.Sink = map[sdk.TopicPartition]*int64{}
		for _, po := range ch.offsets.Offsets {
			tp, err := sinkPartition(po.Partition)
			if err != nil {
				return "", err
			}
			if po.Offset == nil {
				change.Sink[tp] = nil
				continue
			}
			off, err := sinkOffset(po.Offset)
			if err != nil {
				return "", err
			}
			change.Sink[tp] = &off
		}
	default:
		for _, po := range ch.offsets.Offsets {
			if po.Partition == nil {
				return "", Errorf(KindBadRequest, "The partition for a source connector offset cannot be null or missing")
			}
			so := sdk.SourceOffset{Partition: sdk.Partition(ConnectNumbers(po.Partition))}
			if po.Offset != nil {
				so.Offset = sdk.Offset(ConnectNumbers(po.Offset))
			}
			change.Source = append(change.Source, so)
		}
	}
	accepted, err := d.approveOffsets(ctx, a.Name, a.Config, sink, change)
	if err != nil {
		return "", err
	}
	if sink {
		commit := map[sdk.TopicPartition]int64{}
		var del []sdk.TopicPartition
		for tp, off := range change.Sink {
			if off == nil {
				del = append(del, tp)
			} else {
				commit[tp] = *off
			}
		}
		if len(commit) > 0 {
			if err := d.groups.Commit(ctx, group, commit); err != nil {
				return "", err
			}
		}
		if len(del) > 0 {
			if err := d.groups.Delete(ctx, group, del); err != nil {
				return "", err
			}
		}
	} else {
		if len(change.Source) > 0 {
			if err := d.offsets.WriteOffsets(ctx, a.Name, change.Source); err != nil {
				return "", err
			}
		}
		if ch.reset {
			// Records that cannot be read are tombstoned too: the
			// connector can run again.
			if err := d.offsets.ClearProblems(ctx, a.Name); err != nil {
				return "", err
			}
		}
	}
	return offsetsMessage(accepted, op), nil
}

// approveOffsets asks the connector of name (a sink or a source) about a
// change to its offsets, and turns a refusal into the REST answer: the
// connector's message (a 400, where Kafka Connect answers 500 with it), or
// Kafka Connect's message for a connector that does not support the change.
func (d *driver) approveOffsets(ctx context.Context, name string, config map[string]string, sink bool, change sdk.OffsetChange) (bool, error) {
	l, err := d.loader()
	if err != nil {
		return false, err
	}
	class := config["connector.class"]
	if spec, err := l.Spec(class); err == nil {
		class = spec.Class
	}
	accepted, err := l.AlterOffsets(ctx, class, name, maps.Clone(config), change)
	var refused *plugins.OffsetsRefusedError
	kind := "source"
	if sink {
		kind = "sink"
	}
	switch {
	case err == nil:
		return accepted, nil
	case errors.As(err, &refused):
		return false, &Error{Kind: KindBadRequest, Message: refused.Message, Err: err}
	case errors.Is(err, sdk.ErrOffsetsUnsupported):
		return false, &Error{Kind: KindBadRequest, Err: err, Message: fmt.Sprintf(
			"Failed to modify offsets for connector %s because it doesn't support external modification of offsets", name)}
	}
	return false, &Error{Kind: KindInternal, Err: err, Message: fmt.Sprintf("Failed to modify offsets for %s connector %s: %v", kind, name, err)}
}

// offsetsMessage is Kafka Connect's answer to an offsets change (op is
// "altered" or "reset"), depending on whether the connector's hook
// accepted it or the connector has none.
func offsetsMessage(accepted bool, op string) string {
	if accepted {
		return "The offsets for this connector have been " + op + " successfully"
	}
	return "The Connect framework-managed offsets for this connector have been " + op +
		" successfully. However, if this connector manages offsets externally, they will need to be manually " +
		op + " in the system that the connector uses."
}

// ConnectNumbers returns m with the json.Numbers of a REST body (decoded
// with UseNumber) made int64 (integers written without a fraction or
// exponent, that fit) or float64: the Long and Double that Kafka Connect's
// JsonConverter gives a connector's alterOffsets.
func ConnectNumbers(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonNumber(v)
	}
	return out
}

func jsonNumber(v any) any {
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
		return ConnectNumbers(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonNumber(e)
		}
		return out
	}
	return v
}
