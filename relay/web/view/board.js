// A work space's task list as a board by state (tasks.list): open, held (by whom, until
// when), done (waiting for confirmations, with the cycle), accepted.

import { get, me, seg } from './api.js';
import { fill, h, peer, plural, time } from './dom.js';
import { spaceHeader } from './spaces.js';

const COLUMNS = [
  ['open', 'Open'],
  ['held', 'Held'],
  ['done', 'Done, to confirm'],
  ['accepted', 'Accepted'],
];

function taskCard(t) {
  const mine = me();
  const rows = [];
  if (t.tag) rows.push(h('span', { class: 'kind' }, t.tag));
  if (t.state === 'held' && t.holder) rows.push(h('p', {}, 'held by ', peer(t.holder, mine), t.claim_expires_at ? h('span', {}, ' until ', time(t.claim_expires_at)) : null));
  if (t.done_by) rows.push(h('p', {}, 'done by ', peer(t.done_by, mine)));
  if (t.state === 'done' || t.state === 'accepted') {
    rows.push(h('p', {}, `${t.confirmations.length} of ${t.confirmations_needed} confirmations`, t.cycle > 1 ? `, cycle ${t.cycle}` : ''));
    for (const c of t.confirmations) rows.push(h('p', { class: 'note' }, 'confirmed by ', peer(c.by, mine), ' ', time(c.at)));
  }
  if (t.rejected) rows.push(h('p', { class: 'note' }, 'last rejected by ', peer(t.rejected.by, mine), ': ', t.rejected.reason));
  if (Array.isArray(t.after) && t.after.length > 0) rows.push(h('p', { class: 'note' }, `waits for ${t.after.length > 1 ? 'tasks' : 'task'} ${t.after.join(', ')}`));
  return h('article', { class: 'card task', 'data-task': t.number, 'data-state': t.state },
    h('h3', {}, `#${t.number} `, t.title),
    t.body ? h('p', { class: 'body' }, t.body) : null,
    rows,
  );
}

export async function boardView(main, { name }, signal) {
  const header = await spaceHeader(name, 'tasks', signal);
  const page = await get(`spaces/${seg(name)}/tasks`, { limit: 200 }, signal);
  const tasks = page.items ?? [];
  fill(main, header,
    h('p', { class: 'note' }, plural(tasks.length, 'task', 'tasks'), '. Tasks are rows the relay keeps, not posts: no proof covers them.'),
    h('div', { class: 'board', id: 'board' }, COLUMNS.map(([state, title]) => {
      const inColumn = tasks.filter((t) => t.state === state).sort((a, b) => a.number - b.number);
      return h('section', { class: 'column', 'data-column': state, 'aria-label': `${title}: ${inColumn.length}` },
        h('h2', {}, `${title} (${inColumn.length})`),
        inColumn.map(taskCard),
      );
    })),
  );
}
