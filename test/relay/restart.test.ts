/**
 * What the relay writes survives a crash: the real process is killed with SIGKILL and started
 * again on the same data directory (DESIGN "What done means": state survives a restart).
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getJson, mintToken, spawnRelay, tempDataDir, type SpawnedRelay } from '../helpers/relay.js';

const dataDir = tempDataDir('svc-relay-restart-');
const running: SpawnedRelay[] = [];

afterAll(async () => {
  for (const r of running) if (r.process.exitCode === null && r.process.signalCode === null) await r.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<SpawnedRelay> {
  const r = await spawnRelay(dataDir, { args: ['--dev'] });
  running.push(r);
  return r;
}

describe('restart after kill -9', () => {
  it('keeps KEYS, tokens, service keys and the service epoch', async () => {
    const first = await start();
    const t = await mintToken(first.url, undefined, { label: 'before the crash' });
    expect(t.registered).toBe(true);
    const capsBefore = (await getJson(`${first.url}/v1/capabilities`)).body;
    expect(await first.kill('SIGKILL')).toBe('SIGKILL');

    const second = await start();
    const me = await getJson(`${second.url}/v1/me`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(me.status).toBe(200);
    expect(me.body.peer_id).toBe(t.peerId);
    const tokens = await getJson(`${second.url}/v1/tokens`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(tokens.body.items.map((i: { label: string }) => i.label)).toEqual(['before the crash']);

    const capsAfter = (await getJson(`${second.url}/v1/capabilities`)).body;
    expect(capsAfter.service_epoch).toBe(capsBefore.service_epoch);
    expect(capsAfter.service_root_key).toBe(capsBefore.service_root_key);
    expect(capsAfter.protocol.service_keys).toEqual(capsBefore.protocol.service_keys);

    // Signing in again with the same KEY does not register it a second time.
    const again = await mintToken(second.url, t.seed);
    expect(again.registered).toBe(false);
    await second.kill('SIGTERM');
  });

  it('keeps its secret files private to the owner', () => {
    for (const f of ['service-root.key', 'service-signer.key', 'challenge.secret']) {
      expect(statSync(join(dataDir, f)).mode & 0o077).toBe(0);
    }
  });

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    const r = await start();
    expect((await getJson(`${r.url}/healthz`)).status).toBe(200);
    expect(await r.kill('SIGTERM')).toBe(0);
  });
});
