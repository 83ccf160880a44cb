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
	"slices"
	"time"

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
			err = d.statuses.PutConnector(ctx, a.Connector, ConnectorState{State: a.State, WorkerID: d.workerID, Trace: a.Trace}, a.Generation)
		} else {
			err = d.statuses.PutTask(ctx, TaskID{Connector: a.Connector, Task: a.Task}, TaskState{ID: a.Task, State: a.State, WorkerID: d.workerID, Trace: a.Trace}, a.Generation)
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
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := d.configs.Apply(wctx, ws)
		cancel()
		if err != nil {
			d.logger.Error("writing to the config topic failed", "topic", d.cfg.ConfigTopic, "err", err)
			err = Errorf(KindInternal, "Writing to the config topic %s failed: %v", d.cfg.ConfigTopic, err)
		}
		for _, a := range batch {
			d.configQ.push(configEvent{done: &herder.Done{Op: a.Op, Err: coreErr(err)}})
		}
	}
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
// consumer group's of a sink, the offsets topic's of a source.
func (d *driver) modifyOffsets(a herder.ModifyOffsetsAction) (string, error) {
	ch := a.Payload.(offsetsChange)
	ctx, cancel := context.WithTimeout(d.ctx, 60*time.Second)
	defer cancel()
	group := "connect-" + a.Name
	sink := d.connectorType(a.Config) == "sink"
	if ch.reset {
		if sink {
			offs, err := d.groups.Fetch(ctx, group)
			if err != nil {
				return "", err
			}
			if len(offs) > 0 {
				if err := d.groups.Delete(ctx, group, slices.Collect(maps.Keys(offs))); err != nil {
					return "", err
				}
			}
		} else {
			var so []sdk.SourceOffset
			for _, o := range d.offsets.All(a.Name) {
				so = append(so, sdk.SourceOffset{Partition: o.Partition})
			}
			if len(so) > 0 {
				if err := d.offsets.WriteOffsets(ctx, a.Name, so); err != nil {
					return "", err
				}
			}
		}
		return "The offsets for this connector have been reset successfully", nil
	}
	if sink {
		commit := map[sdk.TopicPartition]int64{}
		var del []sdk.TopicPartition
		for _, po := range ch.offsets.Offsets {
			tp, err := sinkPartition(po.Partition)
			if err != nil {
				return "", err
			}
			if po.Offset == nil {
				del = append(del, tp)
				continue
			}
			off, err := sinkOffset(po.Offset)
			if err != nil {
				return "", err
			}
			commit[tp] = off
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
		var so []sdk.SourceOffset
		for _, po := range ch.offsets.Offsets {
			if po.Partition == nil {
				return "", Errorf(KindBadRequest, "The partition for a source connector offset cannot be null or missing")
			}
			so = append(so, sdk.SourceOffset{Partition: po.Partition, Offset: po.Offset})
		}
		if err := d.offsets.WriteOffsets(ctx, a.Name, so); err != nil {
			return "", err
		}
	}
	return "The offsets for this connector have been altered successfully", nil
}
