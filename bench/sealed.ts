/**
 * The sealed suite: sealed SPACES.
 *
 *   seal post      shared/sealed/items.ts `sealPost`: header and content built and checked,
 *                  hd = H(L("sealed-header") ‖ header), k = HKDF(salt, secret, L("sealed-item") ‖ hd),
 *                  AES-128-GCM of the content under k with aad hd;
 *   open post      `openPost`: strict header, the same key, AES-128-GCM open, strict content;
 * for post content of exactly 1 KiB and 64 KiB (canonical JSON bytes), beside bare AES-128-GCM
 * seal and open (node:crypto, the same key schedule skipped) over the same content bytes and the
 * same 32-byte aad, in the same interleaved rounds. The salt is fixed per case: drawing or
 * deriving it is not measured (the bridge derives it with one HMAC, bridge/sealed/sealing.ts).
 *
 *   lock           one HPKE SealAuth lock (sealed.md §4) and its opening, the unit of a key change.
 *
 * Then a 100-member key change end to end: a relay process with rate limits off
 * (bench/relay-fixture.ts), an owner KEY whose bridge code runs the change
 * (bridge/commands/keeper.ts `keeperPass` with changeNow: key records read through the trust
 * rules, a new secret, stage, 100 members listed without a lock and their keys checked, 100
 * locks sealed and put in one chunk, activate, the records read again), timed whole and by
 * HTTP call. Members are admitted under an `open` keeper list, so no stamp is checked.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalBytes } from '../shared/canonical.js';
import { buildEncryptionKeyStatement, deriveEncryptionKey, encryptionKeyPutBody, signEncryptionKeyStatement } from '../shared/sealed/encryption-key.js';
import { commitmentOf, spaceContainer } from '../shared/sealed/generations.js';
import { openPost, sealPost } from '../shared/sealed/items.js';
import { openLock, sealLock } from '../shared/sealed/locks.js';
import type { ApiRequest, ApiResponse, RelayApi } from '../tools/api.js';
import { RelayClient } from '../bridge/relay-client.js';
import { keeperPass } from '../bridge/commands/keeper.js';
import { runKeepers } from '../bridge/commands/keepers.js';
import type { CommandContext } from '../bridge/commands/common.js';
import { createSealer } from '../bridge/sealed/encryption.js';
import { createKey, openKeyDirectory } from '../bridge/keys/keys.js';
import { openSealedCache, sealedCachePath } from '../bridge/sealed/sealed-cache.js';
import { Sealing } from '../bridge/sealed/sealing.js';
import { mintToken } from '../test/helpers/relay.js';
import { formatDuration, measureLatency, measureThroughput, summarizeLatency, type LatencySummary, type Row, type Suite, type SuiteReport } from './harness.js';
import { expectCall, spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const ROUNDS = 10;
const ROUND_MS = 120;
const MEMBERS = 100;
const CHANGES = 12;
const SPACE_ID = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0';
const AUTHOR = 'ab'.repeat(32);
const SECRET = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
const SALT = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);

/** A post body whose content JSON is exactly `bytes` long. */
function bodyFor(bytes: number): string {
  const overhead = canonicalBytes({ body: '' }).length;
  return 'sealed bench words. '.repeat(Math.ceil(bytes / 20)).slice(0, bytes - overhead);
}

function bareSeal(key: Uint8Array, pt: Uint8Array, aad: Uint8Array): Buffer {
  const c = createCipheriv('aes-128-gcm', key, Buffer.alloc(12), { authTagLength: 16 });
  c.setAAD(aad);
  return Buffer.concat([c.update(pt), c.final(), c.getAuthTag()]);
}

function bareOpen(key: Uint8Array, sealed: Buffer, aad: Uint8Array): Buffer {
  const d = createDecipheriv('aes-128-gcm', key, Buffer.alloc(12), { authTagLength: 16 });
  d.setAAD(aad);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
}

function itemCases(size: number, label: string) {
  const content = { body: bodyFor(size) };
  const header = { author: AUTHOR, generation: 1, kind: 'result', space_id: SPACE_ID };
  const item = sealPost({ header, content, secret: SECRET, salt: SALT });
  if (item.contentBytes.length !== size) throw new Error(`content is ${item.contentBytes.length} bytes, not ${size}`);
  const key = new Uint8Array(randomBytes(16));
  const aad = new Uint8Array(randomBytes(32));
  const bare = bareSeal(key, item.contentBytes, aad);
  if (openPost(item.headerBytes, item.ciphertext, SECRET).content.body !== content.body) throw new Error('open gave other words');
  return [
    { name: `aes-128-gcm seal ${label} (bare)`, fn: () => bareSeal(key, item.contentBytes, aad) },
    { name: `seal post ${label}`, fn: () => sealPost({ header, content, secret: SECRET, salt: SALT }) },
    { name: `aes-128-gcm open ${label} (bare)`, fn: () => bareOpen(key, bare, aad) },
    { name: `open post ${label}`, fn: () => openPost(item.headerBytes, item.ciphertext, SECRET) },
  ];
}

function lockCases() {
  const container = spaceContainer(SPACE_ID);
  const sender = deriveEncryptionKey(new Uint8Array(randomBytes(32)), 'cd'.repeat(32));
  const recipient = deriveEncryptionKey(new Uint8Array(randomBytes(32)), 'ef'.repeat(32));
  const input = {
    container,
    generation: 2,
    secret: SECRET,
    recipient: { peerId: 'ef'.repeat(32), publicKey: recipient.publicKey },
    sender: { peerId: 'cd'.repeat(32), privateKey: sender.privateKey },
  };
  const lock = sealLock({ ...input, ephemeral: new Uint8Array(randomBytes(32)) });
  const commitment = commitmentOf(container, 2, SECRET);
  const open = () =>
    openLock({ container, generation: 2, lock, commitment, recipient: { peerId: 'ef'.repeat(32), privateKey: recipient.privateKey }, sender: { peerId: 'cd'.repeat(32), publicKey: sender.publicKey } });
  open();
  return [
    { name: 'lock (HPKE SealAuth)', fn: () => sealLock({ ...input, ephemeral: new Uint8Array(randomBytes(32)) }) },
    { name: 'open lock (HPKE OpenAuth)', fn: open },
  ];
}

/** A RelayApi that times each call by method and route (ids and names folded). */
class TimedApi implements RelayApi {
  readonly samples = new Map<string, number[]>();

  constructor(private readonly inner: RelayClient) {}

  get base(): URL {
    return this.inner.base;
  }

  async request(req: ApiRequest): Promise<ApiResponse> {
    const route = `${req.method ?? 'GET'} ${req.path.replace(/\/v1\/spaces\/[^/]+/, '/v1/spaces/{name}').replace(/\/generations\/\d+/, '/generations/{g}')}`;
    const t0 = process.hrtime.bigint();
    try {
      return await this.inner.request(req);
    } finally {
      const list = this.samples.get(route) ?? [];
      list.push(Number(process.hrtime.bigint() - t0));
      this.samples.set(route, list);
    }
  }
}

async function keyChange(): Promise<{ rows: Row[]; notes: string[] }> {
  const dataDir = tempDataDir('svc-bench-sealed-');
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-sealed-home-'));
  const relay = await spawnBenchRelay(dataDir);
  try {
    const dir = openKeyDirectory(home);
    const k = createKey(dir, 'owner').key;
    const client = new RelayClient({ api: new URL(relay.url), key: k, dir });
    const api = new TimedApi(client);
    const sealer = createSealer(k);
    const sealing = new Sealing({ api, identity: { peerId: k.peerId }, signer: k.signer, sealer, privateSalt: k.privateSalt, now: Date.now, log: () => {} }, openSealedCache(sealedCachePath(dir, k.name), sealer.box));
    const ctx: CommandContext = { api, keyName: k.name, peerId: k.peerId, signer: k.signer, sealing, out: () => {}, log: () => {}, now: Date.now };
    const name = `bench-sealed-${Date.now().toString(36)}`;
    await sealing.createSpace({ name, title: 'Bench sealed' });
    await runKeepers(ctx, [name, '--admission', 'open', '--change-every', '60']);
    const ownerToken = await client.token();
    // 100 members: signed in, encryption keys published, admitted by the owner.
    for (let i = 0; i < MEMBERS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, MEMBERS - i) }, async () => {
          const m = await mintToken(relay.url);
          const enc = deriveEncryptionKey(m.seed, m.peerId);
          const statement = buildEncryptionKeyStatement(m.peerId, enc.publicKey);
          await expectCall(200, `${relay.url}/v1/me/encryption-key`, 'PUT', m.token, encryptionKeyPutBody(statement, signEncryptionKeyStatement(m.signer, statement)));
          await expectCall(201, `${relay.url}/v1/spaces/${name}/members/${m.peerId}`, 'PUT', ownerToken, { role: 'writer' });
        }),
      );
    }
    const first = await keeperPass(ctx, name);
    if (first.locked !== MEMBERS) throw new Error(`the first pass locked ${first.locked}, not ${MEMBERS}`);
    api.samples.clear();
    const passes: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const t0 = process.hrtime.bigint();
      const r = await keeperPass(ctx, name, { changeNow: true });
      passes.push(Number(process.hrtime.bigint() - t0));
      if (r.changedTo !== i + 2) throw new Error(`change ${i + 1} ended at generation ${r.generation}`);
    }
    const whole = summarizeLatency(passes);
    const mean = passes.reduce((a, b) => a + b, 0) / passes.length;
    const rows: Row[] = [{ name: `key change, ${MEMBERS} members (keeper pass, HTTP)`, opsPerSec: 1e9 / mean, latency: whole, note: `${CHANGES} changes, generation 2 to ${CHANGES + 1}` }];
    const notes: string[] = [];
    const per = (route: string): LatencySummary | undefined => {
      const s = api.samples.get(route);
      return s === undefined ? undefined : summarizeLatency(s);
    };
    for (const route of [
      'GET /v1/spaces/{name}/sealed',
      'GET /v1/spaces/{name}/sealed/requests',
      'GET /v1/spaces/{name}/sealed/unlocked',
      'POST /v1/spaces/{name}/sealed/generations',
      'POST /v1/spaces/{name}/sealed/locks',
      'POST /v1/spaces/{name}/sealed/generations/{g}/activate',
    ]) {
      const l = per(route);
      const count = api.samples.get(route)?.length ?? 0;
      if (l !== undefined) notes.push(`  ${route.padEnd(56)} ${String(count).padStart(3)} calls, p50 ${formatDuration(l.p50)}, max ${formatDuration(l.max)}`);
    }
    sealing.cache.close();
    return { rows, notes };
  } finally {
    await relay.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

async function run(): Promise<SuiteReport> {
  const cases = [...itemCases(1024, '1 KiB'), ...itemCases(65_536, '64 KiB'), ...lockCases()];
  const results = new Map(measureThroughput(cases, { warmupMs: 200, roundMs: ROUND_MS, rounds: ROUNDS }).map((r) => [r.name, r]));
  const latency = (name: string, count: number) => measureLatency(cases.find((c) => c.name === name)!.fn, { warmupMs: 30, count }).latency;
  const row = (name: string, baseline?: string, count = 0): Row => ({
    name,
    opsPerSec: results.get(name)!.opsPerSec,
    ...(baseline === undefined ? {} : { baseline }),
    ...(count > 0 ? { latency: latency(name, count) } : {}),
  });
  const rows: Row[] = [];
  for (const size of ['1 KiB', '64 KiB']) {
    const n = size === '1 KiB' ? 3000 : 300;
    rows.push(row(`aes-128-gcm seal ${size} (bare)`, undefined, n));
    rows.push(row(`seal post ${size}`, `aes-128-gcm seal ${size} (bare)`, n));
    rows.push(row(`aes-128-gcm open ${size} (bare)`, undefined, n));
    rows.push(row(`open post ${size}`, `aes-128-gcm open ${size} (bare)`, n));
  }
  rows.push(row('lock (HPKE SealAuth)', undefined, 1000));
  rows.push(row('open lock (HPKE OpenAuth)', 'lock (HPKE SealAuth)', 1000));
  const change = await keyChange();
  const lockOps = results.get('lock (HPKE SealAuth)')!.opsPerSec;
  rows.push({ name: `${MEMBERS} locks sealed in-process`, opsPerSec: lockOps / MEMBERS, note: 'the locks alone, from the lock row' });
  for (const r of change.rows) rows.push({ ...r, baseline: `${MEMBERS} locks sealed in-process` });
  return {
    rows,
    notes: [
      `ops/s: best of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms; "vs baseline": time per op ÷ the baseline's; p50/p99/max: calls timed one by one`,
      'seal/open post: header and content built or read strictly, HKDF item key, AES-128-GCM; bare rows: AES-128-GCM alone on the same content bytes',
      `key change: ops/s = changes per second over ${CHANGES} changes (mean); each reads the key records twice, lists members without a lock, checks their keys, stages, puts ${MEMBERS} locks in one call, activates. HTTP calls during the changes:`,
      ...change.notes,
    ],
  };
}

export const sealedSuite: Suite = {
  name: 'sealed',
  title: 'sealed: seal and open posts beside bare AES-128-GCM; a 100-member key change end to end',
  run,
};
