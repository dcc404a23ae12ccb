/**
 * `--database` / SVC_DATABASE_URL on the command line: a PostgreSQL URL puts the relay's data
 * there (the data directory keeps the service keys); anything else is a usage error; a server
 * that does not answer is one line without the password; backup and restore, which copy
 * SQLite's file, refuse such a relay and name PostgreSQL's tools. Real processes through tsx,
 * and a real PostgreSQL server for the relay that serves.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';
import { getJson, spawnRelay, tempDataDir, type SpawnedRelay } from '../helpers/relay.js';
import { runCli } from '../helpers/relay-cli.js';

describe('svc-relay --database', () => {
  it('refuses a URL that is not postgres:// or postgresql:// as a usage error (exit 2), without its password', async () => {
    const r = await runCli(['--port', '0', '--data', tempDataDir(), '--database', 'mysql://svc:hunter2@127.0.0.1/svc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--database: not a PostgreSQL URL');
    expect(r.stderr).not.toContain('hunter2');
  }, 60_000);

  it('says in one line which database did not answer, without its password, and exits 1', async () => {
    const r = await runCli(['--port', '0', '--data', tempDataDir()], { SVC_DATABASE_URL: 'postgres://svc:hunter2@127.0.0.1:1/svc' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc-relay: cannot open the PostgreSQL database postgres:\/\/svc:\*\*\*@127\.0\.0\.1:1\/svc: .*--database\.\n$/);
    expect(r.stderr).not.toContain('hunter2');
  }, 60_000);

  it('makes backup and restore refuse with exit 2 and name pg_dump and pg_restore, touching nothing', async () => {
    const dir = tempDataDir();
    const backup = await runCli(['backup', `${dir}/relay.backup`, '--data', dir, '--database', 'postgres://svc@127.0.0.1:1/svc']);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toMatch(/^svc-relay backup: backup: this relay's database is PostgreSQL .*pg_dump/);
    const restore = await runCli(['restore', `${dir}/relay.backup`, '--data', dir], { SVC_DATABASE_URL: 'postgres://svc@127.0.0.1:1/svc' });
    expect(restore.code).toBe(2);
    expect(restore.stderr).toMatch(/^svc-relay restore: restore: this relay's database is PostgreSQL .*pg_restore/);
  }, 60_000);
});

const cluster = testPostgres();

describe.skipIf(cluster.url === undefined)(`svc-relay on PostgreSQL${cluster.skipReason ? ` (skipped: ${cluster.skipReason})` : ''}`, () => {
  let database: FreshDatabase | undefined;
  let relay: SpawnedRelay | undefined;
  afterAll(async () => {
    await relay?.kill('SIGKILL');
    await database?.drop();
    cluster.stop();
  });

  it('migrates an empty database on start, serves from it, and answers /healthz', async () => {
    database = await freshDatabase({ adminUrl: cluster.url!, empty: true });
    relay = await spawnRelay(tempDataDir(), { args: ['--database', database.url] });
    const health = await getJson(`${relay.url}/healthz`);
    expect(health.status).toBe(200);
    const capabilities = await getJson(`${relay.url}/v1/capabilities`);
    expect(capabilities.status).toBe(200);
    expect(typeof capabilities.body.service_epoch).toBe('string');
  }, 60_000);
});
