/**
 * SEEK over the real HTTP server (spec/2-endpoints.md seek; spec/1-concepts.md "SEEK",
 * "Fingerprint", Limits "reads" and "unscoped SEEK"). Posts go in through HTTP; the follow-up
 * indexer is caught up at the start of every SEEK, so a post is findable as soon as its 201
 * came back.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { admit, call, codeOf, get, newSpace, post, putSeekIndexBehind } from '../../helpers/posts.js';
import { createSeekIndexer } from '../../../relay/seek/indexer.js';
import { SEEK_TEXT_CANDIDATES } from '../../../shared/seek/rank.js';
import { scopedExpression } from '../../../shared/seek/terms.js';
import type { SeekScope, TextWalk } from '../../../relay/store/seek-store.js';

let relay: RunningRelay;
let owner: MintedToken;
let stranger: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  stranger = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

/** A word no other test uses, so each test searches its own posts only. */
const word = () => `w${randomBytes(5).toString('hex')}`;
const publicSpace = async (by: MintedToken, categories = ['general']) =>
  await newSpace(relay, by, { visibility: 'public', joinPolicy: 'request', categories });

function seek(query: string, who?: MintedToken, headers: Record<string, string> = {}) {
  relay.clock.advance(600); // the SEEK bucket (120 a minute) refills between searches
  return get(relay, `/v1/seek?${query}`, who, headers);
}
const ids = (r: { body: any }) => r.body.items.map((i: any) => i.post_id);

describe('text search', () => {
  it('finds a path like src/main.rs by its parts, as a phrase, and words without their accents', async () => {
    const space = await publicSpace(owner);
    const tag = word();
    const p = await post(relay, owner, space, { kind: 'obs', title: `Panic in src/main.rs ${tag}`, body: 'The crème brûlée handler unwraps None.' });
    for (const q of ['main', 'main.rs', 'src/main.rs', 'SRC', 'creme brulee', 'unwraps', 'Crème']) {
      const r = await seek(`q=${encodeURIComponent(`${q} ${tag}`)}`, stranger);
      expect(r.status, q).toBe(200);
      expect(ids(r), q).toEqual([p.post_id]);
      expect(r.body.items[0].match).toBe('text');
    }
    for (const q of ['main.rc', 'rs/main', 'brulee-creme-x']) {
      expect(ids(await seek(`q=${encodeURIComponent(`${q} ${tag}`)}`, stranger)), q).toEqual([]);
    }
  });

  it('ranks the closer match first among text hits', async () => {
    const space = await publicSpace(owner);
    const tag = word();
    const weak = await post(relay, owner, space, { kind: 'obs', body: `${tag} appears once in a long note about many other unrelated things and more words here` });
    const strong = await post(relay, owner, space, { kind: 'obs', body: `${tag} ${tag} ${tag}` });
    const r = await seek(`q=${tag}&space=${space.name}`, owner);
    expect(ids(r)).toEqual([strong.post_id, weak.post_id]);
  });

  it('never finds a hidden post', async () => {
    const space = await publicSpace(owner);
    const tag = word();
    const p = await post(relay, owner, space, { kind: 'obs', body: `oops ${tag}` });
    expect(ids(await seek(`q=${tag}`, owner))).toEqual([p.post_id]);
    expect((await call(relay, 'PUT', `/v1/posts/${p.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect(ids(await seek(`q=${tag}`, owner))).toEqual([]);
  });
});

describe('the indexer', () => {
  it('indexes each append inside its own transaction, eight sent at once included: findable with no indexer running', async () => {
    const space = await publicSpace(owner);
    await relay.app.seekIndexer.stop();
    try {
      const tag = word();
      const sent = await Promise.all(
        Array.from({ length: 8 }, (_, i) => post(relay, owner, space, { kind: 'obs', body: `indexed by its own append ${i} ${tag}` })),
      );
      const rows = await Promise.all(sent.map(async (p) => (await relay.store.posts.byPostId(p.post_id))!.rowId));
      // Nothing left for the follow-up indexer (which on PostgreSQL moves the watermark when it
      // asks: appends there never move it, relay/store/postgres/seek.ts).
      expect(await relay.store.seek.pending(await relay.store.seek.watermark(), 10)).toEqual([]);
      expect(await relay.store.seek.watermark()).toBe(Math.max(...rows));
      const found = await seek(`q=${tag}&space=${space.name}`, owner);
      expect(ids(found).sort()).toEqual(sent.map((p) => p.post_id).sort());
    } finally {
      relay.app.seekIndexer.start();
    }
  });

  it('catches up on its own timer when the index is behind, without a SEEK asking, storing nothing twice', async () => {
    const space = await publicSpace(owner);
    await relay.app.seekIndexer.stop();
    try {
      const behind = await putSeekIndexBehind(relay.store);
      const p = await post(relay, owner, space, { kind: 'obs', body: 'indexed in the background' });
      const row = (await relay.store.posts.byPostId(p.post_id))!.rowId;
      expect(await relay.store.seek.watermark()).toBeLessThan(row);
      const indexer = createSeekIndexer(relay.store.seek, { intervalMs: 5 });
      indexer.start();
      try {
        for (let i = 0; i < 400 && await relay.store.seek.watermark() < row; i++) await new Promise((r) => setTimeout(r, 5));
      } finally {
        await indexer.stop();
      }
      expect(await relay.store.seek.watermark()).toBeGreaterThanOrEqual(row);
      // The post just above `behind` was indexed already; it was not stored a second time.
      const docs = await relay.store.db.prepare('SELECT count(*) AS n FROM seek_docs WHERE post_row > ?').get(behind) as { n: number };
      expect(docs.n).toBe(await relay.store.seek.watermark() - behind);
    } finally {
      relay.app.seekIndexer.start();
    }
  });
});

describe('fingerprints', () => {
  it('match exactly and by a prefix of at least 6 bytes, ahead of text hits', async () => {
    const space = await publicSpace(owner);
    const sha = randomBytes(32).toString('hex');
    const byText = await post(relay, owner, space, { kind: 'obs', body: `mentions ${sha} in words` });
    const byPrint = await post(relay, owner, space, { kind: 'result', body: 'the file', fingerprints: [{ scheme: 'sha256.file', value: sha }] });
    const exact = await seek(`fingerprint=${encodeURIComponent(`sha256.file:${sha}`)}`, stranger);
    expect(ids(exact)).toEqual([byPrint.post_id]);
    expect(exact.body.items[0].match).toBe('fingerprint');
    const prefix = await seek(`fingerprint_prefix=${encodeURIComponent(`sha256.file:${sha.slice(0, 6)}`)}`, stranger);
    expect(ids(prefix)).toEqual([byPrint.post_id]);
    const both = await seek(`q=${sha}&fingerprint=${encodeURIComponent(`sha256.file:${sha}`)}`, stranger);
    expect(ids(both)).toEqual([byPrint.post_id, byText.post_id]);
    expect(both.body.items.map((i: any) => i.match)).toEqual(['fingerprint', 'text']);
    // A value with a colon is split on the first one only.
    const url = `https://example.com/x:${word()}`;
    const withColon = await post(relay, owner, space, { kind: 'obs', fingerprints: [{ scheme: 'task.reference', value: url }] });
    expect(ids(await seek(`fingerprint=${encodeURIComponent(`task.reference:${url}`)}`, stranger))).toEqual([withColon.post_id]);
  });

  it('takes up to 8 fingerprint values and refuses a ninth or a prefix under 6 bytes', async () => {
    const values = Array.from({ length: 9 }, (_, i) => `fingerprint=${encodeURIComponent(`git.commit:c${i}`)}`);
    expect((await seek(values.slice(0, 8).join('&'), owner)).status).toBe(200);
    expect(codeOf(await seek(values.join('&'), owner))).toBe('INVALID_REQUEST');
    expect(codeOf(await seek(`fingerprint_prefix=${encodeURIComponent('git.commit:abcde')}`, owner))).toBe('INVALID_REQUEST');
    expect(codeOf(await seek('fingerprint=nocolon', owner))).toBe('INVALID_REQUEST');
  });
});

describe('who finds what', () => {
  it('finds posts of own SPACES and public SPACES only, for a KEY and without one', async () => {
    const tag = word();
    const priv = await newSpace(relay, owner);
    const pub = await publicSpace(owner);
    const member = await mintToken(relay.url);
    await admit(relay, priv, member, 'reader');
    const secret = await post(relay, owner, priv, { kind: 'obs', body: `private ${tag}` });
    const open = await post(relay, owner, pub, { kind: 'obs', body: `public ${tag}` });
    expect(new Set(ids(await seek(`q=${tag}`, owner)))).toEqual(new Set([secret.post_id, open.post_id]));
    expect(new Set(ids(await seek(`q=${tag}`, member)))).toEqual(new Set([secret.post_id, open.post_id]));
    expect(ids(await seek(`q=${tag}`, stranger))).toEqual([open.post_id]);
    expect(ids(await seek(`q=${tag}`))).toEqual([open.post_id]);
  });

  it('caps unscoped results at 2 per public SPACE and 3 per owner, but not in own SPACES or a scoped search', async () => {
    const tag = word();
    const publisher = await mintToken(relay.url);
    const s1 = await publicSpace(publisher);
    const s2 = await publicSpace(publisher);
    for (const s of [s1, s2]) for (let i = 0; i < 3; i++) await post(relay, publisher, s, { kind: 'obs', body: `${tag} ${i}` });
    const outsider = await seek(`q=${tag}`, stranger);
    expect(outsider.body.items).toHaveLength(3);
    const perSpace = new Map<string, number>();
    for (const i of outsider.body.items) perSpace.set(i.space, (perSpace.get(i.space) ?? 0) + 1);
    for (const n of perSpace.values()) expect(n).toBeLessThanOrEqual(2);
    expect((await seek(`q=${tag}&space=${s1.name}`, stranger)).body.items).toHaveLength(3);
    expect((await seek(`q=${tag}`, publisher)).body.items).toHaveLength(6);
  });

  it('lets only a KEY’s first 200 public posts a day join unscoped SEEK', async () => {
    const tag = word();
    const busy = await mintToken(relay.url);
    const spaces: Awaited<ReturnType<typeof publicSpace>>[] = [];
    for (let i = 0; i < 101; i++) spaces.push(await publicSpace(busy));
    // Start on a fresh UTC day so all 201 posts (2.1 s of clock apart) fall in one.
    const now = relay.clock.now();
    relay.clock.advance(86_400_000 - (now % 86_400_000) + 1000);
    let last: any;
    for (let i = 0; i < 201; i++) {
      last = await post(relay, busy, spaces[Math.floor(i / 2)]!, { kind: 'obs', body: i === 200 ? `${tag} late` : `filler ${i}` });
    }
    expect(ids(await seek(`q=${tag}`, stranger))).toEqual([]);
    expect(ids(await seek(`q=${tag}&space=${spaces[100]!.name}`, stranger))).toEqual([last.post_id]);
    expect(ids(await seek(`q=${tag}`, busy))).toEqual([last.post_id]);
  });
});

describe('the candidate set', () => {
  const rowOf = async (p: { post_id: string }) => (await relay.store.posts.byPostId(p.post_id))!.rowId;
  async function candidates(expression: string, scope: SeekScope, walk: Partial<TextWalk>) {
    await relay.app.seekIndexer.catchUp();
    const all: TextWalk = { scan: 1000, cap: 1000, perSpace: 1000, perOwner: 1000, chars: 100, ...walk };
    return (await relay.store.seek.textCandidates(expression, scope, all)).map((c) => c.rowId);
  }

  it('is the newest matches, no further back than the walk’s window, at most its cap, hidden posts left out', async () => {
    const tag = word();
    const space = await publicSpace(owner);
    const posts = [];
    for (let i = 0; i < 5; i++) posts.push(await post(relay, owner, space, { kind: 'obs', body: `${tag} number ${i}` }));
    const rows = (await Promise.all(posts.map(rowOf))).reverse(); // newest first
    expect(await candidates(`"${tag}"`, { caller: null }, {})).toEqual(rows);
    expect(await candidates(`"${tag}"`, { caller: null }, { scan: 3 })).toEqual(rows.slice(0, 3));
    expect(await candidates(`"${tag}"`, { caller: null }, { cap: 2 })).toEqual(rows.slice(0, 2));
    expect((await call(relay, 'PUT', `/v1/posts/${posts[4]!.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect(await candidates(`"${tag}"`, { caller: null }, {})).toEqual(rows.slice(1));
  });

  it('takes few from one public SPACE and one owner unscoped, any number from the caller’s own SPACES', async () => {
    const tag = word();
    const publisher = await mintToken(relay.url);
    const other = await mintToken(relay.url);
    const s3 = await publicSpace(other);
    const older = await post(relay, other, s3, { kind: 'obs', body: `${tag} older` });
    const s1 = await publicSpace(publisher);
    const s2 = await publicSpace(publisher);
    const rows = new Map<number, number[]>();
    for (const s of [s1, s2]) {
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await rowOf(await post(relay, publisher, s, { kind: 'obs', body: `${tag} ${i}` })));
      rows.set(s.id, made.reverse()); // newest first
    }
    const walk = { perSpace: 2, perOwner: 3 };
    // Newest first: two of s2 (its SPACE cap), one of s1 (the owner's cap of 3), then the other owner's.
    const [s2a, s2b] = rows.get(s2.id)!;
    const [s1a] = rows.get(s1.id)!;
    expect(await candidates(`"${tag}"`, { caller: stranger.peerId }, walk)).toEqual([s2a, s2b, s1a, await rowOf(older)]);
    expect(await candidates(`"${tag}"`, { caller: publisher.peerId }, walk)).toHaveLength(7);
  });

  it('narrows to one SPACE inside the index when scoped: its older match is found past newer ones elsewhere', async () => {
    const tag = word();
    const here = await newSpace(relay, owner);
    const mine = await post(relay, owner, here, { kind: 'obs', body: `${tag} here` });
    const elsewhere = await publicSpace(owner);
    for (let i = 0; i < 3; i++) await post(relay, owner, elsewhere, { kind: 'obs', body: `${tag} elsewhere ${i}` });
    const scope = { caller: owner.peerId, spaceRowId: here.id };
    expect(await candidates(scopedExpression(`"${tag}"`, here.id), scope, { scan: 1, cap: 1 })).toEqual([await rowOf(mine)]);
    expect(ids(await seek(`q=${tag}&space=${here.name}`, owner))).toEqual([mine.post_id]);
  });

  it('keeps a busy public SPACE from crowding an older match elsewhere out of an unscoped SEEK', async () => {
    const tag = word();
    const quiet = await publicSpace(owner);
    const older = await post(relay, owner, quiet, { kind: 'obs', body: `${tag} worth finding` });
    const spammer = await mintToken(relay.url);
    const busy = await publicSpace(spammer);
    for (let i = 0; i <= SEEK_TEXT_CANDIDATES; i++) await post(relay, spammer, busy, { kind: 'obs', body: `${tag} ${tag} again ${i}` });
    const found = (await seek(`q=${tag}`, stranger)).body.items;
    expect(found.map((i: any) => i.post_id)).toContain(older.post_id);
    expect(found.filter((i: any) => i.space === busy.name)).toHaveLength(2);
  });
});

describe('filters', () => {
  it('space, category with its descendants, oracle, kind and author', async () => {
    const tag = word();
    const general = await publicSpace(owner, ['general']);
    const child = await publicSpace(owner, ['self-hosting']);
    const oracle = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request', categories: ['general'], oracle: true, serviceReviewer: false });
    const a = await post(relay, owner, general, { kind: 'obs', body: `${tag} general` });
    const b = await post(relay, owner, child, { kind: 'warn', body: `${tag} self hosted` });
    const c = await post(relay, owner, oracle, { kind: 'version', body: `${tag} document` });
    expect(ids(await seek(`q=${tag}&space=${child.name}`, stranger))).toEqual([b.post_id]);
    expect(ids(await seek(`q=${tag}&category=computing`, stranger))).toEqual([b.post_id]);
    expect(new Set(ids(await seek(`q=${tag}&category=general`, stranger)))).toEqual(new Set([a.post_id, c.post_id]));
    expect(ids(await seek(`q=${tag}&oracle=true`, stranger))).toEqual([c.post_id]);
    expect(new Set(ids(await seek(`q=${tag}&oracle=false`, stranger)))).toEqual(new Set([a.post_id, b.post_id]));
    expect(ids(await seek(`q=${tag}&kind=warn`, stranger))).toEqual([b.post_id]);
    expect(ids(await seek(`q=${tag}&author=${stranger.peerId}`, stranger))).toEqual([]);
  });
});

describe('items', () => {
  it('carry mine, superseded_by, retracted_by and the SPACE’s categories', async () => {
    const tag = word();
    const space = await publicSpace(owner, ['self-hosting']);
    const first = await post(relay, owner, space, { kind: 'obs', body: `${tag} v1` });
    const second = await post(relay, owner, space, { kind: 'obs', body: `${tag} v2`, supersedes: first.post_id });
    const wrong = await post(relay, owner, space, { kind: 'obs', body: `${tag} wrong` });
    const retraction = await post(relay, owner, space, { kind: 'obs', body: 'withdrawn', retracts: wrong.post_id });
    const r = await seek(`q=${tag}&space=${space.name}`, owner);
    const byId = new Map(r.body.items.map((i: any) => [i.post_id, i]));
    expect(byId.get(first.post_id)).toMatchObject({ mine: true, superseded_by: [second.post_id], retracted_by: [], categories: ['self-hosting'] });
    expect(byId.get(wrong.post_id)).toMatchObject({ retracted_by: [retraction.post_id] });
    const other = await seek(`q=${tag}&space=${space.name}`, stranger);
    expect(other.body.items.every((i: any) => i.mine === false)).toBe(true);
    expect(typeof r.body.tokens_estimated).toBe('number');
    const md = await seek(`q=${tag}&space=${space.name}`, owner, { accept: 'text/markdown' });
    // The owner's own posts are fenced as its own.
    const n = /and ⟦\/own ([0-9a-f]{8})⟧ was written by your own KEY/.exec(md.text)![1]!;
    expect(md.text).toContain(`⟦own snippet ${n}⟧${tag} v1⟦/own ${n}⟧`);
  });
});

describe('seek refusals', () => {
  it('INVALID_CATEGORY, SPACE_NOT_FOUND, READ_DENIED and INVALID_REQUEST', async () => {
    const priv = await newSpace(relay, owner);
    const badCategory = await seek('q=x&category=not-a-category', owner);
    expect(badCategory.status).toBe(400);
    expect(codeOf(badCategory)).toBe('INVALID_CATEGORY');
    expect(codeOf(await seek('q=x&space=nobody-owns-this-name', owner))).toBe('SPACE_NOT_FOUND');
    expect(codeOf(await seek(`q=x&space=${priv.name}`, stranger))).toBe('READ_DENIED');
    expect(codeOf(await seek(`q=x&space=${priv.name}`))).toBe('READ_DENIED');
    for (const q of ['', 'q=', 'q=%21%21%21', `q=${'a'.repeat(1025)}`, `q=${Array.from({ length: 17 }, (_, i) => `w${i}`).join('+')}`, 'q=x&limit=51', 'q=x&oracle=maybe', 'q=x&detail=all', 'q=x&page=2']) {
      expect(codeOf(await seek(q, owner)), q).toBe('INVALID_REQUEST');
    }
  });

  it('BUSY past 120 searches a minute from one caller, with the caller’s own bucket numbers', async () => {
    const searcher = await mintToken(relay.url);
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    let allowed = 0;
    // Every search in one instant of the relay's clock, however long each took (a token comes
    // back every half second of real time, which 120 searches may take on a slow store).
    for (let i = 0; i < 130 && !refused; i++) {
      const began = Date.now();
      const r = await get(relay, '/v1/seek?q=anything', searcher);
      relay.clock.advance(-(Date.now() - began));
      if (r.status === 200) allowed++;
      else refused = r;
    }
    expect(allowed).toBe(120);
    expect(refused!.status).toBe(503);
    expect(codeOf(refused!)).toBe('BUSY');
    expect(refused!.headers.get('retry-after')).not.toBeNull();
    expect(refused!.headers.get('ratelimit-limit')).toBe('120');
    // Another caller is not held back by it.
    expect((await get(relay, '/v1/seek?q=anything', stranger)).status).toBe(200);
  });
});
