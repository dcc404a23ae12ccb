/**
 * The bridge's local index of sealed SPACES on its own (bridge/sealed/local-index.ts,
 * bridge/keys/search-keys.ts, bridge/sealed/local-seek.ts): real node:sqlite files, no relay.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { textQuery } from '../../shared/seek/terms.js';
import { searchKeysOf } from '../../bridge/keys/search-keys.js';
import { entriesOf, indexedPrefixes, openSealedIndex, prefixLookup, type OpenedPost } from '../../bridge/sealed/local-index.js';
import { seekLocal } from '../../bridge/sealed/local-seek.js';

const RELAY = 'http://127.0.0.1:1';
const SPACE_ID = '0b6f3a52-8d1e-4c2a-9f0e-5a7b3c1d2e4f';

function post(n: number, title: string, body: string, fp = `${n}`.padStart(40, 'a')): OpenedPost {
  const postId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const postedAt = new Date(Date.UTC(2026, 5, 1) + n * 1000).toISOString();
  const fingerprints = [{ scheme: 'git.commit', value: fp }];
  return {
    relay: RELAY,
    spaceId: SPACE_ID,
    space: 'notes',
    postId,
    seq: n,
    kind: 'obs',
    author: 'ab'.repeat(32),
    postedAt,
    supersedes: null,
    retracts: null,
    title,
    body,
    fingerprints,
    record: { post_id: postId, space: 'notes', seq: String(n), title, body, fingerprints },
  };
}

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'svc-sealed-index-')), 'k.seek.sqlite');

describe('the keys of the local index', () => {
  it('hash an entry as the first 8 bytes of HMAC-SHA256 under HKDF(seed, "svc bridge sealed search entries")', () => {
    const seed = new Uint8Array(randomBytes(32));
    const key = Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), Buffer.from('svc bridge sealed search entries'), 32));
    for (const text of ['t\nkernel', 'f\ngit.commit:9f86d081', '', 'é'.repeat(100)]) {
      expect(searchKeysOf(seed).entry(text)).toBe(createHmac('sha256', key).update(text, 'utf8').digest().readBigInt64BE(0));
    }
  });

  it('seal content that only the same seed opens, under the same associated data', () => {
    const seed = new Uint8Array(randomBytes(32));
    const sealed = searchKeysOf(seed).box.seal(Buffer.from('words'), Buffer.from('here'));
    expect(Buffer.from(searchKeysOf(seed).box.open(sealed, Buffer.from('here'))!).toString()).toBe('words');
    expect(searchKeysOf(seed).box.open(sealed, Buffer.from('there'))).toBeUndefined();
    expect(searchKeysOf(new Uint8Array(randomBytes(32))).box.open(sealed, Buffer.from('here'))).toBeUndefined();
  });
});

describe('fingerprint prefixes', () => {
  it('are indexed from the first of 6 bytes up to 16 characters, counted in code points', () => {
    expect(indexedPrefixes('0123456789abcdefXYZ')).toEqual(Array.from({ length: 11 }, (_, i) => '0123456789abcdef'.slice(0, 6 + i)));
    // "é" is two bytes: three of them make the first prefix of six bytes.
    expect(indexedPrefixes('ééé')[0]).toBe('ééé');
    expect(indexedPrefixes('abcde')).toEqual([]);
    expect(prefixLookup('0123456789abcdefXYZ')).toBe('0123456789abcdef');
    expect(prefixLookup('😀'.repeat(20))).toBe('😀'.repeat(16));
  });
});

describe('the local index', () => {
  it('finds posts by phrase, exact fingerprint and prefix of any length, newest first, and skips a post it holds', () => {
    const keys = searchKeysOf(new Uint8Array(randomBytes(32)));
    const index = openSealedIndex(tempFile(), keys);
    expect(index.add([post(1, 'Parser notes', 'src/main.rs panics on empty input'), post(2, 'Later', 'main src rs, in another order'), post(3, 'Other', 'nothing here', 'bbbbbb0123')], 1)).toBe(3);
    expect(index.add([post(1, 'Parser notes', 'src/main.rs panics on empty input')], 2)).toBe(0);
    const q = (s: string) => seekLocal(index, keys, { relay: RELAY, text: textQuery(s), fingerprints: [] }).text.map((h) => h.record.seq);
    expect(q('src/main.rs')).toEqual(['1']);
    expect(q('main src')).toEqual(['2', '1']);
    expect(q('PANICS')).toEqual(['1']);
    const fp = (value: string, prefix = false) =>
      seekLocal(index, keys, { relay: RELAY, fingerprints: prefix ? [] : [{ scheme: 'git.commit', value }], prefix: prefix ? { scheme: 'git.commit', value } : undefined }).fingerprint.map((h) => h.record.seq);
    expect(fp('bbbbbb0123')).toEqual(['3']);
    expect(fp('bbbbbb012')).toEqual([]);
    expect(fp('bbbbbb', true)).toEqual(['3']);
    expect(fp('a'.repeat(39) + '1', true)).toEqual(['1']);
    expect(fp('a'.repeat(20), true)).toEqual(['2', '1']);
    // Another relay's index is another scope.
    expect(seekLocal(index, keys, { relay: 'http://127.0.0.1:2', text: textQuery('src'), fingerprints: [] }).text).toEqual([]);
  });

  it('forgets a post with every entry it held, and only that post', () => {
    const file = tempFile();
    const keys = searchKeysOf(new Uint8Array(randomBytes(32)));
    const index = openSealedIndex(file, keys);
    const kept = post(2, 'Kept', 'alpha gamma', 'cccccc9999');
    index.add([post(1, 'Gone', 'alpha beta', 'dddddd0000'), kept], 1);
    expect(index.forget(RELAY, ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000099'])).toBe(1);
    expect(seekLocal(index, keys, { relay: RELAY, text: textQuery('alpha'), fingerprints: [] }).text.map((h) => h.record.seq)).toEqual(['2']);
    expect(seekLocal(index, keys, { relay: RELAY, fingerprints: [{ scheme: 'git.commit', value: 'dddddd0000' }] }).fingerprint).toEqual([]);
    const raw = new DatabaseSync(file, { readOnly: true });
    expect((raw.prepare('SELECT count(*) AS n FROM seek_entries').get() as { n: number }).n).toBe(entriesOf(kept).size);
    raw.close();
  });

  it('opens nothing under another KEY, nor a record moved to another post\'s row', () => {
    const file = tempFile();
    const keys = searchKeysOf(new Uint8Array(randomBytes(32)));
    const index = openSealedIndex(file, keys);
    index.add([post(1, 'One', 'alpha words'), post(2, 'Two', 'alpha beta')], 1);
    index.close();
    const other = searchKeysOf(new Uint8Array(randomBytes(32)));
    const foreign = openSealedIndex(file, other);
    expect(seekLocal(foreign, other, { relay: RELAY, text: textQuery('alpha'), fingerprints: [] }).text).toEqual([]);
    foreign.close();
    // Swap the sealed records of the two posts: neither opens any more.
    const raw = new DatabaseSync(file);
    const rows = raw.prepare('SELECT id, sealed FROM seek_docs ORDER BY id').all() as { id: number; sealed: Uint8Array }[];
    raw.prepare('UPDATE seek_docs SET sealed = ? WHERE id = ?').run(rows[1]!.sealed, rows[0]!.id);
    raw.prepare('UPDATE seek_docs SET sealed = ? WHERE id = ?').run(rows[0]!.sealed, rows[1]!.id);
    raw.close();
    const again = openSealedIndex(file, keys);
    expect(seekLocal(again, keys, { relay: RELAY, text: textQuery('alpha'), fingerprints: [] }).text).toEqual([]);
  });
});
