/**
 * The bridge's SQLite files over node:sqlite (bridge/cache/sqlite.ts): an immediate transaction
 * commits what its work wrote or, when the work throws, nothing; schema steps apply once each
 * (a file already up to date is only read); a statement is prepared when first run;
 * the sealed cache's bytes come back as they went in, and forgetting a SPACE clears it alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey, openKeyDirectory } from '../../bridge/keys/keys.js';
import { openSealedCache, sealedCachePath, type RememberedSpace } from '../../bridge/sealed/sealed-cache.js';
import { immediate, migrate, openSqliteFile, statement } from '../../bridge/cache/sqlite.js';
import { tempHome } from '../helpers/bridge.js';

const scratch = mkdtempSync(join(tmpdir(), 'svc-bridge-sqlite-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(scratch, `${++files}.sqlite`);

function count(db: DatabaseSync): number {
  return Number((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n);
}

describe('an immediate transaction', () => {
  it('commits what its work wrote and returns what the work returned', () => {
    const db = openSqliteFile(freshFile());
    db.exec('CREATE TABLE t (x INTEGER)');
    const out = immediate(db, () => {
      db.prepare('INSERT INTO t VALUES (1), (2)').run();
      return 'done';
    });
    expect(out).toBe('done');
    expect(count(db)).toBe(2);
    db.close();
  });

  it('keeps nothing of work that throws, throws the same error, and leaves the file usable', () => {
    const db = openSqliteFile(freshFile());
    db.exec('CREATE TABLE t (x INTEGER)');
    const failure = new Error('the work failed half way');
    expect(() =>
      immediate(db, () => {
        db.prepare('INSERT INTO t VALUES (1)').run();
        throw failure;
      }),
    ).toThrow(failure);
    expect(count(db)).toBe(0);
    immediate(db, () => db.prepare('INSERT INTO t VALUES (3)').run());
    expect(count(db)).toBe(1);
    db.close();
  });

  it('holds the write lock from its start: another connection cannot write until it ends', () => {
    const path = freshFile();
    const a = openSqliteFile(path);
    const b = new DatabaseSync(path);
    b.exec('PRAGMA busy_timeout = 0');
    a.exec('CREATE TABLE t (x INTEGER)');
    immediate(a, () => {
      expect(() => b.exec('INSERT INTO t VALUES (9)')).toThrow(/locked|busy/i);
    });
    b.exec('INSERT INTO t VALUES (9)');
    expect(count(a)).toBe(1);
    a.close();
    b.close();
  });
});

describe('schema steps', () => {
  it('apply once each, in order, and a reopened file runs only the new ones', () => {
    const path = freshFile();
    const db = openSqliteFile(path);
    migrate(db, ['CREATE TABLE t (x INTEGER)', 'INSERT INTO t VALUES (1)']);
    migrate(db, ['CREATE TABLE t (x INTEGER)', 'INSERT INTO t VALUES (1)']);
    expect(count(db)).toBe(1);
    db.close();
    const again = openSqliteFile(path);
    migrate(again, ['CREATE TABLE t (x INTEGER)', 'INSERT INTO t VALUES (1)', 'INSERT INTO t VALUES (2)']);
    expect(count(again)).toBe(2);
    expect(again.prepare('PRAGMA user_version').get()).toEqual({ user_version: 3 });
    expect(again.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    again.close();
  });

  it('on a file already at the last step only read: they take no write lock another connection holds', () => {
    const path = freshFile();
    const steps = ['CREATE TABLE t (x INTEGER)'];
    const a = openSqliteFile(path);
    migrate(a, steps);
    const b = openSqliteFile(path);
    b.exec('PRAGMA busy_timeout = 0');
    immediate(a, () => {
      expect(() => migrate(b, steps)).not.toThrow();
      expect(() => migrate(b, [...steps, 'INSERT INTO t VALUES (1)'])).toThrow(/locked|busy/i);
    });
    a.close();
    b.close();
  });
});

describe('a statement', () => {
  it('is prepared when first run, then once: a statement named before its table exists runs once the table does', () => {
    const db = openSqliteFile(freshFile());
    const insert = statement<[number]>(db, 'INSERT INTO t VALUES (?)');
    const all = statement<[], { x: number }>(db, 'SELECT x FROM t ORDER BY x');
    db.exec('CREATE TABLE t (x INTEGER)');
    expect(insert.run(2).changes).toBe(1);
    insert.run(1);
    expect(all.all()).toEqual([{ x: 1 }, { x: 2 }]);
    expect(all.get()).toEqual({ x: 1 });
    const broken = statement(db, 'SELECT y FROM nowhere');
    expect(() => broken.all()).toThrow(/no such table/);
    db.close();
  });
});

describe('the sealed cache on node:sqlite', () => {
  const relay = 'http://127.0.0.1:8787';
  const spaceOf = (spaceId: string, name: string, list: Uint8Array | null): RememberedSpace => ({
    relay,
    spaceId,
    name,
    owner: 'a'.repeat(64),
    ownerWas: null,
    handOverGeneration: null,
    generation: 1,
    commitment: 'c'.repeat(64),
    listRevision: list === null ? null : 1,
    list,
    listSignedBy: list === null ? null : 'a'.repeat(64),
    createdHere: true,
    firstSeenAt: 1,
    updatedAt: 1,
  });

  it('gives bytes back as bytes, and forgetting one SPACE clears it alone', () => {
    const dir = openKeyDirectory(tempHome());
    const key = createKey(dir, 'default').key;
    const cache = openSealedCache(sealedCachePath(dir, 'default'), key.sealedKeys.box);
    const one = '00000000-0000-4000-8000-000000000001';
    const two = '00000000-0000-4000-8000-000000000002';
    const list = new Uint8Array([0, 1, 2, 255]);
    const secret = new Uint8Array(32).fill(7);
    for (const id of [one, two]) {
      cache.remember(spaceOf(id, `s${id.slice(-1)}`, list));
      cache.keepSecret(relay, id, { generation: 1, commitment: 'c'.repeat(64), secret, source: 'created' }, 1);
      cache.noteList(relay, id, { revision: 1, list, envelope: '{}', signedBy: 'a'.repeat(64) }, 1);
    }
    expect(cache.space(relay, one)?.list).toEqual(list);
    expect(cache.secret(relay, one, 1)?.secret).toEqual(secret);
    expect(cache.listsSignedBy(relay, one, 'a'.repeat(64))[0]?.list).toEqual(list);

    cache.forget(relay, one);
    expect(cache.space(relay, one)).toBeUndefined();
    expect(cache.secret(relay, one, 1)).toBeUndefined();
    expect(cache.listsSignedBy(relay, one, 'a'.repeat(64))).toEqual([]);
    expect(cache.space(relay, two)?.name).toBe('s2');
    expect(cache.secret(relay, two, 1)?.secret).toEqual(secret);
    cache.close();
    cache.close();
  });
});
