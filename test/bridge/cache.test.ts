/**
 * The bridge's local cache (real SQLite files, WAL): cursors only move forward, the newest
 * checkpoint per SPACE and stream is kept, service epoch changes are noticed, all of it per relay
 * identity accepted at an address, answers are kept to answer from offline, and several bridges
 * (connections, processes) share one file safely.
 */
import { spawn } from 'node:child_process';
import { chmodSync, statSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { KEPT_ANSWERS_MAX, type SeenCheckpoint } from '../../tools/cache/cache.js';
import { cachePath, openCache } from '../../bridge/cache/cache-file.js';
import { openKeyDirectory, type KeyDirectory } from '../../bridge/keys/keys.js';
import { tempHome } from '../helpers/bridge.js';
import { REPO_ROOT } from '../helpers/relay.js';

const RELAY = 'http://127.0.0.1:8787';
const OTHER = 'https://relay.example';

function freshDir(): KeyDirectory {
  return openKeyDirectory(tempHome());
}

function cp(last: string, id = last.padStart(64, '0')): SeenCheckpoint {
  return { checkpointId: id.replace(/[^0-9a-f]/g, 'a'), first: '1', last, served: JSON.stringify({ last }), seenAt: 1 };
}

describe('cursors', () => {
  it('start empty, advance, and never move back', () => {
    const cache = openCache(freshDir(), 'default');
    const space = { kind: 'space', space: 'lab' } as const;
    expect(cache.cursor(RELAY, space)).toBeUndefined();
    expect(cache.advanceCursor(RELAY, space, '9', 1)).toBe(true);
    expect(cache.advanceCursor(RELAY, space, '10', 2)).toBe(true); // numeric, not text, order
    expect(cache.advanceCursor(RELAY, space, '9', 3)).toBe(false);
    expect(cache.advanceCursor(RELAY, space, '10', 4)).toBe(false);
    expect(cache.cursor(RELAY, space)).toBe('10');
    cache.close();
  });

  it('are kept per relay, per SPACE and for the mailbox apart', () => {
    const cache = openCache(freshDir(), 'default');
    cache.advanceCursor(RELAY, { kind: 'mailbox' }, '3', 1);
    cache.advanceCursor(RELAY, { kind: 'space', space: 'a' }, '7', 1);
    cache.advanceCursor(OTHER, { kind: 'space', space: 'a' }, '1', 1);
    expect(cache.cursor(RELAY, { kind: 'mailbox' })).toBe('3');
    expect(cache.cursor(OTHER, { kind: 'mailbox' })).toBeUndefined();
    expect(cache.cursors(RELAY)).toEqual([
      { kind: 'mailbox', space: '', after: '3', updatedAt: 1 },
      { kind: 'space', space: 'a', after: '7', updatedAt: 1 },
    ]);
    cache.forgetCursor(RELAY, { kind: 'space', space: 'a' });
    expect(cache.cursor(RELAY, { kind: 'space', space: 'a' })).toBeUndefined();
    cache.close();
  });

  it('refuse a position that is not a 64-bit decimal', () => {
    const cache = openCache(freshDir(), 'default');
    for (const bad of ['-1', '01', 'x', '', '18446744073709551616']) {
      expect(() => cache.advanceCursor(RELAY, { kind: 'mailbox' }, bad, 1)).toThrow(TypeError);
    }
    expect(cache.advanceCursor(RELAY, { kind: 'mailbox' }, '18446744073709551615', 1)).toBe(true);
    cache.close();
  });

  it('survive reopening (a new bridge run continues from them)', () => {
    const dir = freshDir();
    const first = openCache(dir, 'default');
    first.advanceCursor(RELAY, { kind: 'mailbox' }, '42', 1);
    first.close();
    const second = openCache(dir, 'default');
    expect(second.cursor(RELAY, { kind: 'mailbox' })).toBe('42');
    second.close();
  });
});

describe('checkpoints seen', () => {
  it('keep the one ending latest per SPACE and stream', () => {
    const cache = openCache(freshDir(), 'default');
    expect(cache.noteCheckpoint(RELAY, 'lab', 'posts', cp('1024'))).toBe(true);
    expect(cache.noteCheckpoint(RELAY, 'lab', 'posts', cp('900'))).toBe(false);
    expect(cache.noteCheckpoint(RELAY, 'lab', 'events', cp('5'))).toBe(true);
    expect(cache.checkpoint(RELAY, 'lab', 'posts')?.last).toBe('1024');
    expect(cache.checkpoint(RELAY, 'lab', 'events')?.last).toBe('5');
    expect(cache.noteCheckpoint(RELAY, 'lab', 'posts', cp('2048'))).toBe(true);
    expect(cache.checkpoint(RELAY, 'lab', 'posts')).toMatchObject({ last: '2048', served: '{"last":"2048"}' });
    cache.close();
  });

  it('a different checkpoint ending at the same place does not replace the kept one', () => {
    const cache = openCache(freshDir(), 'default');
    cache.noteCheckpoint(RELAY, 'lab', 'posts', cp('10', 'a'.repeat(64)));
    expect(cache.noteCheckpoint(RELAY, 'lab', 'posts', cp('10', 'b'.repeat(64)))).toBe(false);
    expect(cache.checkpoint(RELAY, 'lab', 'posts')?.checkpointId).toBe('a'.repeat(64));
    cache.close();
  });
});

describe('service epoch', () => {
  it('the first sighting is no change; a different epoch later is', () => {
    const cache = openCache(freshDir(), 'default');
    expect(cache.noteServiceEpoch(RELAY, 'e1', 1)).toEqual({ previous: undefined, changed: false });
    expect(cache.noteServiceEpoch(RELAY, 'e1', 2)).toEqual({ previous: 'e1', changed: false });
    expect(cache.noteServiceEpoch(RELAY, 'e2', 3)).toEqual({ previous: 'e1', changed: true });
    expect(cache.serviceEpoch(RELAY)).toBe('e2');
    expect(cache.serviceEpoch(OTHER)).toBeUndefined();
    cache.close();
  });
});

describe('relay identities', () => {
  const ROOT_A = 'a'.repeat(64);
  const ROOT_B = 'b'.repeat(64);

  it('keep what is known of each relay accepted at one address apart, and find it again when one is accepted back', () => {
    const dir = freshDir();
    const cache = openCache(dir, 'default');
    const space = { kind: 'space', space: 'lab' } as const;
    expect(cache.pinServiceRoot(RELAY, ROOT_A, 1)).toBe(ROOT_A);
    cache.advanceCursor(RELAY, space, '7', 1);
    cache.noteCheckpoint(RELAY, 'lab', 'posts', cp('7'));
    cache.noteServiceEpoch(RELAY, 'epoch-a', 1);
    cache.keepAnswer(RELAY, 'me', '{"a":1}', 1);
    // The first pin keeps the address as its key: a cache from before stays whole.
    expect(cache.relayScope(RELAY)).toBe(RELAY);
    expect(cache.relayIdentities(RELAY)).toEqual([]);

    cache.acceptServiceRoot(RELAY, ROOT_B, 2);
    expect(cache.serviceRoot(RELAY)).toBe(ROOT_B);
    expect(cache.relayScope(RELAY)).toBe(`${RELAY}#${ROOT_B}`);
    expect(cache.cursor(RELAY, space)).toBeUndefined();
    expect(cache.checkpoint(RELAY, 'lab', 'posts')).toBeUndefined();
    expect(cache.serviceEpoch(RELAY)).toBeUndefined();
    expect(cache.keptAnswer(RELAY, 'me')).toBeUndefined();
    cache.advanceCursor(RELAY, space, '2', 2);
    // Another address is untouched.
    cache.advanceCursor(OTHER, space, '4', 2);
    expect(cache.relayScope(OTHER)).toBe(OTHER);
    expect(cache.relayIdentities(RELAY)).toEqual([
      { rootKey: ROOT_A, acceptedAt: 2, current: false },
      { rootKey: ROOT_B, acceptedAt: 2, current: true },
    ]);
    cache.close();

    // Another process (or run) sees the same choice, and accepting A back finds A's rows.
    const again = openCache(dir, 'default');
    expect(again.cursor(RELAY, space)).toBe('2');
    again.acceptServiceRoot(RELAY, ROOT_A, 3);
    expect(again.cursor(RELAY, space)).toBe('7');
    expect(again.checkpoint(RELAY, 'lab', 'posts')?.last).toBe('7');
    expect(again.serviceEpoch(RELAY)).toBe('epoch-a');
    expect(again.keptAnswer(RELAY, 'me')?.served).toBe('{"a":1}');
    expect(again.cursor(OTHER, space)).toBe('4');
    again.acceptServiceRoot(RELAY, ROOT_B, 4);
    expect(again.cursor(RELAY, space)).toBe('2');
    again.close();
  });
});

describe('kept answers', () => {
  it('replace the one kept under the same name, and keep at most KEPT_ANSWERS_MAX per relay, the oldest dropped', () => {
    const cache = openCache(freshDir(), 'default');
    cache.keepAnswer(RELAY, 'me', '{"v":1}', 1);
    cache.keepAnswer(RELAY, 'me', '{"v":2}', 2);
    expect(cache.keptAnswer(RELAY, 'me')).toEqual({ served: '{"v":2}', readAt: 2 });
    for (let i = 0; i < KEPT_ANSWERS_MAX; i++) cache.keepAnswer(RELAY, `posts:s${i}`, '{}', 10 + i);
    expect(cache.keptAnswer(RELAY, 'me')).toBeUndefined();
    expect(cache.keptAnswer(RELAY, 'posts:s0')).toEqual({ served: '{}', readAt: 10 });
    expect(cache.keptAnswer(OTHER, 'posts:s0')).toBeUndefined();
    cache.close();
  });
});

describe('the cache file', () => {
  it('is one SQLite file per KEY in the key directory, in WAL mode, mode 0600', () => {
    const dir = freshDir();
    const cache = openCache(dir, 'alice');
    expect(cache.path).toBe(join(dir.cacheDir, 'alice.sqlite'));
    expect(statSync(cache.path).mode & 0o777).toBe(0o600);
    cache.close();
    const db = new DatabaseSync(cachePath(dir, 'alice'), { readOnly: true });
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    db.close();
  });

  it('holds the cache, its -wal and -shm at mode 0600 from the first open and after writes, and narrows files left at 0644', () => {
    const umask = process.umask(0o022);
    try {
      const dir = freshDir();
      const cache = openCache(dir, 'bob');
      const sides = ['', '-wal', '-shm'].map((side) => cache.path + side);
      for (const f of sides) expect(statSync(f).mode & 0o777, f).toBe(0o600);
      for (let i = 1; i <= 5; i++) cache.advanceCursor(RELAY, { kind: 'space', space: 'lab' }, String(i), i);
      for (const f of sides) expect(statSync(f).mode & 0o777, f).toBe(0o600);
      for (const f of sides) chmodSync(f, 0o644);
      const again = openCache(dir, 'bob');
      for (const f of sides) expect(statSync(f).mode & 0o777, f).toBe(0o600);
      again.close();
      cache.close();
    } finally {
      process.umask(umask);
    }
  });

  it('is shared safely by bridges in several processes writing at once', async () => {
    const dir = freshDir();
    openCache(dir, 'default').close();
    const scriptDir = mkdtempSync(join(tmpdir(), 'svc-cache-writer-'));
    const script = join(scriptDir, 'writer.mts');
    const mod = (p: string) => JSON.stringify(pathToFileURL(join(REPO_ROOT, p)).href);
    writeFileSync(
      script,
      `import { openCache } from ${mod('bridge/cache/cache-file.ts')};
import { openKeyDirectory } from ${mod('bridge/keys/keys.ts')};
const [home, who, at] = process.argv.slice(2);
const cache = openCache(openKeyDirectory(home), 'default');
while (Date.now() < Number(at)) {}
for (let i = 1; i <= 200; i++) {
  cache.advanceCursor('r', { kind: 'mailbox' }, String(i * 2 + Number(who)), i);
  cache.advanceCursor('r', { kind: 'space', space: 's' + who }, String(i), i);
  cache.noteServiceEpoch('r', 'e' + who, i);
}
cache.close();
`,
    );
    const startAt = Date.now() + 2500;
    const runs = [0, 1, 2].map(
      (who) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', script, dir.home, String(who), String(startAt)], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
          let err = '';
          child.stderr.on('data', (d: Buffer) => (err += d.toString()));
          child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${who} exited ${code}: ${err}`))));
        }),
    );
    await Promise.all(runs);
    const cache = openCache(dir, 'default');
    // The furthest position any writer reached, whatever the interleaving.
    expect(cache.cursor('r', { kind: 'mailbox' })).toBe('402');
    for (const who of [0, 1, 2]) expect(cache.cursor('r', { kind: 'space', space: `s${who}` })).toBe('200');
    expect(['e0', 'e1', 'e2']).toContain(cache.serviceEpoch('r'));
    cache.close();
  }, 60_000);
});
