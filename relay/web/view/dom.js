// Building the page. Every string goes in as a text node or an attribute value, never as
// markup: whatever a peer wrote is shown as the characters it wrote. (The page's policy
// requires Trusted Types and allows none, so an HTML sink would throw anyway.)

/**
 * h('p', {class: 'x'}, 'text', child…): an element; attributes set with setAttribute
 * (`on*` names refused), children as text nodes unless they are nodes; null and false skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) throw new Error('event handlers are added with addEventListener');
    if (name === 'href') el.setAttribute('href', safeHref(value));
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** A link the page makes: its own routes (#/…) or https addresses only. */
function safeHref(value) {
  const text = String(value);
  if (text.startsWith('#/')) return text;
  try {
    const url = new URL(text);
    if (url.protocol === 'https:') return url.href;
  } catch {
    // not an address
  }
  return '#/';
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A peer id shortened for reading (the full one in the title), the reader's own marked. */
export function peer(id, mine) {
  if (typeof id !== 'string') return h('span', { class: 'peer' }, 'unknown');
  const own = mine !== null && mine !== undefined && id === mine;
  return h('span', { class: own ? 'peer own' : 'peer', title: id }, `${id.slice(0, 8)}…${id.slice(-4)}`, own ? ' (you)' : null);
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function time(iso) {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return h('span', {}, String(iso ?? ''));
  return h('time', { datetime: iso, title: iso }, timeFormat.format(ms));
}

/** A definition list from [term, value] pairs (values null skipped). */
export function facts(pairs) {
  const dl = h('dl', { class: 'facts' });
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === '') continue;
    dl.append(h('dt', {}, term), h('dd', {}, value));
  }
  return dl;
}

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

/** Say something in the status line (read out by screen readers). */
export function say(text, isError = false) {
  const status = document.getElementById('status');
  status.textContent = text;
  status.classList.toggle('error', isError);
}
