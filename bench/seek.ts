/**
 * The SEEK suite: GET /v1/seek over HTTP against the real relay process on a large
 * corpus, beside bare FTS5 / fingerprint-table counts on the same database.
 *
 * Corpus (default 200,000 posts in 2,000 SPACES; `--full` or SVC_BENCH_FULL=1: the full size,
 * 1,000,000 posts in 10,000 SPACES): 30% of SPACES public, posts spread over 100 days by 2,000
 * authors; bodies of 40-120 words drawn log-uniformly from 20,000 made-up words; the common
 * word `kernel` in 15% of posts; rare words (`quokkasaurus`, …) in one post in 50,000; one
 * `git.commit` fingerprint (40 hex) per post. Rows go in through the relay's stores (keys,
 * spaces, members, posts.insert) with synchronous=OFF while filling; the post rows carry
 * placeholder chain hashes and receipts (SEEK never reads them; nothing here is verified),
 * then the relay's own indexer (relay/seek/indexer.ts) tokenises and indexes every post.
 *
 * Callers:
 *   KEY in 200 SPACES   a member of 200 SPACES, unscoped (its SPACES and public ones);
 *   KEY, space=…        the same KEY scoped to one of its SPACES (a different one each query);
 *   no KEY              anonymous, unscoped (public SPACES only).
 * Queries: a rare word, the common word, an exact fingerprint (a random post's), a fingerprint
 * prefix (8 hex characters of a random post's). One request at a time, as SEEK allows.
 *
 * Baselines, in this process on the same file (read-only better-sqlite3):
 *   bare FTS5 count   SELECT count(*) FROM seek_text WHERE seek_text MATCH <same expression>
 *   bare fp count     SELECT count(*) FROM seek_fingerprints on (scheme, value) or its range
 *
 * Target: p99 at most 10 ms for each query, common word included.
 */
import { sqliteRaw } from '../relay/store/sqlite/connection.js';
import { request } from 'undici';
import Database from 'better-sqlite3';
import { hash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createSeekIndexer } from '../relay/seek/indexer.js';
import { queryExpression } from '../shared/seek/terms.js';
import { DATABASE_FILE } from '../relay/store/sqlite/open.js';
import type { NewPost } from '../relay/store/posts.js';
import type { SpaceRow } from '../relay/store/spaces.js';
import { signerFromSeed } from '../shared/identity.js';
import { median, summarizeLatency, formatDuration, type Row, type Suite, type SuiteReport } from './harness.js';
import { createSpaceInStore, openInProcess, registerKey, spawnBenchRelay, tempDataDir } from './relay-fixture.js';
import { mintToken } from '../test/helpers/relay.js';
import { LOCAL_TITLE, runLocalSeek } from './seek-local.js';

const FULL = process.argv.includes('--full') || process.env.SVC_BENCH_FULL === '1';
const POSTS = FULL ? 1_000_000 : 200_000;
const SPACES = FULL ? 10_000 : 2_000;
const AUTHORS = 2_000;
const MEMBER_OF = 200;
const DAYS = 100;
const VOCABULARY = 20_000;
const COMMON = 'kernel';
const COMMON_SHARE = 0.15;
const RARE = ['quokkasaurus', 'zymurgist', 'xylograph', 'vexillum'];
const RARE_EVERY = 50_000;
const SAMPLES = 150;
const TARGET_P99_MS = 10;
const FP_SCHEME = 'git.commit';

/** mulberry32: a small seeded generator, so every run builds the same corpus. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Made-up word number i: letters only, never one of the planted words. */
function word(i: number): string {
  let s = 'v';
  let n = i;
  do {
    s += String.fromCharCode(97 + (n % 26));
    n = Math.floor(n / 26);
  } while (n > 0);
  return s;
}

function fingerprintOf(i: number): string {
  return hash('sha1', `post ${i}`, 'hex');
}

const ZERO32 = new Uint8Array(32);
const ZERO64 = new Uint8Array(64);

interface Corpus {
  memberSeed: Uint8Array;
  /** Names of the SPACES the member KEY is in. */
  memberSpaces: string[];
  seconds: { fill: number; index: number };
}

async function buildCorpus(dataDir: string): Promise<Corpus> {
  const r = await openInProcess(dataDir);
  const { store } = r;
  const db = store.db;
  sqliteRaw(db).pragma('synchronous = OFF');
  const rand = prng(0x5eec);
  const started = performance.now();
  const now = Date.now();
  try {
    const authors: string[] = [];
    await db.transaction(async () => {
      for (let a = 0; a < AUTHORS; a++) {
        const seed = new Uint8Array(hash('sha256', `author ${a}`, 'buffer'));
        authors.push(await registerKey(r, signerFromSeed(seed), now - DAYS * 86_400_000 - 1000));
      }
    })();
    const memberSeed = new Uint8Array(hash('sha256', 'seek member', 'buffer'));
    const member = await registerKey(r, signerFromSeed(memberSeed), now - DAYS * 86_400_000);
    const tag = randomUUID().slice(0, 6);
    const spaces: SpaceRow[] = [];
    await db.transaction(async () => {
      for (let s = 0; s < SPACES; s++) {
        const visibility = s % 10 < 3 ? 'public' : 'private';
        spaces.push(
          await createSpaceInStore(r, authors[s % AUTHORS]!, `seek-${tag}-${s}`, {
            visibility,
            joinPolicy: visibility === 'public' ? 'request' : 'invite',
            now: now - DAYS * 86_400_000,
          }),
        );
      }
    })();
    // The member KEY: every (SPACES / 200)-th SPACE, public and private alike.
    const memberSpaces: string[] = [];
    await db.transaction(async () => {
      const step = SPACES / MEMBER_OF;
      for (let k = 0; k < MEMBER_OF; k++) {
        const space = spaces[k * step + (k % step)]!;
        await store.members.admit(space, { peer: member, role: 'reader', tags: [], broughtInBy: space.owner }, space.owner, now);
        memberSpaces.push(space.name);
      }
    })();

    const heads = new Uint32Array(SPACES);
    const span = DAYS * 86_400_000;
    const BATCH = 10_000;
    for (let from = 0; from < POSTS; from += BATCH) {
      await db.transaction(async () => {
        for (let i = from; i < Math.min(POSTS, from + BATCH); i++) {
          const s = Math.floor(rand() * SPACES);
          const words: string[] = [];
          const n = 40 + Math.floor(rand() * 81);
          for (let w = 0; w < n; w++) words.push(word(Math.floor(VOCABULARY ** rand()) - 1));
          if (rand() < COMMON_SHARE) words.splice(Math.floor(rand() * words.length), 0, COMMON);
          if (i % RARE_EVERY === RARE_EVERY >> 1) words.splice(3, 0, RARE[(i / RARE_EVERY) % RARE.length | 0]!);
          const space = spaces[s]!;
          const seq = ++heads[s]!;
          const objectId = new Uint8Array(hash('sha256', `object ${i}`, 'buffer'));
          const post: NewPost = {
            spaceRowId: space.id,
            seq,
            postId: randomUUID(),
            author: rand() < 0.5 ? space.owner : authors[Math.floor(rand() * AUTHORS)]!,
            kind: 'obs',
            title: `${word(i % VOCABULARY)} ${word((i * 7) % VOCABULARY)} note ${i}`,
            body: words.join(' '),
            toJson: null,
            replyTo: null,
            supersedes: null,
            retracts: null,
            fingerprintsJson: JSON.stringify([{ scheme: FP_SCHEME, value: fingerprintOf(i) }]),
            dataJson: null,
            budgetJson: null,
            runId: null,
            idempotencyKey: null,
            inputDigest: ZERO32,
            canonical: objectId,
            private: null,
            signature: null,
            signed: false,
            sealed: false,
            objectId,
            admittedRevision: 0,
            admittedControlHash: ZERO32,
            admission: ZERO32,
            previousHash: ZERO32,
            chainHash: objectId,
            postedAt: now - span + Math.floor((i * span) / POSTS),
            noRole: false,
            receiptSignature: ZERO64,
            receiptSignerKeyId: 'bench',
            receiptServiceEpoch: null,
          };
          await store.posts.insert(post);
        }
      })();
    }
    const filled = performance.now();
    const indexed = await createSeekIndexer(store.seek, { report: (m) => process.stderr.write(`${m}\n`) }).catchUp();
    if (indexed !== POSTS) throw new Error(`indexed ${indexed} posts, not ${POSTS}`);
    sqliteRaw(db).pragma('synchronous = FULL');
    return {
      memberSeed,
      memberSpaces,
      seconds: { fill: (filled - started) / 1000, index: (performance.now() - filled) / 1000 },
    };
  } finally {
    r.close();
  }
}

type QueryKind = 'rare word' | 'common word' | 'fingerprint' | 'fingerprint prefix';
const QUERIES: readonly QueryKind[] = ['rare word', 'common word', 'fingerprint', 'fingerprint prefix'];

/** The k-th query of a kind: its SEEK parameters and what the bare baseline counts. */
function queryOf(kind: QueryKind, k: number, rand: () => number): { params: Record<string, string>; bare: { sql: 'text' | 'fp' | 'prefix'; args: string[] } } {
  switch (kind) {
    case 'rare word': {
      const w = RARE[k % RARE.length]!;
      return { params: { q: w }, bare: { sql: 'text', args: [queryExpression(w)!] } };
    }
    case 'common word':
      return { params: { q: COMMON }, bare: { sql: 'text', args: [queryExpression(COMMON)!] } };
    case 'fingerprint': {
      const v = fingerprintOf(Math.floor(rand() * POSTS));
      return { params: { fingerprint: `${FP_SCHEME}:${v}` }, bare: { sql: 'fp', args: [FP_SCHEME, v] } };
    }
    case 'fingerprint prefix': {
      const v = fingerprintOf(Math.floor(rand() * POSTS)).slice(0, 8);
      return { params: { fingerprint_prefix: `${FP_SCHEME}:${v}` }, bare: { sql: 'prefix', args: [FP_SCHEME, v, `${v}\u{10ffff}`] } };
    }
  }
}

async function run(): Promise<SuiteReport> {
  const dataDir = tempDataDir('svc-bench-seek-');
  try {
    const corpus = await buildCorpus(dataDir);
    const relay = await spawnBenchRelay(dataDir);
    try {
      const member = await mintToken(relay.url, corpus.memberSeed);
      const callers = [
        { name: `KEY in ${MEMBER_OF} SPACES`, token: member.token as string | undefined, scoped: false },
        { name: 'KEY, space=one of them', token: member.token as string | undefined, scoped: true },
        { name: 'no KEY (public only)', token: undefined, scoped: false },
      ];
      const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
      const bareSql = {
        text: db.prepare('SELECT count(*) AS n FROM seek_text WHERE seek_text MATCH ?'),
        fp: db.prepare('SELECT count(*) AS n FROM seek_fingerprints WHERE scheme = ? AND value = ?'),
        prefix: db.prepare('SELECT count(*) AS n FROM seek_fingerprints WHERE scheme = ? AND value >= ? AND value < ?'),
      };
      const rows: Row[] = [];
      const notes: string[] = [];
      const seekOnce = async (params: Record<string, string>, token: string | undefined): Promise<number> => {
        const qs = new URLSearchParams(params).toString();
        const t0 = performance.now();
        const res = await request(`${relay.url}/v1/seek?${qs}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
        const body = (await res.body.json()) as { items?: unknown[] };
        const dt = performance.now() - t0;
        if (res.statusCode !== 200) throw new Error(`seek ${qs}: ${res.statusCode} ${JSON.stringify(body)}`);
        return dt;
      };
      // Warm the relay's statements and the page cache once per caller and query.
      for (const c of callers) {
        for (const kind of QUERIES) {
          const q = queryOf(kind, 0, prng(1));
          if (c.scoped) q.params.space = corpus.memberSpaces[0]!;
          for (let i = 0; i < 5; i++) await seekOnce(q.params, c.token);
        }
      }
      const missed: string[] = [];
      for (const kind of QUERIES) {
        // Baseline: the bare count, same queries, in this process.
        const rb = prng(7);
        const bareMs: number[] = [];
        let matched = 0;
        for (let k = 0; k < SAMPLES; k++) {
          const q = queryOf(kind, k, rb);
          const stmt = bareSql[q.bare.sql];
          const t0 = performance.now();
          const n = (stmt.get(...q.bare.args) as { n: number }).n;
          bareMs.push(performance.now() - t0);
          matched += n;
        }
        const bareName = `bare ${kind === 'fingerprint' || kind === 'fingerprint prefix' ? 'fingerprint' : 'FTS5'} count: ${kind}`;
        const bareLatency = summarizeLatency(bareMs.map((x) => x * 1e6));
        rows.push({
          name: bareName,
          opsPerSec: 1000 / (bareMs.reduce((a, b) => a + b, 0) / SAMPLES),
          latency: bareLatency,
          note: `${Math.round(matched / SAMPLES).toLocaleString('en-US')} matches on average`,
        });
        for (const c of callers) {
          const rs = prng(7);
          const ms: number[] = [];
          for (let k = 0; k < SAMPLES; k++) {
            const q = queryOf(kind, k, rs);
            if (c.scoped) q.params.space = corpus.memberSpaces[k % corpus.memberSpaces.length]!;
            ms.push(await seekOnce(q.params, c.token));
          }
          const latency = summarizeLatency(ms.map((x) => x * 1e6));
          const ok = latency.p99 <= TARGET_P99_MS * 1e6;
          if (!ok) missed.push(`${kind} / ${c.name} (p99 ${formatDuration(latency.p99)})`);
          rows.push({
            name: `seek ${kind}, ${c.name}`,
            opsPerSec: 1000 / (ms.reduce((a, b) => a + b, 0) / SAMPLES),
            baseline: bareName,
            latency,
            note: `p99 ≤ ${TARGET_P99_MS} ms: ${ok ? 'met' : 'missed'}`,
          });
        }
      }
      db.close();
      notes.push(
        `corpus: ${POSTS.toLocaleString('en-US')} posts in ${SPACES.toLocaleString('en-US')} SPACES (${FULL ? 'full size, --full' : 'reduced; --full for 1,000,000 in 10,000'}); ` +
          `filled in ${corpus.seconds.fill.toFixed(1)} s, indexed by the relay's indexer in ${corpus.seconds.index.toFixed(1)} s`,
        `target p99 ≤ ${TARGET_P99_MS} ms for every query: ${missed.length === 0 ? 'met' : `missed for ${missed.join('; ')}`}`,
        `${SAMPLES} requests per row, one at a time, over HTTP (limit 20, detail snippets); ops/s = 1 ÷ mean latency; ` +
          `median p50 over the SEEK rows ${formatDuration(median(rows.filter((r) => r.baseline !== undefined).map((r) => r.latency!.p50)))}; relay process with SVC_RELAY_NO_RATE_LIMITS=1`,
      );
      return { rows, notes };
    } finally {
      await relay.kill('SIGTERM');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `--local`: the bridge's local index of sealed SPACES instead (bench/seek-local.ts). */
const LOCAL = process.argv.includes('--local');

export const seekSuite: Suite = {
  name: 'seek',
  title: LOCAL ? LOCAL_TITLE : `SEEK over ${POSTS.toLocaleString('en-US')} posts in ${SPACES.toLocaleString('en-US')} SPACES vs bare FTS5 and fingerprint counts`,
  run: LOCAL ? runLocalSeek : run,
};
