/**
 * `svc-relay migrate --from DIR --to postgres://…`, end to end with the real command as a
 * process: a SQLite relay filled through its HTTP routes, stopped, copied into a PostgreSQL
 * database of a real cluster, and a relay started on that database answers the same reads;
 * a copy that does not verify fails naming where; a target that holds data is refused; a
 * database still open in a relay is refused.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signRecovery, signWithheldRecovery } from '../../shared/recovery.js';
import { toHex } from '../../shared/encoding.js';
import { buildApp } from '../../relay/app.js';
import type { RelayConfig } from '../../relay/config.js';
import { loadServiceKeys } from '../../relay/service-keys.js';
import { openStore } from '../../relay/store/index.js';
import { DATABASE_FILE } from '../../relay/store/sqlite/open.js';
import { openSnapshot } from '../../relay/store/sqlite/snapshot.js';
import { schemaTables } from '../../relay/store/postgres/copy.js';
import { PostgresDb } from '../../relay/store/postgres/connection.js';
import { compareTables } from '../../relay/backup/migrate-compare.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';
import { signedPost } from '../helpers/posts.js';
import { REPO_ROOT, call, mintToken, tempDataDir, type MintedToken, type RunningRelay, relayEntry } from '../helpers/relay.js';
import { runCli } from '../helpers/relay-cli.js';
import { createSealedSpace, publishKey, sealedKey, sealedPostBody } from '../helpers/sealed.js';
import { createSpace, freshName } from '../helpers/spaces.js';
import { admit } from '../helpers/invites.js';

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** relay-migrate.test.ts skipped: ${cluster.skipReason} ***\n\n`);
afterAll(() => cluster.stop());

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const TEN_MINUTES = 10 * 60_000 + 1_000;

function dataDir(): string {
  const d = tempDataDir('svc-migrate-');
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function database(empty = true): Promise<FreshDatabase> {
  const d = await freshDatabase({ empty });
  cleanup.push(async () => await d.drop());
  return d;
}

/** Rows of `table` in the database `url` names. */
async function count(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  } finally {
    await client.end();
  }
}

/**
 * A relay on `location` (what openStore takes: the data directory for its SQLite file, or a
 * postgres:// URL) with the service keys of `dir` and its clock `offset` ms from now. The
 * source relay is SQLite whichever store the rest of the suite runs on.
 */
async function relayOn(dir: string, location: string, offset = 0): Promise<RunningRelay> {
  let moved = offset;
  const clock = () => Date.now() + moved;
  const random = (n: number) => new Uint8Array(randomBytes(n));
  const config: RelayConfig = { host: '127.0.0.1', port: 0, dataDir: dir, publicUrl: undefined, dev: true };
  const store = await openStore(location);
  const serviceKeys = loadServiceKeys({ dataDir: dir, dev: true, now: clock(), random });
  const app = buildApp({ config, store, clock, random, serviceKeys });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  let closed = false;
  const relay = {
    url: `http://127.0.0.1:${address.port}`,
    app,
    store,
    serviceKeys,
    dataDir: dir,
    database: location,
    clock: { now: clock, advance: (ms: number) => void (moved += ms) },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await store.close();
    },
  } as RunningRelay;
  cleanup.push(() => relay.close());
  return relay;
}

/** `svc-relay <args>` with a terminal for its output (script(1)): exit code and everything it wrote. */
function onTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, ...relayEntry(), ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

async function send(relay: RunningRelay, who: MintedToken, space: string, body: unknown): Promise<any> {
  relay.clock.advance(2_100);
  const r = await call(relay, 'POST', `/v1/spaces/${space}/posts`, { token: who.token, body });
  if (r.status !== 201) throw new Error(`append refused: ${r.status} ${r.text}`);
  return r.body;
}

/** What a client reads of the relay: answers to compare before and after the move. */
async function reads(relay: RunningRelay, who: { owner: MintedToken; writer: MintedToken; sealedOwner: MintedToken }, spaces: { open: string; sealed: string }) {
  const get = async (path: string, token: MintedToken) => {
    const r = await call(relay, 'GET', path, { token: token.token });
    expect(r.status, `${path}: ${r.text}`).toBe(200);
    return r.body;
  };
  return {
    space: await get(`/v1/spaces/${spaces.open}`, who.owner),
    posts: await get(`/v1/spaces/${spaces.open}/posts?limit=100`, who.owner),
    events: await get(`/v1/spaces/${spaces.open}/events`, who.owner),
    postCheckpoints: await get(`/v1/spaces/${spaces.open}/checkpoints?stream=posts`, who.owner),
    eventCheckpoints: await get(`/v1/spaces/${spaces.open}/checkpoints?stream=events`, who.owner),
    proof: await get(`/v1/spaces/${spaces.open}/posts/2/proof`, who.owner),
    sealedPosts: await get(`/v1/spaces/${spaces.sealed}/posts?limit=100`, who.sealedOwner),
    sealedCheckpoints: await get(`/v1/spaces/${spaces.sealed}/checkpoints?stream=posts`, who.sealedOwner),
    tokens: await get('/v1/tokens', who.owner),
    mailbox: await get('/v1/mailbox?detail=full', who.writer),
    findings: await get(`/v1/spaces/${spaces.open}/findings`, who.owner),
  };
}

interface Filled {
  dir: string;
  offset: number;
  owner: MintedToken;
  writer: MintedToken;
  sealedOwner: MintedToken;
  spaces: { open: string; sealed: string };
  hidden: string;
  /** A file a post attaches: its address and bytes (hex). */
  file: { sha256: string; hex: string };
  before: Awaited<ReturnType<typeof reads>>;
}

/** A SQLite relay filled through its routes, then stopped. */
async function filledRelay(): Promise<Filled> {
  const dir = dataDir();
  const relay = await relayOn(dir, dir);
  const owner = await mintToken(relay.url);
  const writer = await mintToken(relay.url);
  const open = freshName('mig');
  await createSpace(relay, owner.token, { name: open, title: 'Moving day' });
  await admit(relay, owner, open, writer, 'writer');
  const spaceId = (await relay.store.spaces.byName(open))!.spaceId;
  await send(relay, owner, open, { kind: 'obs', title: 'first', body: 'the zanzibar cache warms slowly' });
  await send(relay, owner, open, signedPost(owner, { spaceId }, { kind: 'result', title: 'signed', body: 'a signed finding' }).submission);
  await send(relay, writer, open, { kind: 'question', body: 'which cache?' });
  await send(relay, owner, open, { kind: 'obs', body: 'for the writer', to: [writer.peerId] });
  // A file a post attaches: its bytes are rows of the database too.
  const bytes = new Uint8Array(randomBytes(3_000));
  const file = { sha256: createHash('sha256').update(bytes).digest('hex'), hex: toHex(bytes) };
  relay.clock.advance(2_100);
  const put = await fetch(`${relay.url}/v1/spaces/${open}/files/${file.sha256}`, {
    method: 'PUT', headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/octet-stream' }, body: bytes,
  });
  expect(put.status).toBe(201);
  await send(relay, owner, open, { kind: 'obs', title: 'with a file', attachments: [{ sha256: file.sha256, name: 'data.bin', media_type: 'application/octet-stream' }] });
  // A finding resting on the question, and a member's warn contesting it: the findings record
  // (its number, sources and what contests it) moves with the posts.
  const question = (await call(relay, 'GET', `/v1/spaces/${open}/posts?kind=question`, { token: owner.token })).body.items[0].post_id as string;
  const found = await send(relay, owner, open, { kind: 'finding', title: 'cache', data: { claim: 'The LRU cache', status: 'proposed', confidence: 'low', sources: [question] } });
  await send(relay, writer, open, { kind: 'warn', title: 'not measured', data: { sources: [found.post_id] } });
  const hidden = (await send(relay, owner, open, { kind: 'obs', body: 'said in haste' })).post_id as string;
  expect((await call(relay, 'PUT', `/v1/posts/${hidden}/hidden`, { token: owner.token })).status).toBe(200);

  const sealedOwner = await sealedKey(relay);
  expect((await publishKey(relay, sealedOwner)).status).toBe(200);
  const sealed = await createSealedSpace(relay, sealedOwner);
  await send(relay, sealedOwner, sealed.name, sealedPostBody(sealed, sealedOwner, 1, { title: 'sealed', body: 'only for members' }).body);

  // A second token of the owner's KEY, and checkpoints over everything so far.
  await mintToken(relay.url, owner.seed, { label: 'second' });
  relay.clock.advance(TEN_MINUTES);
  await relay.app.checkpointer.runOnce(relay.clock.now());
  await send(relay, writer, open, { kind: 'obs', body: 'after the checkpoint' });

  const spaces = { open, sealed: sealed.name };
  const before = await reads(relay, { owner, writer, sealedOwner }, spaces);
  expect(before.postCheckpoints.items.length).toBeGreaterThan(0);
  expect(before.sealedPosts.items).toHaveLength(1);
  expect(before.mailbox.items.length).toBeGreaterThan(0);
  expect(before.findings.items[0]).toMatchObject({ number: 1, claim: 'The LRU cache', cited_by: 1, contested: [{ cause: 'warn' }] });
  const offset = relay.clock.now() - Date.now();
  await relay.close();
  return { dir, offset, owner, writer, sealedOwner, spaces, hidden, file, before };
}

// Each test runs `svc-relay migrate` as its own process from the sources, some of them twice:
// the timeout catches a hang, not a busy machine.
describe.skipIf(cluster.url === undefined)(`svc-relay migrate${(cluster.skipReason ? ` (skipped: ${cluster.skipReason})` : '')}`, { timeout: 120_000 }, () => {
  it('copies a stopped SQLite relay into an empty PostgreSQL database, and a relay on it answers every read the same, tokens included', async () => {
    const filled = await filledRelay();
    // Enough rows of one table to take several batches.
    const lite = new Database(join(filled.dir, DATABASE_FILE));
    const spend = lite.prepare('INSERT INTO spent_challenges (nonce, expires_at) VALUES (randomblob(16), ?)');
    lite.transaction(() => {
      for (let i = 0; i < 12_001; i++) spend.run(Date.now() + 86_400_000 + i);
    })();
    const spent = lite.prepare('SELECT count(*) FROM spent_challenges').pluck().get() as number;
    expect(spent).toBeGreaterThan(12_000);
    // A signed recovery notice, as a restore that lost positions leaves one.
    const keys = loadServiceKeys({ dataDir: filled.dir, dev: true, now: Date.now(), random: (n) => new Uint8Array(randomBytes(n)) });
    const hex = () => randomBytes(32).toString('hex');
    const closed = lite.prepare('SELECT id, space_id, name FROM spaces WHERE name = ?').get(filled.spaces.open) as { id: number; space_id: string; name: string };
    const notice = signRecovery(keys.signer, {
      space_id: closed.space_id,
      name: closed.name,
      replaced_by: `${closed.name}-2`,
      replaced_by_space_id: randomUUID(),
      previous_epoch: randomUUID(),
      service_epoch: randomUUID(),
      chains: [{ stream: 'posts', signed_last: '9', signed_checkpoint_id: hex(), signed_ending_hash: hex(), survived_last: '6', survived_hash: hex() }],
      created_at: new Date().toISOString(),
    });
    lite.prepare(
      `INSERT INTO recovery_notices (recovery_id, space_row_id, canonical, signature, signer_row, created_at)
       VALUES (?, ?, ?, ?, (SELECT id FROM checkpoint_signers WHERE rendering = ?), ?)`,
    ).run(notice.id, closed.id, notice.canonical, notice.signature, JSON.stringify(keys.rendering), Date.now());
    // And its withheld form, which outsiders of this private SPACE are served.
    const withheld = signWithheldRecovery(keys.signer, notice, () => true, new Date().toISOString())!;
    lite.prepare(
      `INSERT INTO recovery_withheld (notice_row_id, recovery_id, canonical, signature, signer_row, created_at)
       VALUES ((SELECT id FROM recovery_notices WHERE recovery_id = ?), ?, ?, ?, (SELECT id FROM checkpoint_signers WHERE rendering = ?), ?)`,
    ).run(notice.id, withheld.id, withheld.canonical, withheld.signature, JSON.stringify(keys.rendering), Date.now());
    lite.close();
    const target = await database();
    const run = await runCli(['migrate', '--from', filled.dir, '--to', target.url]);
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await count(target.url, 'spent_challenges')).toBe(spent);

    const relay = await relayOn(filled.dir, target.url, filled.offset);
    const after = await reads(relay, filled, filled.spaces);
    expect(after).toEqual(filled.before);
    // The hidden post is still hidden, in its place.
    const hiddenRow = after.posts.items.find((p: any) => p.post_id === filled.hidden);
    expect(hiddenRow).toBeDefined();
    expect(JSON.stringify(hiddenRow)).not.toContain('said in haste');
    const notices = await call(relay, 'GET', '/v1/recovery', { token: filled.owner.token });
    expect(notices.body.items.map((n: any) => n.recovery_id)).toEqual([toHex(notice.id)]);
    const outsiders = await call(relay, 'GET', '/v1/recovery');
    expect(outsiders.body.items.map((n: any) => [n.recovery_id, n.full_recovery_id])).toEqual([[toHex(withheld.id), toHex(notice.id)]]);
    // The attached file is served from PostgreSQL byte for byte.
    const served = await fetch(`${relay.url}/v1/spaces/${filled.spaces.open}/files/${filled.file.sha256}`, { headers: { authorization: `Bearer ${filled.owner.token}` } });
    expect(served.status).toBe(200);
    expect(toHex(new Uint8Array(await served.arrayBuffer()))).toBe(filled.file.hex);
    // Writes go on after the copied ones: the next seq.
    const next = await send(relay, filled.writer, filled.spaces.open, { kind: 'obs', body: 'written on PostgreSQL' });
    expect(next.seq).toBe(String(filled.before.posts.items.length + 1));
    // SEEK finds a post through the index built on the target.
    const seek = await call(relay, 'GET', '/v1/seek?q=zanzibar', { token: filled.owner.token });
    expect(seek.status, seek.text).toBe(200);
    expect(seek.body.items.map((i: any) => i.title)).toEqual(['first']);
  });

  it('fails naming the SPACE, stream and position of every link, checkpoint or notice changed in the source, and leaves the target to drop', async () => {
    const filled = await filledRelay();
    const file = join(filled.dir, DATABASE_FILE);
    const lite = new Database(file);
    const rowOf = (name: string) => `(SELECT id FROM spaces WHERE name = '${name}')`;
    lite.prepare(`UPDATE posts SET chain_hash = randomblob(32) WHERE seq = 3 AND space_row_id = ${rowOf(filled.spaces.open)}`).run();
    lite.prepare(`UPDATE space_events SET canonical = CAST('{}' AS BLOB) WHERE revision = 2 AND space_row_id = ${rowOf(filled.spaces.open)}`).run();
    const signature = lite.prepare(`SELECT signature FROM checkpoints WHERE stream = 'posts' AND space_row_id = ${rowOf(filled.spaces.sealed)}`).pluck().get() as Buffer;
    signature[0] = signature[0]! ^ 1;
    lite.prepare(`UPDATE checkpoints SET signature = ? WHERE stream = 'posts' AND space_row_id = ${rowOf(filled.spaces.sealed)}`).run(signature);
    // A recovery notice no service key signed.
    lite.prepare(
      `INSERT INTO recovery_notices (recovery_id, space_row_id, canonical, signature, signer_row, created_at)
       VALUES (randomblob(32), ${rowOf(filled.spaces.open)}, CAST('{"v":1}' AS BLOB), randomblob(64), (SELECT min(id) FROM checkpoint_signers), 0)`,
    ).run();
    // A withheld form no service key signed.
    lite.prepare(
      `INSERT INTO recovery_withheld (notice_row_id, recovery_id, canonical, signature, signer_row, created_at)
       VALUES (1, randomblob(32), CAST('{"v":1}' AS BLOB), randomblob(64), (SELECT min(id) FROM checkpoint_signers), 0)`,
    ).run();
    lite.close();
    const target = await database(false);
    const run = await runCli(['migrate', '--from', filled.dir, '--to', target.url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`SPACE ${filled.spaces.open} (`);
    expect(run.stderr).toMatch(/\) posts seq 3: chain_hash does not follow from the previous link/);
    expect(run.stderr).toMatch(/\) events revision 2: command_id does not match the canonical bytes/);
    expect(run.stderr).toMatch(new RegExp(`SPACE ${filled.spaces.sealed} \\(.*\\) posts checkpoint 1-1: checkpoint.signature: does not verify`));
    expect(run.stderr).toMatch(/table recovery_notices: notice 1: recovery\.canonical/);
    expect(run.stderr).toMatch(/table recovery_withheld: notice 1: recovery\.canonical/);
    expect(run.stderr).toMatch(/Do not start a relay on it.*drop it/s);
    expect(run.stderr).toContain(`DROP DATABASE "${target.name}"`);
    // Left as it is, for the operator to drop.
    expect(await count(target.url, 'posts')).toBe(filled.before.posts.items.length + filled.before.sealedPosts.items.length);
  });

  it('the row-by-row comparison names the first differing row and column of each table, and a row missing on the target', async () => {
    const filled = await filledRelay();
    const target = await database();
    expect((await runCli(['migrate', '--from', filled.dir, '--to', target.url])).code).toBe(0);
    // The relay's own pool: integers read as numbers, as migrate reads them.
    const db = new PostgresDb(target.url);
    const client = await db.pool.connect();
    cleanup.push(async () => {
      client.release();
      await db.close();
    });
    await client.query("UPDATE tokens SET label = 'changed' WHERE label = 'second'");
    // The last row in the order both sides are read (the primary key, text bytewise): a row
    // missing anywhere else shifts the rows after it, and the first difference is then a value.
    await client.query(
      'DELETE FROM mailbox WHERE (peer, mailbox_seq) = (SELECT peer, mailbox_seq FROM mailbox ORDER BY peer COLLATE "C" DESC, mailbox_seq DESC LIMIT 1)',
    );
    const snapshot = openSnapshot(join(filled.dir, DATABASE_FILE));
    cleanup.push(() => snapshot.close());
    const columns = await schemaTables(client);
    const plan = new Map(snapshot.tables().map((t) => [t, columns.get(t)!] as const));
    expect(await compareTables({ snapshot, client, plan })).toEqual([
      expect.stringMatching(/^table mailbox: row \d+ \(peer="[0-9a-f]{40}…", mailbox_seq=\d+\) is missing on the target$/),
      expect.stringMatching(/^table tokens: row \d+ \(id="[^"]+"\) differs in label: "second" in the source, "changed" on the target$/),
    ]);
  });

  it('shows its progress on a terminal, then refuses a target that already holds data, saying what to do, and changes nothing in it', async () => {
    const filled = await filledRelay();
    const target = await database();
    if (process.platform === 'linux' && existsSync('/usr/bin/script')) {
      // On a terminal (script(1) gives it one): a progress line per step, and what to start.
      const shown = await onTerminal(['migrate', '--from', filled.dir, '--to', target.url]);
      expect(shown.code, shown.output).toBe(0);
      for (const step of ['copying: 100%', 'building the SEEK index: 100%', 'verifying: 100%', 'comparing: 100%']) expect(shown.output).toContain(step);
      expect(shown.output).toContain(`start the relay with: svc-relay --data ${filled.dir} --database `);
    } else {
      expect((await runCli(['migrate', '--from', filled.dir, '--to', target.url])).code).toBe(0);
    }
    const again = await runCli(['migrate', '--from', filled.dir, '--to', target.url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds data \(.*rows\).*migrate copies into an empty database only: create a new one/);
    // Still the first copy, whole.
    const relay = await relayOn(filled.dir, target.url, filled.offset);
    expect(await reads(relay, filled, filled.spaces)).toEqual(filled.before);
  });

  it.skipIf(process.platform !== 'linux')(`refuses a database a process still has open (a relay serving from it), naming the process${(process.platform === 'linux' ? '' : ' (skipped: Linux only, it reads /proc)')}`, async () => {
    const dir = dataDir();
    await relayOn(dir, dir);
    const target = await database();
    const run = await runCli(['migrate', '--from', dir, '--to', target.url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`is open in process ${process.pid}`);
    expect(run.stderr).toContain('stop the relay first');
  });

  it('names what is missing when the target is not given, and refuses a URL that is not PostgreSQL', async () => {
    const none = await runCli(['migrate', '--from', dataDir()], { SVC_DATABASE_URL: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('name the target database: --to postgres://');
    const other = await runCli(['migrate', '--from', dataDir(), '--to', 'mysql://x@y/z']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--to takes a postgres:// (or postgresql://) URL');
    const help = await runCli(['--help']);
    expect(help.stdout).toContain('Usage: svc-relay migrate --from DIR --to postgres://');
  });
});
