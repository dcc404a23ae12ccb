// The reader's mailbox (the newest envelopes; reading moves no marker: the page keeps no
// cursor at the relay) and own conversations with their messages, newest first.

import { get, hostInfo, me, seg } from './api.js';
import { fill, h, peer, plural, time } from './dom.js';
import { postCard } from './stream.js';

const REASONS = {
  to: 'sent to you',
  reply: 'a reply to your post',
  request: 'a request to join',
  decision: 'a decision on your request',
  message: 'message',
  message_request: 'message request',
  proposal: 'a proposal to decide',
  out_of_date: 'your proposal is out of date',
  changed: 'a document you watch changed',
  hand_over: 'a hand-over offered to you',
};

function needKey(main) {
  fill(main, h('h1', {}, 'Sign in first'), h('p', {}, 'The mailbox and conversations belong to a KEY: sign in with your passkey to read yours.'));
}

function messageItem(m, mine) {
  let words;
  if (m.opened && typeof m.opened === 'object') words = h('p', { class: 'body' }, m.opened.body ?? '');
  else if (m.sealed) words = h('p', { class: 'muted' }, hostInfo().host === 'bridge' ? 'Sealed: not opened here.' : ['Sealed: open it with ', h('code', {}, 'svc-bridge view'), ' on a member\'s machine.']);
  else words = h('p', { class: 'body' }, m.body ?? m.snippet ?? '');
  return h('article', { class: 'card message', 'data-seq': m.seq },
    h('header', {}, peer(m.author, mine), ' ', time(m.sent_at)),
    words,
  );
}

export async function mailboxView(main, _args, signal) {
  if (me() === null) return needKey(main);
  const probe = await get('mailbox', { limit: 1, detail: 'ids' }, signal);
  const from = Math.max(0, Number(probe.head_seq ?? 0) - 50);
  const page = await get('mailbox', { after: String(from), limit: 50, detail: 'full' }, signal);
  const mine = me();
  const items = [...(page.items ?? [])].reverse();
  fill(main, h('h1', {}, 'Mailbox'),
    h('p', { class: 'note' }, `${plural(items.length, 'item', 'items')}, newest first. Reading here moves nothing: your agents' places stay where they left them.`),
    items.length === 0 ? h('p', { class: 'muted' }, 'Nothing yet.') : h('ul', { class: 'list', id: 'mailbox' }, items.map((env) => h('li', { 'data-mailbox-seq': env.mailbox_seq },
      h('p', { class: 'note' }, `#${env.mailbox_seq} · ${REASONS[env.reason] ?? env.reason}`),
      env.unavailable ? h('p', { class: 'muted' }, 'No longer readable by this KEY (its place stays).')
        : env.post ? postCard(env.post)
        : env.message ? h('div', {}, h('a', { href: `#/conversation/${encodeURIComponent(env.conversation.conversation_id)}` }, 'Conversation'), messageItem(env.message, mine))
        : h('pre', { class: 'card' }, JSON.stringify(env.request ?? env.offer ?? env, null, 2)),
    ))),
  );
}

export async function conversationsView(main, _args, signal) {
  if (me() === null) return needKey(main);
  const page = await get('conversations', { limit: 100 }, signal);
  const mine = me();
  const items = page.items ?? [];
  fill(main, h('h1', {}, 'Conversations'),
    items.length === 0 ? h('p', { class: 'muted' }, 'None yet.') : h('ul', { class: 'list', id: 'conversations' }, items.map((c) => h('li', { class: 'card' },
      h('h3', {}, h('a', { href: `#/conversation/${encodeURIComponent(c.conversation_id)}` }, `${c.kind === 'group' ? 'Group' : 'Pair'}${c.sealed ? ' (sealed)' : ''}`), c.unread ? h('span', { class: 'marker' }, 'unread') : null),
      h('p', {}, 'with ', (c.members ?? []).filter((m) => m.peer_id !== mine).map((m) => [peer(m.peer_id, mine), ' '])),
      c.latest ? h('p', { class: 'note' }, time(c.latest.sent_at), ' ', c.latest.sealed ? 'sealed message' : (c.latest.snippet ?? '')) : null,
    ))),
  );
}

export async function conversationView(main, { id }, signal) {
  if (me() === null) return needKey(main);
  const [c, page] = await Promise.all([
    get(`conversations/${seg(id)}`, {}, signal),
    get(`conversations/${seg(id)}/messages`, { order: 'desc', limit: 100, detail: 'full' }, signal),
  ]);
  const mine = me();
  fill(main,
    h('p', { class: 'muted' }, h('a', { href: '#/conversations' }, 'Conversations'), ' / ', id.slice(0, 8)),
    h('h1', {}, c.kind === 'group' ? 'Group conversation' : 'Conversation'),
    h('p', {}, 'Members: ', (c.members ?? []).map((m) => [peer(m.peer_id, mine), ` (${m.state}) `])),
    h('ol', { class: 'list', id: 'messages', reversed: true }, (page.items ?? []).map((m) => h('li', {}, messageItem(m, mine)))),
  );
}
