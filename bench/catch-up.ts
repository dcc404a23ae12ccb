/**
 * The catch-up suite: a reader that was away reads a SPACE of 100,000 posts by cursor,
 * pages of 200 with `detail=full`, over HTTP from the real relay process, beside a bare
 * SQLite scan of the same rows.
 *
 *   posts.read full ×200        GET /v1/spaces/{name}/posts?after=…&limit=200&detail=full,
 *                               one page after another (next_after), by the SPACE's owner;
 *   bare SQLite pages ×200      better-sqlite3 straight on the relay's data file (read-only),
 *                               every column of the same rows, by (space_row_id, seq) pages of
 *                               200: the floor any read path pays.
 *
 * The corpus is written through the relay's own append pipeline (relay/posts/append.ts) in
 * this process, with synchronous=OFF while it is filled only (nothing here tests durability),
 * then the database is closed and the relay process opens it.
 */
import { sqliteRaw } from '../relay/store/sqlite/connection.js';
import { request } from 'undici';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { appendPost } from '../relay/posts/append.js';
import { DATABASE_FILE } from '../relay/store/sqlite/open.js';
import { signerFromSeed } from '../shared/identity.js';
import { type Row, type Suite, type SuiteReport } from './harness.js';
import { createSpaceInStore, expectCall, filler, openInProcess, randomSigner, registerKey, spawnBenchRelay, tempDataDir } from './relay-fixture.js';
import { mintToken } from '../test/helpers/relay.js';

const POSTS = 100_000;
const PAGE = 200;
const ROUNDS = 3;
const KINDS = ['obs', 'result', 'question', 'decision', 'handoff'];

/** Fill one SPACE with POSTS unsigned posts of 200-700 characters, as `author` (a writer). */
async function fill(dataDir: string, ownerSeed: Uint8Array): Promise<{ name: string; seconds: number }> {
  const r = await openInProcess(dataDir);
  try {
    sqliteRaw(r.store.db).pragma('synchronous = OFF');
    // The owner's KEY is the one the HTTP reader signs in with later.
    const owner = await registerKey(r, signerFromSeed(ownerSeed));
    const writerSigner = randomSigner();
    const writer = await registerKey(r, writerSigner);
    const space = await createSpaceInStore(r, owner, `catch-up-${randomUUID().slice(0, 8)}`);
    await r.store.members.admit(space, { peer: writer, role: 'writer', tags: [], broughtInBy: owner }, owner, Date.now());
    const started = performance.now();
    for (let i = 0; i < POSTS; i++) {
      await appendPost(r.ctx, space.name, writer, {
        kind: KINDS[i % KINDS.length],
        title: `catch-up post ${i}`,
        body: filler(200 + ((i * 7919) % 500), i),
        fingerprints: i % 4 === 0 ? [{ scheme: 'git.commit', value: (i * 2654435761 >>> 0).toString(16).padStart(8, '0').repeat(5) }] : undefined,
      });
    }
    sqliteRaw(r.store.db).pragma('synchronous = FULL');
    return { name: space.name, seconds: (performance.now() - started) / 1000 };
  } finally {
    r.close();
  }
}

/** Read the whole SPACE by cursor over HTTP; answers posts read and seconds. */
async function readOverHttp(url: string, token: string, name: string): Promise<{ posts: number; seconds: number }> {
  const headers = { authorization: `Bearer ${token}` };
  let after = '0';
  let posts = 0;
  const started = performance.now();
  for (;;) {
    const res = await request(`${url}/v1/spaces/${name}/posts?after=${after}&limit=${PAGE}&detail=full`, { headers });
    const page = (await res.body.json()) as { items: unknown[]; next_after: string; has_more: boolean };
    if (res.statusCode !== 200) throw new Error(`posts.read: ${res.statusCode} ${JSON.stringify(page)}`);
    posts += page.items.length;
    if (!page.has_more) break;
    after = page.next_after;
  }
  return { posts, seconds: (performance.now() - started) / 1000 };
}

/** The same rows straight from SQLite, every column, pages of PAGE by (space_row_id, seq). */
function readBare(dataDir: string): { posts: number; seconds: number } {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const space = db.prepare('SELECT space_row_id AS id FROM posts LIMIT 1').get() as { id: number };
    const page = db.prepare<[number, number, number], { seq: number }>(
      'SELECT * FROM posts WHERE space_row_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    let after = 0;
    let posts = 0;
    const started = performance.now();
    for (;;) {
      const rows = page.all(space.id, after, PAGE);
      posts += rows.length;
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.seq;
    }
    return { posts, seconds: (performance.now() - started) / 1000 };
  } finally {
    db.close();
  }
}

async function run(): Promise<SuiteReport> {
  const dataDir = tempDataDir('svc-bench-catch-up-');
  try {
    const ownerSeed = new Uint8Array(32).map((_, i) => 0x61 + i);
    const filled = await fill(dataDir, ownerSeed);
    const relay = await spawnBenchRelay(dataDir);
    try {
      const owner = await mintToken(relay.url, ownerSeed);
      // One short read first, so the relay has compiled its read path.
      await expectCall(200, `${relay.url}/v1/spaces/${filled.name}/posts?limit=${PAGE}&detail=full`, 'GET', owner.token);
      const http: number[] = [];
      const bare: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const b = readBare(dataDir);
        if (b.posts !== POSTS) throw new Error(`bare scan read ${b.posts} rows, not ${POSTS}`);
        bare.push(b.posts / b.seconds);
        const h = await readOverHttp(relay.url, owner.token, filled.name);
        if (h.posts !== POSTS) throw new Error(`posts.read gave ${h.posts} posts, not ${POSTS}`);
        http.push(h.posts / h.seconds);
      }
      const bareOps = Math.max(...bare);
      const httpOps = Math.max(...http);
      const rows: Row[] = [
        { name: `bare SQLite pages ×${PAGE}`, opsPerSec: bareOps, note: 'every column, read-only connection' },
        {
          name: `posts.read full ×${PAGE} (HTTP)`,
          opsPerSec: httpOps,
          baseline: `bare SQLite pages ×${PAGE}`,
          note: `${((httpOps / bareOps) * 100).toFixed(1)}% of the bare scan; ${(POSTS / httpOps).toFixed(1)} s for ${POSTS.toLocaleString('en-US')} posts`,
        },
      ];
      return {
        rows,
        notes: [
          `${POSTS.toLocaleString('en-US')} unsigned posts (200-700 characters, a fingerprint on every fourth) in one SPACE, written through appendPost in ${filled.seconds.toFixed(1)} s with synchronous=OFF`,
          `ops/s = posts per second over a whole pass (${POSTS / PAGE} pages, one after another); best of ${ROUNDS} interleaved passes; relay process with SVC_RELAY_NO_RATE_LIMITS=1`,
        ],
      };
    } finally {
      await relay.kill('SIGTERM');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const catchUpSuite: Suite = {
  name: 'catch-up',
  title: `Catch-up: ${POSTS.toLocaleString('en-US')} posts by cursor pages of ${PAGE}, detail=full, vs a bare SQLite scan`,
  run,
};
