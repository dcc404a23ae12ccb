/**
 * SEEK's two stores, SQLite over FTS5 (relay/store/seek.ts) and PostgreSQL over a tsvector
 * under GIN (relay/store/postgres/seek.ts), give the same answers (spec/1-concepts.md "SEEK",
 * Limits "unscoped SEEK"): the same assertions run against each, on the same corpus written
 * the same way, and a generated corpus searched a few hundred ways answers the same on both,
 * candidate for candidate and score for score. test/relay/seek/seek.test.ts holds the same rules
 * over HTTP; here the store is driven directly (posts rows written as the append writes them,
 * each indexed by `indexNext` inside its own write transaction).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../relay/store/database.js';
import { openPostgresStore, openStore, type Store } from '../../relay/store/index.js';
import type { SeekScope, SeekStore, TextWalk } from '../../relay/store/seek-store.js';
import { prepareDoc } from '../../relay/seek/indexer.js';
import { searchText } from '../../relay/seek/search.js';
import { textQuery, scopedExpression } from '../../shared/seek/terms.js';
import type { Fingerprint } from '../../shared/validate.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** seek-stores.test.ts: PostgreSQL skipped: ${cluster.skipReason} ***\n\n`);
const databases: FreshDatabase[] = [];

afterAll(async () => {
  try {
    for (const d of databases) await d.drop();
  } finally {
    cluster.stop();
  }
});

/** One store under test: its database, its SEEK store and the corpus written into it. */
class Corpus {
  private readonly seqs = new Map<number, number>();
  private clock = Date.UTC(2026, 0, 5);
  private constructor(private readonly store: Store) {}

  get db(): Db {
    return this.store.db;
  }

  get seek(): SeekStore {
    return this.store.seek;
  }

  /** The relay's own store on either database, so the SEEK store is the one the relay picks for it. */
  static async open(kind: 'sqlite' | 'postgres'): Promise<Corpus> {
    if (kind === 'sqlite') return new Corpus(await openStore(':memory:'));
    const fresh = await freshDatabase();
    databases.push(fresh);
    return new Corpus(await openPostgresStore(fresh.url, { poolSize: 4 }));
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  async key(peer: string): Promise<string> {
    await this.db.prepare("INSERT INTO keys (peer_id, key_type, public_key, registered_at) VALUES (?, 'ed25519', ?, 0)").run(peer, peer);
    return peer;
  }

  async space(owner: string, o: { visibility?: 'public' | 'private'; categories?: string[]; oracle?: boolean } = {}): Promise<number> {
    const n = this.seqs.size + 1;
    const row = await this.db
      .prepare<unknown[], { id: number }>(
        `INSERT INTO spaces (space_id, name, owner, title, description, visibility, oracle, join_policy, signed_only, status,
           categories_json, service_reviewer, task_confirmations, task_confirmers, task_claim_hours, created_at, updated_at)
         VALUES (?, ?, ?, '', '', ?, ?, 'request', 0, 'active', ?, 0, 1, 'members', 24, 0, 0) RETURNING id`,
      )
      .get(`sp${n}`, `space-${n}`, owner, o.visibility ?? 'public', o.oracle ? 1 : 0, JSON.stringify(o.categories ?? ['general']));
    const id = row!.id;
    this.seqs.set(id, 0);
    let position = 0;
    for (const c of o.categories ?? ['general']) {
      await this.db.prepare('INSERT INTO space_categories (space_row_id, category, position) VALUES (?, ?, ?)').run(id, c, position++);
    }
    return id;
  }

  async member(space: number, peer: string): Promise<void> {
    await this.db
      .prepare(
        `INSERT INTO members (space_row_id, peer_id, role, tags_json, brought_in_by, direct, admitted_at, changed_at)
         VALUES (?, ?, 'reader', '[]', 'x', 1, 0, 0)`,
      )
      .run(space, peer);
  }

  private async insertPost(space: number, author: string, p: PostInput, seq: number, postedAt: number) {
    const z = Buffer.alloc(32);
    return await this.db
      .prepare<unknown[], { id: number }>(
        `INSERT INTO posts (space_row_id, seq, post_id, author, kind, title, body, fingerprints_json, canonical, signed,
           object_id, admitted_revision, admitted_control_hash, admission, previous_hash, chain_hash, posted_at,
           receipt_signature, receipt_signer_key_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, ?, ?, ?, ?, ?, ?, 'k') RETURNING id`,
      )
      .get(
        space,
        seq,
        `post-${space}-${seq}-${postedAt}`,
        author,
        p.kind ?? 'obs',
        p.title ?? null,
        p.body ?? null,
        p.fingerprints ? JSON.stringify(p.fingerprints) : null,
        z,
        z,
        z,
        z,
        z,
        z,
        postedAt,
        z,
      );
  }

  /** Append a post as the relay does: row and SEEK rows in one write transaction; answers its row id. */
  async post(space: number, author: string, p: PostInput, o: { fail?: boolean } = {}): Promise<number> {
    const visibility = (await this.db.prepare<[number], { visibility: string }>('SELECT visibility FROM spaces WHERE id = ?').get(space))!.visibility;
    this.clock += 2000;
    const postedAt = this.clock;
    const tx = this.db.transaction(async () => {
      const seq = this.seqs.get(space)! + 1;
      const rowId = (await this.insertPost(space, author, p, seq, postedAt))!.id;
      if (o.fail) throw new Error('rolled back on purpose');
      this.seqs.set(space, seq);
      const doc = prepareDoc({
        rowId,
        spaceRowId: space,
        author,
        title: p.title ?? null,
        body: p.body ?? null,
        fingerprintsJson: p.fingerprints ? JSON.stringify(p.fingerprints) : null,
        postedAt,
        public: visibility === 'public',
      });
      await this.seek.indexNext(doc);
      return rowId;
    });
    return await tx.immediate();
  }

  /** Start the next post on a fresh UTC day. */
  nextDay(): void {
    this.clock += 86_400_000 - (this.clock % 86_400_000) + 1000;
  }

  async hide(rowId: number): Promise<void> {
    await this.db.prepare("UPDATE posts SET hidden_at = 1, hidden_by = 'x' WHERE id = ?").run(rowId);
  }

  /** What the follow-up indexer does: tokenise what is pending and store it. */
  async catchUp(): Promise<void> {
    for (;;) {
      const from = await this.seek.watermark();
      const batch = await this.seek.pending(from, 100);
      if (batch.length === 0) return;
      await this.seek.index(from, batch[batch.length - 1]!.rowId, batch.map(prepareDoc));
    }
  }

  /** Text search as the SEEK route runs it: row ids, best first (lower score), newest first among equals. */
  async search(q: string, scope: SeekScope): Promise<number[]> {
    const hits = await searchText(this.seek, textQuery(q)!, scope);
    return [...hits].sort((a, b) => a.score - b.score || b.rowId - a.rowId).map((h) => h.rowId);
  }

  async candidates(expression: string, scope: SeekScope, walk: Partial<TextWalk> = {}): Promise<number[]> {
    const all: TextWalk = { scan: 1000, cap: 1000, perSpace: 1000, perOwner: 1000, chars: 100, ...walk };
    return (await this.seek.textCandidates(expression, scope, all)).map((c) => c.rowId);
  }
}

interface PostInput {
  kind?: string;
  title?: string;
  body?: string;
  fingerprints?: Fingerprint[];
}

const KINDS = cluster.url === undefined ? (['sqlite'] as const) : (['sqlite', 'postgres'] as const);

describe.each(KINDS)('SEEK on %s', (kind) => {
  let c: Corpus;
  let owner: string;
  let stranger: string;
  let tags = 0;
  const word = () => `w${kind[0]}${++tags}x`;

  beforeAll(async () => {
    c = await Corpus.open(kind);
    owner = await c.key('owner');
    stranger = await c.key('stranger');
  }, 30_000);
  afterAll(async () => {
    await c?.close();
  });

  it('finds a path like src/main.rs by its parts, as a phrase, and words without their accents', async () => {
    const space = await c.space(owner);
    const tag = word();
    const p = await c.post(space, owner, { title: `Panic in src/main.rs ${tag}`, body: 'The crème brûlée handler unwraps None.' });
    for (const q of ['main', 'main.rs', 'src/main.rs', 'SRC', 'creme brulee', 'unwraps', 'Crème']) {
      expect(await c.search(`${q} ${tag}`, { caller: stranger }), q).toEqual([p]);
    }
    for (const q of ['main.rc', 'rs/main', 'brulee-creme-x']) {
      expect(await c.search(`${q} ${tag}`, { caller: stranger }), q).toEqual([]);
    }
  });

  it('ranks the closer match first among text hits', async () => {
    const space = await c.space(owner);
    const tag = word();
    const weak = await c.post(space, owner, { body: `${tag} appears once in a long note about many other unrelated things and more words here` });
    const strong = await c.post(space, owner, { body: `${tag} ${tag} ${tag}` });
    expect(await c.search(tag, { caller: owner, spaceRowId: space })).toEqual([strong, weak]);
  });

  it('never finds a hidden post', async () => {
    const space = await c.space(owner);
    const tag = word();
    const p = await c.post(space, owner, { body: `oops ${tag}` });
    expect(await c.search(tag, { caller: owner })).toEqual([p]);
    await c.hide(p);
    expect(await c.search(tag, { caller: owner })).toEqual([]);
  });

  it('indexes each append in its own transaction, and the follow-up path stores what was left once', async () => {
    const space = await c.space(owner);
    const tag = word();
    const first = await c.post(space, owner, { body: `inline ${tag}` });
    await c.catchUp();
    expect(await c.seek.watermark()).toBe(first);
    // Put the index one post behind.
    await c.db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1').run(first - 1);
    const later = await c.post(space, owner, { body: `later ${tag}` });
    expect(await c.seek.watermark()).toBe(first - 1);
    if (kind === 'sqlite') {
      // One writer: appends leave their rows to the follow-up indexer until it has caught up.
      expect((await c.seek.pending(first - 1, 10)).map((p) => p.rowId)).toEqual([first, later]);
      // A stale watermark stores nothing.
      expect(await c.seek.index(first - 2, later, [])).toBe(false);
    } else {
      // Writers to different SPACES commit side by side: an append always indexes its own post
      // and leaves the watermark to the follow-up indexer, which finds nothing left to store.
      expect(await c.seek.pending(first - 1, 10)).toEqual([]);
    }
    await c.catchUp();
    expect(await c.seek.watermark()).toBe(later);
    const docs = await c.db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM seek_docs WHERE post_row >= ?').get(first);
    expect(Number(docs!.n)).toBe(2);
    expect(await c.search(tag, { caller: owner })).toEqual([later, first].sort((a, b) => b - a));
    // Caught up: appends index their own posts again.
    const again = await c.post(space, owner, { body: `again ${tag}` });
    if (kind === 'postgres') await c.catchUp();
    expect(await c.seek.watermark()).toBe(again);
  });

  it('on PostgreSQL, a post written with no SEEK rows (a migration) is stored by the follow-up indexer, and the watermark stops below it until then', async () => {
    if (kind === 'sqlite') return;
    const space = await c.space(owner);
    const tag = word();
    const bare = await c.post(space, owner, { body: `bare ${tag}` });
    for (const table of ['seek_fingerprints', 'seek_text', 'seek_docs']) await c.db.prepare(`DELETE FROM ${table} WHERE post_row = ?`).run(bare);
    await c.db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1').run(bare - 1);
    const after = await c.post(space, owner, { body: `after ${tag}` });
    expect((await c.seek.pending(bare - 1, 10)).map((p) => p.rowId)).toEqual([bare]);
    expect(await c.seek.watermark()).toBe(bare - 1);
    await c.catchUp();
    expect(await c.seek.watermark()).toBe(after);
    expect((await c.search(tag, { caller: owner })).sort((x, y) => x - y)).toEqual([bare, after]);
  });

  it('indexes the next append inline after one rolled back, its row id used or not', async () => {
    const space = await c.space(owner);
    const tag = word();
    let refused = '';
    try {
      await c.post(space, owner, { body: `lost ${tag}` }, { fail: true });
    } catch (e) {
      refused = (e as Error).message;
    }
    expect(refused).toMatch(/on purpose/);
    const kept = await c.post(space, owner, { body: `kept ${tag}` });
    await c.catchUp();
    expect(await c.seek.watermark()).toBe(kept);
    expect(await c.search(tag, { caller: owner })).toEqual([kept]);
  });

  it('matches fingerprints exactly and by a prefix, among the first index entries of the prefix only', async () => {
    const space = await c.space(owner);
    const sha = 'ab12cd'.repeat(10) + 'ef01';
    const byText = await c.post(space, owner, { body: `mentions ${sha} in words` });
    const byPrint = await c.post(space, owner, { kind: 'result', body: 'the file', fingerprints: [{ scheme: 'sha256.file', value: sha }] });
    const fp = { scheme: 'sha256.file', value: sha };
    expect((await c.seek.fingerprint(fp, { caller: stranger }, 10)).map((h) => h.rowId)).toEqual([byPrint]);
    expect((await c.seek.fingerprint({ scheme: 'git.commit', value: sha }, { caller: stranger }, 10)).map((h) => h.rowId)).toEqual([]);
    expect((await c.seek.fingerprintPrefix({ scheme: 'sha256.file', value: sha.slice(0, 6) }, { caller: stranger }, 10, 100)).map((h) => h.rowId)).toEqual([byPrint]);
    expect(await c.search(sha, { caller: stranger })).toEqual([byText]);
    const url = `https://example.com/x:${word()}`;
    const withColon = await c.post(space, owner, { fingerprints: [{ scheme: 'task.reference', value: url }] });
    expect((await c.seek.fingerprint({ scheme: 'task.reference', value: url }, { caller: stranger }, 10)).map((h) => h.rowId)).toEqual([withColon]);
    // Values compare as bytes: `é` sorts after every ASCII letter, a prefix is a range of them.
    const values = ['pfx-b', 'pfx-a', 'pfx-é', 'pfx-Z', 'pfx-é2', 'pfy'];
    const rows = new Map<string, number>();
    for (const v of values) rows.set(v, await c.post(space, owner, { fingerprints: [{ scheme: 'order.test', value: v }] }));
    const prefix = async (value: string, scan: number) =>
      (await c.seek.fingerprintPrefix({ scheme: 'order.test', value }, { caller: stranger }, 10, scan)).map((h) => h.rowId);
    const newestFirst = (vs: string[]) => vs.map((v) => rows.get(v)!).sort((a, b) => b - a);
    expect(await prefix('pfx-', 100)).toEqual(newestFirst(['pfx-b', 'pfx-a', 'pfx-é', 'pfx-Z', 'pfx-é2']));
    expect(await prefix('pfx-', 2)).toEqual(newestFirst(['pfx-Z', 'pfx-a']));
    expect(await prefix('pfx-é', 100)).toEqual(newestFirst(['pfx-é', 'pfx-é2']));
  });

  it('finds posts of own SPACES and public SPACES only, for a KEY and without one', async () => {
    const tag = word();
    const priv = await c.space(owner, { visibility: 'private' });
    const pub = await c.space(owner);
    const member = await c.key(`member-${tag}`);
    await c.member(priv, member);
    const secret = await c.post(priv, owner, { body: `private ${tag}` });
    const open = await c.post(pub, owner, { body: `public ${tag}` });
    expect((await c.search(tag, { caller: owner })).sort()).toEqual([secret, open].sort());
    expect((await c.search(tag, { caller: member })).sort()).toEqual([secret, open].sort());
    expect(await c.search(tag, { caller: stranger })).toEqual([open]);
    expect(await c.search(tag, { caller: null })).toEqual([open]);
    expect(await c.search(tag, { caller: stranger, spaceRowId: priv })).toEqual([secret]);
  });

  it('takes few candidates from one public SPACE and one owner unscoped, any number from the caller’s own SPACES', async () => {
    const tag = word();
    const publisher = await c.key(`publisher-${tag}`);
    const other = await c.key(`other-${tag}`);
    const s3 = await c.space(other);
    const older = await c.post(s3, other, { body: `${tag} older` });
    const s1 = await c.space(publisher);
    const s2 = await c.space(publisher);
    const rows = new Map<number, number[]>();
    for (const s of [s1, s2]) {
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await c.post(s, publisher, { body: `${tag} ${i}` }));
      rows.set(s, made.reverse());
    }
    const walk = { perSpace: 2, perOwner: 3 };
    const [s2a, s2b] = rows.get(s2)!;
    const [s1a] = rows.get(s1)!;
    expect(await c.candidates(`"${tag}"`, { caller: stranger }, walk)).toEqual([s2a, s2b, s1a, older]);
    expect(await c.candidates(`"${tag}"`, { caller: publisher }, walk)).toHaveLength(7);
    expect(await c.candidates(`"${tag}"`, { caller: stranger, spaceRowId: s1 }, walk)).toHaveLength(3);
  });

  it('lets only a KEY’s first 200 public posts a day join unscoped SEEK', async () => {
    const tag = word();
    const busy = await c.key(`busy-${tag}`);
    const spaces: number[] = [];
    for (let i = 0; i < 101; i++) spaces.push(await c.space(busy));
    c.nextDay();
    let last = 0;
    for (let i = 0; i < 201; i++) last = await c.post(spaces[Math.floor(i / 2)]!, busy, { body: i === 200 ? `${tag} late` : `filler ${i}` });
    expect(await c.search(tag, { caller: stranger })).toEqual([]);
    expect(await c.search(tag, { caller: stranger, spaceRowId: spaces[100]! })).toEqual([last]);
    expect(await c.search(tag, { caller: busy })).toEqual([last]);
  });

  it('takes the newest matches as candidates, no further back than the walk, at most its cap, hidden posts left out', async () => {
    const tag = word();
    const space = await c.space(owner);
    const posts: number[] = [];
    for (let i = 0; i < 5; i++) posts.push(await c.post(space, owner, { body: `${tag} number ${i}` }));
    const rows = [...posts].reverse();
    expect(await c.candidates(`"${tag}"`, { caller: null })).toEqual(rows);
    expect(await c.candidates(`"${tag}"`, { caller: null }, { scan: 3 })).toEqual(rows.slice(0, 3));
    expect(await c.candidates(`"${tag}"`, { caller: null }, { cap: 2 })).toEqual(rows.slice(0, 2));
    expect(await c.candidates(`"${tag}" AND "number"`, { caller: null }, { cap: 2 })).toEqual(rows.slice(0, 2));
    await c.hide(posts[4]!);
    expect(await c.candidates(`"${tag}"`, { caller: null })).toEqual(rows.slice(1));
    expect(await c.seek.newestMatches(`"${tag}"`, 3)).toEqual({ found: 3, oldest: rows[2] });
    expect(await c.seek.newestMatches(`"${tag}" AND "number"`, 10)).toEqual({ found: 5, oldest: rows[4] });
    expect(await c.seek.newestMatches(`"${tag} number"`, 10)).toEqual({ found: 5, oldest: rows[4] });
    expect(await c.seek.newestMatches(`"number ${tag}"`, 10)).toEqual({ found: 0, oldest: 0 });
  });

  it('narrows to one SPACE inside the index when scoped: its older match is found past newer ones elsewhere', async () => {
    const tag = word();
    const here = await c.space(owner, { visibility: 'private' });
    const mine = await c.post(here, owner, { body: `${tag} here` });
    const elsewhere = await c.space(owner);
    for (let i = 0; i < 3; i++) await c.post(elsewhere, owner, { body: `${tag} elsewhere ${i}` });
    const scope = { caller: owner, spaceRowId: here };
    expect(await c.candidates(scopedExpression(`"${tag}"`, here), scope, { scan: 1, cap: 1 })).toEqual([mine]);
  });

  it('filters by category, oracle, kind and author', async () => {
    const tag = word();
    const general = await c.space(owner, { categories: ['general'] });
    const child = await c.space(owner, { categories: ['self-hosting'] });
    const oracle = await c.space(owner, { categories: ['general'], oracle: true });
    const a = await c.post(general, owner, { body: `${tag} general` });
    const b = await c.post(child, owner, { kind: 'warn', body: `${tag} self hosted` });
    const d = await c.post(oracle, owner, { kind: 'version', body: `${tag} document` });
    const s = async (scope: Partial<SeekScope>) => await c.search(tag, { caller: stranger, ...scope }).then((r) => r.sort());
    expect(await s({ categories: ['computing', 'self-hosting'] })).toEqual([b]);
    expect(await s({ categories: ['general'] })).toEqual([a, d].sort());
    expect(await s({ oracle: true })).toEqual([d]);
    expect(await s({ oracle: false })).toEqual([a, b].sort());
    expect(await s({ kinds: ['warn'] })).toEqual([b]);
    expect(await s({ kinds: ['warn', 'version'] })).toEqual([b, d].sort());
    expect(await s({ author: stranger })).toEqual([]);
    expect(await s({ author: owner, spaceRowId: child })).toEqual([b]);
  });
});

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = [
  'panic', 'src/main.rs', 'lib.rs', 'crème', 'brûlée', 'Straße', 'ﬁle', 'deadlock', 'retry', 'the', 'of', 'timeout',
  'v1.2.3', 'GPU', 'gpu-driver', 'naïve', '東京', 'データ', 'x86_64', 'OOM', 'oom-killer', 'cache', 'miss', 'hit',
];

describe.skipIf(cluster.url === undefined)(`SEEK on SQLite and on PostgreSQL${(cluster.skipReason ? ` (skipped: ${cluster.skipReason})` : '')}`, () => {
  it('answer a generated corpus the same, search for search: candidates, scores, fingerprints and counts', async () => {
    const sides = [await Corpus.open('sqlite'), await Corpus.open('postgres')];
    try {
      const transcripts: unknown[][] = [[], []];
      for (const [i, side] of sides.entries()) {
        const rnd = random(42);
        const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
        const text = (n: number) => Array.from({ length: n }, () => pick(VOCABULARY)).join(rnd() < 0.3 ? '/' : ' ');
        const peers: string[] = [];
        for (let k = 0; k < 6; k++) peers.push(await side.key(`peer${k}`));
        const spaces: number[] = [];
        for (let k = 0; k < 14; k++) {
          spaces.push(
            await side.space(peers[k % 6]!, {
              visibility: k % 4 === 3 ? 'private' : 'public',
              categories: [pick(['general', 'self-hosting', 'computing'])],
              oracle: k % 5 === 4,
            }),
          );
        }
        for (let k = 0; k < 14; k += 3) await side.member(spaces[k]!, peers[(k + 1) % 6]!);
        const rows: number[] = [];
        for (let k = 0; k < 320; k++) {
          const s = pick(spaces);
          const fingerprints = rnd() < 0.3 ? [{ scheme: pick(['sha256.file', 'git.commit']), value: `${pick(['ab', 'ac', 'b0'])}${Math.floor(rnd() * 50)}` }] : undefined;
          rows.push(
            await side.post(s, pick(peers), {
              kind: pick(['obs', 'warn', 'result']),
              title: rnd() < 0.5 ? text(1 + Math.floor(rnd() * 4)) : undefined,
              body: rnd() < 0.9 ? text(Math.floor(rnd() * 30)) : undefined,
              fingerprints,
            }),
          );
          if (k === 150) await side.db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1').run(rows[100]!);
          if (rnd() < 0.05) await side.hide(rows[rows.length - 1]!);
        }
        await side.catchUp();
        const t = transcripts[i]!;
        t.push(await side.seek.watermark());
        for (let k = 0; k < 200; k++) {
          const q = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(VOCABULARY)).join(' ');
          const caller = rnd() < 0.2 ? null : pick(peers);
          const scope: SeekScope = { caller };
          if (rnd() < 0.2) scope.spaceRowId = pick(spaces);
          if (rnd() < 0.15) scope.categories = [pick(['general', 'computing', 'self-hosting'])];
          if (rnd() < 0.1) scope.oracle = rnd() < 0.5;
          if (rnd() < 0.1) scope.kinds = [pick(['obs', 'warn'])];
          if (rnd() < 0.1) scope.author = pick(peers);
          const query = textQuery(q)!;
          const hits = await searchText(side.seek, query, scope);
          t.push([q, scope, hits.map((h) => [h.rowId, h.spaceRowId, h.owner, h.own, Math.round(h.score * 1e9)])]);
          const walk: TextWalk = { scan: 1 + Math.floor(rnd() * 60), cap: 1 + Math.floor(rnd() * 20), perSpace: 2, perOwner: 3, chars: 50 };
          t.push((await side.seek.textCandidates(query.expression, scope, walk)).map((h) => [h.rowId, h.own, h.title, h.body]));
          t.push(await side.seek.newestMatches(query.expression, 1 + Math.floor(rnd() * 40)));
          const fp = { scheme: pick(['sha256.file', 'git.commit']), value: `${pick(['ab', 'ac', 'b0'])}${Math.floor(rnd() * 50)}` };
          t.push((await side.seek.fingerprint(fp, scope, 5)).map((h) => [h.rowId, h.own]));
          const prefix = { scheme: fp.scheme, value: fp.value.slice(0, 1 + Math.floor(rnd() * 2)) };
          t.push((await side.seek.fingerprintPrefix(prefix, scope, 5, 1 + Math.floor(rnd() * 30))).map((h) => [h.rowId, h.own]));
        }
      }
      const found = transcripts[0]!.filter((e) => Array.isArray(e) && e.length === 3 && (e[2] as unknown[]).length > 0).length;
      expect(found).toBeGreaterThan(50);
      expect(transcripts[1]).toEqual(transcripts[0]);
    } finally {
      for (const s of sides) await s.close();
    }
  }, 120_000);
});
