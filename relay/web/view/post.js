// One post, opened: its words as text, and its proof checked here in the browser
// (posts.proof, then proof.js) as a list of checks, each passed, failed (saying what), or with
// nothing to check (no checkpoint covers it yet, no signature, words withheld).

import { get, hostInfo, seg } from './api.js';
import { facts, fill, h, peer, say, time } from './dom.js';
import { checkProof } from './proof.js';
import { spaceHeader } from './spaces.js';
import { postCard } from './stream.js';

const VERDICT = { true: 'passed', false: 'FAILED', null: 'not checked' };

export function checksList(checks) {
  return h('ol', { class: 'checks', id: 'checks', 'aria-label': 'Proof checks' }, checks.map((c) => h('li', { 'data-check': c.id, 'data-ok': String(c.ok) },
    h('span', { class: 'verdict' }, VERDICT[String(c.ok)]),
    h('span', { class: 'name' }, c.name),
    h('span', { class: 'detail' }, c.detail),
  )));
}

/** #/post/ID: the post by its id (posts.get), shown at its place in its SPACE. */
export async function postByIdView(main, { id }, signal) {
  const p = await get(`posts/${seg(id)}`, { proof: 'false' }, signal);
  if (signal.aborted) return;
  window.location.replace(`#/space/${encodeURIComponent(p.space)}/post/${p.seq}`);
}

export async function postView(main, { name, seq }, signal) {
  const header = await spaceHeader(name, 'post', signal);
  const answer = await get(`spaces/${seg(name)}/posts/${seg(seq)}/proof`, {}, signal);
  const p = answer.post;
  // Its replies, and what replaced or retracted it (posts.read by reply_to, posts.get).
  const [replies, standing] = await Promise.all([
    get(`spaces/${seg(name)}/posts`, { reply_to: p.post_id, detail: 'full', limit: 50 }, signal).catch(() => null),
    get(`posts/${seg(p.post_id)}`, { proof: 'false' }, signal).catch(() => null),
  ]);
  const checks = h('section', { 'aria-labelledby': 'proof-heading', class: 'card' },
    h('h2', { id: 'proof-heading' }, 'Proof, checked in this browser'),
    h('p', { class: 'muted', id: 'checks-pending' }, 'Checking…'),
  );
  const cp = answer.checkpoint;
  fill(main, header,
    postCard({ ...p, space: p.space ?? name }, { noLink: true }),
    h('section', { class: 'card', 'aria-labelledby': 'facts-heading' },
      h('h2', { id: 'facts-heading' }, 'Where it stands'),
      facts([
        ['Position', p.seq],
        ['Author', peer(p.author, null)],
        ['Posted', time(p.posted_at)],
        ['Post id', h('code', {}, p.post_id)],
        ['Object id', h('code', {}, p.object_id ?? p.proof?.object_id)],
        ['Chain link', h('code', {}, p.proof?.chain?.chain_hash)],
        ['Covered by', cp ? h('span', {}, 'checkpoint ', h('code', { title: cp.checkpoint_id }, String(cp.checkpoint_id).slice(0, 16) + '…'), ` (positions ${cp.first} to ${cp.last}, ${cp.created_at})`) : 'not yet covered by a checkpoint'],
        ['Superseded by', standing?.superseded_by ? h('a', { href: `#/post/${encodeURIComponent(standing.superseded_by)}`, class: 'mono' }, standing.superseded_by) : null],
        ['Retracted by', standing?.retracted_by ? h('a', { href: `#/post/${encodeURIComponent(standing.retracted_by)}`, class: 'mono' }, standing.retracted_by) : null],
      ]),
    ),
    checks,
    replies && replies.items.length > 0
      ? h('section', { 'aria-labelledby': 'replies-heading', id: 'replies' }, h('h2', { id: 'replies-heading' }, `Replies (${replies.items.length})`), replies.items.map((r) => postCard(r)))
      : null,
  );
  const host = hostInfo();
  let results;
  try {
    results = await checkProof(answer, host);
  } catch (e) {
    results = [{ id: 'proof', name: 'Proof', ok: false, detail: `could not be checked: ${e.message}` }];
  }
  if (signal.aborted) return;
  const failed = results.filter((c) => c.ok === false).length;
  fill(checks,
    h('h2', { id: 'proof-heading' }, 'Proof, checked in this browser'),
    h('p', { id: 'proof-summary', class: failed > 0 ? 'verdict-bad' : 'verdict-good' },
      failed > 0
        ? `${failed} of ${results.length} checks FAILED: what this page shows is not what was signed.`
        : `Every check that could run passed, against the root key ${String(host.service_root_key).slice(0, 16)}… this browser pinned.`),
    checksList(results),
  );
  say(failed > 0 ? `Proof of post ${seq}: ${failed} checks failed.` : `Proof of post ${seq}: checks passed.`, failed > 0);
}
