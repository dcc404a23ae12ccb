/**
 * The backup and restore commands as an operator meets them: a relay process serving on the
 * directory a restore works in (reads answered, writes SERVICE_READ_ONLY until it is done, then
 * the new epoch and the closed SPACE), and every bad input refused with one line saying what to
 * do next and its exit code, changing nothing.
 *
 * @module-tag slow
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codeOf, newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, spawnRelay, startRelay, tempDataDir, type RunningRelay, type SpawnedRelay } from '../../helpers/relay.js';
import { runCli, startCli } from '../../helpers/relay-cli.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

const TEN_MINUTES = 10 * 60_000 + 1_000;
/**
 * Each test runs several relay commands one after another, each its own process from the
 * sources (tsx compiles it): seconds apiece on a quiet machine, many times that on a busy one.
 * The timeout is there to catch a hang, not to time the commands.
 */
const CLI_TEST_TIMEOUT_MS = 120_000;
const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function dir(prefix: string): string {
  const d = tempDataDir(prefix);
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function checkpointNow(relay: RunningRelay): Promise<void> {
  relay.clock.advance(TEN_MINUTES);
  await relay.app.checkpointer.runOnce(relay.clock.now());
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 25));
}

/** A relay with one SPACE, backed up after 3 posts, then 3 more signed: a backup that loses positions. */
async function lostRelay(): Promise<{ backup: string; log: string; space: string; owner: Awaited<ReturnType<typeof mintToken>>; epoch: string }> {
  const data = dir('svc-cli-data-');
  const log = join(dir('svc-cli-log-'), 'checkpoints.log');
  const relay = await startRelay({ dataDir: data, checkpointLog: log });
  const owner = await mintToken(relay.url);
  const space = await newSpace(relay, owner);
  for (let i = 0; i < 3; i++) await post(relay, owner, space, { kind: 'obs', body: `before ${i}` });
  await checkpointNow(relay);
  const backup = join(dir('svc-cli-out-'), 'relay.backup');
  expect((await runCli(['backup', backup, '--data', data])).code).toBe(0);
  for (let i = 0; i < 3; i++) await post(relay, owner, space, { kind: 'obs', body: `after ${i}` });
  await checkpointNow(relay);
  const epoch = (await relay.store.state.get('service_epoch'))!;
  await relay.close();
  return { backup, log, space: space.name, owner, epoch };
}

// backup and restore copy SQLite's file (PostgreSQL: pg_dump): not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`a relay serving on a directory while a restore runs${ON_POSTGRES_SKIP}`, { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('answers reads, refuses writes with SERVICE_READ_ONLY, and takes the restored state once the restore is done', async () => {
    const { backup, log, space, owner, epoch } = await lostRelay();
    const data = join(dir('svc-cli-new-'), 'data');
    const pause = join(dir('svc-cli-pause-'), 'paused');
    const restoring = startCli(['restore', backup, '--data', data, '--checkpoint-log', log], { SVC_RELAY_TEST_RESTORE_PAUSE: pause });
    await until(() => existsSync(pause));
    const relay: SpawnedRelay = await spawnRelay(data, { env: { SVC_RELAY_NO_RATE_LIMITS: '1' } });
    cleanup.push(() => relay.kill());
    const at = { url: relay.url } as RunningRelay;

    const read = await call(at, 'GET', `/v1/spaces/${space}/posts`, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.items).toHaveLength(3);
    const write = await call(at, 'POST', `/v1/spaces/${space}/posts`, { token: owner.token, body: { kind: 'obs', body: 'during' } });
    expect(write.status).toBe(503);
    expect(codeOf(write)).toBe('SERVICE_READ_ONLY');
    expect(write.body.error.fix).toMatch(/retry the write later/);
    expect(write.body.error.retry_after).toBe(30);
    expect(write.headers.get('retry-after')).toBe('30');
    expect((await call(at, 'GET', '/v1/me', { token: owner.token })).body.service_epoch).toBe(epoch);

    rmSync(pause);
    const done = await restoring.done;
    expect(done, done.stderr).toMatchObject({ code: 0 });
    // The same serving process now has the new epoch, the closed SPACE and its continuation.
    const me = await call(at, 'GET', '/v1/me', { token: owner.token });
    expect(me.body.service_epoch).not.toBe(epoch);
    const closed = await call(at, 'POST', `/v1/spaces/${space}/posts`, { token: owner.token, body: { kind: 'obs', body: 'late' } });
    expect(codeOf(closed)).toBe('SPACE_CLOSED');
    const next = await call(at, 'POST', `/v1/spaces/${space}-2/posts`, { token: owner.token, body: { kind: 'obs', body: 'continuing' } });
    expect(next.status).toBe(201);
    expect(next.body.receipt.service_epoch).toBe(me.body.service_epoch);
    const capabilities = await call(at, 'GET', '/v1/capabilities');
    expect(capabilities.body.protocol.service_epoch).toBe(me.body.service_epoch);
  });

  it('a relay started before the restore has placed the database refuses to start, saying why', async () => {
    const data = dir('svc-cli-early-');
    writeFileSync(join(data, 'restore.lock'), '{}\n');
    const run = await runCli(['--port', '0', '--data', data]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/a restore is placing the database in .*; start the relay once it is in place/);
    expect(readdirSync(data)).toEqual(['restore.lock']);
  });
});

// backup and restore copy SQLite's file (PostgreSQL: pg_dump): not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`bad inputs to backup and restore${ON_POSTGRES_SKIP}`, { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('backup refuses a directory with no relay database, an existing target and a missing file name', async () => {
    const empty = dir('svc-cli-empty-');
    const out = dir('svc-cli-out-');
    let run = await runCli(['backup', join(out, 'x.backup'), '--data', empty]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/^svc-relay backup: no relay database at .*relay\.sqlite; pass --data DIR/);

    const relay = await startRelay();
    cleanup.push(() => relay.close());
    const taken = join(out, 'taken.backup');
    writeFileSync(taken, 'keep me');
    run = await runCli(['backup', taken, '--data', relay.dataDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/already exists; name a new file/);
    run = await runCli(['backup', join(out, 'nowhere', 'x.backup'), '--data', relay.dataDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is not a directory; create it first/);
    run = await runCli(['backup', '--data', relay.dataDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/name one file to write/);
    run = await runCli(['backup', join(out, 'y.backup'), '--bogus']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^svc-relay backup: Unknown option '--bogus'/);
    expect(readdirSync(out)).toEqual(['taken.backup']);
  });

  it('restore refuses a missing file, a file that is not a backup, a directory that is not empty and a checkpoint log that is missing or of another relay, writing nothing', async () => {
    const { backup, log } = await lostRelay();
    const work = dir('svc-cli-work-');
    const target = join(work, 'data');

    let run = await runCli(['restore', join(work, 'missing.backup'), '--data', target, '--checkpoint-log', log]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/missing\.backup: no such file; name the file svc-relay backup wrote/);

    const text = join(work, 'notes.txt');
    writeFileSync(text, 'not a database at all, just words to fill more than a page header of text '.repeat(10));
    run = await runCli(['restore', text, '--data', target, '--checkpoint-log', log]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/notes\.txt is not a relay backup: it is not an SQLite file/);

    const live = await startRelay();
    cleanup.push(() => live.close());
    run = await runCli(['restore', join(live.dataDir, 'relay.sqlite'), '--data', target, '--checkpoint-log', log]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is not a relay backup: it has no svc_backup table, so it was not made by svc-relay backup/);

    const full = dir('svc-cli-full-');
    writeFileSync(join(full, 'something'), 'x');
    run = await runCli(['restore', backup, '--data', full, '--checkpoint-log', log]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is not empty; restore into a new or empty directory/);
    expect(readdirSync(full)).toEqual(['something']);

    run = await runCli(['restore', backup, '--data', target, '--checkpoint-log', join(work, 'no.log')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/checkpoint log .*no\.log not found; pass --checkpoint-log FILE/);

    // A log another relay (another root key) signed.
    const otherLog = join(work, 'other.log');
    const other = await startRelay({ checkpointLog: otherLog });
    cleanup.push(() => other.close());
    const someone = await mintToken(other.url);
    await post(other, someone, await newSpace(other, someone), { kind: 'obs', body: 'elsewhere' });
    await checkpointNow(other);
    run = await runCli(['restore', backup, '--data', target, '--checkpoint-log', otherLog]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/line 1: .*trusted root; this log is not of the relay this backup was made from/);

    const torn = join(work, 'torn.log');
    writeFileSync(torn, '{"checkpoint": 1}\nnot json\n');
    run = await runCli(['restore', backup, '--data', target, '--checkpoint-log', torn]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/torn\.log: line 2 is not JSON/);

    run = await runCli(['restore', backup, '--data', target, '--checkpoint-log', log, '--without-checkpoint-log']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/exclude each other/);
    expect(existsSync(target)).toBe(false);
  });

  it('a checkpoint log whose last line was cut short by a crash is read without it, and said so', async () => {
    const { backup, log } = await lostRelay();
    writeFileSync(log, `${readFileSync(log, 'utf8')}{"checkpoint":{"cut`);
    const target = join(dir('svc-cli-torn-'), 'data');
    mkdirSync(target);
    const run = await runCli(['restore', backup, '--data', target, '--checkpoint-log', log]);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stderr).toMatch(/ended in a line cut short/);
    expect(run.stdout).toMatch(/closed \(posts signed to 6, survived to 3\)/);
  });
});

