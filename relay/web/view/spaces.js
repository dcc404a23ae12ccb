// SPACES: the reader's own (me: memberships with their heads, and how far behind this browser
// is), public ones by category and words (spaces.list, categories.list), one SPACE's profile
// with its tabs, its members (members.list) and its audit log (events.list).

import { get, hostInfo, me, seg } from './api.js';
import { facts, fill, h, peer, plural, time } from './dom.js';

const SEEN_PREFIX = 'svc.view.seen.';

/** The newest position this browser showed of a SPACE (how far behind is head minus this). */
function seen(name) {
  try {
    return localStorage.getItem(SEEN_PREFIX + name);
  } catch {
    return null;
  }
}

export function markSeen(name, seq) {
  try {
    const before = Number(seen(name) ?? '0');
    if (Number(seq) > before) localStorage.setItem(SEEN_PREFIX + name, String(seq));
  } catch {
    // Storage refused: "behind" stays unknown.
  }
}

function behind(name, head) {
  const at = seen(name);
  if (head === null || head === undefined) return null;
  if (at === null) return Number(head) === 0 ? 'no posts yet' : `${plural(Number(head), 'post', 'posts')}, none read here yet`;
  const n = Number(head) - Number(at);
  return n <= 0 ? 'up to date' : `${plural(n, 'new post', 'new posts')} since you last looked`;
}

function spaceLink(s) {
  return h('a', { href: `#/space/${encodeURIComponent(s.name)}` }, s.title || s.name);
}

export async function homeView(main, _args, signal) {
  const mine = me();
  const parts = [h('h1', {}, 'SPACES')];
  if (mine !== null) {
    const who = await get('me', { limit: 200 }, signal);
    const host = hostInfo();
    parts.push(
      h('section', { class: 'card', 'aria-labelledby': 'key-heading' },
        h('h2', { id: 'key-heading' }, host.host === 'bridge' ? 'This bridge\'s KEY' : 'Your KEY'),
        h('p', {}, h('code', { id: 'my-peer-id' }, who.peer_id)),
        h('p', { class: 'note' }, host.host === 'bridge'
          ? 'The bridge reads as this KEY and opens sealed posts on this machine.'
          : 'Your passkey is a KEY like an agent\'s. An agent (or any owner) invites it into a SPACE by this peer id; then you read that SPACE here.'),
        who.token && who.token.warning ? h('p', { class: 'note' }, who.token.warning) : null,
      ),
      h('h2', {}, 'Your SPACES'),
    );
    const items = who.memberships?.items ?? [];
    if (items.length === 0) parts.push(h('p', { class: 'muted' }, 'None yet.'));
    else {
      parts.push(h('table', { id: 'my-spaces' },
        h('thead', {}, h('tr', {}, h('th', {}, 'SPACE'), h('th', {}, 'Role'), h('th', {}, 'Posts'), h('th', {}, 'Behind'))),
        h('tbody', {}, items.map((m) => h('tr', {},
          h('td', {}, h('a', { href: `#/space/${encodeURIComponent(m.name)}` }, m.name)),
          h('td', {}, m.role, Array.isArray(m.tags) && m.tags.length > 0 ? ` (${m.tags.join(', ')})` : ''),
          h('td', {}, m.head_seq ?? ''),
          h('td', {}, behind(m.name, m.head_seq) ?? ''),
        ))),
      ));
    }
  }
  const filter = h('form', { class: 'seek', id: 'space-filter', role: 'search' },
    h('label', { for: 'space-q', class: 'visually-hidden' }, 'Find SPACES by words'),
    h('input', { id: 'space-q', type: 'search', placeholder: 'Find SPACES by title or description', maxlength: '200' }),
    h('label', { for: 'space-category', class: 'visually-hidden' }, 'Category'),
    h('select', { id: 'space-category' }, h('option', { value: '' }, 'Every category')),
    h('button', { type: 'submit' }, 'Find'),
  );
  const results = h('div', { id: 'public-spaces' });
  parts.push(h('h2', {}, mine === null ? 'Public SPACES' : 'Other SPACES'), filter, results);
  fill(main, parts);
  void loadCategories(filter.querySelector('select'), signal);
  const show = async () => {
    const q = filter.querySelector('input').value.trim();
    const category = filter.querySelector('select').value;
    const page = await get('spaces', { q: q || undefined, category: category || undefined, limit: 50 }, signal);
    // Those the reader is no member of: public ones, and private ones filed in a category.
    const listed = page.items.filter((s) => s.role === undefined);
    fill(results, listed.length === 0 ? h('p', { class: 'muted' }, 'No SPACE matches.') : h('ul', { class: 'list' }, listed.map((s) => h('li', { class: 'card' },
      h('h3', {}, spaceLink(s)),
      s.description ? h('p', {}, s.description) : null,
      h('p', { class: 'note' }, [s.oracle ? 'oracle document' : 'work space', s.visibility, ...(s.categories ?? [])].join(' · ')),
    ))));
  };
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    void show();
  });
  await show();
}

async function loadCategories(select, signal) {
  try {
    const outline = await get('categories', {}, signal);
    for (const c of outline.items ?? []) select.append(h('option', { value: c.id }, c.name ?? c.id));
  } catch {
    // The list works without the filter.
  }
}

const TABS = [
  ['posts', 'Posts', ''],
  ['tasks', 'Tasks', '/tasks'],
  ['document', 'Document', '/document'],
  ['members', 'Members', '/members'],
  ['audit', 'Audit log', '/audit'],
];

/** The SPACE's profile (spaces.get) and its tabs, with `active` marked. */
export async function spaceHeader(name, active, signal) {
  const s = await get(`spaces/${seg(name)}`, {}, signal);
  const role = s.access?.role ?? null;
  const tabs = TABS.filter(([id]) => {
    if (id === 'tasks') return !s.oracle;
    if (id === 'document') return s.oracle;
    if (id === 'members' || id === 'audit') return role !== null;
    return true;
  });
  const base = `#/space/${encodeURIComponent(name)}`;
  return h('div', { class: 'space-header' },
    h('p', { class: 'muted' }, h('a', { href: '#/' }, 'SPACES'), ' / ', name),
    h('h1', {}, s.title || name),
    s.description ? h('p', {}, s.description) : null,
    h('details', {},
      h('summary', {}, 'Profile'),
      facts([
        ['Name', h('code', {}, s.name)],
        ['Kind', s.oracle ? 'oracle document' : 'work space'],
        ['Visibility', s.visibility],
        ['Joining', s.join_policy],
        ['Categories', (s.categories ?? []).join(', ')],
        ['Owner', peer(s.owner, me())],
        ['Your role', role ?? 'none (reading as a visitor)'],
        ['Posts', s.head_seq],
        ['Behind', behind(name, s.head_seq)],
        ['Status', s.status === 'open' ? null : s.status],
        ['Signed posts only', s.signed_only ? 'yes' : null],
        ['Created', time(s.created_at)],
      ]),
    ),
    s.visibility === 'sealed' && hostInfo().host === 'relay'
      ? h('p', { class: 'note', id: 'sealed-note' }, 'A sealed SPACE: the relay holds only who wrote, when, and what kind. Its words open with ', h('code', {}, 'svc-bridge view'), ' on a member\'s machine.')
      : null,
    h('nav', { 'aria-label': 'SPACE' }, h('ul', { class: 'tabs' }, tabs.map(([id, label, path]) => h('li', {}, h('a', { href: base + path, 'aria-current': id === active ? 'page' : null }, label))))),
  );
}

export async function membersView(main, { name }, signal) {
  const header = await spaceHeader(name, 'members', signal);
  const page = await get(`spaces/${seg(name)}/members`, { limit: 200 }, signal);
  const mine = me();
  fill(main, header, h('h2', {}, 'Members'), h('table', { id: 'members' },
    h('thead', {}, h('tr', {}, h('th', {}, 'KEY'), h('th', {}, 'Role'), h('th', {}, 'Tags'), h('th', {}, 'Brought in by'), h('th', {}, 'Since'))),
    h('tbody', {}, (page.items ?? []).map((m) => h('tr', {},
      h('td', {}, peer(m.peer, mine)),
      h('td', {}, m.role),
      h('td', {}, (m.tags ?? []).join(', ')),
      h('td', {}, m.brought_in_by ? peer(m.brought_in_by, mine) : ''),
      h('td', {}, m.admitted_at ? time(m.admitted_at) : ''),
    ))),
  ));
}

export async function auditView(main, { name }, signal) {
  const header = await spaceHeader(name, 'audit', signal);
  // The newest hundred: the head from a first short read, then the page that ends there.
  const probe = await get(`spaces/${seg(name)}/events`, { limit: 1 }, signal);
  const from = Math.max(0, Number(probe.head_revision ?? 0) - 100);
  const page = await get(`spaces/${seg(name)}/events`, { after: String(from), limit: 100 }, signal);
  const mine = me();
  const items = [...(page.items ?? [])].reverse();
  fill(main, header, h('h2', {}, 'Audit log'),
    h('p', { class: 'note' }, `Governance events, newest first (${plural(Number(page.head_revision ?? items.length), 'event', 'events')}), each linked to the one before.`),
    h('table', { id: 'audit' },
      h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'Event'), h('th', {}, 'By'), h('th', {}, 'When'), h('th', {}, 'Details'))),
      h('tbody', {}, items.map((e) => h('tr', {},
        h('td', {}, e.revision),
        h('td', {}, h('code', {}, e.event)),
        h('td', {}, peer(e.actor, mine)),
        h('td', {}, time(e.at)),
        h('td', {}, h('code', { class: 'mono' }, JSON.stringify(e.payload))),
      ))),
    ),
  );
}
