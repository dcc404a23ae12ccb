// An oracle space's current document, rendered by its grammar (spec/1-concepts.md "Oracle
// document and version"; shared/oracle-text.ts decides what the spec leaves open): headings
// `#` to `###` start sections, `- ` list items, fenced code blocks, inline code, and links
// `[[space]]`, `[[space/12]]`, `[[https://…]]`, `[[scheme:value]]` with an optional label
// after `|`. Everything is built as elements and text; nothing is parsed as HTML. Below it,
// the versions with their decisions and the proposals still waiting.

import { get, me, seg } from './api.js';
import { fill, h, peer, time } from './dom.js';
import { spaceHeader } from './spaces.js';

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const POST = /^([a-z0-9][a-z0-9-]{0,62})\/([1-9][0-9]*)$/;
const FINGERPRINT = /^[a-z0-9][a-z0-9._-]*:\S.*$/;

function link(inner) {
  const bar = inner.indexOf('|');
  const target = (bar < 0 ? inner : inner.slice(0, bar)).trim();
  const label = bar < 0 ? '' : inner.slice(bar + 1).trim();
  if (/^https:\/\/\S+$/.test(target)) return h('a', { href: target, rel: 'noopener noreferrer nofollow', class: 'external' }, label || target);
  const post = POST.exec(target);
  if (post) return h('a', { href: `#/space/${post[1]}/post/${post[2]}`, 'data-ref': 'post' }, label || target);
  if (NAME.test(target)) return h('a', { href: `#/space/${target}`, 'data-ref': 'space' }, label || target);
  if (FINGERPRINT.test(target)) return h('code', { title: 'fingerprint' }, label ? `${label} (${target})` : target);
  return `[[${inner}]]`;
}

/** One line's inline parts: code spans first (nothing inside is a link), then links in the rest. */
function inline(line) {
  const out = [];
  let i = 0;
  let text = '';
  const flush = () => {
    if (text !== '') out.push(...links(text));
    text = '';
  };
  while (i < line.length) {
    if (line[i] === '`') {
      let n = 0;
      while (line[i + n] === '`') n++;
      const fence = '`'.repeat(n);
      let close = line.indexOf(fence, i + n);
      while (close >= 0 && line[close + n] === '`') close = line.indexOf(fence, close + n + 1);
      if (close >= 0) {
        flush();
        out.push(h('code', {}, line.slice(i + n, close)));
        i = close + n;
        continue;
      }
      text += fence;
      i += n;
      continue;
    }
    text += line[i];
    i++;
  }
  flush();
  return out;
}

function links(text) {
  const out = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf('[[', at);
    if (open < 0) break;
    const close = text.indexOf(']]', open + 2);
    if (close < 0) break;
    const again = text.indexOf('[[', open + 2);
    if (again >= 0 && again < close) {
      out.push(text.slice(at, again));
      at = again;
      continue;
    }
    out.push(text.slice(at, open), link(text.slice(open + 2, close)));
    at = close + 2;
  }
  out.push(text.slice(at));
  return out.filter((x) => x !== '');
}

/** The document's text as elements. */
export function renderDocument(text) {
  const root = h('div', { class: 'document', id: 'document' });
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  let list = null;
  let para = null;
  let fence = null;
  for (const line of lines) {
    if (fence !== null) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1][0] === fence.char && close[1].length >= fence.length) {
        root.append(h('pre', {}, h('code', {}, fence.lines.join('\n'))));
        fence = null;
      } else fence.lines.push(line);
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !(open[1][0] === '`' && open[2].includes('`'))) {
      list = null;
      para = null;
      fence = { char: open[1][0], length: open[1].length, lines: [] };
      continue;
    }
    const heading = /^(#{1,3})(?:[ \t](.*)|)$/.exec(line);
    if (heading) {
      list = null;
      para = null;
      root.append(h(`h${heading[1].length + 1}`, {}, inline((heading[2] ?? '').trim())));
      continue;
    }
    if (line.startsWith('- ')) {
      para = null;
      if (list === null) {
        list = h('ul', {});
        root.append(list);
      }
      list.append(h('li', {}, inline(line.slice(2))));
      continue;
    }
    list = null;
    if (line.trim() === '') {
      para = null;
      continue;
    }
    if (para === null) {
      para = h('p', {});
      root.append(para);
    } else para.append(h('br', {}));
    para.append(...inline(line));
  }
  if (fence !== null) root.append(h('pre', {}, h('code', {}, fence.lines.join('\n'))));
  return root;
}

function versionItem(v) {
  const mine = me();
  const d = v.decision;
  return h('li', { class: 'card', 'data-version': v.seq, 'data-state': v.state },
    h('p', {}, h('span', { class: 'kind' }, v.state), ' ', h('a', { href: `#/space/${encodeURIComponent(v.space)}/post/${v.seq}` }, `version #${v.seq}`), ' by ', peer(v.author, mine), ' ', time(v.posted_at)),
    v.summary ? h('p', {}, v.summary) : null,
    v.snippet ? h('p', { class: 'body note' }, v.snippet) : null,
    d ? h('p', { class: 'note' }, `${d.kind === 'veto' ? 'declined' : 'decided'} by `, peer(d.by, mine), d.reason ? `: ${d.reason}` : '') : null,
  );
}

export async function documentView(main, { name }, signal) {
  const header = await spaceHeader(name, 'document', signal);
  const [doc, versions] = await Promise.all([
    get(`spaces/${seg(name)}/document`, {}, signal),
    get(`spaces/${seg(name)}/versions`, { limit: 50 }, signal),
  ]);
  const items = (versions.items ?? []).map((v) => ({ ...v, space: name }));
  const waiting = items.filter((v) => v.state === 'waiting');
  const v = doc.version;
  fill(main, header,
    v ? h('p', { class: 'note' }, 'Current version ', h('a', { href: `#/space/${encodeURIComponent(name)}/post/${v.seq}` }, `#${v.seq}`), v.author ? h('span', {}, ' by ', peer(v.author, me())) : null, '. Open it to check its proof.') : null,
    h('article', { class: 'card' }, doc.text === '' ? h('p', { class: 'muted' }, 'No version yet.') : renderDocument(doc.text)),
    h('h2', {}, `Waiting proposals (${waiting.length})`),
    waiting.length === 0 ? h('p', { class: 'muted' }, 'None.') : h('ul', { class: 'list versions', id: 'waiting' }, waiting.map(versionItem)),
    h('h2', {}, 'Versions'),
    h('ul', { class: 'list versions', id: 'versions' }, items.filter((x) => x.state !== 'waiting').map(versionItem)),
  );
}
