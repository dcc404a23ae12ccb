/**
 * `svc-relay --witness` as its own process (relay/cli.ts, relay/routes/witness.ts): started with
 * --witness-of a SPACE of a real origin relay, its timer checks and cosigns the SPACE's newest
 * head without being asked, and the origin serves the cosignature; settings that cannot work
 * stop it at start with one line and exit 2.
 *
 * @module-tag slow
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { readNote, verifyCosignature } from '../../../shared/signed-note.js';
import { loadServiceKeys } from '../../../relay/service-keys.js';
import { call, spawnRelay, startRelay, tempDataDir, mintToken, type RunningRelay, type SpawnedRelay } from '../../helpers/relay.js';
import { runCli } from '../../helpers/relay-cli.js';
import { newSpace, post } from '../../helpers/posts.js';
import { signCheckpoints } from '../../helpers/tlog.js';

let origin: RunningRelay | undefined;
let witness: SpawnedRelay | undefined;

afterAll(async () => {
  await witness?.kill();
  await origin?.close();
});

describe('svc-relay --witness', () => {
  it('cosigns the SPACES it follows on its own timer, and the origin serves the cosignature', async () => {
    const dir = tempDataDir();
    const key = loadServiceKeys({ dataDir: dir, dev: false, now: Date.now(), random: (n) => new Uint8Array(randomBytes(n)) }).signer.publicKey;
    origin = await startRelay({ config: { acceptedWitnesses: [{ name: 'w.example', publicKey: key }] } });
    const owner = await mintToken(origin.url);
    const space = await newSpace(origin, owner, { visibility: 'public', joinPolicy: 'request' });
    await post(origin, owner, space, { kind: 'obs', body: 'one' });
    await signCheckpoints(origin);
    witness = await spawnRelay(dir, {
      args: ['--public-url', 'https://w.example', '--witness', '--witness-of', `${origin.url}/v1/spaces/${space.name}`, '--witness-interval', '1'],
    });
    // Polled until the cosignature is there: the witness process has to start, read the origin
    // and pass its first timer tick, which on a loaded machine takes what it takes; the test's
    // timeout is the only bound (less a margin, to fail with the witness's stderr).
    let cosigned: number | undefined;
    for (const until = Date.now() + 80_000; cosigned === undefined && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 250));
      origin.clock.advance(600);
      const r = await call(origin, 'GET', `/v1/spaces/${space.name}/checkpoint.note`);
      cosigned = verifyCosignature(readNote(r.text), { name: 'w.example', publicKey: key });
    }
    expect(cosigned, witness.stderr()).toBeDefined();
    const status = await (await fetch(`${witness.url}/v1/witness`)).json();
    expect(status).toMatchObject({ name: 'w.example', witnessing: true, split_view_count: 0, following: [expect.objectContaining({ size: '1' })] });
  }, 90_000);

  it('refuses settings that cannot work with one line and exit 2', async () => {
    const alone = await runCli(['--witness', '--data', tempDataDir(), '--port', '0']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--witness needs at least one --witness-of URL/);
    const bad = await runCli(['--accept-witnesses', 'w.example=short', '--data', tempDataDir(), '--port', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--accept-witnesses/);
    // Two relay processes started from the sources one after another (tsx compiles each).
  }, 60_000);
});
