/**
 * The serving bridge's keeper duty says a thing on stderr once, however many rounds it comes
 * back in (bridge/sealed/keeper-duty.ts `OnceLog`): its own failures and notes, and what reading the
 * key records on the way logs (bridge/sealed/sealing.ts `status`: a lock the relay serves that this
 * bridge refuses).
 *
 * Against the real relay in-process: the owner (test/helpers/sealed.ts, playing its bridge's
 * part over HTTP) names a keeper in its keeper list and sends it a lock that does not open.
 * The keeper's own bridge modules run in this process (its key directory, sealed cache and
 * Sealing), and its duty's rounds are driven one by one with `round()`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { RelayClient } from '../../bridge/relay-client.js';
import { createSealer } from '../../bridge/sealed/encryption.js';
import { OnceLog, startKeeperDuty } from '../../bridge/sealed/keeper-duty.js';
import { DEFAULT_KEY_NAME, loadKey, openKeyDirectory } from '../../bridge/keys/keys.js';
import { openSealedCache, sealedCachePath } from '../../bridge/sealed/sealed-cache.js';
import { Sealing } from '../../bridge/sealed/sealing.js';
import { runBridge, tempHome } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { commitmentOfGeneration, createSealedSpace, keeperListBody, publishKey, sealedKey, type SealedKey, type SealedSpace } from '../helpers/sealed.js';
import { call } from '../helpers/spaces.js';

let relay: RunningRelay;
let owner: SealedKey;
let s: SealedSpace;
let keeper: Sealing;
const logged: string[] = [];

function ok(r: { status: number; text: string }, status = 200): void {
  if (r.status !== status) throw new Error(`expected ${status}: ${r.status} ${r.text}`);
}

beforeAll(async () => {
  relay = await startRelay();
  owner = await sealedKey(relay);
  ok(await publishKey(relay, owner));
  s = await createSealedSpace(relay, owner);

  const home = tempHome();
  await runBridge(['id'], { home });
  const dir = openKeyDirectory(home);
  const k = loadKey(dir, DEFAULT_KEY_NAME);
  const sealer = createSealer(k);
  const api = new RelayClient({ api: new URL(relay.url), key: k, dir });
  const deps = { api, identity: { peerId: k.peerId }, signer: k.signer, sealer, privateSalt: k.privateSalt, now: Date.now, log: (line: string) => void logged.push(line) };
  keeper = new Sealing(deps, openSealedCache(sealedCachePath(dir, k.name), sealer.box));
  await keeper.published();

  // A member the owner's keeper list names as a keeper, sent a lock that does not open.
  ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/members/${k.peerId}`, { token: owner.token, body: { role: 'writer' } }), 201);
  ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/keepers`, { token: owner.token, body: keeperListBody(s, owner, { revision: 1, keepers: [k.peerId] }) }));
  const garbage = randomBytes(80).toString('hex');
  ok(await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/locks`, { token: owner.token, body: { generation: 1, commitment: commitmentOfGeneration(s, 1), locks: { [k.peerId]: garbage } } }));
  // Read once as a tool would: the SPACE is remembered (kept by this KEY, as the list says).
  await keeper.status(s.name);
}, 60_000);

afterAll(async () => {
  keeper?.cache.close();
  await relay?.close();
});

describe('the keeper duty on stderr', () => {
  it('says a lock it refuses, and the pass that fails for it, once across several rounds', async () => {
    const refusal = `sealed SPACE ${s.name}: a lock for this KEY does not open`;
    // The read above said it, outside the duty.
    expect(logged.filter((l) => l.startsWith(refusal))).toHaveLength(1);
    logged.length = 0;

    // A long interval: the rounds here are the ones this test runs.
    const duty = startKeeperDuty(keeper, 3_600_000);
    try {
      for (let i = 0; i < 4; i++) await duty.round();
    } finally {
      await duty.stop();
    }
    expect(logged.filter((l) => l.startsWith(refusal))).toHaveLength(1);
    const failed = logged.filter((l) => l.startsWith(`keeper duty, ${s.name}: SEALED_NO_KEY: this keeper holds no key for generation 1`));
    expect(failed).toHaveLength(1);
    expect(logged).toHaveLength(2);
  }, 60_000);
});

describe('OnceLog, the duty rule for stderr', () => {
  it('keeps quiet a line the last round of its SPACE said, says it again after a round without it, and says news every time', () => {
    const out: string[] = [];
    const once = new OnceLog((l) => void out.push(l));
    const round = (space: string, lines: string[], news: string[] = []) => {
      for (const l of lines) once.say(space, l);
      for (const l of news) once.say(space, l, true);
      once.endRound(space);
    };
    round('a', ['broken', 'broken']);
    round('b', ['broken']);
    round('a', ['broken'], ['locked 1']);
    round('a', ['broken'], ['locked 1']);
    round('a', []);
    round('a', ['broken']);
    expect(out).toEqual(['broken', 'broken', 'locked 1', 'locked 1', 'broken']);
  });

  it('says nothing once its owner is quiet (a stopped duty)', () => {
    const out: string[] = [];
    let stopped = false;
    const once = new OnceLog((l) => void out.push(l), () => stopped);
    once.say('', 'first');
    stopped = true;
    once.say('', 'second');
    expect(out).toEqual(['first']);
  });
});
