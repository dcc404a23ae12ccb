/**
 * relay/store/sqlite/parameters.ts: a `+` before each parameter SQLite's planner would read
 * (so a prepared statement is not compiled again at every call), and nothing else changed: the
 * rewrite's cases, and every statement the relay's store prepares keeps its query plan.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../../relay/store/index.js';
import { SqliteDb } from '../../../relay/store/sqlite/connection.js';
import { keepParametersOutOfPlan } from '../../../relay/store/sqlite/parameters.js';

describe('keepParametersOutOfPlan', () => {
  it.each([
    ['SELECT * FROM a JOIN b ON b.x = a.x WHERE a.id = ?', 'SELECT * FROM a JOIN b ON b.x = a.x WHERE a.id = +?'],
    ['SELECT * FROM a WHERE id == ?2 AND k IS @k', 'SELECT * FROM a WHERE id == +?2 AND k IS +@k'],
    ['SELECT * FROM a WHERE ? = id', 'SELECT * FROM a WHERE +? = id'],
    ['SELECT * FROM a WHERE id=:id LIMIT $n OFFSET ?', 'SELECT * FROM a WHERE id=+:id LIMIT +$n OFFSET +?'],
    ['UPDATE a SET v = @v WHERE id = @id', 'UPDATE a SET v = +@v WHERE id = +@id'],
    ['SELECT * FROM a WHERE id = /* c */ ? -- note\n AND k = --x\n ?', 'SELECT * FROM a WHERE id = /* c */ +? -- note\n AND k = --x\n +?'],
  ])('marks %j', (sql, want) => {
    expect(keepParametersOutOfPlan(sql)).toBe(want);
  });

  it.each([
    'SELECT * FROM a WHERE id IN (?, ?) AND v < ? AND v >= ? AND w <= ? AND z != ? AND y <> ?',
    "SELECT * FROM a WHERE name LIKE ? ESCAPE '\\' AND f(?) AND x = coalesce(?, 1)",
    'INSERT INTO a (x, y) VALUES (?, @y)',
    "SELECT '= ?' AS s, \"= ?\" AS t, [= ?] AS u, `= ?` AS v, 'it''s = ?' FROM a WHERE k IS NOT ?",
    'SELECT * FROM a -- = ?\nWHERE b /* = ? */ > ?',
    'SELECT * FROM a WHERE a.x = +? AND y = -?',
  ])('leaves %j as it is', (sql) => {
    expect(keepParametersOutOfPlan(sql)).toBe(sql);
  });

  it('binds and answers as the statement written without the marks', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE a (id INTEGER PRIMARY KEY, k TEXT UNIQUE, n INTEGER);
             CREATE TABLE b (a_id INTEGER PRIMARY KEY, v TEXT);
             INSERT INTO a VALUES (1, 'one', 10), (2, '2', 20), (3, 'three', 30);
             INSERT INTO b VALUES (1, 'x'), (2, 'y');`);
    const queries: [string, unknown[]][] = [
      ['SELECT a.id, b.v FROM a LEFT JOIN b ON b.a_id = a.id WHERE a.k = ?', ['one']],
      // Text against an INTEGER column: the column's affinity converts it, marked or not.
      ['SELECT a.id, b.v FROM a LEFT JOIN b ON b.a_id = a.id WHERE a.n = ?', ['20']],
      // A number against a TEXT column: converted to text, marked or not.
      ['SELECT a.id, b.v FROM a LEFT JOIN b ON b.a_id = a.id WHERE a.k = ?', [2]],
      ['SELECT a.id FROM a JOIN b ON b.a_id = a.id WHERE b.v IS ? ORDER BY a.id LIMIT ? OFFSET ?', [null, 5, 0]],
      ['SELECT a.id FROM a JOIN b ON b.a_id = a.id ORDER BY a.id LIMIT ? OFFSET ?', [1, 1]],
    ];
    for (const [sql, params] of queries) {
      expect(keepParametersOutOfPlan(sql)).not.toBe(sql);
      expect(db.prepare(keepParametersOutOfPlan(sql)).all(...params)).toEqual(db.prepare(sql).all(...params));
    }
    db.close();
  });
});

describe('the relay store on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-parameters-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every statement it prepares keeps the query plan it has without the marks', async () => {
    // Spied, not replaced: each statement is prepared as always, and its text kept here.
    const seen = vi.spyOn(SqliteDb.prototype, 'prepare');
    const store = await openStore(dir, { walCheckpoints: false });
    await store.close();
    const prepared = new Set(seen.mock.calls.map((call) => call[0]));
    seen.mockRestore();

    const raw = new Database(join(dir, 'relay.sqlite'), { readonly: true });
    // Every parameter bound to NULL: named ones by name, positional ones by trying counts.
    const plan = (sql: string) => {
      const stmt = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      const names = [...new Set([...sql.matchAll(/[@:$]([A-Za-z_]\w*)/g)].map((m) => m[1]!))];
      const run = (): unknown[] => {
        if (names.length > 0) return stmt.all(Object.fromEntries(names.map((n) => [n, null])));
        for (let n = 0; ; n++) {
          try {
            return stmt.all(...new Array<null>(n).fill(null));
          } catch (e) {
            if (!(e instanceof RangeError) || n > 64) throw e;
          }
        }
      };
      return run().map((r) => (r as { detail: string }).detail.replace(/\s+/g, ' '));
    };
    let marked = 0;
    for (const sql of prepared) {
      const rewritten = keepParametersOutOfPlan(sql);
      if (rewritten === sql || !/^\s*(SELECT|WITH|UPDATE|DELETE|INSERT)/i.test(sql)) continue;
      marked++;
      expect(plan(rewritten), sql).toEqual(plan(sql));
    }
    raw.close();
    // The store's reads by id, by SPACE and position, its joins: many are marked.
    expect(marked).toBeGreaterThan(50);
  });
});
