// Pure helpers of the console: no DOM, no network.

// Holistic states, in the order the connectors list shows them (the worst
// first).
export const STATES = ['failed', 'degraded', 'unassigned', 'restarting', 'paused', 'stopped', 'healthy'];

// holistic folds a connector's status (GET /connectors/{c}/status) into
// one state: a RUNNING connector with FAILED tasks is degraded, not healthy;
// failed when the connector or every task failed.
export function holistic(status) {
  if (!status || !status.connector) return 'unassigned';
  const c = status.connector.state;
  const tasks = status.tasks || [];
  const failed = tasks.filter((t) => t.state === 'FAILED').length;
  if (c === 'FAILED' || (tasks.length > 0 && failed === tasks.length)) return 'failed';
  if (failed > 0) return 'degraded';
  if (c === 'STOPPED') return 'stopped';
  if (c === 'PAUSED') return 'paused';
  if (c === 'RESTARTING' || tasks.some((t) => t.state === 'RESTARTING')) return 'restarting';
  if (c === 'UNASSIGNED' || tasks.some((t) => t.state === 'UNASSIGNED')) return 'unassigned';
  if (tasks.some((t) => t.state === 'PAUSED')) return 'paused';
  return 'healthy';
}

// rank orders holistic states worst first.
export function rank(state) {
  const i = STATES.indexOf(state);
  return i < 0 ? STATES.length : i;
}

// rows turns the batch answer of GET /connectors?expand=status&expand=info
// into one row per connector, worst state first, then by name.
export function rows(batch) {
  const out = [];
  for (const [name, v] of Object.entries(batch || {})) {
    const status = v.status || null;
    const info = v.info || null;
    const config = (info && info.config) || {};
    const tasks = (status && status.tasks) || [];
    out.push({
      name,
      type: (status && status.type) || (info && info.type) || '',
      cls: config['connector.class'] || '',
      state: holistic(status),
      connectorState: status && status.connector ? status.connector.state : 'UNKNOWN',
      worker: status && status.connector ? status.connector.worker_id : '',
      tasks: tasks.length,
      running: tasks.filter((t) => t.state === 'RUNNING').length,
      failedTasks: tasks.filter((t) => t.state === 'FAILED').length,
      status,
      config,
    });
  }
  out.sort((a, b) => rank(a.state) - rank(b.state) || a.name.localeCompare(b.name));
  return out;
}

// filterRows keeps the rows matching a search text (name or class) and, when
// set, a holistic state and a type.
export function filterRows(all, { text = '', state = '', type = '' } = {}) {
  const q = text.trim().toLowerCase();
  return all.filter((r) => (!q || r.name.toLowerCase().includes(q) || r.cls.toLowerCase().includes(q)) &&
    (!state || r.state === state) && (!type || r.type === type));
}

// firstLine is the line of a trace worth showing in a table: a Java-style
// trace's last "Caused by:" when there is one, else its first line.
export function firstLine(trace) {
  if (!trace) return '';
  const lines = trace.split('\n').map((l) => l.trim()).filter(Boolean);
  const caused = lines.filter((l) => l.startsWith('Caused by:'));
  const line = caused.length ? caused[caused.length - 1].slice('Caused by:'.length).trim() : lines[0] || '';
  return line.length > 300 ? line.slice(0, 299) + '…' : line;
}

// isReference says whether a config value is (or holds) a config
// provider reference, ${provider:path:key}: shown as written, never masked.
export function isReference(v) {
  return typeof v === 'string' && /\$\{[^}]+\}/.test(v);
}

// MASK stands for a secret the console does not show.
export const MASK = '••••••••';

// masked returns the value to show for key: MASK for a PASSWORD key's
// literal value, the value itself otherwise (references included).
export function masked(key, value, passwords) {
  if (passwords.has(key) && value !== '' && value != null && !isReference(value)) return MASK;
  return value;
}

// maskConfig masks every PASSWORD key of config (see masked).
export function maskConfig(config, passwords) {
  const out = {};
  for (const [k, v] of Object.entries(config || {})) out[k] = masked(k, v, passwords);
  return out;
}

// unmask puts the original secrets back where an edited config still holds
// MASK, so that saving an edit does not overwrite a password with the mask.
export function unmask(edited, original) {
  const out = {};
  for (const [k, v] of Object.entries(edited)) {
    out[k] = v === MASK && original && k in original ? original[k] : v;
  }
  return out;
}

// passwordKeys lists the keys of type PASSWORD in config definitions (the
// plugin config endpoint's list, or a validate answer's definitions).
export function passwordKeys(defs) {
  const out = new Set();
  for (const d of defs || []) {
    const def = d.definition || d;
    if (def && def.type === 'PASSWORD') out.add(def.name);
  }
  // Secrets every worker knows of, whatever the plugin declares.
  for (const k of ['consumer.override.sasl.jaas.config', 'producer.override.sasl.jaas.config', 'admin.override.sasl.jaas.config']) out.add(k);
  return out;
}

// countBy counts values of key over items.
export function countBy(items, key) {
  const out = {};
  for (const it of items) {
    const k = typeof key === 'function' ? key(it) : it[key];
    out[k] = (out[k] || 0) + 1;
  }
  return out;
}

// workers gathers the workers the statuses name, with what each runs.
export function workers(all) {
  const byId = new Map();
  const get = (id) => {
    if (!byId.has(id)) byId.set(id, { id, connectors: 0, tasks: 0, failedTasks: 0 });
    return byId.get(id);
  };
  for (const r of all) {
    if (r.status && r.status.connector && r.status.connector.worker_id) get(r.status.connector.worker_id).connectors++;
    for (const t of (r.status && r.status.tasks) || []) {
      if (!t.worker_id) continue;
      const w = get(t.worker_id);
      w.tasks++;
      if (t.state === 'FAILED') w.failedTasks++;
    }
  }
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
}

// parseMetrics reads Prometheus text exposition into samples
// {name, labels, value}; comments and malformed lines are skipped.
export function parseMetrics(text) {
  const out = [];
  for (const line of (text || '').split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      let l;
      while ((l = re.exec(m[3])) !== null) labels[l[1]] = l[2].replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    }
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

// throughput sums a connector's per-task rates and lag from samples of
// this worker's /metrics.
export function throughput(samples, connector) {
  let rate = 0, lag = 0, seen = false, lagSeen = false;
  for (const s of samples) {
    if (s.labels.connector !== connector || !Number.isFinite(s.value)) continue;
    if (s.name.endsWith('source_record_poll_rate') || s.name.endsWith('sink_record_read_rate')) { rate += s.value; seen = true; }
    if (s.name === 'tributary_sink_lag_records') { lag += s.value; lagSeen = true; }
  }
  return { rate: seen ? rate : null, lag: lagSeen ? lag : null };
}

// snapshot reads a CDC connector's snapshot progress from the Debezium
// metrics its tasks on this worker report (debezium_metrics_* with
// context="snapshot"): tables done of the total, rows scanned (in all and
// per table), seconds so far; null when none are reported here.
export function snapshot(samples, connector) {
  const out = { running: false, completed: false, skipped: false, total: 0, remaining: 0, rows: 0, tables: {}, seconds: 0 };
  let found = false;
  const prefix = 'debezium_metrics_';
  for (const s of samples) {
    if (s.labels.connector !== connector || s.labels.context !== 'snapshot' || !s.name.startsWith(prefix) || !Number.isFinite(s.value)) continue;
    found = true;
    switch (s.name.slice(prefix.length)) {
      case 'SnapshotRunning': out.running ||= s.value === 1; break;
      case 'SnapshotCompleted': out.completed ||= s.value === 1; break;
      case 'SnapshotSkipped': out.skipped ||= s.value === 1; break;
      case 'TotalTableCount': out.total += s.value; break;
      case 'RemainingTableCount': out.remaining += s.value; break;
      case 'SnapshotDurationInSeconds': out.seconds = Math.max(out.seconds, s.value); break;
      case 'RowsScanned':
        out.rows += s.value;
        out.tables[s.labels.table] = (out.tables[s.labels.table] || 0) + s.value;
        break;
    }
  }
  return found ? out : null;
}

// describeSnapshot says a snapshot's progress in words.
export function describeSnapshot(sn) {
  if (!sn) return 'no snapshot metrics on this worker';
  const rows = `${sn.rows.toLocaleString('en')} rows`;
  if (sn.completed) return `completed: ${rows} from ${sn.total} table(s) in ${Math.round(sn.seconds)} s`;
  if (sn.running) return `running: ${sn.total - sn.remaining} of ${sn.total} table(s) done, ${rows} scanned, ${Math.round(sn.seconds)} s so far`;
  if (sn.skipped) return 'skipped (no snapshot needed)';
  return 'not started';
}

// fieldOrder sorts config definitions for a form: by group in order of
// appearance, then by the definition's order, then by importance.
export function groupDefs(defs) {
  const imp = { HIGH: 0, MEDIUM: 1, LOW: 2 };
  const groups = new Map();
  for (const d of defs) {
    const g = d.group || 'Other';
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(d);
  }
  for (const list of groups.values()) {
    list.sort((a, b) => (imp[a.importance] ?? 3) - (imp[b.importance] ?? 3) ||
      (a.order ?? 0) - (b.order ?? 0) || a.name.localeCompare(b.name));
  }
  return groups;
}

// settled says whether a connector's status no longer moves after an
// action: no RESTARTING or UNASSIGNED parts, and, for pause/resume/stop,
// the state the action asks for.
export function settled(status, want) {
  if (!status || !status.connector) return false;
  const states = [status.connector.state, ...(status.tasks || []).map((t) => t.state)];
  if (states.some((s) => s === 'RESTARTING' || s === 'UNASSIGNED')) return false;
  if (want === 'PAUSED') return status.connector.state === 'PAUSED' && (status.tasks || []).every((t) => t.state === 'PAUSED');
  // RUNNING: the connector and every task (a connector with no task yet
  // has not settled; one whose tasks stay FAILED is reported as such
  // when the wait ends).
  if (want === 'RUNNING') return status.connector.state === 'RUNNING' && (status.tasks || []).length > 0 && status.tasks.every((t) => t.state === 'RUNNING');
  if (want === 'STOPPED') return status.connector.state === 'STOPPED';
  return true;
}

// describe says in words what a status is, for announcements.
export function describe(name, status) {
  if (!status || !status.connector) return `${name}: no status`;
  const by = countBy(status.tasks || [], 'state');
  const tasks = Object.entries(by).map(([s, n]) => `${n} ${s}`).join(', ');
  return `${name}: ${status.connector.state}${tasks ? ` (tasks: ${tasks})` : ' (no tasks)'}`;
}
