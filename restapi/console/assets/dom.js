// A tiny DOM builder: text is always set as text, never parsed as HTML.

// h creates an element: attrs sets properties (on*, className, value,
// checked, ...) or attributes (aria-*, data-*, for, role, ...); children
// are nodes, strings or arrays of them (null and false are skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'className' || k === 'value' || k === 'checked' || k === 'disabled' || k === 'hidden' || k === 'open' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// badge is a state shown as a word (never by colour alone).
export function badge(state) {
  const s = String(state || 'unknown');
  return h('span', { className: `badge b-${s.toLowerCase()}`, 'data-state': s }, s);
}

// table builds a table with a caption, header cells and rows of cells.
export function table(caption, heads, bodyRows, attrs = {}) {
  return h('div', { className: 'table-wrap' },
    h('table', attrs,
      h('caption', null, caption),
      h('thead', null, h('tr', null, heads.map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', null, bodyRows)));
}

let seq = 0;
// uid returns a fresh id for label/aria references.
export const uid = (p = 'f') => `${p}-${++seq}`;
