/**
 * PostgreSQL for the test suite: a real server, never a mock.
 *
 * `SVC_TEST_DATABASE_URL` names a cluster to use (any database on it; the tests connect as a
 * user who may create databases). Unset, a throwaway cluster is started with
 * scripts/postgres.mjs, by the vitest global setup (test/setup/postgres.ts) for the whole
 * run or, in a file run without it, by `testPostgres()` for that file. With no PostgreSQL
 * installed, the PostgreSQL tests are skipped with the reason said loudly, except under CI,
 * where that is a failure (CI must test both stores).
 *
 * Each test, or each relay a test starts, gets a database of its own from `freshDatabase()`:
 * CREATE DATABASE svc_t_<random> from a template that already holds the migrated schema
 * (built once per migration set, under an advisory lock, so parallel workers build it once):
 * a copy costs a fraction of a second here (0.2 to 1 s with fsync on, most of it the system
 * catalogue every database carries), a migration run about twice that; `drop()` removes it.
 * Test files can then run in parallel workers on one cluster.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from '../../relay/store/postgres/migrate.js';
import { MIGRATIONS, type Migration } from '../../relay/store/postgres/migrations/index.js';

export const DATABASE_URL_ENV = 'SVC_TEST_DATABASE_URL';
/** Set by the global setup when PostgreSQL tests must fail (CI without PostgreSQL, a cluster that would not start). */
export const POSTGRES_ERROR_ENV = 'SVC_TEST_POSTGRES_ERROR';
/** Set by the global setup when PostgreSQL tests are skipped (not installed, not CI). */
export const POSTGRES_SKIP_ENV = 'SVC_TEST_POSTGRES_SKIP';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'postgres.mjs');
/** Serialises building a template across workers (advisory locks are per database: all take it on the admin database). */
const TEMPLATE_LOCK = 0x7376_6374_6d70_6c74n; // 'svctmplt'

export interface TestPostgres {
  /** The cluster's URL, or undefined when PostgreSQL tests are skipped. */
  readonly url: string | undefined;
  /** Why they are skipped. */
  readonly skipReason: string | undefined;
  /** Stop the cluster if this call started it (a no-op otherwise). */
  stop(): void;
}

/** True when initdb and pg_ctl can be found where scripts/postgres.mjs looks. */
export function postgresInstalled(): boolean {
  const has = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  if (process.env.SVC_PG_BIN) return has(process.env.SVC_PG_BIN);
  if ((process.env.PATH ?? '').split(delimiter).some((d) => d !== '' && has(d))) return true;
  const root = '/usr/lib/postgresql';
  return existsSync(root) && readdirSync(root).some((v) => has(join(root, v, 'bin')));
}

/**
 * The cluster the PostgreSQL tests use (synchronous, so a file can decide at collection time
 * whether to skip): the one named in the environment, else one started now, else a skip (or,
 * under CI, an error).
 */
export function testPostgres(): TestPostgres {
  const none = { stop() {} };
  const given = process.env[DATABASE_URL_ENV];
  if (given) return { url: given, skipReason: undefined, ...none };
  const error = process.env[POSTGRES_ERROR_ENV];
  if (error) throw new Error(error);
  const skip = process.env[POSTGRES_SKIP_ENV];
  if (skip) return { url: undefined, skipReason: skip, ...none };
  if (!postgresInstalled()) {
    const why = 'PostgreSQL is not installed (apt-get install -y postgresql, or set SVC_TEST_DATABASE_URL): the PostgreSQL store is NOT tested';
    if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`CI must test the PostgreSQL store, but ${why}`);
    return { url: undefined, skipReason: why, ...none };
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-pg-'));
  // The cluster outlives nothing: when this process ends, however (a worker killed after a
  // timeout runs no afterAll), the script's watcher stops and removes it.
  const r = spawnSync(process.execPath, [SCRIPT, 'start', '--dir', dir, '--owner-pid', String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a PostgreSQL cluster for the tests: ${r.stderr.trim()}`);
  }
  const url = r.stdout.trim();
  process.env[DATABASE_URL_ENV] = url;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (process.env[DATABASE_URL_ENV] === url) delete process.env[DATABASE_URL_ENV];
    const s = spawnSync(process.execPath, [SCRIPT, 'stop', '--dir', dir], { encoding: 'utf8' });
    if (s.status !== 0) process.stderr.write(`test postgres: stop failed: ${s.stderr}\n`);
  };
  return { url, skipReason: undefined, stop };
}

export interface FreshDatabase {
  /** The new database's URL. */
  readonly url: string;
  readonly name: string;
  /** Drop it (closing any connection still open to it). */
  drop(): Promise<void>;
}

/** A URL for `database` on the cluster `url` names. */
export function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + database;
  return u.toString();
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The name of the template holding `migrations` applied: one per distinct migration set. */
function templateName(migrations: readonly Migration[]): string {
  const h = createHash('sha256');
  for (const m of migrations) h.update(`${m.id}\0${m.name}\0${m.sql}\0`);
  return `svc_t_tpl_${h.digest('hex').slice(0, 16)}`;
}

async function ensureTemplate(admin: pg.Client, adminUrl: string, migrations: readonly Migration[]): Promise<string> {
  const name = templateName(migrations);
  const exists = async (n: string) => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [n])).rowCount === 1;
  if (await exists(name)) return name;
  await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK.toString()]);
  try {
    if (await exists(name)) return name;
    // Built under another name and renamed when whole, so a run that dies half way leaves no
    // template that looks finished.
    const building = `${name}_building`;
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${building} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
    const client = new pg.Client({ connectionString: databaseUrl(adminUrl, building) });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await migrate(client, migrations);
    } finally {
      await client.end();
    }
    await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK.toString()]);
  }
}

/**
 * A new database holding the migrated schema (or, with `empty`, nothing at all), on the
 * cluster `adminUrl` names (default: SVC_TEST_DATABASE_URL).
 */
export async function freshDatabase(
  options: { adminUrl?: string; migrations?: readonly Migration[]; empty?: boolean } = {},
): Promise<FreshDatabase> {
  const adminUrl = options.adminUrl ?? process.env[DATABASE_URL_ENV];
  if (!adminUrl) throw new Error(`no PostgreSQL cluster for the tests: set ${DATABASE_URL_ENV} or call testPostgres() first`);
  const name = `svc_t_${randomBytes(8).toString('hex')}`;
  await withAdmin(adminUrl, async (admin) => {
    const template = options.empty ? 'template0' : await ensureTemplate(admin, adminUrl, options.migrations ?? MIGRATIONS);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template} ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
  });
  return {
    url: databaseUrl(adminUrl, name),
    name,
    async drop() {
      await withAdmin(adminUrl, async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}
