// The console's REST client: same origin, so the browser adds the worker's
// basic credentials and uses its HTTPS like for the page itself.

// ApiError is a REST error answer: its status and Kafka Connect's message.
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

// base is the worker's root: the console lives at <root>/ui/.
const base = new URL('..', document.baseURI).pathname.replace(/\/$/, '');

// enc encodes one path segment (a connector or logger name).
export const enc = (s) => encodeURIComponent(s);

// call sends a request and returns the parsed JSON answer (null for an
// empty body); an error answer throws ApiError with the worker's message.
export async function call(method, path, body) {
  const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(base + path, init);
  const text = await resp.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!resp.ok) {
    const msg = data && typeof data === 'object' && data.message ? data.message : `${resp.status} ${resp.statusText || ''}`.trim();
    throw new ApiError(resp.status, msg, data);
  }
  return data;
}

// text fetches a text resource (/metrics), or null when it is not served.
export async function text(path) {
  try {
    const resp = await fetch(base + path, { credentials: 'same-origin' });
    return resp.ok ? await resp.text() : null;
  } catch {
    return null;
  }
}

export const get = (p) => call('GET', p);
export const put = (p, b) => call('PUT', p, b);
export const post = (p, b) => call('POST', p, b);
export const patch = (p, b) => call('PATCH', p, b);
export const del = (p) => call('DELETE', p);

// batch is every connector with its status and info in ONE request
// (KIP-465), whatever their number.
export const batch = () => get('/connectors?expand=status&expand=info');
