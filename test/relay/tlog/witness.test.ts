/**
 * Witness mode end to end over real relays (relay/witness/follow.ts, relay/routes/tlog.ts,
 * relay/routes/witness.ts): relay A publishes a public SPACE's checkpoints as signed notes and
 * accepts cosignatures from witness W; W follows the SPACE, checks consistency with what it
 * cosigned before, cosigns, and posts the cosignature back, which A serves on its note. A split
 * view is made real: a copy of A's database and keys (A2, same public URL, same service key)
 * grows another history, and W, reading both, refuses to cosign and reports it.
 * The served notes are checked by the independent Python implementation too.
 */
import { sqliteRaw } from '../../../relay/store/sqlite/connection.js';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readNote, verifyCosignature, verifyNote } from '../../../shared/signed-note.js';
import { readCheckpointBody } from '../../../shared/tlog-checkpoint.js';
import { DATABASE_FILE } from '../../../relay/store/sqlite/open.js';
import { CERTIFICATE_FILE, CHALLENGE_SECRET_FILE, loadServiceKeys, ROOT_SEED_FILE, SIGNER_SEED_FILE } from '../../../relay/service-keys.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';
import { call, mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { newSpace, post } from '../../helpers/posts.js';
import { startProxy, type RunningProxy } from '../../helpers/proxy.js';
import { HAVE_PYTHON_CRYPTOGRAPHY, pythonCheck, signCheckpoints } from '../../helpers/tlog.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

const ORIGIN_URL = 'https://relay-a.example';
const WITNESS_NAME = 'witness-1.example';
const METRICS_TOKEN = 'm'.repeat(40);

let a: RunningRelay;
let w: RunningRelay;
let owner: MintedToken;
let space: SpaceRow;
let witnessKey: Uint8Array;
let target: string;

async function note(relay: RunningRelay, size?: number): Promise<string> {
  relay.clock.advance(600);
  const r = await call(relay, 'GET', `/v1/spaces/${space.name}/checkpoint.note${size === undefined ? '' : `/${size}`}`);
  expect(r.status, r.text).toBe(200);
  return r.text;
}

async function postMany(relay: RunningRelay, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) await post(relay, owner, space, { kind: 'obs', body: `${tag} ${i}` });
  await signCheckpoints(relay);
}

async function status(): Promise<any> {
  w.clock.advance(600);
  const r = await call(w, 'GET', '/v1/witness');
  expect(r.status, r.text).toBe(200);
  return r.body;
}

const noteKey = () => ({ name: 'relay-a.example', publicKey: a.serviceKeys.signer.publicKey });
const witness = () => ({ name: WITNESS_NAME, publicKey: witnessKey });

beforeAll(async () => {
  // The witness's keys first, so the origin can be told to accept it before either serves.
  const wDir = tempDataDir();
  witnessKey = loadServiceKeys({ dataDir: wDir, dev: true, now: Date.now(), random: (n) => new Uint8Array(randomBytes(n)) }).signer.publicKey;
  a = await startRelay({ dataDir: tempDataDir(), publicUrl: ORIGIN_URL, config: { acceptedWitnesses: [witness()] } });
  owner = await mintToken(a.url);
  space = await newSpace(a, owner, { visibility: 'public', joinPolicy: 'request' });
  target = `${a.url}/v1/spaces/${space.name}`;
  w = await startRelay({ dataDir: wDir, publicUrl: `https://${WITNESS_NAME}`, config: { witness: { targets: [target], intervalMs: 3_600_000 }, metrics: { token: METRICS_TOKEN } } });
  await postMany(a, 3, 'first');
});
afterAll(async () => {
  await w?.close();
  await a?.close();
});

describe('a witness following a SPACE', () => {
  it('cosigns the head, posts the cosignature, and the origin serves it on the note (checked in TypeScript and Python)', async () => {
    const outcomes = await w.app.witness.runOnce();
    expect(outcomes).toEqual([{ kind: 'cosigned', origin: `relay-a.example/spaces/${space.name}`, size: 3, posted: true }]);
    const text = await note(a);
    const read = readNote(text);
    expect(read.signatures.map((s) => s.name)).toEqual(['relay-a.example', WITNESS_NAME]);
    verifyNote(read, noteKey().name, noteKey().publicKey);
    expect(verifyCosignature(read, witness())).toBeGreaterThan(1_600_000_000);
    if (HAVE_PYTHON_CRYPTOGRAPHY) {
      const found = pythonCheck({
        note: text,
        origin_key: { name: noteKey().name, public_key_b64: Buffer.from(noteKey().publicKey).toString('base64') },
        witnesses: [{ name: WITNESS_NAME, public_key_b64: Buffer.from(witnessKey).toString('base64') }],
      });
      expect(found.origin_signature).toBe(true);
      expect(typeof found.cosignatures[WITNESS_NAME]).toBe('number');
    }
    const s = await status();
    expect(s).toMatchObject({ name: WITNESS_NAME, witnessing: true, split_view_count: 0, split_views: [] });
    expect(s.setting).toBe(`${WITNESS_NAME}=${Buffer.from(witnessKey).toString('base64')}`);
    expect(s.following).toEqual([expect.objectContaining({ origin: `relay-a.example/spaces/${space.name}`, source: target, size: '3' })]);
  });

  it('a head it already cosigned is left alone; a grown one is cosigned after its consistency proof verifies', async () => {
    expect(await w.app.witness.runOnce()).toEqual([{ kind: 'unchanged', origin: `relay-a.example/spaces/${space.name}`, size: 3 }]);
    await postMany(a, 2, 'second');
    expect(await w.app.witness.runOnce()).toEqual([expect.objectContaining({ kind: 'cosigned', size: 5, posted: true })]);
    // Both heads keep their cosignature.
    for (const size of [3, 5]) expect(verifyCosignature(readNote(await note(a, size)), witness())).toBeDefined();
  });

  it('a note whose signature does not verify under the pinned key is refused: not cosigned, not a split view', async () => {
    const proxy: RunningProxy = await startProxy();
    try {
      proxy.target = a.url;
      proxy.rewrite = (ans) => (ans.url.endsWith('/checkpoint.note') ? ans.body.replace(/\n5\n/, '\n6\n') : undefined);
      const outcome = await w.app.witness.check(`${proxy.url}/v1/spaces/${space.name}`);
      expect(outcome.kind).toBe('refused');
      expect((await status()).split_view_count).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});

describe('an older head', () => {
  it('that the cosigned one extends is left alone: not cosigned again, not kept, no split view', async () => {
    const older = await note(a, 3);
    const proxy: RunningProxy = await startProxy();
    try {
      proxy.target = a.url;
      proxy.rewrite = (ans) => (ans.url.endsWith('/checkpoint.note') ? older : undefined);
      const outcome = await w.app.witness.check(`${proxy.url}/v1/spaces/${space.name}`);
      expect(outcome).toEqual({ kind: 'stale', origin: `relay-a.example/spaces/${space.name}`, size: 3, kept: 5 });
      const s = await status();
      expect(s.split_view_count).toBe(0);
      expect(s.following[0]).toMatchObject({ size: '5', source: target });
    } finally {
      await proxy.close();
    }
  });
});

// The second relay starts from a copy of A's SQLite file (the online backup API); not run on
// the PostgreSQL test store (SVC_TEST_STORE=postgres), where no such copy of an open database is made.
describe.skipIf(onPostgres)(`a split view${ON_POSTGRES_SKIP}`, () => {
  let a2: RunningRelay;

  beforeAll(async () => {
    // A second relay with A's database and keys, at the same public URL: the same log origin and
    // key, showing another history to whoever reads it there.
    const dir = tempDataDir();
    await sqliteRaw(a.store.db).backup(join(dir, DATABASE_FILE));
    for (const f of [ROOT_SEED_FILE, SIGNER_SEED_FILE, CERTIFICATE_FILE, CHALLENGE_SECRET_FILE]) {
      if (existsSync(join(a.dataDir, f))) copyFileSync(join(a.dataDir, f), join(dir, f));
    }
    a2 = await startRelay({ dataDir: dir, publicUrl: ORIGIN_URL, config: { acceptedWitnesses: [witness()] } });
    a2.clock.advance(a.clock.now() - a2.clock.now());
  });
  afterAll(async () => {
    await a2?.close();
  });

  it('the fork verifies under the same key yet tells another history', async () => {
    await postMany(a, 1, 'honest');
    await postMany(a2, 2, 'forked');
    const [h1, h2] = [readNote(await note(a)), readNote(await note(a2))];
    verifyNote(h2, noteKey().name, noteKey().publicKey);
    expect(readCheckpointBody(h1.text).origin).toBe(readCheckpointBody(h2.text).origin);
    expect([readCheckpointBody(h1.text).size, readCheckpointBody(h2.text).size]).toEqual([6, 7]);
  });

  it('is caught by the witness reading both: no cosignature, recorded with both notes, said on stderr and at /v1/witness', async () => {
    expect(await w.app.witness.runOnce()).toEqual([expect.objectContaining({ kind: 'cosigned', size: 6 })]);
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let outcome;
    let stderr = '';
    try {
      outcome = await w.app.witness.check(`${a2.url}/v1/spaces/${space.name}`);
      stderr = said.mock.calls.map((c) => String(c[0])).join('');
    } finally {
      said.mockRestore();
    }
    expect(outcome).toMatchObject({ kind: 'split', origin: `relay-a.example/spaces/${space.name}` });
    expect(outcome!.kind === 'split' && outcome!.reason).toMatch(/consistency proof from 6 to 7 does not verify/);
    expect(stderr).toMatch(/SPLIT VIEW of relay-a\.example\/spaces\//);
    // Nothing was cosigned on the fork, and the witness kept the head it cosigned.
    expect(readNote(await note(a2)).signatures.map((s) => s.name)).toEqual(['relay-a.example']);
    const s = await status();
    expect(s.split_view_count).toBe(1);
    expect(s.split_views[0]).toMatchObject({ kept_size: '6', seen_size: '7', source: `${a2.url}/v1/spaces/${space.name}` });
    expect(s.split_views[0].kept_note).toContain(`\n6\n`);
    expect(s.split_views[0].seen_note).toBe(await note(a2));
    expect(s.following[0]).toMatchObject({ size: '6', source: target });
  });

  it('two roots at one size are a split view too', async () => {
    await postMany(a, 1, 'honest again');
    expect(await w.app.witness.runOnce()).toEqual([expect.objectContaining({ kind: 'cosigned', size: 7 })]);
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const outcome = await w.app.witness.check(`${a2.url}/v1/spaces/${space.name}`);
      expect(outcome).toMatchObject({ kind: 'split', reason: 'two roots at size 7' });
    } finally {
      said.mockRestore();
    }
    expect((await status()).split_view_count).toBe(2);
    const metrics = await call(w, 'GET', '/metrics', { token: METRICS_TOKEN });
    expect(metrics.text).toMatch(/^svc_relay_witness_split_views 2$/m);
  });
});
