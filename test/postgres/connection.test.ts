/**
 * The PostgreSQL side of the database interface (relay/store/postgres/connection.ts) against a
 * real server: parameters translated without touching look-alikes in strings and comments,
 * results shaped as the SQLite side shapes them, transactions carried through the async
 * context with savepoints that roll back alone, the write lock serialising writers across
 * pools (processes), and connection failures that reject instead of crashing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDb } from '../../relay/store/postgres/connection.js';
import { openPostgres } from '../../relay/store/postgres/open.js';
import { translateSql } from '../../relay/store/postgres/sql.js';
import { DATABASE_URL_ENV, databaseUrl, freshDatabase, POSTGRES_ERROR_ENV, POSTGRES_SKIP_ENV, testPostgres, type FreshDatabase } from '../helpers/postgres.js';

describe('SQL parameters are translated to $n', () => {
  it('positional ? becomes $1, $2, … in order, but not inside strings, quoted names or comments', () => {
    const sql = `SELECT ?, '?''?', E'\\'?', "a?""b", $$ ? $$, $t$ ? $t$ -- ? here\n /* ? /* ? */ ? */ ?::int, x?`;
    expect(translateSql(sql)).toEqual({
      text: `SELECT $1, '?''?', E'\\'?', "a?""b", $$ ? $$, $t$ ? $t$ -- ? here\n /* ? /* ? */ ? */ $2::int, x$3`,
      names: undefined,
      positional: 3,
    });
  });

  it('@name becomes one $n per distinct name, and @@, <@ and quoted @ stay as written', () => {
    expect(translateSql(`SELECT @a, @b_2 + @a, '@a', "@a", tsv @@ q, x <@ y, a @> b -- @a`)).toEqual({
      text: `SELECT $1, $2 + $1, '@a', "@a", tsv @@ q, x <@ y, a @> b -- @a`,
      names: ['a', 'b_2'],
      positional: 0,
    });
  });

  it('a statement mixing ? and @name is refused', () => {
    expect(() => translateSql('SELECT ?, @a')).toThrow(/mixes positional/);
  });
});

describe('where PostgreSQL is missing', () => {
  const withEnv = <T>(env: Record<string, string | undefined>, fn: () => T): T => {
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    try {
      return fn();
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  const missing = { [DATABASE_URL_ENV]: undefined, [POSTGRES_SKIP_ENV]: undefined, [POSTGRES_ERROR_ENV]: undefined, SVC_PG_BIN: '/nonexistent' };

  it('the PostgreSQL tests are skipped with the reason and what to install', () => {
    const found = withEnv({ ...missing, CI: undefined }, () => testPostgres());
    expect(found.url).toBeUndefined();
    expect(found.skipReason).toMatch(/not installed.*apt-get install -y postgresql/);
  });

  it('under CI they fail instead', () => {
    expect(() => withEnv({ ...missing, CI: 'true' }, () => testPostgres())).toThrow(/CI must test the PostgreSQL store/);
  });
});

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** postgres-connection.test.ts skipped: ${cluster.skipReason} ***\n\n`);

describe.skipIf(cluster.url === undefined)(`PostgresDb on a real server${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`, () => {
  let fresh: FreshDatabase;
  let db: PostgresDb;

  beforeAll(async () => {
    fresh = await freshDatabase({ empty: true });
    db = new PostgresDb(fresh.url, { poolSize: 4 });
    await db.exec(`
      CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT COLLATE "C" UNIQUE, data BYTEA);
      CREATE TABLE counter (n BIGINT NOT NULL);
      INSERT INTO counter VALUES (0);
      CREATE TABLE issued (n BIGINT NOT NULL, by_pool INTEGER NOT NULL);
    `);
  });
  afterAll(async () => {
    try {
      await db?.close();
      await fresh?.drop();
    } finally {
      cluster.stop();
    }
  });

  const clear = async () => await db.exec('DELETE FROM items');
  const count = async (d: PostgresDb = db) => await d.prepare('SELECT count(*) FROM items').pluck<number>().get();

  describe('statements', () => {
    it('binds ? and @name values while strings that contain ? and @ and casts pass through', async () => {
      const row = await db
        .prepare<unknown[], { a: string; b: number; c: string }>(`SELECT ?::text AS a, ?::int + 1 AS b /* ?, @x */, 'what? @home' AS c -- ?`)
        .get('x?', 41);
      expect(row).toEqual({ a: 'x?', b: 42, c: 'what? @home' });
      const named = await db
        .prepare<{ v: string; n: number }, { a: string; b: number; c: string }>(`SELECT @v::text AS a, @n::int * @n::int AS b, '@v ?' AS c`)
        .get({ v: "it's", n: 7 });
      expect(named).toEqual({ a: "it's", b: 49, c: '@v ?' });
    });

    it('a missing named parameter rejects and names it', async () => {
      await expect(db.prepare('SELECT @here::int, @absent::int').get({ here: 1 })).rejects.toThrow(/@absent/);
    });

    it('get answers the first row or undefined, all every row, run the changes, pluck the first column', async () => {
      await clear();
      const insert = db.prepare('INSERT INTO items (id, name) VALUES (?, ?)');
      expect(await insert.run(1, 'one')).toEqual({ changes: 1 });
      await insert.run(2, 'two');
      await insert.run(3, 'three');
      expect(await db.prepare('UPDATE items SET name = name || ? WHERE id >= ?').run('!', 2)).toEqual({ changes: 2 });
      expect(await db.prepare('DELETE FROM items WHERE id = ?').run(99)).toEqual({ changes: 0 });
      const byId = db.prepare<[number], { id: number; name: string }>('SELECT id, name FROM items WHERE id = ?');
      expect(await byId.get(2)).toEqual({ id: 2, name: 'two!' });
      expect(await byId.get(99)).toBeUndefined();
      expect(await db.prepare('SELECT id, name FROM items ORDER BY id').all()).toEqual([
        { id: 1, name: 'one' },
        { id: 2, name: 'two!' },
        { id: 3, name: 'three!' },
      ]);
      const names = db.prepare('SELECT name FROM items ORDER BY name').pluck<string>();
      expect(await names.all()).toEqual(['one', 'three!', 'two!']);
      expect(await names.get()).toBe('one');
      expect(await db.prepare('SELECT name FROM items WHERE id = 99').pluck().get()).toBeUndefined();
    });

    it('int8, numeric and counts come back as JavaScript numbers, booleans as 1 or 0 as SQLite answers them, NULL as null', async () => {
      const row = await db
        .prepare(`SELECT 9007199254740991::bigint AS big, count(*) AS c, sum(n) AS s, 2.5::numeric AS f, NULL::bigint AS z, EXISTS (SELECT 1) AS yes, 1 > 2 AS no FROM counter`)
        .get();
      expect(row).toEqual({ big: Number.MAX_SAFE_INTEGER, c: 1, s: 0, f: 2.5, z: null, yes: 1, no: 0 });
      expect(typeof (row as { big: unknown }).big).toBe('number');
    });

    it('bytea round-trips every byte value, from a Uint8Array in to a Buffer (a Uint8Array) out', async () => {
      await clear();
      const bytes = new Uint8Array(256).map((_, i) => i);
      await db.prepare('INSERT INTO items (id, data) VALUES (?, ?)').run(1, bytes.subarray(0));
      await db.prepare('INSERT INTO items (id, data) VALUES (?, ?)').run(2, new Uint8Array(0));
      const out = await db.prepare('SELECT data FROM items WHERE id = ?').pluck<Uint8Array>().get(1);
      expect(out).toBeInstanceOf(Uint8Array);
      expect(Buffer.isBuffer(out)).toBe(true);
      expect(new Uint8Array(out!)).toEqual(bytes);
      expect((await db.prepare('SELECT data FROM items WHERE id = ?').pluck<Uint8Array>().get(2))?.length).toBe(0);
    });

    it('each statement is prepared once per connection, and SQL built per call beyond a thousand texts is not kept', async () => {
      const other = new PostgresDb(fresh.url, { poolSize: 1 });
      try {
        await other.transaction(async () => {
          const get = other.prepare('SELECT ?::int + 1').pluck<number>();
          for (let i = 0; i < 3; i++) expect(await get.get(i)).toBe(i + 1);
          const named = other.prepare(`SELECT name FROM pg_prepared_statements WHERE statement = 'SELECT $1::int + 1'`).pluck<string>();
          expect(await named.all()).toHaveLength(1);
          for (let i = 0; i < 1100; i++) expect(await other.prepare(`SELECT ${i}::int AS v`).pluck().get()).toBe(i);
          const kept = await other.prepare('SELECT count(*) FROM pg_prepared_statements').pluck<number>().get();
          expect(kept).toBeLessThanOrEqual(1000);
        })();
      } finally {
        await other.close();
      }
    });

    it('exec runs several statements at once', async () => {
      await clear();
      await db.exec(`INSERT INTO items (id, name) VALUES (1, 'a; b'); INSERT INTO items (id, name) VALUES (2, '--');`);
      expect(await count()).toBe(2);
    });
  });

  describe('transactions', () => {
    it('commits what the body wrote and answers its value; a body that throws leaves nothing and rejects with its error', async () => {
      await clear();
      const insert = db.prepare('INSERT INTO items (id, name) VALUES (?, ?)');
      const ok = db.transaction(async (id: number) => {
        await insert.run(id, `n${id}`);
        return id * 2;
      });
      expect(await ok(1)).toBe(2);
      const bad = db.transaction(async () => {
        await insert.run(2, 'n2');
        throw new Error('changed my mind');
      });
      await expect(bad()).rejects.toThrow('changed my mind');
      expect(await db.prepare('SELECT id FROM items').pluck().all()).toEqual([1]);
    });

    it('statements anywhere under the body, through awaits and timers, run inside it; outside it they do not', async () => {
      await clear();
      const insert = db.prepare('INSERT INTO items (id) VALUES (?)');
      const deep = async (id: number) => {
        await new Promise((r) => setTimeout(r, 5));
        expect(db.inTransaction).toBe(true);
        await insert.run(id);
      };
      await expect(
        db.transaction(async () => {
          await deep(1);
          await Promise.resolve().then(async () => await deep(2));
          throw new Error('undo');
        })(),
      ).rejects.toThrow('undo');
      expect(db.inTransaction).toBe(false);
      expect(await count()).toBe(0);
    });

    it('a statement outside a transaction does not see the open transaction’s rows until it commits', async () => {
      await clear();
      let wrote!: () => void;
      let finish!: () => void;
      const written = new Promise<void>((r) => (wrote = r));
      const mayFinish = new Promise<void>((r) => (finish = r));
      const tx = db.transaction(async () => {
        await db.prepare('INSERT INTO items (id) VALUES (1)').run();
        expect(await count()).toBe(1); // inside: its own row
        wrote();
        await mayFinish;
      })();
      await written;
      expect(db.inTransaction).toBe(false);
      expect(await count()).toBe(0); // outside, on another pooled connection
      finish();
      await tx;
      expect(await count()).toBe(1);
    });

    it('statements a transaction starts together take turns on its connection, in the order started; one that fails fails the transaction', async () => {
      await clear();
      // Watch the real connection each transaction checks out: how many statements it has
      // running at once.
      let running = 0;
      let most = 0;
      const watch = (client: { query: (...a: unknown[]) => unknown }) => {
        const query = client.query.bind(client);
        client.query = (...a: unknown[]) => {
          running++;
          most = Math.max(most, running);
          const settled = () => void running--;
          const p = query(...a) as Promise<unknown> | undefined;
          // With a callback (as pg's pool calls it) no promise comes back: count that one done.
          if (p === undefined) settled();
          else p.then(settled, settled);
          return p;
        };
      };
      const watched = new PostgresDb(fresh.url, { poolSize: 1 });
      watched.pool.on('connect', watch as never);
      try {
        const insert = watched.prepare('INSERT INTO items (id, name) VALUES (?, ?)');
        await watched.transaction(async () => {
          await Promise.all(Array.from({ length: 10 }, async (_, i) => await insert.run(i, `n${i}`)));
        })();
        expect(most).toBe(1);
        expect(await watched.prepare('SELECT id FROM items ORDER BY id').pluck().all()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        await expect(
          watched.transaction(async () => {
            await Promise.all([insert.run(10, 'n10'), insert.run(11, 'n0'), insert.run(12, 'n12')]);
          })(),
        ).rejects.toThrow(/unique|duplicate/i);
        expect(await count(watched)).toBe(10);
        expect(most).toBe(1);
      } finally {
        await watched.close();
      }
    });

    it('a nested transaction is a savepoint: when it throws only its own writes are undone', async () => {
      await clear();
      const insert = db.prepare('INSERT INTO items (id) VALUES (?)');
      await db.transaction(async () => {
        await insert.run(1);
        await db.transaction(async () => {
          await insert.run(2);
          await expect(
            db.transaction(async () => {
              await insert.run(3);
              throw new Error('inner');
            })(),
          ).rejects.toThrow('inner');
          await insert.run(4);
        })();
        await expect(
          db.transaction(async () => {
            await insert.run(5);
            await db.transaction(async () => await insert.run(6))();
            throw new Error('middle');
          })(),
        ).rejects.toThrow('middle');
        await insert.run(7);
      })();
      expect(await db.prepare('SELECT id FROM items ORDER BY id').pluck().all()).toEqual([1, 2, 4, 7]);
    });

    it('a statement that fails inside a savepoint leaves the outer transaction usable, as on SQLite', async () => {
      await clear();
      const insert = db.prepare('INSERT INTO items (id, name) VALUES (?, ?)');
      await db.transaction(async () => {
        await insert.run(1, 'taken');
        await expect(
          db.transaction(async () => {
            await insert.run(2, 'fine');
            await insert.run(3, 'taken'); // UNIQUE violation: PostgreSQL aborts the subtransaction
          })(),
        ).rejects.toMatchObject({ code: '23505' });
        await insert.run(4, 'after');
      })();
      expect(await db.prepare('SELECT id FROM items ORDER BY id').pluck().all()).toEqual([1, 4]);
    });

    it('a body that swallows a failed statement cannot commit: the transaction rejects with that failure and keeps nothing', async () => {
      await clear();
      const insert = db.prepare('INSERT INTO items (id, name) VALUES (?, ?)');
      await expect(
        db.transaction(async () => {
          await insert.run(1, 'x');
          await insert.run(2, 'x').catch(() => undefined);
          return 'done';
        })(),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await count()).toBe(0);
    });

    it('afterCommit runs once the commit is visible to other connections, never after a rollback, and not for a savepoint rolled back', async () => {
      await clear();
      const fired: string[] = [];
      let seenByCallback: Promise<number | undefined> | undefined;
      await db.transaction(async () => {
        await db.prepare('INSERT INTO items (id) VALUES (1)').run();
        db.afterCommit(() => {
          fired.push('outer');
          seenByCallback = count(); // runs outside the transaction, on another connection
        });
        await db
          .transaction(async () => {
            db.afterCommit(() => fired.push('undone savepoint'));
            throw new Error('inner');
          })()
          .catch(() => undefined);
        await db.transaction(async () => db.afterCommit(() => fired.push('kept savepoint')))();
        expect(fired).toEqual([]);
      })();
      await expect(
        db.transaction(async () => {
          db.afterCommit(() => fired.push('rolled back'));
          throw new Error('no');
        })(),
      ).rejects.toThrow('no');
      db.afterCommit(() => fired.push('no transaction'));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(fired).toEqual(['outer', 'kept savepoint', 'no transaction']);
      expect(await seenByCallback).toBe(1);
    });

    it('immediate transactions from two pools (two relay processes) take turns: 200 read-then-increments end exact, no number issued twice', async () => {
      const other = new PostgresDb(fresh.url, { poolSize: 4 });
      try {
        await db.exec('UPDATE counter SET n = 0; DELETE FROM issued');
        const bump = (d: PostgresDb, pool: number) =>
          d.transaction(async () => {
            const n = (await d.prepare('SELECT n FROM counter').pluck<number>().get())!;
            await new Promise((r) => setImmediate(r)); // let the other writers run between the read and the write
            await d.prepare('UPDATE counter SET n = ?').run(n + 1);
            await d.prepare('INSERT INTO issued (n, by_pool) VALUES (?, ?)').run(n + 1, pool);
          });
        const a = bump(db, 1);
        const b = bump(other, 2);
        await Promise.all(Array.from({ length: 200 }, async (_, i) => (i % 2 === 0 ? await a.immediate() : await b.immediate())));
        expect(await db.prepare('SELECT n FROM counter').pluck().get()).toBe(200);
        const issued = await db.prepare<[], { total: number; distinct: number; low: number; high: number; pools: number }>(
          'SELECT count(*) AS total, count(DISTINCT n) AS distinct, min(n) AS low, max(n) AS high, count(DISTINCT by_pool) AS pools FROM issued',
        ).get();
        expect(issued).toEqual({ total: 200, distinct: 200, low: 1, high: 200, pools: 2 });
      } finally {
        await other.close();
      }
    });
  });

  describe('failures', () => {
    it('a server that cannot be reached rejects the statement and the process goes on', async () => {
      const nowhere = new PostgresDb(databaseUrl('postgres://postgres@127.0.0.1:1/x', 'x'), { connectTimeoutMs: 2000, log: () => undefined });
      try {
        await expect(nowhere.prepare('SELECT 1').get()).rejects.toThrow(/ECONNREFUSED|connect/);
        await expect(nowhere.transaction(async () => 1)()).rejects.toThrow(/ECONNREFUSED|connect/);
      } finally {
        await nowhere.close();
      }
    });

    it('a connection killed in the middle of a transaction rejects it, is logged, and the pool serves the next statement', async () => {
      await clear();
      const logged: string[] = [];
      const victim = new PostgresDb(fresh.url, { poolSize: 2, applicationName: 'svc-test-victim', log: (m) => logged.push(m) });
      try {
        const tx = victim.transaction(async () => {
          await victim.prepare('INSERT INTO items (id) VALUES (1)').run();
          const pid = await victim.prepare('SELECT pg_backend_pid()').pluck<number>().get();
          await db.prepare('SELECT pg_terminate_backend(?)').run(pid);
          await new Promise((r) => setTimeout(r, 100));
          await victim.prepare('INSERT INTO items (id) VALUES (2)').run();
        });
        await expect(tx()).rejects.toThrow();
        expect(logged.join('\n')).toMatch(/terminat|connection/i);
        expect(await count(victim)).toBe(0);
        // Idle connections killed under the pool: dropped, and the next statement gets a new one.
        await victim.prepare('SELECT 1').get();
        await db.prepare(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'svc-test-victim'`).run();
        await new Promise((r) => setTimeout(r, 100));
        expect(await victim.prepare('SELECT 41 + 1').pluck().get()).toBe(42);
      } finally {
        await victim.close();
      }
    });

    it('a transaction left idle past the idle-in-transaction limit is ended by the server, releasing the write lock for other writers', async () => {
      const stuck = new PostgresDb(fresh.url, { poolSize: 1, idleInTransactionTimeoutMs: 300, log: () => undefined });
      try {
        const held = stuck.transaction(async () => {
          await stuck.prepare('SELECT 1').get();
          await new Promise((r) => setTimeout(r, 1000)); // a body that stops issuing statements
          await stuck.prepare('SELECT 1').get();
        });
        const outcome = held.immediate().then(
          () => 'committed',
          () => 'ended',
        );
        await new Promise((r) => setTimeout(r, 100));
        // Another process's writer gets the lock once the server has ended the idle session.
        expect(await db.transaction(async () => await db.prepare('SELECT 2').pluck().get()).immediate()).toBe(2);
        expect(await outcome).toBe('ended');
      } finally {
        await stuck.close();
      }
    });

    it('close ends the pool: open turns false and later statements reject', async () => {
      const short = new PostgresDb(fresh.url);
      expect(short.open).toBe(true);
      expect(short.name).toBe(fresh.url);
      await short.prepare('SELECT 1').get();
      await short.close();
      expect(short.open).toBe(false);
      // The relay answers these BUSY while it stops (relay/http/storage-faults.ts).
      await expect(short.prepare('SELECT 1').get()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
      await expect(short.transaction(async () => 1)()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
      await expect(short.exec('SELECT 1')).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    });
  });

  describe('fresh test databases', () => {
    it('each caller gets a database of its own holding the migrated schema, copied from one template; drop removes it', async () => {
      const migrations = [{ id: 1, name: 'probe', sql: `CREATE TABLE probe (x BIGINT); INSERT INTO probe VALUES (${Date.now()});` }];
      const made = await Promise.all([1, 2, 3].map(async () => await freshDatabase({ migrations })));
      try {
        expect(new Set(made.map((m) => m.name)).size).toBe(3);
        for (const m of made) {
          const d = new PostgresDb(m.url);
          try {
            expect(await d.prepare('SELECT count(*) FROM probe').pluck().get()).toBe(1);
            await d.prepare('INSERT INTO probe VALUES (0)').run(); // its own copy: the others still hold one row
          } finally {
            await d.close();
          }
        }
        const templates = await db.prepare(`SELECT count(*) FROM pg_database WHERE datname LIKE 'svc\\_t\\_tpl\\_%' AND datname NOT LIKE '%building'`).pluck<number>().get();
        expect(templates).toBeGreaterThanOrEqual(1);
      } finally {
        await Promise.all(made.map(async (m) => await m.drop()));
      }
      const left = await db.prepare('SELECT count(*) FROM pg_database WHERE datname = ANY(?)').pluck().get(made.map((m) => m.name));
      expect(left).toBe(0);
    });
  });

  describe('openPostgres', () => {
    const migrations = [
      { id: 1, name: 'first', sql: `CREATE TABLE m1 (x BIGINT); INSERT INTO m1 VALUES (1);` },
      { id: 2, name: 'second', sql: `INSERT INTO m1 VALUES (2);` },
    ];

    it('applies each migration once, however many times the database is opened', async () => {
      const target = await freshDatabase({ empty: true });
      try {
        const opened = await Promise.all([1, 2, 3].map(async () => await openPostgres(target.url, { migrations })));
        const first = opened[0]!;
        expect(await first.prepare('SELECT x FROM m1 ORDER BY x').pluck().all()).toEqual([1, 2]);
        expect(await first.prepare('SELECT id, name FROM schema_migrations ORDER BY id').all()).toEqual([
          { id: 1, name: 'first' },
          { id: 2, name: 'second' },
        ]);
        await Promise.all(opened.map(async (d) => await d.close()));
      } finally {
        await target.drop();
      }
    });

    it('a failing migration leaves nothing of itself and the open rejects', async () => {
      const target = await freshDatabase({ empty: true });
      try {
        const broken = [...migrations, { id: 3, name: 'broken', sql: 'INSERT INTO m1 VALUES (3); SELECT * FROM no_such_table;' }];
        await expect(openPostgres(target.url, { migrations: broken })).rejects.toThrow(/no_such_table/);
        const db2 = await openPostgres(target.url, { migrations });
        expect(await db2.prepare('SELECT x FROM m1 ORDER BY x').pluck().all()).toEqual([1, 2]);
        await db2.close();
      } finally {
        await target.drop();
      }
    });

    it('a database not encoded UTF8 is refused with what to do', async () => {
      const target = await freshDatabase({ empty: true });
      const ascii = `${target.name}_ascii`;
      const admin = new PostgresDb(target.url);
      try {
        await admin.exec(`CREATE DATABASE ${ascii} TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'`);
        await expect(openPostgres(databaseUrl(target.url, ascii), { migrations })).rejects.toThrow(/UTF8/);
      } finally {
        await admin.exec(`DROP DATABASE IF EXISTS ${ascii}`);
        await admin.close();
        await target.drop();
      }
    });
  });
});
