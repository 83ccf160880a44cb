// The console's router and pages. Routes are URL fragments (#/connectors/x),
// so every page is a deep link that opens in a new tab.
import * as api from './api.js';
import { h, badge, table, uid } from './dom.js';
import * as L from './logic.js';

const main = document.getElementById('main');
const announcer = document.getElementById('announce');

// announce tells screen readers (and everyone: it is visible) what an
// action did.
function announce(msg, kind = 'info') {
  announcer.textContent = msg;
  announcer.className = `announce ${kind}`;
}

function errorText(e) { return e instanceof api.ApiError ? `${e.status}: ${e.message}` : String(e && e.message || e); }

// render replaces the page with nodes and moves focus to its heading.
function render(title, ...nodes) {
  document.title = `${title} · Tributary`;
  main.replaceChildren(h('h1', { tabindex: '-1', id: 'page-title' }, title), ...nodes);
  main.querySelector('#page-title').focus();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// settle polls a connector's status until it settles for want (up to
// 15 s) and returns it: the state the worker reports after an action.
async function settle(name, want) {
  let st = null;
  for (let i = 0; i < 30; i++) {
    try { st = await api.get(`/connectors/${api.enc(name)}/status`); } catch (e) { if (e.status === 404 && want === 'DELETED') return null; }
    if (L.settled(st, want)) return st;
    await sleep(500);
  }
  return st;
}

// ---- Overview -----------------------------------------------------------

async function overview() {
  const [info, all, metrics, plugins] = await Promise.all([
    api.get('/').catch(() => ({})), api.batch(), api.text('/metrics'), api.get('/connector-plugins').catch(() => []),
  ]);
  const list = L.rows(all);
  const samples = L.parseMetrics(metrics);
  const one = (name) => samples.find((s) => s.name === name);
  const leader = samples.find((s) => s.name.endsWith('rebalance_leader_name'));
  const rebalancing = one('kafka_connect_worker_rebalance_rebalancing') || one('kafka_connect_connect_worker_rebalance_metrics_rebalancing');
  const epoch = one('kafka_connect_worker_rebalance_epoch') || one('kafka_connect_connect_worker_rebalance_metrics_epoch');
  const byState = L.countBy(list, 'state');
  const tasks = list.flatMap((r) => (r.status && r.status.tasks) || []);
  const byTask = L.countBy(tasks, 'state');
  const ws = L.workers(list);
  const leaderName = leader ? (leader.labels.leader_name || '(this worker)') : 'unknown (no metrics)';
  render('Cluster overview',
    h('dl', { className: 'facts' },
      h('dt', null, 'Version'), h('dd', null, `${info.version || '?'} (${info.commit || '?'})`),
      h('dt', null, 'Kafka cluster'), h('dd', null, info.kafka_cluster_id || '?'),
      h('dt', null, 'This worker'), h('dd', null, location.host),
      h('dt', null, 'Leader'), h('dd', { 'data-testid': 'leader' }, leaderName),
      h('dt', null, 'Rebalance'), h('dd', null, rebalancing ? (rebalancing.value ? 'in progress' : 'settled') : 'unknown',
        epoch ? ` (generation ${epoch.value})` : ''),
      h('dt', null, 'Connector plugins'), h('dd', null, String(plugins.length))),
    h('section', { 'aria-labelledby': 'sum-c' },
      h('h2', { id: 'sum-c' }, `Connectors (${list.length})`),
      h('ul', { className: 'tiles' }, L.STATES.map((s) => h('li', null,
        h('a', { href: `#/connectors?state=${s}`, className: `tile t-${s}` },
          h('span', { className: 'n', 'data-testid': `count-${s}` }, String(byState[s] || 0)), ' ', s))))),
    h('section', { 'aria-labelledby': 'sum-t' },
      h('h2', { id: 'sum-t' }, `Tasks (${tasks.length})`),
      h('ul', { className: 'tiles' }, Object.entries(byTask).sort().map(([s, n]) => h('li', null,
        h('span', { className: `tile t-${s.toLowerCase()}` }, h('span', { className: 'n' }, String(n)), ' ', s))))),
    h('section', { 'aria-labelledby': 'sum-w' },
      h('h2', { id: 'sum-w' }, `Workers (${ws.length})`),
      table('Workers running connectors or tasks', ['Worker', 'Connectors', 'Tasks', 'Failed tasks'],
        ws.map((w) => h('tr', null, h('td', null, w.id, leader && leader.labels.leader_name && leader.labels.leader_name.includes(w.id) ? ' (leader)' : ''),
          h('td', null, String(w.connectors)), h('td', null, String(w.tasks)), h('td', null, String(w.failedTasks)))))));
}

// ---- Connectors list ----------------------------------------------------

const BULK = [
  { label: 'Pause', want: 'PAUSED', run: (n) => api.put(`/connectors/${api.enc(n)}/pause`) },
  { label: 'Resume', want: 'RUNNING', run: (n) => api.put(`/connectors/${api.enc(n)}/resume`) },
  { label: 'Restart', want: 'RUNNING', run: (n) => api.post(`/connectors/${api.enc(n)}/restart?includeTasks=true&onlyFailed=false`) },
  { label: 'Restart failed tasks', want: 'RUNNING', run: (n) => api.post(`/connectors/${api.enc(n)}/restart?includeTasks=true&onlyFailed=true`) },
  { label: 'Stop', want: 'STOPPED', run: (n) => api.put(`/connectors/${api.enc(n)}/stop`) },
  { label: 'Delete', want: 'DELETED', confirm: true, run: (n) => api.del(`/connectors/${api.enc(n)}`) },
];

async function connectors(params) {
  const t0 = performance.now();
  const all = L.rows(await api.batch());
  const f = { text: params.get('q') || '', state: params.get('state') || '', type: params.get('type') || '' };
  const selected = new Set();
  const tbody = h('tbody');
  const shown = h('p', { className: 'muted', 'aria-live': 'polite' });
  const bulkBar = h('div', { className: 'bulk', role: 'group', 'aria-label': 'Actions on the selected connectors' });
  const selAll = h('input', { type: 'checkbox', id: 'sel-all', 'aria-label': 'Select all shown connectors' });

  const draw = () => {
    const rs = L.filterRows(all, f);
    tbody.replaceChildren(...rs.map((r) => {
      const cb = h('input', { type: 'checkbox', checked: selected.has(r.name), 'aria-label': `Select ${r.name}`,
        onchange: (e) => { e.target.checked ? selected.add(r.name) : selected.delete(r.name); bar(); } });
      return h('tr', { 'data-connector': r.name, 'data-state': r.state },
        h('td', null, cb),
        h('td', null, h('a', { href: `#/connectors/${encodeURIComponent(r.name)}` }, r.name)),
        h('td', null, badge(r.state)),
        h('td', null, `${r.running}/${r.tasks} running`, r.failedTasks ? h('span', { className: 'err' }, ` · ${r.failedTasks} failed`) : ''),
        h('td', null, r.type),
        h('td', { className: 'cls', title: r.cls }, r.cls.split('.').pop()));
    }));
    shown.textContent = `${rs.length} of ${all.length} connectors shown, worst state first.`;
    selAll.checked = rs.length > 0 && rs.every((r) => selected.has(r.name));
    bar();
  };
  const bar = () => {
    bulkBar.replaceChildren(h('span', null, `${selected.size} selected`), ...BULK.map((b) =>
      h('button', { type: 'button', disabled: selected.size === 0, className: b.confirm ? 'danger' : '', onclick: () => bulk(b) }, b.label)));
  };
  const bulk = async (b) => {
    const names = [...selected].sort();
    if (b.confirm && !window.confirm(`${b.label} ${names.length} connector(s): ${names.join(', ')}?`)) return;
    announce(`${b.label}: sending to ${names.length} connector(s)…`);
    const errors = [];
    await Promise.all(names.map((n) => b.run(n).catch((e) => errors.push(`${n}: ${errorText(e)}`))));
    const results = await Promise.all(names.map((n) => settle(n, b.want)));
    const lines = names.map((n, i) => b.want === 'DELETED' ? `${n}: ${results[i] ? 'still present' : 'deleted'}` : L.describe(n, results[i]));
    announce(`${b.label} done. The workers report: ${lines.join('; ')}${errors.length ? `. Errors: ${errors.join('; ')}` : ''}`, errors.length ? 'error' : 'ok');
    selected.clear();
    await reload();
  };
  const reload = async () => {
    const fresh = L.rows(await api.batch());
    all.splice(0, all.length, ...fresh);
    draw();
  };
  const sync = () => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries({ q: f.text, state: f.state, type: f.type })) if (v) p.set(k, v);
    history.replaceState(null, '', `#/connectors${p.toString() ? `?${p}` : ''}`);
    draw();
  };
  selAll.addEventListener('change', () => {
    for (const r of L.filterRows(all, f)) selAll.checked ? selected.add(r.name) : selected.delete(r.name);
    draw();
  });
  const search = h('input', { type: 'search', id: 'q', value: f.text, placeholder: 'name or class', oninput: (e) => { f.text = e.target.value; sync(); } });
  const stateSel = h('select', { id: 'state', onchange: (e) => { f.state = e.target.value; sync(); } },
    h('option', { value: '' }, 'any'), L.STATES.map((s) => h('option', { value: s, selected: s === f.state }, s)));
  const typeSel = h('select', { id: 'type', onchange: (e) => { f.type = e.target.value; sync(); } },
    ['', 'source', 'sink'].map((s) => h('option', { value: s, selected: s === f.type }, s || 'any')));
  render('Connectors',
    h('div', { className: 'filters' },
      h('label', { for: 'q' }, 'Search'), search,
      h('label', { for: 'state' }, 'State'), stateSel,
      h('label', { for: 'type' }, 'Type'), typeSel,
      h('button', { type: 'button', onclick: () => reload().then(() => announce('Connectors reloaded.')) }, 'Reload'),
      h('a', { href: '#/new', className: 'button' }, 'Create connector')),
    bulkBar, shown,
    h('div', { className: 'table-wrap' }, h('table', { id: 'connectors' },
      h('caption', null, 'Connectors and their state'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, selAll), ['Name', 'State', 'Tasks', 'Type', 'Class'].map((x) => h('th', { scope: 'col' }, x)))),
      tbody)));
  draw();
  // The time from the request to the drawn table, for the tests to read.
  main.dataset.renderMs = String(Math.round(performance.now() - t0));
}

// ---- Connector detail ---------------------------------------------------

async function pluginDefs(cls) {
  if (!cls) return [];
  try { return await api.get(`/connector-plugins/${api.enc(cls)}/config`); } catch { return []; }
}

async function detail(name) {
  const p = `/connectors/${api.enc(name)}`;
  const [status, config, topics, offsets, metrics] = await Promise.all([
    api.get(`${p}/status`), api.get(`${p}/config`),
    api.get(`${p}/topics`).catch(() => null), api.get(`${p}/offsets`).catch((e) => ({ error: errorText(e) })),
    api.text('/metrics'),
  ]);
  const defs = await pluginDefs(config['connector.class']);
  const passwords = L.passwordKeys(defs);
  const state = L.holistic(status);
  const samples = L.parseMetrics(metrics);
  const tp = L.throughput(samples, name);
  const snap = L.snapshot(samples, name);
  const again = (msg, kind) => { route().then(() => msg && announce(msg, kind)); };
  const act = async (label, want, fn) => {
    announce(`${label} ${name}: sent…`);
    try {
      await fn();
    } catch (e) {
      announce(`${label} ${name} failed: ${errorText(e)}`, 'error');
      return;
    }
    if (want === 'DELETED') { location.hash = '#/connectors'; announce(`${name} deleted.`, 'ok'); return; }
    const st = await settle(name, want);
    again(`${label} done. The worker reports ${L.describe(name, st)}`, 'ok');
  };
  const actions = h('div', { className: 'actions', role: 'group', 'aria-label': 'Connector actions' },
    h('button', { type: 'button', onclick: () => act('Pause', 'PAUSED', () => api.put(`${p}/pause`)) }, 'Pause'),
    h('button', { type: 'button', onclick: () => act('Resume', 'RUNNING', () => api.put(`${p}/resume`)) }, 'Resume'),
    h('button', { type: 'button', onclick: () => act('Restart', 'RUNNING', () => api.post(`${p}/restart?includeTasks=true&onlyFailed=false`)) }, 'Restart all'),
    h('button', { type: 'button', onclick: () => act('Restart failed tasks', 'RUNNING', () => api.post(`${p}/restart?includeTasks=true&onlyFailed=true`)) }, 'Restart failed tasks'),
    h('button', { type: 'button', onclick: () => act('Stop', 'STOPPED', () => api.put(`${p}/stop`)) }, 'Stop'),
    h('button', { type: 'button', className: 'danger', onclick: () => { if (confirm(`Delete ${name}?`)) act('Delete', 'DELETED', () => api.del(p)); } }, 'Delete'));

  const tasks = table('Tasks', ['Task', 'State', 'Worker', 'Error', ''], (status.tasks || []).map((t) => h('tr', { 'data-task': t.id, 'data-state': t.state },
    h('td', null, String(t.id)), h('td', null, badge(t.state)), h('td', null, t.worker_id || ''),
    h('td', null, t.trace ? h('details', null, h('summary', { className: 'err' }, L.firstLine(t.trace)), h('pre', { className: 'trace' }, t.trace)) : '—'),
    h('td', null, h('button', { type: 'button', 'aria-label': `Restart task ${t.id}`,
      onclick: () => act(`Restart task ${t.id}`, 'RUNNING', () => api.post(`${p}/tasks/${t.id}/restart`)) }, 'Restart task')))), { id: 'tasks' });

  // Config: a view with secrets masked, and an editor.
  const shownConfig = L.maskConfig(config, passwords);
  const cfgView = table('Configuration (PASSWORD values masked; provider references shown as written)', ['Key', 'Value'],
    Object.keys(shownConfig).sort().map((k) => h('tr', { 'data-key': k }, h('th', { scope: 'row' }, k), h('td', { className: 'val' }, String(shownConfig[k])))), { id: 'config' });
  const edId = uid('cfg');
  const editor = h('textarea', { id: edId, rows: 14, spellcheck: 'false', className: 'code' });
  editor.value = JSON.stringify(shownConfig, null, 2);
  const edMsg = h('div', { role: 'alert', className: 'err' });
  const save = async () => {
    let edited;
    try { edited = JSON.parse(editor.value); } catch (e) { edMsg.textContent = `Not JSON: ${e.message}`; return; }
    const body = L.unmask(edited, config);
    // With rest.hide.secrets the worker shows literal secrets as [hidden]:
    // saving that would store the word, not the secret.
    const hidden = Object.keys(body).filter((k) => body[k] === '[hidden]');
    if (hidden.length) { edMsg.textContent = `Not saved: the worker hides ${hidden.join(', ')} (rest.hide.secrets); type the secret again or use a \${provider:…} reference.`; return; }
    try {
      const v = await api.put(`/connector-plugins/${api.enc(body['connector.class'] || '')}/config/validate`, body);
      const errs = (v.configs || []).filter((c) => c.value && c.value.errors && c.value.errors.length).map((c) => `${c.value.name}: ${c.value.errors.join('; ')}`);
      if (errs.length) { edMsg.textContent = `Not saved: ${errs.join(' | ')}`; return; }
      await api.put(`${p}/config`, body);
    } catch (e) { edMsg.textContent = `Not saved: ${errorText(e)}`; return; }
    const st = await settle(name, '');
    again(`Configuration saved. The worker reports ${L.describe(name, st)}`, 'ok');
  };
  const editBox = h('details', { className: 'edit' }, h('summary', null, 'Edit configuration'),
    h('label', { for: edId }, `Configuration as JSON (a masked value ${L.MASK} keeps the stored secret)`), editor, edMsg,
    h('button', { type: 'button', onclick: save }, 'Validate and save'));

  // Topics (KIP-558), collapsed when long.
  const tlist = topics && topics[name] ? topics[name].topics || [] : [];
  const topicsBox = tlist.length > 10
    ? h('details', null, h('summary', null, `${tlist.length} topics`), h('ul', { className: 'topics' }, tlist.map((x) => h('li', null, x))))
    : h('ul', { className: 'topics' }, tlist.length ? tlist.map((x) => h('li', null, x)) : h('li', null, 'none recorded'));

  // Offsets (KIP-875): view; alter and reset when STOPPED.
  const stopped = status.connector.state === 'STOPPED';
  const offList = (offsets && offsets.offsets) || [];
  const offView = offsets.error ? h('p', { className: 'err' }, offsets.error)
    : table('Committed offsets', ['Partition', 'Offset'], offList.map((o) => h('tr', null, h('td', null, h('code', null, JSON.stringify(o.partition))), h('td', null, h('code', null, JSON.stringify(o.offset))))), { id: 'offsets' });
  const offId = uid('off');
  const offEd = h('textarea', { id: offId, rows: 6, className: 'code', spellcheck: 'false', disabled: !stopped });
  offEd.value = JSON.stringify({ offsets: offList }, null, 2);
  const offMsg = h('div', { role: 'alert', className: 'err' });
  const offAct = async (label, fn) => {
    try {
      const r = await fn();
      const now = await api.get(`${p}/offsets`);
      again(`${label}: ${r && r.message ? r.message.replace(/\.+$/, '') : 'done'}. The worker now reports ${(now.offsets || []).length} committed offset(s).`, 'ok');
    } catch (e) { offMsg.textContent = `${label} failed: ${errorText(e)}`; }
  };
  const offsetsBox = h('div', null, offView,
    stopped ? null : h('p', { className: 'muted' }, 'Offsets can be altered or reset while the connector is STOPPED (Stop it first).'),
    h('label', { for: offId }, 'Offsets to write (PATCH body)'), offEd, offMsg,
    h('div', { className: 'actions' },
      h('button', { type: 'button', disabled: !stopped, onclick: () => { let b; try { b = JSON.parse(offEd.value); } catch (e) { offMsg.textContent = `Not JSON: ${e.message}`; return; } offAct('Alter offsets', () => api.patch(`${p}/offsets`, b)); } }, 'Alter offsets'),
      h('button', { type: 'button', className: 'danger', disabled: !stopped, onclick: () => { if (confirm(`Reset every offset of ${name}?`)) offAct('Reset offsets', () => api.del(`${p}/offsets`)); } }, 'Reset offsets')));

  render(name,
    h('p', null, h('a', { href: '#/connectors' }, '← All connectors')),
    h('dl', { className: 'facts' },
      h('dt', null, 'State'), h('dd', { id: 'holistic' }, badge(state), ' connector ', badge(status.connector.state)),
      h('dt', null, 'Worker'), h('dd', null, status.connector.worker_id || ''),
      h('dt', null, 'Type'), h('dd', null, status.type || ''),
      h('dt', null, 'Class'), h('dd', null, config['connector.class'] || ''),
      h('dt', null, 'Throughput'), h('dd', null, tp.rate == null ? 'not on this worker' : `${tp.rate.toFixed(1)} records/s (this worker's tasks)`),
      tp.lag == null ? null : [h('dt', null, 'Sink lag'), h('dd', null, `${tp.lag} records`)],
      snap == null ? null : [h('dt', null, 'Snapshot'), h('dd', { id: 'snapshot' }, L.describeSnapshot(snap),
        Object.keys(snap.tables).length ? h('details', null, h('summary', null, 'Rows per table'),
          h('ul', null, Object.keys(snap.tables).sort().map((t) => h('li', null, `${t}: ${snap.tables[t].toLocaleString('en')}`)))) : null)]),
    status.connector.trace ? h('details', null, h('summary', { className: 'err' }, L.firstLine(status.connector.trace)), h('pre', { className: 'trace' }, status.connector.trace)) : null,
    actions,
    h('section', { 'aria-labelledby': 'h-tasks' }, h('h2', { id: 'h-tasks' }, 'Tasks'), tasks),
    h('section', { 'aria-labelledby': 'h-config' }, h('h2', { id: 'h-config' }, 'Configuration'), cfgView, editBox),
    h('section', { 'aria-labelledby': 'h-topics' }, h('h2', { id: 'h-topics' }, 'Topics'), topicsBox,
      h('button', { type: 'button', onclick: () => api.put(`${p}/topics/reset`).then(() => again('Active topics reset.', 'ok'), (e) => announce(errorText(e), 'error')) }, 'Reset active topics')),
    h('section', { 'aria-labelledby': 'h-offsets' }, h('h2', { id: 'h-offsets' }, 'Offsets'), offsetsBox));
}

// ---- Create wizard ------------------------------------------------------

// The wizard's state survives re-renders of its steps.
const wiz = { cls: '', name: '', values: {}, touched: new Set(), defs: [], errors: {}, step: 1 };

async function wizard(params) {
  if (params.get('class') && params.get('class') !== wiz.cls) Object.assign(wiz, { cls: params.get('class'), values: {}, touched: new Set(), errors: {}, step: 2 });
  if (!wiz.cls || wiz.step === 1) return wizardPick();
  if (wiz.step === 3) return wizardReview();
  return wizardForm();
}

async function wizardPick() {
  const plugins = await api.get('/connector-plugins');
  const list = h('ul', { className: 'plugins' });
  const q = h('input', { type: 'search', id: 'plugin-q', placeholder: 'filter plugins' });
  const draw = () => {
    const s = q.value.toLowerCase();
    list.replaceChildren(...plugins.filter((p) => !s || p.class.toLowerCase().includes(s)).map((p) => h('li', null,
      h('button', { type: 'button', className: 'plugin', 'data-class': p.class, onclick: () => { Object.assign(wiz, { cls: p.class, values: {}, touched: new Set(), errors: {}, step: 2 }); location.hash = `#/new?class=${encodeURIComponent(p.class)}`; } },
        h('strong', null, p.class.split('.').pop()), h('span', null, ` ${p.type} · ${p.version || ''}`), h('small', null, p.class)))));
  };
  q.addEventListener('input', draw);
  render('Create a connector: pick a plugin', h('label', { for: 'plugin-q' }, 'Filter'), q, list);
  draw();
}

// validate sends the current values to the plugin's validate endpoint and
// keeps the definitions and the errors by key.
let validations = 0;

async function validateNow() {
  const cfg = { 'connector.class': wiz.cls, ...clean(wiz.values) };
  if (wiz.name) cfg.name = wiz.name;
  const mine = ++validations;
  const v = await api.put(`/connector-plugins/${api.enc(wiz.cls)}/config/validate`, cfg);
  // An answer to older values that arrives late changes nothing.
  if (mine !== validations) return v;
  wiz.defs = (v.configs || []).map((c) => ({ ...c.definition, value: c.value }));
  wiz.errors = {};
  for (const c of v.configs || []) if (c.value && c.value.errors && c.value.errors.length) wiz.errors[c.value.name] = c.value.errors;
  return v;
}

// clean drops empty values (a field left empty takes its default).
function clean(values) {
  const out = {};
  for (const [k, v] of Object.entries(values)) if (v !== '' && v != null) out[k] = v;
  return out;
}

function fieldInput(d, id, describedBy) {
  const v = wiz.values[d.name] ?? '';
  const common = { id, name: d.name, 'aria-describedby': describedBy, 'aria-invalid': wiz.errors[d.name] && wiz.touched.has(d.name) ? 'true' : null, 'aria-required': d.required ? 'true' : null };
  const rec = (d.value && d.value.recommended_values) || [];
  if (d.type === 'BOOLEAN') {
    return h('select', common, h('option', { value: '' }, `default (${d.default_value ?? 'none'})`),
      ['true', 'false'].map((x) => h('option', { value: x, selected: v === x }, x)));
  }
  if (rec.length) {
    return h('select', common, h('option', { value: '' }, `default (${d.default_value ?? 'none'})`),
      rec.map((x) => h('option', { value: x, selected: v === x }, x)));
  }
  return h('input', { ...common, type: d.type === 'PASSWORD' ? 'password' : 'text', value: v, autocomplete: d.type === 'PASSWORD' ? 'new-password' : 'off',
    placeholder: d.default_value != null && d.default_value !== '' ? String(d.default_value) : '',
    inputmode: ['INT', 'LONG', 'SHORT'].includes(d.type) ? 'numeric' : (d.type === 'DOUBLE' ? 'decimal' : null) });
}

let validateTimer = 0;

async function wizardForm() {
  try { await validateNow(); } catch (e) { render('Create a connector', h('p', { className: 'err', role: 'alert' }, errorText(e))); return; }
  const form = h('form', { id: 'wizard', novalidate: true });
  const nameId = 'f-name';
  const nameIn = h('input', { id: nameId, value: wiz.name, required: true, 'aria-required': 'true', autocomplete: 'off' });
  nameIn.addEventListener('input', () => { wiz.name = nameIn.value; });
  const errNodes = new Map();
  const showErrors = () => {
    for (const [key, node] of errNodes) {
      const errs = wiz.touched.has(key) ? wiz.errors[key] || [] : [];
      node.textContent = errs.join(' ');
      const input = form.querySelector(`[name="${CSS.escape(key)}"]`);
      if (input) { if (errs.length) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid'); }
    }
    const n = Object.keys(wiz.errors).filter((k) => wiz.touched.has(k)).length;
    summary.textContent = n ? `${n} field(s) have errors.` : '';
  };
  const live = () => {
    clearTimeout(validateTimer);
    validateTimer = setTimeout(async () => {
      try { await validateNow(); showErrors(); } catch (e) { summary.textContent = errorText(e); }
    }, 400);
  };
  const summary = h('p', { className: 'err', role: 'alert', id: 'wizard-errors' });
  const groups = L.groupDefs(wiz.defs.filter((d) => d.name !== 'connector.class' && d.name !== 'name'));
  const fieldsets = [];
  for (const [g, defs] of groups) {
    const field = (d) => {
      const id = `f-${d.name.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
      const docId = `${id}-doc`, errId = `${id}-err`;
      const input = fieldInput(d, id, `${errId} ${docId}`);
      input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => { wiz.values[d.name] = input.value; wiz.touched.add(d.name); live(); });
      const err = h('div', { id: errId, className: 'field-err', 'data-error-for': d.name });
      errNodes.set(d.name, err);
      return h('div', { className: `field imp-${(d.importance || '').toLowerCase()}`, 'data-field': d.name },
        h('label', { for: id }, d.display_name || d.name, d.required ? h('span', { className: 'req' }, ' (required)') : '',
          h('span', { className: 'imp' }, ` ${(d.importance || '').toLowerCase()} importance`)),
        d.display_name && d.display_name !== d.name ? h('code', { className: 'key' }, d.name) : null,
        input, err,
        h('div', { id: docId, className: 'doc' }, d.documentation || '', d.default_value != null && d.default_value !== '' ? ` Default: ${d.default_value}.` : '', d.type ? ` Type: ${d.type}.` : ''));
    };
    const main_ = defs.filter((d) => d.required || d.importance !== 'LOW' || wiz.values[d.name]);
    const more = defs.filter((d) => !main_.includes(d));
    fieldsets.push(h('fieldset', null, h('legend', null, g), main_.map(field),
      more.length ? h('details', null, h('summary', null, `${more.length} more (low importance)`), more.map(field)) : null));
  }
  const importId = 'f-import';
  const importBox = h('textarea', { id: importId, rows: 4, className: 'code', placeholder: '{"name": "...", "config": {...}}' });
  const file = h('input', { type: 'file', id: 'f-import-file', accept: 'application/json,.json' });
  const doImport = (text) => {
    let j;
    try { j = JSON.parse(text); } catch (e) { summary.textContent = `Import: not JSON: ${e.message}`; return; }
    const cfg = j.config || j;
    if (cfg['connector.class'] && cfg['connector.class'] !== wiz.cls) wiz.cls = cfg['connector.class'];
    wiz.name = j.name || cfg.name || wiz.name;
    wiz.values = {};
    for (const [k, v] of Object.entries(cfg)) if (k !== 'connector.class' && k !== 'name') { wiz.values[k] = String(v); wiz.touched.add(k); }
    const target = `#/new?class=${encodeURIComponent(wiz.cls)}`;
    announce('Configuration imported.');
    if (location.hash !== target) location.hash = target; // the route renders the form
    else wizardForm();
  };
  file.addEventListener('change', async () => { if (file.files[0]) doImport(await file.files[0].text()); });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const d of wiz.defs) wiz.touched.add(d.name);
    if (!wiz.name) { summary.textContent = 'A connector needs a name.'; nameIn.focus(); return; }
    try { await validateNow(); } catch (err) { summary.textContent = errorText(err); return; }
    showErrors();
    const first = Object.keys(wiz.errors)[0];
    if (first) {
      const input = form.querySelector(`[name="${CSS.escape(first)}"]`);
      if (input) { input.closest('details')?.setAttribute('open', ''); input.focus(); }
      return;
    }
    wiz.step = 3;
    wizardReview();
  });
  render(`Create a connector: ${wiz.cls.split('.').pop()}`,
    h('p', null, h('button', { type: 'button', onclick: () => { wiz.step = 1; wiz.cls = ''; location.hash = '#/new'; } }, '← Another plugin'), ' ', h('code', null, wiz.cls)),
    h('details', { className: 'import' }, h('summary', null, 'Import JSON'),
      h('label', { for: importId }, 'Paste a connector (name and config) as JSON'), importBox,
      h('button', { type: 'button', id: 'do-import', onclick: () => doImport(importBox.value) }, 'Import'),
      h('label', { for: 'f-import-file' }, 'or read a file'), file),
    form);
  form.append(
    h('div', { className: 'field' }, h('label', { for: nameId }, 'Name', h('span', { className: 'req' }, ' (required)')), nameIn),
    ...fieldsets, summary,
    h('div', { className: 'actions' }, h('button', { type: 'submit', className: 'primary' }, 'Next: review'),
      h('button', { type: 'button', onclick: exportJSON }, 'Export JSON')));
  showErrors();
}

function wizardConfig() {
  return { name: wiz.name, config: { 'connector.class': wiz.cls, ...clean(wiz.values) } };
}

function exportJSON() {
  const blob = new Blob([JSON.stringify(wizardConfig(), null, 2) + '\n'], { type: 'application/json' });
  const a = h('a', { href: URL.createObjectURL(blob), download: `${wiz.name || 'connector'}.json` });
  document.body.append(a);
  a.click();
  a.remove();
}

function wizardReview() {
  const c = wizardConfig();
  const passwords = L.passwordKeys(wiz.defs);
  const msg = h('p', { role: 'alert', className: 'err' });
  const create = async () => {
    try {
      await api.post('/connectors', c);
    } catch (e) { msg.textContent = `Not created: ${errorText(e)}`; return; }
    Object.assign(wiz, { cls: '', name: '', values: {}, touched: new Set(), errors: {}, step: 1 });
    location.hash = `#/connectors/${encodeURIComponent(c.name)}`;
    const st = await settle(c.name, 'RUNNING');
    if (location.hash === `#/connectors/${encodeURIComponent(c.name)}`) await route();
    announce(`Created. The worker reports ${L.describe(c.name, st)}`, 'ok');
  };
  render(`Review: ${c.name}`,
    table('The configuration to create', ['Property', 'Value', 'Validation'], Object.entries(c.config).map(([k, v]) => h('tr', null,
      h('th', { scope: 'row' }, k), h('td', { className: 'val' }, String(L.masked(k, v, passwords))), h('td', null, (wiz.errors[k] || []).join(' ') || 'ok'))), { id: 'review' }),
    msg,
    h('div', { className: 'actions' },
      h('button', { type: 'button', onclick: () => { wiz.step = 2; wizardForm(); } }, '← Back to the form'),
      h('button', { type: 'button', onclick: exportJSON }, 'Export JSON'),
      h('button', { type: 'button', className: 'primary', id: 'create', onclick: create }, 'Create connector')));
}

// ---- Log levels ---------------------------------------------------------

const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL', 'OFF'];

async function loggers() {
  let all;
  try { all = await api.get('/admin/loggers'); } catch (e) {
    render('Log levels', h('p', { className: 'err' }, `This listener does not serve /admin/loggers (${errorText(e)}); admin.listeners moves it to another listener or turns it off.`));
    return;
  }
  const set = async (name, level) => {
    try {
      const changed = await api.put(`/admin/loggers/${api.enc(name)}`, { level });
      const now = await api.get(`/admin/loggers/${api.enc(name)}`);
      await loggers();
      announce(`${name} is now at ${now.level}${Array.isArray(changed) && changed.length ? ` (${changed.length} logger(s) changed)` : ''}.`, 'ok');
    } catch (e) { announce(`Setting ${name} failed: ${errorText(e)}`, 'error'); }
  };
  const rowsOf = Object.entries(all).sort(([a], [b]) => a === 'root' ? -1 : b === 'root' ? 1 : a.localeCompare(b));
  const newName = h('input', { id: 'lg-name', placeholder: 'org.apache.kafka.connect', autocomplete: 'off' });
  const newLevel = h('select', { id: 'lg-level' }, LEVELS.map((l) => h('option', { value: l, selected: l === 'DEBUG' }, l)));
  render('Log levels',
    table('Loggers of this worker', ['Logger', 'Level', 'Last modified'], rowsOf.map(([n, v]) => {
      const id = uid('lvl');
      const sel = h('select', { id, 'aria-label': `Level of ${n}`, onchange: (e) => set(n, e.target.value) }, LEVELS.map((l) => h('option', { value: l, selected: l === v.level }, l)));
      return h('tr', { 'data-logger': n }, h('th', { scope: 'row' }, n), h('td', null, sel), h('td', null, v.last_modified ? new Date(v.last_modified).toLocaleString() : '—'));
    }), { id: 'loggers' }),
    h('form', { className: 'filters', onsubmit: (e) => { e.preventDefault(); if (newName.value) set(newName.value.trim(), newLevel.value); } },
      h('label', { for: 'lg-name' }, 'Logger'), newName, h('label', { for: 'lg-level' }, 'Level'), newLevel,
      h('button', { type: 'submit' }, 'Set level')));
}

// ---- Router -------------------------------------------------------------

async function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean);
  const section = parts[0] || 'overview';
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === section) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  try {
    if (section === 'connectors' && parts[1]) await detail(decodeURIComponent(parts.slice(1).join('/')));
    else if (section === 'connectors') await connectors(params);
    else if (section === 'new') await wizard(params);
    else if (section === 'loggers') await loggers();
    else await overview();
  } catch (e) {
    render('Error', h('p', { className: 'err', role: 'alert' }, errorText(e)), h('p', null, h('a', { href: '#/' }, 'Overview')));
  }
  main.dataset.ready = String(Date.now());
}

window.addEventListener('hashchange', () => { if (!location.hash.startsWith('#main')) route(); });
document.getElementById('skip').addEventListener('click', (e) => { e.preventDefault(); main.focus(); });
route();
