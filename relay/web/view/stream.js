// A SPACE's posts as a stream, newest first (posts.read at full detail), and new posts as
// they come: with a token, a long poll (`wait`, up to 25 s, after the head); without one, a
// read of what came after the head every 15 s (the relay holds a read only for a KEY).

import { get, hostInfo, me, seg } from './api.js';
import { fill, h, peer, plural, say, time } from './dom.js';
import { markSeen, spaceHeader } from './spaces.js';

const PAGE = 50;
const ANONYMOUS_POLL_MS = 15_000;

/** What a sealed post says where its words are not opened here. */
export function sealedNote() {
  return hostInfo().host === 'bridge'
    ? ['Sealed: this bridge could not open it (no key for its generation yet).']
    : ['Sealed: its words never reach the relay. Open it with ', h('code', {}, 'svc-bridge view'), ' on a member\'s machine.'];
}

/** The words a post shows: the bridge's opened words, else its own title and body. */
export function wordsOf(p) {
  if (p.opened && typeof p.opened === 'object') return { title: p.opened.title ?? null, body: p.opened.body ?? null, opened: true };
  return { title: p.title ?? null, body: p.body ?? p.snippet ?? null, opened: false };
}

function titleOf(p, words) {
  if (words.title !== null && words.title !== '') return words.title;
  return p.sealed && !words.opened ? `Sealed ${p.kind}` : '(no title)';
}

/** One post as a card: kind, author, time, title, body as text, fingerprints, links, markers. */
export function postCard(p, opts = {}) {
  const mine = me();
  const words = wordsOf(p);
  const link = `#/space/${encodeURIComponent(p.space)}/post/${p.seq}`;
  const markers = [];
  if (p.unavailable) markers.push(h('span', { class: 'marker' }, `${p.unavailable.state}${p.unavailable.reason ? `: ${p.unavailable.reason}` : ''}`));
  if (p.sealed && !words.opened) markers.push(h('span', { class: 'marker' }, 'sealed'));
  if (words.opened) markers.push(h('span', { class: 'kind' }, 'opened on this machine'));
  if (p.superseded_by) markers.push(h('span', { class: 'marker' }, 'superseded'));
  if (p.retracted_by) markers.push(h('span', { class: 'marker' }, 'retracted'));
  if (p.no_role) markers.push(h('span', { class: 'marker' }, 'author had no role'));
  const relations = [];
  const postLink = (label, id) => relations.push(h('span', {}, `${label} `, h('a', { href: `#/post/${encodeURIComponent(id)}`, title: id, class: 'mono' }, String(id).slice(0, 8))));
  if (p.reply_to) postLink('reply to', p.reply_to);
  if (p.supersedes) postLink('supersedes', p.supersedes);
  if (p.retracts) postLink('retracts', p.retracts);
  if (Array.isArray(p.to) && p.to.length > 0) relations.push(h('span', {}, 'to ', p.to.map((t) => peer(t, mine))));
  if (typeof p.reply_count === 'number' && p.reply_count > 0) relations.push(h('span', {}, plural(p.reply_count, 'reply', 'replies')));
  const fingerprints = Array.isArray(p.fingerprints) ? p.fingerprints : [];
  let body = null;
  if (p.unavailable) body = h('p', { class: 'muted' }, 'Its words are not shown; its place in the chain stays.');
  else if (p.sealed && !words.opened) body = h('p', { class: 'muted' }, sealedNote());
  else if (words.body !== null && words.body !== '') body = h('p', { class: 'body' }, words.body);
  return h(
    'article',
    { class: opts.fresh ? 'card post new' : 'card post', 'data-seq': p.seq, 'aria-labelledby': `post-${p.seq}-title` },
    h('header', {},
      h('span', { class: 'kind' }, p.kind),
      h('span', {}, 'by ', peer(p.author, mine)),
      time(p.posted_at),
      h('a', { href: link, 'aria-label': `Post ${p.seq}: open and check its proof` }, `#${p.seq}`),
      p.signed ? h('span', { class: 'muted' }, 'signed') : h('span', { class: 'muted' }, 'unsigned'),
      markers,
    ),
    h('h3', { id: `post-${p.seq}-title` }, opts.noLink ? titleOf(p, words) : h('a', { href: link }, titleOf(p, words))),
    body,
    fingerprints.length > 0 ? h('ul', { class: 'fingerprints', 'aria-label': 'Fingerprints' }, fingerprints.map((f) => h('li', {}, `${f.scheme}:${f.value}`))) : null,
    relations.length > 0 ? h('div', { class: 'links' }, relations) : null,
  );
}

export async function streamView(main, { name }, signal) {
  const header = await spaceHeader(name, 'posts', signal);
  const list = h('div', { class: 'list', id: 'posts', 'aria-live': 'polite', 'aria-relevant': 'additions' });
  const more = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Older posts');
  fill(main, header, list, more);
  const first = await get(`spaces/${seg(name)}/posts`, { order: 'desc', limit: PAGE, detail: 'full' }, signal);
  let head = first.head_seq ?? '0';
  markSeen(name, head);
  if (first.items.length === 0) list.append(h('p', { class: 'muted', id: 'no-posts' }, 'No posts yet.'));
  for (const p of first.items) list.append(postCard(p));
  let oldest = first.items.length > 0 ? first.items[first.items.length - 1].seq : null;
  more.hidden = oldest === null || oldest === '1';
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      // A page of the older posts, ascending from where it starts, shown newest first.
      const from = Math.max(0, Number(oldest) - 1 - PAGE);
      const page = await get(`spaces/${seg(name)}/posts`, { after: String(from), limit: Number(oldest) - 1 - from, detail: 'full' }, signal);
      for (const p of page.items.reverse()) list.append(postCard(p));
      oldest = String(from + 1);
      more.hidden = from === 0;
    } catch (e) {
      say(e.message, true);
    } finally {
      more.disabled = false;
    }
  });
  void follow(name, () => head, (next) => (head = next), list, signal);
}

/** New posts after the head, while the view is open. */
async function follow(name, head, setHead, list, signal) {
  const withKey = me() !== null;
  while (!signal.aborted) {
    try {
      const page = await get(`spaces/${seg(name)}/posts`, { after: head(), detail: 'full', limit: PAGE, wait: withKey ? 25 : undefined }, signal);
      if (page.items.length > 0) {
        document.getElementById('no-posts')?.remove();
        for (const p of page.items) list.prepend(postCard(p, { fresh: true }));
        say(`${plural(page.items.length, 'new post', 'new posts')} in ${name}.`);
      }
      setHead(page.next_after ?? head());
      markSeen(name, head());
      if (page.has_more) continue;
      if (!withKey) await pause(ANONYMOUS_POLL_MS, signal);
    } catch (e) {
      if (signal.aborted) return;
      // A refusal (rate limit, busy) or a network gap: wait, then read again.
      await pause(e && e.status === 429 ? 30_000 : ANONYMOUS_POLL_MS, signal);
    }
  }
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
