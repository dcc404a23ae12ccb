/**
 * `npm run bench -- seek --local`: SEEK over the bridge's local index of sealed SPACES
 * (bridge/sealed/local-index.ts, bridge/sealed/local-seek.ts), no relay.
 *
 * Corpus: 100,000 opened sealed posts in 10 SPACES, put into the index through its own `add`
 * (the code every read's opening calls): titles of 4 words and bodies of 40-120 words drawn
 * log-uniformly from 20,000 made-up words, the common word `kernel` in 15% of posts, rare words
 * in one post in 25,000, one `git.commit` fingerprint (40 hex) per post.
 *
 * Each query runs as svc_seek runs it locally: the blind walk (keyed hashes of the relay's SEEK
 * terms), every candidate opened (AES-256-GCM) and held to the query, then BM25 over the hits
 * (shared/seek/rank.ts). Queries: a rare word, the common word, two words, an exact fingerprint,
 * a fingerprint prefix (12 hex characters).
 *
 * Baseline, in the same run over the same posts: a plain-text index as one would keep it
 * without the blindness, in the same node:sqlite: FTS5 over the same terms (newest 100
 * matches), plain JSON records, a plain fingerprint table; the same ranking after it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SEEK_TEXT_CANDIDATES, rankScores } from '../shared/seek/rank.js';
import { documentTerms, textQuery, type TextQuery } from '../shared/seek/terms.js';
import { searchKeysOf } from '../bridge/keys/search-keys.js';
import { openSealedIndex, type OpenedPost } from '../bridge/sealed/local-index.js';
import type { LocalSeekArgs } from '../tools/ports.js';
import { FINGERPRINT_CANDIDATES, seekLocal } from '../bridge/sealed/local-seek.js';
import { measureLatency, progress, type Row, type SuiteReport } from './harness.js';

/** SVC_BENCH_LOCAL_POSTS: a smaller corpus for a quick look (the figures are for 100,000). */
const POSTS = Number(process.env.SVC_BENCH_LOCAL_POSTS ?? 100_000);
const SPACES = 10;
const VOCABULARY = 20_000;
const COMMON = 'kernel';
const COMMON_SHARE = 0.15;
const RARE = ['quokkasaurus', 'zymurgist', 'xylograph', 'vexillum'];
const RARE_EVERY = 25_000;
const SAMPLES = 200;
const BATCH = 1000;
const RELAY = 'https://relay.example';
const SCHEME = 'git.commit';

/** mulberry32: the same corpus every run. */
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

function word(i: number): string {
  let s = 'v';
  let n = i;
  do {
    s += String.fromCharCode(97 + (n % 26));
    n = Math.floor(n / 26);
  } while (n > 0);
  return s;
}

const fingerprintOf = (i: number) => createHash('sha1').update(`post ${i}`).digest('hex');
const uuidOf = (i: number) => {
  const h = createHash('sha256').update(`id ${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

function postOf(i: number, r: () => number): OpenedPost {
  const n = 40 + Math.floor(r() * 81);
  const words: string[] = [];
  for (let k = 0; k < n + 4; k++) words.push(word(Math.floor(Math.exp(r() * Math.log(VOCABULARY))) - 1));
  if (r() < COMMON_SHARE) words[4 + Math.floor(r() * n)] = COMMON;
  if (i % RARE_EVERY === 7) words[4 + Math.floor(r() * n)] = RARE[Math.floor(i / RARE_EVERY) % RARE.length]!;
  const title = words.slice(0, 4).join(' ');
  const body = words.slice(4).join(' ');
  const space = i % SPACES;
  const postedAt = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  const fingerprints = [{ scheme: SCHEME, value: fingerprintOf(i) }];
  const postId = uuidOf(i);
  const author = createHash('sha256').update(`author ${i % 50}`).digest('hex');
  return {
    relay: RELAY,
    spaceId: uuidOf(-1 - space),
    space: `sealed-${space}`,
    postId,
    seq: Math.floor(i / SPACES) + 1,
    kind: 'obs',
    author,
    postedAt,
    supersedes: null,
    retracts: null,
    title,
    body,
    fingerprints,
    record: { post_id: postId, space: `sealed-${space}`, seq: String(Math.floor(i / SPACES) + 1), kind: 'obs', author, posted_at: postedAt, title, sealed: { generation: 1, bytes: 900, opened: true }, fingerprints, fingerprint_count: 1, signed: true, body },
  };
}

interface Query {
  name: string;
  args: Omit<LocalSeekArgs, 'relay'>;
}

export async function runLocalSeek(): Promise<SuiteReport> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-seek-local-'));
  try {
    const keys = searchKeysOf(new Uint8Array(randomBytes(32)));
    const index = openSealedIndex(join(dir, 'k.seek.sqlite'), keys);
    const plain = new DatabaseSync(join(dir, 'plain.sqlite'));
    plain.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    plain.exec(`CREATE VIRTUAL TABLE docs USING fts5(terms, tokenize = 'unicode61 remove_diacritics 0');
      CREATE TABLE records (id INTEGER PRIMARY KEY, json TEXT NOT NULL) STRICT;
      CREATE TABLE fps (fp TEXT NOT NULL, doc INTEGER NOT NULL) STRICT;
      CREATE INDEX fps_by_fp ON fps (fp, doc)`);
    const insDoc = plain.prepare('INSERT INTO docs (rowid, terms) VALUES (?, ?)');
    const insRecord = plain.prepare('INSERT INTO records (id, json) VALUES (?, ?)');
    const insFp = plain.prepare('INSERT INTO fps (fp, doc) VALUES (?, ?)');

    const r = prng(42);
    let blindMs = 0;
    let plainMs = 0;
    for (let start = 0; start < POSTS; start += BATCH) {
      const batch: OpenedPost[] = [];
      for (let i = start; i < Math.min(POSTS, start + BATCH); i++) batch.push(postOf(i, r));
      let t0 = performance.now();
      index.add(batch, Date.now());
      blindMs += performance.now() - t0;
      t0 = performance.now();
      plain.exec('BEGIN');
      batch.forEach((p, k) => {
        const id = start + k + 1;
        insDoc.run(id, documentTerms(0, p.title, p.body));
        insRecord.run(id, JSON.stringify(p.record));
        for (const f of p.fingerprints) insFp.run(`${f.scheme}:${f.value}`, id);
      });
      plain.exec('COMMIT');
      plainMs += performance.now() - t0;
      progress(`seek --local: ${(start + batch.length).toLocaleString('en-US')} of ${POSTS.toLocaleString('en-US')} posts indexed`);
    }
    progress('');

    const q = (text: string): TextQuery => textQuery(text)!;
    const target = fingerprintOf(61_234);
    const queries: Query[] = [
      { name: `rare word (${RARE[0]})`, args: { text: q(RARE[0]!), fingerprints: [] } },
      { name: `common word (${COMMON}, ${Math.round(COMMON_SHARE * 100)}% of posts)`, args: { text: q(COMMON), fingerprints: [] } },
      { name: `two words (${COMMON} ${word(3)})`, args: { text: q(`${COMMON} ${word(3)}`), fingerprints: [] } },
      { name: 'exact fingerprint', args: { fingerprints: [{ scheme: SCHEME, value: target }] } },
      { name: 'fingerprint prefix (12 hex)', args: { fingerprints: [], prefix: { scheme: SCHEME, value: target.slice(0, 12) } } },
    ];

    const selText = plain.prepare(`SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid DESC LIMIT ${SEEK_TEXT_CANDIDATES}`);
    const selRecord = plain.prepare('SELECT json FROM records WHERE id = ?');
    const selFp = plain.prepare(`SELECT doc FROM fps WHERE fp = ? ORDER BY doc DESC LIMIT ${FINGERPRINT_CANDIDATES}`);
    const selPrefix = plain.prepare(`SELECT doc FROM fps WHERE fp >= ? AND fp < ? ORDER BY fp LIMIT ${FINGERPRINT_CANDIDATES}`);
    const rank = (phrases: readonly (readonly string[])[], records: Record<string, unknown>[]) =>
      rankScores(phrases, records.map((x) => ({ title: (x.title as string) ?? null, body: (x.body as string) ?? null })), () => ({ size: records.length, matching: () => 1 }));
    const recordsOf = (ids: readonly number[]) => ids.map((id) => JSON.parse((selRecord.get(id) as { json: string }).json) as Record<string, unknown>);

    const rows: Row[] = [];
    const notes: string[] = [];
    for (const { name, args } of queries) {
      progress(`seek --local: ${name}`);
      let hits = 0;
      const base = measureLatency(
        () => {
          let ids: number[];
          if (args.text !== undefined) ids = (selText.all(args.text.expression) as { rowid: number }[]).map((x) => x.rowid);
          else if (args.prefix !== undefined) {
            const p = `${args.prefix.scheme}:${args.prefix.value}`;
            ids = (selPrefix.all(p, `${p}\u{10ffff}`) as { doc: number }[]).map((x) => x.doc);
          } else ids = (selFp.all(`${args.fingerprints[0]!.scheme}:${args.fingerprints[0]!.value}`) as { doc: number }[]).map((x) => x.doc);
          const records = recordsOf(ids);
          if (args.text !== undefined) rank(args.text.phrases, records);
          return records.length + 1;
        },
        { warmupMs: 200, count: SAMPLES },
      );
      const local = measureLatency(
        () => {
          const found = seekLocal(index, keys, { relay: RELAY, ...args });
          hits = found.fingerprint.length + found.text.length;
          if (args.text !== undefined) rankScores(args.text.phrases, found.text.map((h) => ({ title: (h.record.title as string) ?? null, body: (h.record.body as string) ?? null })), () => ({ size: found.text.length, matching: () => 1 }));
          return hits + 1;
        },
        { warmupMs: 200, count: SAMPLES },
      );
      const baseName = `plain FTS5 index: ${name}`;
      rows.push({ name: baseName, opsPerSec: base.opsPerSec, latency: base.latency });
      rows.push({ name: `blind local index: ${name}`, opsPerSec: local.opsPerSec, baseline: baseName, latency: local.latency, note: `${hits} hit${hits === 1 ? '' : 's'}` });
    }
    progress('');
    // On disk, with the write-ahead log not yet copied back.
    const size = (f: string) => [f, `${f}-wal`].reduce((n, x) => n + (existsSync(x) ? statSync(x).size : 0), 0);
    notes.push(
      `corpus: ${POSTS.toLocaleString('en-US')} opened sealed posts in ${SPACES} SPACES, 44-124 words each, one fingerprint each; ` +
        `indexed in ${(blindMs / 1000).toFixed(1)} s through the bridge's index (${Math.round(POSTS / (blindMs / 1000)).toLocaleString('en-US')} posts/s: terms, the fingerprint and 11 of its prefixes keyed-hashed, content sealed), ` +
        `${(plainMs / 1000).toFixed(1)} s plain (${Math.round(POSTS / (plainMs / 1000)).toLocaleString('en-US')} posts/s)`,
      `files: blind index ${(size(index.path) / 2 ** 20).toFixed(0)} MiB, plain index ${(size(join(dir, 'plain.sqlite')) / 2 ** 20).toFixed(0)} MiB`,
      `${SAMPLES} queries per row, one at a time in this process; the blind rows open and check each candidate (at most ${SEEK_TEXT_CANDIDATES} text hits, ${FINGERPRINT_CANDIDATES} per fingerprint), both sides read their records and rank text hits with the relay's BM25`,
    );
    index.close();
    plain.close();
    return { rows, notes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const LOCAL_TITLE = `SEEK in sealed SPACES on the member's machine: ${POSTS.toLocaleString('en-US')} opened posts, blind index vs a plain-text index`;
