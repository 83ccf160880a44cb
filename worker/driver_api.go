package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/configprovider"
	"github.com/tributary-dev/tributary/internal/kafkaauth"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/herder"
	"github.com/tributary-dev/tributary/worker/store"
	"github.com/tributary-dev/tributary/worker/transform"
)

// The Herder methods the REST API calls.

var (
	_ Herder  = (*driver)(nil)
	_ Cluster = (*driver)(nil)
)

func (d *driver) ServerInfo(ctx context.Context) ServerInfo {
	return ServerInfo{Version: Version, Commit: Commit, KafkaClusterID: d.clusterID}
}

// Version and Commit are reported by GET /; the binary sets them.
var (
	Version = "4.4.0-tributary"
	Commit  = "unknown"
)

func (d *driver) Health(ctx context.Context) error {
	if !d.ready.Load() {
		return d.stillStarting()
	}
	if _, err := d.request(ctx, herder.Ping{}); err != nil {
		return Errorf(KindInternal, "Worker was unable to handle this request and may be unable to handle other requests. %s", err)
	}
	return nil
}

var _ Probes = (*driver)(nil)

// Alive implements Probes.
func (d *driver) Alive(ctx context.Context) error {
	if !d.running.Load() {
		return nil // starting (or stopping): not stuck
	}
	if _, err := d.request(ctx, herder.Ping{}); err != nil && KindOf(err) != KindUnavailable {
		return Errorf(KindInternal, "The worker's herder loop did not answer: %s", err)
	}
	return nil
}

// Ready implements Probes.
func (d *driver) Ready(ctx context.Context) error {
	if !d.ready.Load() || !d.running.Load() {
		return d.stillStarting()
	}
	if d.member != nil && d.member.Lease() <= 0 {
		return Errorf(KindUnavailable, "The worker's membership in group %s has expired; it is rejoining", d.cfg.GroupID)
	}
	if err := d.configs.Refresh(ctx); err != nil {
		return Errorf(KindUnavailable, "The worker cannot read the config topic %s to its end: %v", d.cfg.ConfigTopic, err)
	}
	if _, err := d.request(ctx, herder.Ping{}); err != nil {
		return Errorf(KindUnavailable, "The worker's herder loop did not answer: %s", err)
	}
	return nil
}

// connectors is the config topic as the REST API shows it.
func (d *driver) connectors() map[string]ConnectorSnapshot {
	snap := d.configs.Snapshot()
	out := make(map[string]ConnectorSnapshot, len(snap.Connectors))
	for name, cfg := range snap.Connectors {
		target := TargetStarted
		switch snap.TargetStates[name] {
		case store.TargetState(TargetPaused):
			target = TargetPaused
		case store.TargetState(TargetStopped):
			target = TargetStopped
		}
		out[name] = ConnectorSnapshot{Config: cfg, Target: target, Tasks: snap.Tasks[name]}
	}
	return out
}

// connectorEntry is connectors()[name], copying that connector's entry only.
func (d *driver) connectorEntry(name string) (ConnectorSnapshot, bool) {
	cfg, tasks, ts, ok := d.configs.ConnectorEntry(name)
	if !ok {
		return ConnectorSnapshot{}, false
	}
	target := TargetStarted
	switch ts {
	case store.TargetState(TargetPaused):
		target = TargetPaused
	case store.TargetState(TargetStopped):
		target = TargetStopped
	}
	return ConnectorSnapshot{Config: cfg, Target: target, Tasks: tasks}, true
}

// backendsReady is nil once the internal topics are read (the worker sets
// the backends, then apiReady), and the 503 of a worker still starting
// before: the REST API listens from the start.
func (d *driver) backendsReady() error {
	if d.apiReady.Load() {
		return nil
	}
	return d.stillStarting()
}

func (d *driver) Connectors(ctx context.Context) ([]string, error) {
	if err := d.backendsReady(); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(d.connectors())), nil
}

// pluginLoader wraps a plugins.Loader for herder.pl.
type pluginLoader struct{ plugins.Loader }

// loader returns the plugin loader, or the 503 of a worker still starting
// when it is not yet there (the REST API listens from the start; the plugin
// host can take a while to discover plugin.path).
func (d *driver) loader() (plugins.Loader, error) {
	if l := d.pl.Load(); l != nil {
		return l.Loader, nil
	}
	return nil, d.stillStarting()
}

// stillStarting is the 503 of a request the worker cannot answer before
// it has started, saying what it is doing.
func (d *driver) stillStarting() error {
	return Errorf(KindUnavailable, "Worker is still starting up. The worker is currently %s", d.stage.Load())
}

func (d *driver) connectorType(config map[string]string) string {
	l, err := d.loader()
	if err != nil {
		return "unknown"
	}
	spec, err := l.Spec(config["connector.class"])
	if err != nil {
		return "unknown"
	}
	return string(spec.Type)
}

func (d *driver) info(name string, cs ConnectorSnapshot) ConnectorInfo {
	info := ConnectorInfo{Name: name, Config: d.shown(cs.Config), Tasks: []TaskID{}, Type: d.connectorType(cs.Config)}
	for i := range cs.Tasks {
		info.Tasks = append(info.Tasks, TaskID{Connector: name, Task: i})
	}
	return info
}

func (d *driver) lookup(name string) (ConnectorSnapshot, error) {
	if err := d.backendsReady(); err != nil {
		return ConnectorSnapshot{}, err
	}
	cs, ok := d.connectorEntry(name)
	if !ok {
		return cs, ErrUnknownConnector(name)
	}
	return cs, nil
}

func (d *driver) ConnectorInfo(ctx context.Context, name string) (ConnectorInfo, error) {
	cs, err := d.lookup(name)
	if err != nil {
		return ConnectorInfo{}, err
	}
	return d.info(name, cs), nil
}

func (d *driver) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	cs, err := d.lookup(name)
	if err != nil {
		return nil, err
	}
	return d.shown(cs.Config), nil
}

// shown is a stored config as the REST API shows it: as stored (Kafka
// Connect's answer), or with rest.hide.secrets the literal values of its
// secrets (PASSWORD keys by the plugin's definitions, client security
// secrets) replaced by [hidden]; references are shown, they hide nothing.
func (d *driver) shown(c map[string]string) map[string]string {
	out := maps.Clone(c)
	if !d.cfg.HideSecrets {
		return out
	}
	var spec sdk.Spec
	if l := d.pl.Load(); l != nil {
		spec, _ = l.Spec(c["connector.class"])
	}
	password := map[string]bool{}
	for _, k := range spec.Config {
		if k.Type == sdk.TypePassword {
			password[k.Name] = true
		}
	}
	for k, v := range out {
		if (password[k] || kafkaauth.IsSecret(k) || secretKey(k)) && !configprovider.HasReference(v) && v != "" {
			out[k] = redact.Hidden
		}
	}
	return out
}

// validate checks a connector config the way Kafka Connect does before
// anything is written: with its references resolved first (the plugin
// validates what it will run with), but showing the references, not what
// they resolved to, and hiding every secret in the messages; a reference
// that does not resolve is an error on its key, naming it.
func (d *driver) validate(ctx context.Context, config map[string]string) (sdk.ConfigInfos, sdk.Spec, error) {
	class := strings.TrimSpace(config["connector.class"])
	if class == "" {
		return sdk.ConfigInfos{}, sdk.Spec{}, Errorf(KindBadRequest, "Connector config %s contains no connector type", formatConfig(config))
	}
	l, err := d.loader()
	if err != nil {
		return sdk.ConfigInfos{}, sdk.Spec{}, err
	}
	spec, err := l.Spec(class)
	if err != nil {
		return sdk.ConfigInfos{}, sdk.Spec{}, unknownConnectorClass(class, l)
	}
	res, err := d.providers.Resolve(config)
	if err != nil {
		return sdk.ConfigInfos{}, spec, Errorf(KindBadRequest, "Failed to resolve the config references of %s: %v", class, err)
	}
	var hide redact.Set
	hide.Add(res.Secrets...)
	hide.Add(secretValues(spec, res.Values)...)
	d.secrets.Add(res.Secrets...)
	d.secrets.Add(secretValues(spec, res.Values)...)
	var pluginInfos sdk.ConfigInfos
	var answers plugins.ExactlyOnceAnswers
	q := exactlyOnceQuestions(spec, res.Values)
	if eo, ok := l.(plugins.ExactlyOnceValidator); ok && q != (plugins.ExactlyOnceQuestions{}) {
		pluginInfos, answers, err = eo.ValidateExactlyOnce(ctx, spec.Class, res.Values, q)
	} else {
		// A loader that cannot ask: the connector says nothing (Kafka
		// Connect's null) and defines no boundaries.
		pluginInfos, err = l.Validate(ctx, spec.Class, res.Values)
	}
	if err != nil {
		// The connector failed (a panic, a Check that could not run):
		// Kafka Connect answers 500 with the connector's message.
		return sdk.ConfigInfos{}, spec, Errorf(KindInternal, "Failed to validate the configuration of %s: %s", class, hide.Scrub(err.Error()))
	}
	infos := Validation(spec, d.converters(), res.Values, pluginInfos, d.clientOverrides())
	addExactlyOnceErrors(&infos, d.cfg.ExactlyOnceSource.Enabled(), q, answers)
	return withReferences(infos, config, res, &hide), spec, nil
}

// withReferences shows a validation's values as configured (a reference,
// not what it resolved to), adds an error on each key whose reference did
// not resolve, and hides secrets in values and messages.
func withReferences(infos sdk.ConfigInfos, raw map[string]string, res configprovider.Result, hide *redact.Set) sdk.ConfigInfos {
	seen := map[string]bool{}
	for i := range infos.Configs {
		v := &infos.Configs[i].Value
		seen[v.Name] = true
		if r, ok := raw[v.Name]; ok && configprovider.HasReference(r) && v.Value != nil {
			// A reference hides nothing, even for a PASSWORD key (Kafka
			// Connect shows it too).
			rv := r
			v.Value = &rv
		} else if v.Value != nil {
			sv := hide.Scrub(*v.Value)
			v.Value = &sv
		}
		for j, e := range v.Errors {
			v.Errors[j] = hide.Scrub(res.Unresolve(e))
		}
		for _, why := range res.Unresolved[v.Name] {
			v.Errors = append(v.Errors, "The config reference "+why)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(res.Unresolved)) {
		if seen[k] {
			continue
		}
		r := raw[k]
		msgs := []string{}
		for _, why := range res.Unresolved[k] {
			msgs = append(msgs, "The config reference "+why)
		}
		infos.Configs = append(infos.Configs, sdk.ConfigInfo{
			Definition: sdk.ConfigKeyInfo{Name: k, Type: "STRING", Importance: "LOW", Width: "NONE", DisplayName: k, Dependents: []string{}},
			Value:      sdk.ConfigValueInfo{Name: k, Value: &r, RecommendedValues: []string{}, Errors: msgs, Visible: true},
		})
	}
	infos.ErrorCount = 0
	for _, c := range infos.Configs {
		infos.ErrorCount += len(c.Value.Errors)
	}
	return infos
}

// converters are the worker's converters, every connector's defaults.
func (d *driver) converters() Converters {
	return Converters{Key: d.cfg.KeyConverter, Value: d.cfg.ValueConverter, Header: d.cfg.HeaderConverter}
}

// unknownConnectorClass is Kafka Connect's 400 for a connector.class that
// names no connector (Plugins.connectorClass, Kafka Connect 4.4): the
// plugins it has, each as its PluginDesc.toString, in PluginDesc order.
func unknownConnectorClass(class string, l plugins.Loader) error {
	return Errorf(KindBadRequest, "Failed to find any class that implements Connector and which name matches %s, available connectors are: %s", class, pluginDescs(l))
}

// pluginDescs lists l's connectors as Kafka Connect's Plugins.connectors()
// renders them: sorted as PluginDesc.compareTo sorts them (by class, then
// version; a class is served once here), each as PluginDesc.toString, with
// the version "undefined" (PluginDesc.UNDEFINED_VERSION) where a plugin
// reports none, and the location of a connector built into the worker
// "classpath".
func pluginDescs(l plugins.Loader) string {
	specs := l.Specs()
	slices.SortStableFunc(specs, func(a, b sdk.Spec) int {
		if c := strings.Compare(a.Class, b.Class); c != 0 {
			return c
		}
		return strings.Compare(a.Version, b.Version)
	})
	loc, _ := l.(plugins.Locator)
	descs := make([]string, len(specs))
	for i, s := range specs {
		version := s.Version
		if version == "" {
			version = "undefined"
		}
		where := plugins.Classpath
		if loc != nil {
			if w := loc.Location(s.Class); w != "" {
				where = w
			}
		}
		descs[i] = fmt.Sprintf("PluginDesc{klass=class %s, name='%s', version='%s', encodedVersion=%s, type=%s, typeName='%s', location='%s'}",
			s.Class, s.Class, version, version, s.Type, s.Type, where)
	}
	return strings.Join(descs, ", ")
}

// formatConfig renders a config as Java's Map.toString would, but with
// the values of secret-looking keys hidden (Kafka Connect prints them).
func formatConfig(c map[string]string) string {
	keys := slices.Sorted(maps.Keys(c))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := c[k]
		if secretKey(k) && !configprovider.HasReference(v) {
			v = redact.Hidden
		}
		parts = append(parts, k+"="+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (d *driver) PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string) (bool, ConnectorInfo, error) {
	created, info, _, err := d.putConfig(ctx, name, config, allowReplace, initialState, nil)
	return created, info, err
}

// putConfig validates and writes a connector config; with base (a PATCH)
// it writes only if the connector's config is still base, else reports
// stale.
func (d *driver) putConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string, base map[string]string) (created bool, info ConnectorInfo, stale bool, err error) {
	config = maps.Clone(config)
	config["name"] = name
	infos, spec, err := d.validate(ctx, config)
	if err != nil {
		return false, ConnectorInfo{}, false, err
	}
	if err := ValidationError(infos); err != nil {
		return false, ConnectorInfo{}, false, err
	}
	target := herder.Target("")
	switch strings.ToUpper(strings.TrimSpace(initialState)) {
	case "", "RUNNING":
	case "PAUSED":
		target = herder.Paused
	case "STOPPED":
		target = herder.Stopped
	default:
		return false, ConnectorInfo{}, false, Errorf(KindBadRequest, "Invalid initial state %s; must be one of RUNNING, PAUSED or STOPPED", initialState)
	}
	r, err := d.request(ctx, herder.PutConfig{Name: name, Config: config, AllowReplace: allowReplace, Target: target, Base: base})
	if err != nil {
		return false, ConnectorInfo{}, false, err
	}
	if r.Stale {
		return false, ConnectorInfo{}, true, nil
	}
	info = ConnectorInfo{Name: name, Config: d.shown(config), Tasks: []TaskID{}, Type: string(spec.Type)}
	for i := 0; i < r.Tasks && !r.Created; i++ {
		info.Tasks = append(info.Tasks, TaskID{Connector: name, Task: i})
	}
	return r.Created, info, false, nil
}

func (d *driver) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error) {
	// The patch applies to the config the loop has; if another write
	// changed it first, patch the new one (as Kafka Connect, which patches
	// on its herder thread, would have).
	for {
		cs, err := d.lookup(name)
		if err != nil {
			return ConnectorInfo{}, err
		}
		next := maps.Clone(cs.Config)
		for k, v := range patch {
			if v == nil {
				delete(next, k)
			} else {
				next[k] = *v
			}
		}
		_, info, stale, err := d.putConfig(ctx, name, next, true, "", cs.Config)
		if !stale || err != nil {
			return info, err
		}
		select {
		case <-ctx.Done():
			return ConnectorInfo{}, Errorf(KindInternal, "Request timed out before the worker could take it; nothing was changed. The worker is currently %s", d.stage.Load())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (d *driver) DeleteConnector(ctx context.Context, name string) error {
	if err := d.backendsReady(); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.DeleteConnector{Name: name})
	return err
}

func (d *driver) ConnectorStatus(ctx context.Context, name string) (ConnectorStateInfo, error) {
	if err := d.backendsReady(); err != nil {
		return ConnectorStateInfo{}, err
	}
	cs, ok := d.connectorEntry(name)
	if !ok {
		return ConnectorStateInfo{}, Errorf(KindNotFound, "No status found for connector %s", name)
	}
	st, found := d.statuses.Connector(name)
	return connectorStatus(name, cs, st, found, d.statuses.Tasks(name), d.workerID, d.connectorType(cs.Config)), nil
}

// connectorStatus is the status of the connector cs, from its status
// record st (found) and its tasks' records.
//
// A connector with no status record yet is UNASSIGNED (reported by this
// worker), with no tasks: no worker has started it since it was created.
// Kafka Connect 4.4 answers 404 "No status found for connector" then
// (AbstractHerder.connectorStatus reads only the status topic, and the
// first record of a new connector is the RUNNING its owner writes once a
// rebalance has assigned and started it), or 200 when the owner was
// quicker than the client: a race, which its answers right after a 201
// show (mostly 404 on the test machine, through one worker and through a
// follower; restapi/contract/cases_aftercreate.go has the numbers).
// Tributary answers with the connector its 201 just created, in Kafka
// Connect's own word for a connector no worker runs (its docs:
// "UNASSIGNED: The connector/task has not yet been assigned to a
// worker"); the contract table's "right after a create" cases hold both
// to their answers.
func connectorStatus(name string, cs ConnectorSnapshot, st ConnectorState, found bool, tasks []TaskState, workerID, typ string) ConnectorStateInfo {
	if !found {
		st = ConnectorState{State: StateUnassigned, WorkerID: workerID}
	}
	out := ConnectorStateInfo{Name: name, Connector: st, Tasks: []TaskState{}, Type: typ}
	for _, t := range tasks {
		if t.ID < len(cs.Tasks) {
			out.Tasks = append(out.Tasks, t)
		}
	}
	return out
}

func (d *driver) TaskStatus(ctx context.Context, name string, task int) (TaskState, error) {
	if err := d.backendsReady(); err != nil {
		return TaskState{}, err
	}
	cs, ok := d.connectorEntry(name)
	if ok && task < len(cs.Tasks) {
		for _, st := range d.statuses.Tasks(name) {
			if st.ID == task {
				return st, nil
			}
		}
	}
	return TaskState{}, Errorf(KindNotFound, "No status found for task %s-%d", name, task)
}

func (d *driver) TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error) {
	cs, err := d.lookup(name)
	if err != nil {
		return nil, err
	}
	out := []TaskInfo{}
	for i, tc := range cs.Tasks {
		tc := maps.Clone(tc)
		if d.cfg.HideSecrets {
			tc = d.shown(withClass(tc, cs.Config))
			if _, ok := cs.Tasks[i]["connector.class"]; !ok {
				delete(tc, "connector.class")
			}
		}
		out = append(out, TaskInfo{ID: TaskID{Connector: name, Task: i}, Config: tc})
	}
	return out, nil
}

func (d *driver) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error) {
	if err := d.backendsReady(); err != nil {
		return nil, err
	}
	if _, err := d.request(ctx, herder.RestartConnector{Name: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed}); err != nil {
		return nil, err
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	// The instances the owners restart, shown as RESTARTING (Kafka
	// Connect's restart plan, from the statuses).
	state, err := d.ConnectorStatus(ctx, name)
	if err != nil {
		state = ConnectorStateInfo{Name: name, Tasks: []TaskState{}}
	}
	if !onlyFailed || state.Connector.State == StateFailed {
		state.Connector.State = StateRestarting
	}
	for i := range state.Tasks {
		if includeTasks && (!onlyFailed || state.Tasks[i].State == StateFailed) {
			state.Tasks[i].State = StateRestarting
		}
	}
	return &state, nil
}

func (d *driver) RestartTask(ctx context.Context, name string, task int) error {
	if err := d.backendsReady(); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.RestartTask{ID: herder.TaskID{Connector: name, Task: task}})
	return err
}

func (d *driver) setTarget(ctx context.Context, name string, target herder.Target) error {
	if err := d.backendsReady(); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.SetTarget{Name: name, Target: target})
	return err
}

func (d *driver) PauseConnector(ctx context.Context, name string) error {
	return d.setTarget(ctx, name, herder.Paused)
}

func (d *driver) ResumeConnector(ctx context.Context, name string) error {
	return d.setTarget(ctx, name, herder.Started)
}

func (d *driver) StopConnector(ctx context.Context, name string) error {
	return d.setTarget(ctx, name, herder.Stopped)
}

func (d *driver) ConnectorTopics(ctx context.Context, name string) ([]string, error) {
	if !d.cfg.TopicTracking {
		return nil, Errorf(KindForbidden, "Topic tracking is disabled.")
	}
	if err := d.backendsReady(); err != nil {
		return nil, err
	}
	// Like Kafka Connect, an unknown connector simply has no active topics.
	t := d.statuses.Topics(name)
	if t == nil {
		t = []string{}
	}
	return t, nil
}

func (d *driver) ResetConnectorTopics(ctx context.Context, name string) error {
	if !d.cfg.TopicTracking {
		return Errorf(KindForbidden, "Topic tracking is disabled.")
	}
	if !d.cfg.TopicTrackingReset {
		return Errorf(KindForbidden, "Topic tracking reset is disabled.")
	}
	if err := d.backendsReady(); err != nil {
		return err
	}
	// Kafka Connect accepts a reset for an unknown connector (202).
	return d.statuses.ResetTopics(ctx, name)
}

func (d *driver) Offsets(ctx context.Context, name string) (ConnectorOffsets, error) {
	cs, err := d.lookup(name)
	if err != nil {
		return ConnectorOffsets{}, err
	}
	out := ConnectorOffsets{Offsets: []PartitionOffset{}}
	if d.connectorType(cs.Config) == "sink" {
		offs, err := d.groups.Fetch(ctx, "connect-"+name)
		if err != nil {
			return out, err
		}
		for _, tp := range slices.SortedFunc(maps.Keys(offs), compareTP) {
			out.Offsets = append(out.Offsets, PartitionOffset{
				Partition: map[string]any{"kafka_topic": tp.Topic, "kafka_partition": tp.Partition},
				Offset:    map[string]any{"kafka_offset": offs[tp]},
			})
		}
		return out, nil
	}
	for _, so := range d.offsets.All(name) {
		out.Offsets = append(out.Offsets, PartitionOffset{Partition: so.Partition, Offset: so.Offset})
	}
	return out, nil
}

func compareTP(a, b sdk.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition - b.Partition)
}

func (d *driver) AlterOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error) {
	if err := d.backendsReady(); err != nil {
		return "", err
	}
	if len(offsets.Offsets) == 0 {
		return "", Errorf(KindBadRequest, "The offsets to be altered may not be null or empty")
	}
	r, err := d.request(ctx, herder.ModifyOffsets{Name: name, Payload: offsetsChange{offsets: offsets}})
	return r.Message, err
}

func sinkPartition(p map[string]any) (sdk.TopicPartition, error) {
	topic, ok := p["kafka_topic"].(string)
	if !ok || topic == "" {
		return sdk.TopicPartition{}, Errorf(KindBadRequest, "Kafka topic names must be valid strings and may not be null")
	}
	part, err := asInt(p["kafka_partition"])
	if err != nil {
		return sdk.TopicPartition{}, Errorf(KindBadRequest, "Failed to parse the following Kafka partition value in the provided offsets: '%s'. Partition values for sink connectors need to be integers.", javaString(p["kafka_partition"]))
	}
	return sdk.TopicPartition{Topic: topic, Partition: int32(part)}, nil
}

func sinkOffset(o map[string]any) (int64, error) {
	off, err := asInt(o["kafka_offset"])
	if err != nil || off < 0 {
		return 0, Errorf(KindBadRequest, "Failed to parse the following Kafka offset value in the provided offsets: '%s'. Offset values for sink connectors need to be integers.", javaString(o["kafka_offset"]))
	}
	return off, nil
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return 0, fmt.Errorf("not an integer")
		}
		return int64(x), nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("not an integer")
}

func (d *driver) ResetOffsets(ctx context.Context, name string) (string, error) {
	if err := d.backendsReady(); err != nil {
		return "", err
	}
	r, err := d.request(ctx, herder.ModifyOffsets{Name: name, Payload: offsetsChange{reset: true}})
	return r.Message, err
}

func (d *driver) Plugins(ctx context.Context, all bool) ([]PluginInfo, error) {
	l, err := d.loader()
	if err != nil {
		return nil, err
	}
	// Kafka Connect 4.4's order: connectors by class, then (all) the
	// transformations, predicates, converters and header converters, each
	// by class.
	var out []PluginInfo
	for _, s := range l.Specs() {
		out = append(out, PluginInfo{Class: s.Class, Type: string(s.Type), Version: s.Version})
	}
	slices.SortStableFunc(out, func(a, b PluginInfo) int { return strings.Compare(a.Class, b.Class) })
	if all {
		for _, p := range transform.Plugins(transformsVersion) {
			out = append(out, PluginInfo{Class: p.Class, Type: string(p.Kind), Version: p.Version})
		}
		for _, c := range converterClasses(false) {
			out = append(out, PluginInfo{Class: c, Type: "converter", Version: Version})
		}
		for _, c := range converterClasses(true) {
			out = append(out, PluginInfo{Class: c, Type: "header_converter", Version: Version})
		}
	}
	return out, nil
}

func (d *driver) PluginConfig(ctx context.Context, plugin string) ([]sdk.ConfigKeyInfo, error) {
	l, err := d.loader()
	if err != nil {
		return nil, err
	}
	spec, err := l.Spec(plugin)
	if err != nil {
		if defs, ok := ConverterConfig(plugin); ok {
			return defs, nil
		}
		if defs, _, ok := transform.Definition(plugin); ok {
			return defs, nil
		}
		return nil, Errorf(KindNotFound, "Unknown plugin %s.", plugin)
	}
	return ConnectorConfigDefs(spec), nil
}

func (d *driver) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (sdk.ConfigInfos, error) {
	class := strings.TrimSpace(config["connector.class"])
	if class == "" {
		return sdk.ConfigInfos{}, Errorf(KindBadRequest, "Connector config %s contains no connector type", formatConfig(config))
	}
	l, err := d.loader()
	if err != nil {
		return sdk.ConfigInfos{}, err
	}
	ps, err1 := l.Spec(plugin)
	cs, err2 := l.Spec(class)
	if err1 == nil && err2 == nil && ps.Class != cs.Class {
		return sdk.ConfigInfos{}, Errorf(KindBadRequest, "Included connector type %s does not match request type %s", class, plugin)
	}
	infos, _, err := d.validate(ctx, config)
	return infos, err
}

// LeaderURL is the current leader's REST URL ("" when this worker leads),
// waiting for a rebalance in progress to end (up to rest hold timeout).
func (d *driver) LeaderURL(ctx context.Context) (string, error) {
	if err := d.backendsReady(); err != nil {
		return "", err
	}
	r, err := d.request(ctx, herder.Leader{})
	return r.LeaderURL, err
}

// PutTaskConfigs is the internal POST /connectors/{name}/tasks: another
// worker's connector generated task configs, which only the leader writes.
func (d *driver) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string, sig *Signature) error {
	if err := d.backendsReady(); err != nil {
		return err
	}
	if err := d.checkSignature(sig); err != nil {
		return err
	}
	_, err := d.request(ctx, herder.PutTaskConfigs{Name: name, Configs: configs})
	return err
}

// SyncConfigs reads the config topic to its end, then waits until the
// loop has applied what was read: the store queues a change for the loop
// as it applies each record, so every change read is queued before the
// marker pushed here.
func (d *driver) SyncConfigs(ctx context.Context) error {
	if err := d.backendsReady(); err != nil {
		return err
	}
	if !d.running.Load() {
		return d.stillStarting()
	}
	if err := d.configs.Refresh(ctx); err != nil {
		return fmt.Errorf("worker: read the config topic to its end: %w", err)
	}
	applied := make(chan struct{})
	d.configQ.push(configEvent{applied: applied})
	select {
	case <-applied:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("worker: wait for the herder to apply the config topic: %w", ctx.Err())
	case <-d.ctx.Done():
		return Errorf(KindUnavailable, "The worker is shutting down")
	}
}

// HoldTimeout is rest.rebalance.hold.ms.
func (d *driver) HoldTimeout() time.Duration { return d.cfg.RequestHold }

// clientOverrides is what validating client overrides takes of the
// worker: its override policy and the base of each kind of client (the
// admin clients of connectors inherit the worker's top-level settings,
// producers and consumers do not, as in Kafka Connect).
func (d *driver) clientOverrides() ClientOverrides {
	admin := maps.Clone(d.cfg.ClientConfig)
	if admin == nil {
		admin = map[string]string{}
	}
	maps.Copy(admin, d.cfg.AdminConfig)
	return ClientOverrides{Policy: d.cfg.OverridePolicy, JAASFile: d.cfg.JAASConfigFile, Base: map[string]map[string]string{
		producerOverride: d.cfg.ProducerConfig, consumerOverride: d.cfg.ConsumerConfig, adminOverride: admin}}
}

// withClass is a task config with its connector's class, to look its
// definitions up.
func withClass(tc, conn map[string]string) map[string]string {
	if _, ok := tc["connector.class"]; !ok {
		tc["connector.class"] = conn["connector.class"]
	}
	return tc
}
