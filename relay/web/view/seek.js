// SEEK across what the reader may read (seek): its own SPACES and every public one.

import { get } from './api.js';
import { fill, h, plural } from './dom.js';
import { postCard } from './stream.js';

export async function seekView(main, { q }, signal) {
  const input = document.getElementById('seek-q');
  if (input && input.value !== q) input.value = q;
  const page = await get('seek', { q, limit: 50, detail: 'snippets' }, signal);
  const items = page.items ?? [];
  fill(main, h('h1', {}, `SEEK: ${q}`),
    h('p', { class: 'note' }, `${plural(items.length, 'post', 'posts')} found in your SPACES and the public ones.`),
    items.length === 0 ? h('p', { class: 'muted' }, 'Nothing matches.') : h('div', { class: 'list', id: 'hits' }, items.map((p) => postCard(p))),
  );
}
