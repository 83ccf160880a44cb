package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/worker/herder"
	"github.com/tributary-dev/tributary/worker/task"
)

// The driver's side of exactly-once source support (KIP-618): fencing
// producers for the leader's rounds of zombie fencing, claiming the config
// topic's transactional producer, a task's preflight.

// fenceTimeout bounds a round of fencing (Kafka Connect's REST request
// timeout, which its FenceProducersOptions take).
const fenceTimeout = 90 * time.Second

// TransactionalID is the transactional.id of a source task's producer
// with exactly-once support: <group.id>-<connector>-<task>
// (Worker.taskTransactionalId).
func TransactionalID(group, connector string, task int) string {
	return group + "-" + connector + "-" + strconv.Itoa(task)
}

// LeaderTransactionalID is the transactional.id of the leader's producer
// of the config topic: connect-cluster-<group.id>.
func LeaderTransactionalID(group string) string { return "connect-cluster-" + group }

// fenceProducers fences the producers of a source connector's tasks 0 to
// a.Tasks-1: an InitProducerId for each transactional id, which bumps its
// epoch and aborts its open transaction (Admin.fenceProducers), through a
// client with the connector's admin settings.
func (d *driver) fenceProducers(a herder.FenceProducers) error {
	log := d.connLogger(a.Name)
	ctx, cancel := context.WithTimeout(d.ctx, fenceTimeout)
	defer cancel()
	if d.adminOpts == nil {
		return errors.New("worker: no admin client to fence producers with")
	}
	opts, err := d.adminOpts(a.Name, a.Config)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(append(opts, kgo.ClientID("connector-worker-adminclient-"+a.Name))...)
	if err != nil {
		return fmt.Errorf("worker: admin client for fencing %s: %w", a.Name, err)
	}
	defer cl.Close()
	began := time.Now()
	for i := range a.Tasks {
		if err := fenceProducer(ctx, cl, TransactionalID(d.cfg.GroupID, a.Name, i)); err != nil {
			return err
		}
	}
	log.Info("fenced out the task producers of older generations", "tasks", a.Tasks, "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// fenceProducer is FenceProducersHandler: InitProducerId{id, pid -1, epoch
// -1} at the transaction coordinator (kgo routes a request with a
// transactional id there), retried while the coordinator is loading,
// moving, or busy ending the transaction it aborts.
func fenceProducer(ctx context.Context, cl *kgo.Client, id string) error {
	backoff := 50 * time.Millisecond
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.ProducerID, req.ProducerEpoch = -1, -1
		req.TransactionTimeoutMillis = int32(fenceTimeout.Milliseconds())
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kerr.CoordinatorLoadInProgress), errors.Is(err, kerr.ConcurrentTransactions),
			errors.Is(err, kerr.NotCoordinator), errors.Is(err, kerr.CoordinatorNotAvailable), kerr.IsRetriable(err):
		default:
			return fmt.Errorf("worker: fence the producer %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("worker: fence the producer %s: %w (last: %v)", id, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// claimWrites claims (or gives up) the config topic's transactional
// producer as the worker becomes (or stops being) the leader; a claim that
// fails is logged, and the next write claims again.
func (d *driver) claimWrites(claim bool) {
	if !claim {
		d.configs.RelinquishWritePrivileges()
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	if err := d.configs.ClaimWritePrivileges(ctx); err != nil {
		d.logger.Warn("claiming write privileges on the config topic failed; the next write tries again", "err", err)
	}
}

// FenceZombies is the internal PUT /connectors/{name}/fence: another
// worker's task of the connector starts, and only the leader fences.
func (d *driver) FenceZombies(ctx context.Context, name string, sig *Signature) error {
	if err := d.backendsReady(); err != nil {
		return err
	}
	if err := d.checkSignature(sig); err != nil {
		return err
	}
	if err := d.SyncConfigs(ctx); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.FenceZombies{Name: name})
	return err
}

// preflight is what an exactly-once source task does before its producer
// starts (the herder's preflightCheck): a round of zombie fencing at the
// leader, here or through the leader's internal endpoint. A round that
// met a rebalance (here, or at the leader) is asked for again, for up to
// fenceTimeout: the task was assigned in the generation the rebalance
// ends, and failing it would leave it failed in a group that is fine.
func (d *driver) preflight(ctx context.Context, id TaskID) error {
	deadline := time.Now().Add(fenceTimeout)
	for {
		err := d.fenceOnce(ctx, id)
		if err == nil {
			return nil
		}
		if !rebalanceConflict(err) || time.Now().After(deadline) {
			return &task.ConnectError{Message: "Failed to perform round of zombie fencing", Cause: err}
		}
		d.connLogger(id.Connector).Info("zombie fencing met a rebalance; asking again", "task", id.Task, "err", err)
		select {
		case <-ctx.Done():
			return &task.ConnectError{Message: "Failed to perform round of zombie fencing", Cause: ctx.Err()}
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// fenceOnce asks for one round of zombie fencing, of the core when this
// worker leads, else of the leader.
func (d *driver) fenceOnce(ctx context.Context, id TaskID) error {
	if err := d.SyncConfigs(ctx); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.FenceZombies{Name: id.Connector})
	var e *Error
	if !errors.As(err, &e) || e.Forward == "" {
		return err
	}
	d.connLogger(id.Connector).Debug("forwarding the zombie fencing request to the leader", "task", id.Task, "leader", e.Forward)
	return d.forwardFence(ctx, e.Forward, id.Connector)
}

// fenceAnswerError is the leader's error answer to a forwarded fencing.
type fenceAnswerError struct {
	url    string
	status int
	body   string
}

func (e *fenceAnswerError) Error() string {
	return fmt.Sprintf("PUT %s: the leader answered %d: %s", e.url, e.status, e.body)
}

// rebalanceConflict reports whether err is Kafka Connect's 409 for a
// request that met a rebalance, from this worker's core or the leader.
func rebalanceConflict(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind == KindConflict && e.Forward == "" && e.Message == herder.MsgConflict
	}
	var fe *fenceAnswerError
	return errors.As(err, &fe) && fe.status == http.StatusConflict && strings.Contains(fe.body, herder.MsgConflict)
}

// forwardFence asks the leader at leaderURL for a round of zombie fencing:
// PUT /connectors/{name}/fence, signed with the session key when the group
// signs internal requests.
func (d *driver) forwardFence(ctx context.Context, leaderURL, name string) error {
	u := leaderURL + "/connectors/" + url.PathEscape(name) + "/fence"
	ctx, cancel := context.WithTimeout(ctx, fenceTimeout+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(nil))
	if err != nil {
		return err
	}
	if d.sessioned.Load() {
		key := d.configs.SessionKey()
		if key == nil {
			return errors.New("no session key in the config topic yet to sign the request with")
		}
		req.Header.Set(signatureHeader, sign(key.Key, nil))
		req.Header.Set(signatureAlgorithmHeader, signatureAlgorithm)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("PUT %s: %w", u, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		return &fenceAnswerError{url: u, status: resp.StatusCode, body: string(msg)}
	}
	return nil
}

// verifyTask is what an exactly-once source task does once its producer
// is initialized (verifyTaskGenerationAndOwnership): its task configs are
// still of generation, and it is still assigned here.
func (d *driver) verifyTask(ctx context.Context, id TaskID, generation int) error {
	if err := d.SyncConfigs(ctx); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.VerifyTask{ID: herder.TaskID{Connector: id.Connector, Task: id.Task}, Generation: generation})
	return err
}
