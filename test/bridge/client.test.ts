/**
 * The bridge's relay client against a REAL relay on loopback: minting, the shared token file,
 * renewal near expiry, expiry and revocation survived with one retry, the audience check,
 * refusals as typed errors, and the https-or-loopback rule.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, RENEW_BEFORE_MS } from '../../bridge/relay-client.js';
import { BridgeError, RelayRefusal } from '../../tools/errors.js';
import { chooseKey, openKeyDirectory, type KeyDirectory, type LoadedKey } from '../../bridge/keys/keys.js';
import { checkApi, isLoopbackHost, readSettings } from '../../bridge/settings.js';
import { readTokenFile } from '../../bridge/keys/token-file.js';
import { callTool, runBridge, startBridge, tempHome, textOf } from '../helpers/bridge.js';
import { getJson, startRelay, type RunningRelay } from '../helpers/relay.js';
import { stablePort } from '../helpers/ports.js';

const DAY = 86_400_000;

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

interface Rig {
  dir: KeyDirectory;
  key: LoadedKey;
  api: URL;
  logs: string[];
  client: RelayClient;
}

function rig(opts: { dir?: KeyDirectory; now?: () => number; url?: string; fixedToken?: string } = {}): Rig {
  const dir = opts.dir ?? openKeyDirectory(tempHome());
  const key = chooseKey(dir, undefined);
  const api = checkApi(opts.url ?? relay.url);
  const logs: string[] = [];
  const client = new RelayClient({
    api,
    key,
    dir,
    log: (l) => logs.push(l),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.fixedToken ? { fixedToken: opts.fixedToken } : {}),
  });
  return { dir, key, api, logs, client };
}

const mints = (r: Rig) => r.logs.filter((l) => /registered KEY|minted a token/.test(l)).length;

async function liveTokens(token: string): Promise<Array<{ id: string; label: string | null }>> {
  const r = await getJson(`${relay.url}/v1/tokens`, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  return r.body.items;
}

describe('minting', () => {
  it('a first call signs in with the KEY, registers it and answers as that peer', async () => {
    const r = rig();
    const me = await r.client.request({ path: '/v1/me' });
    expect((me.body as { peer_id: string }).peer_id).toBe(r.key.peerId);
    expect(r.logs.some((l) => l.startsWith('registered KEY'))).toBe(true);
    expect(await relay.store.keys.get(r.key.peerId)).toBeDefined();
    const token = await r.client.token();
    expect(token).toMatch(/^svc_[0-9a-f]{64}$/);
    expect(r.logs.join('\n')).not.toContain(token);
    const items = await liveTokens(token);
    expect(items).toHaveLength(1);
    expect(items[0]!.label).toBe('svc-bridge');
  });

  it('the token goes to the token file, and another bridge of the KEY uses it without minting', async () => {
    const a = rig();
    await a.client.request({ path: '/v1/me' });
    const stored = readTokenFile(a.dir, a.key.name, a.api, a.key.peerId);
    expect(stored?.token).toBe(await a.client.token());
    const b = rig({ dir: a.dir });
    const me = await b.client.request({ path: '/v1/me' });
    expect((me.body as { peer_id: string }).peer_id).toBe(a.key.peerId);
    expect(mints(b)).toBe(0);
    expect(await liveTokens(stored!.token)).toHaveLength(1);
  });

  it('concurrent first calls share one mint', async () => {
    const r = rig();
    await Promise.all([0, 1, 2, 3].map(() => r.client.request({ path: '/v1/me' })));
    expect(mints(r)).toBe(1);
  });

  it('a challenge naming another audience is refused and nothing is signed', async () => {
    const other = await startRelay({ publicUrl: 'https://relay.example' });
    try {
      const r = rig({ url: other.url });
      const err = await r.client.request({ path: '/v1/me' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BridgeError);
      expect((err as BridgeError).code).toBe('AUDIENCE_MISMATCH');
      expect((err as BridgeError).message).toContain('relay.example');
      // keys.verify was never called: the KEY is not registered there.
      expect(await other.store.keys.get(r.key.peerId)).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});

describe('renewal and recovery', () => {
  it('renews a week before expiry, on the relay\'s clock, before the next call', async () => {
    const r = rig({ now: () => relay.clock.now() });
    await r.client.request({ path: '/v1/me' });
    const first = await r.client.token();
    relay.clock.advance(90 * DAY - RENEW_BEFORE_MS - DAY); // eight days left: kept
    await r.client.request({ path: '/v1/me' });
    expect(await r.client.token()).toBe(first);
    relay.clock.advance(2 * DAY); // six days left: renewed
    try {
      const me = await r.client.request({ path: '/v1/me' });
      expect((me.body as { token: { id: string } }).token).toBeDefined();
      const second = await r.client.token();
      expect(second).not.toBe(first);
      expect(mints(r)).toBe(2);
      expect(r.logs.some((l) => l.includes('refused'))).toBe(false);
      expect(readTokenFile(r.dir, r.key.name, r.api, r.key.peerId)?.token).toBe(second);
    } finally {
      relay.clock.advance(-(90 * DAY - RENEW_BEFORE_MS + DAY));
    }
  });

  it('an expired token is survived: one fresh token, one retry', async () => {
    const r = rig(); // the bridge's own clock does not move: only the relay learns of expiry
    await r.client.request({ path: '/v1/me' });
    const first = await r.client.token();
    relay.clock.advance(91 * DAY);
    try {
      const me = await r.client.request({ path: '/v1/me' });
      expect((me.body as { peer_id: string }).peer_id).toBe(r.key.peerId);
      expect(await r.client.token()).not.toBe(first);
      expect(r.logs.filter((l) => l.includes('TOKEN_EXPIRED'))).toHaveLength(1);
      expect(mints(r)).toBe(2);
    } finally {
      relay.clock.advance(-91 * DAY);
    }
  });

  it('a revoked token is survived: the call is retried once with a fresh token', async () => {
    const r = rig();
    await r.client.request({ path: '/v1/me' });
    const first = await r.client.token();
    const del = await fetch(`${relay.url}/v1/tokens`, { method: 'DELETE', headers: { authorization: `Bearer ${first}` } });
    expect(del.status).toBe(200);
    const me = await r.client.request({ path: '/v1/me' });
    expect((me.body as { peer_id: string }).peer_id).toBe(r.key.peerId);
    const second = await r.client.token();
    expect(second).not.toBe(first);
    expect(r.logs.filter((l) => l.includes('TOKEN_REVOKED'))).toHaveLength(1);
    expect(mints(r)).toBe(2);
  });

  it('after a revocation, a second bridge of the KEY takes the fresh token from the file instead of minting', async () => {
    const a = rig();
    await a.client.request({ path: '/v1/me' });
    const b = rig({ dir: a.dir });
    await b.client.request({ path: '/v1/me' });
    const old = await a.client.token();
    await fetch(`${relay.url}/v1/tokens/current`, { method: 'DELETE', headers: { authorization: `Bearer ${old}` } });
    await a.client.request({ path: '/v1/me' }); // a mints
    await b.client.request({ path: '/v1/me' }); // b adopts a's token
    expect(mints(b)).toBe(0);
    expect(await b.client.token()).toBe(await a.client.token());
  });

  it('a revoked token another process left in the token file is not the answer: the bridge mints and the call succeeds', async () => {
    const a = rig();
    await a.client.request({ path: '/v1/me' }); // a mints T1 and writes it to the file
    const first = await a.client.token();
    const other = rig({ dir: a.dir });
    // The other process: revoke every token of the KEY, mint T2 (into the file), revoke T2.
    expect((await fetch(`${relay.url}/v1/tokens`, { method: 'DELETE', headers: { authorization: `Bearer ${first}` } })).status).toBe(200);
    const second = (await other.client.mint()).token;
    expect(readTokenFile(a.dir, a.key.name, a.api, a.key.peerId)?.token).toBe(second);
    expect((await fetch(`${relay.url}/v1/tokens/current`, { method: 'DELETE', headers: { authorization: `Bearer ${second}` } })).status).toBe(200);
    // a's T1 is refused, the file's T2 is refused too: a mints T3 and the call goes through.
    const me = await a.client.request({ path: '/v1/me' });
    expect((me.body as { peer_id: string }).peer_id).toBe(a.key.peerId);
    const third = await a.client.token();
    expect([first, second]).not.toContain(third);
    expect(readTokenFile(a.dir, a.key.name, a.api, a.key.peerId)?.token).toBe(third);
    expect(mints(a)).toBe(2);
    expect(a.logs.filter((l) => l.includes('TOKEN_REVOKED'))).toHaveLength(2);
  });

  it('concurrent calls refused for one token share the cure: one mint, every call succeeds', async () => {
    const a = rig();
    await a.client.request({ path: '/v1/me' });
    const first = await a.client.token();
    const other = rig({ dir: a.dir });
    await fetch(`${relay.url}/v1/tokens`, { method: 'DELETE', headers: { authorization: `Bearer ${first}` } });
    const second = (await other.client.mint()).token;
    await fetch(`${relay.url}/v1/tokens/current`, { method: 'DELETE', headers: { authorization: `Bearer ${second}` } });
    const answers = await Promise.all([0, 1, 2, 3].map(() => a.client.request({ path: '/v1/me' })));
    for (const me of answers) expect((me.body as { peer_id: string }).peer_id).toBe(a.key.peerId);
    expect(mints(a)).toBe(2);
  });

  it('with SVC_TOKEN the token is used as given: a refusal comes back typed, nothing is minted', async () => {
    const minted = rig();
    await minted.client.request({ path: '/v1/me' });
    const token = await minted.client.token();
    await fetch(`${relay.url}/v1/tokens/current`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    const r = rig({ dir: minted.dir, fixedToken: token });
    const err = await r.client.request({ path: '/v1/me' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RelayRefusal);
    const refusal = err as RelayRefusal;
    expect(refusal.code).toBe('TOKEN_REVOKED');
    expect(refusal.status).toBe(401);
    expect(refusal.message).toMatch(/^TOKEN_REVOKED\. /);
    expect(refusal.fix).toBe('Mint a new token.');
    expect(refusal.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(mints(r)).toBe(0);
  });
});

describe('bridges sharing a key directory', () => {
  const revoke = (token: string, path: string) => fetch(`${relay.url}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });

  it('a bridge process survives mint, revoke all, mint, revoke current by another process: the tool call succeeds', async () => {
    const other = rig();
    const bridge = await startBridge({ relayUrl: relay.url, home: other.dir.home });
    try {
      expect((await callTool(bridge, 'svc_whoami', {})).isError).toBeFalsy(); // the bridge mints T1
      const first = readTokenFile(other.dir, other.key.name, other.api, other.key.peerId)!.token;
      expect((await revoke(first, '/v1/tokens')).status).toBe(200);
      const second = (await other.client.mint()).token;
      expect((await revoke(second, '/v1/tokens/current')).status).toBe(200);
      const r = await callTool(bridge, 'svc_whoami', {});
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(textOf(r)).toContain(other.key.peerId);
      expect([first, second]).not.toContain(readTokenFile(other.dir, other.key.name, other.api, other.key.peerId)!.token);
    } finally {
      await bridge.close();
    }
  });

  it('two bridge processes on one key directory keep answering through interleaved calls and revocations', async () => {
    const home = tempHome();
    const a = await startBridge({ relayUrl: relay.url, home });
    const b = await startBridge({ relayUrl: relay.url, home });
    try {
      const dir = openKeyDirectory(home);
      const key = chooseKey(dir, undefined);
      const api = checkApi(relay.url);
      expect((await callTool(a, 'svc_whoami', {})).isError).toBeFalsy();
      for (let round = 0; round < 6; round++) {
        // Whatever token the file holds now is revoked (alone, or with every other), then both
        // bridges call at once: each must cure its own refusal, whatever the other wrote.
        const current = readTokenFile(dir, key.name, api, key.peerId)!.token;
        expect((await revoke(current, round % 2 === 0 ? '/v1/tokens/current' : '/v1/tokens')).status).toBe(200);
        const answers = await Promise.all([callTool(a, 'svc_whoami', {}), callTool(b, 'svc_whoami', {}), callTool(a, 'svc_whoami', {})]);
        for (const r of answers) expect(r.isError, textOf(r)).toBeFalsy();
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('errors', () => {
  it('a relay refusal carries the envelope: code, message, fix, detail', async () => {
    const r = rig();
    const err = await r.client.request({ path: '/v1/me', query: { limit: 'many' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RelayRefusal);
    expect((err as RelayRefusal).code).toBe('INVALID_REQUEST');
    expect((err as RelayRefusal).detail).toContain('limit');
  });

  it('an unreachable relay is a TRANSPORT failure, not a refusal', async () => {
    // Nothing listens there, and no other worker's relay takes it meanwhile (test/helpers/ports.ts).
    const r = rig({ url: `http://127.0.0.1:${await stablePort()}` });
    const err = await r.client.request({ path: '/v1/capabilities', auth: 'none' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('TRANSPORT');
  });

  describe('a server that is not a relay', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer((req, res) => {
        if (req.url === '/redirect') {
          res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end();
        } else if (req.url === '/v1/keys/challenge') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"peer_id": "nope"}');
        } else {
          res.writeHead(500, { 'content-type': 'text/plain' }).end('oops');
        }
      });
      await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise<void>((res) => server.close(() => res()));
    });

    it('an error without the envelope is BAD_RESPONSE', async () => {
      const err = await rig({ url }).client.request({ path: '/x', auth: 'none' }).catch((e: unknown) => e);
      expect((err as BridgeError).code).toBe('BAD_RESPONSE');
    });

    it('a redirect is not followed (a token goes to the configured address only)', async () => {
      const err = await rig({ url }).client.request({ path: '/redirect', auth: 'none' }).catch((e: unknown) => e);
      expect((err as BridgeError).code).toBe('BAD_RESPONSE');
      expect((err as BridgeError).message).toContain('redirect');
    });

    it('a challenge for another peer id is refused', async () => {
      const err = await rig({ url }).client.request({ path: '/v1/me' }).catch((e: unknown) => e);
      expect((err as BridgeError).code).toBe('BAD_RESPONSE');
      expect((err as BridgeError).message).toContain('peer_id');
    });
  });
});

describe('SVC_API: https, or http to this machine only', () => {
  it('loopback hosts are recognised', () => {
    for (const h of ['localhost', '127.0.0.1', '127.9.8.7', '[::1]', 'api.localhost']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['10.0.0.1', 'relay.example', '[::2]', '128.0.0.1', 'localhost.example']) expect(isLoopbackHost(h)).toBe(false);
  });

  it('http to another host is refused at start with INSECURE_API; https and loopback http are taken', () => {
    const code = (text: string) => {
      try {
        checkApi(text);
        return 'ok';
      } catch (e) {
        return (e as BridgeError).code;
      }
    };
    expect(code('http://relay.example')).toBe('INSECURE_API');
    expect(code('http://10.1.2.3:8787')).toBe('INSECURE_API');
    expect(code('https://relay.example')).toBe('ok');
    expect(code('http://127.0.0.1:8787')).toBe('ok');
    expect(code('http://[::1]:8787')).toBe('ok');
    expect(code('ftp://relay.example')).toBe('CONFIG');
    expect(code('https://user:pw@relay.example')).toBe('CONFIG');
    expect(code('relay.example')).toBe('CONFIG');
  });

  it('settings refuse a malformed SVC_TOKEN and SVC_KEYCHAIN', () => {
    expect(() => readSettings({ SVC_TOKEN: 'svc_123' } as NodeJS.ProcessEnv)).toThrow(/SVC_TOKEN/);
    expect(() => readSettings({ SVC_KEYCHAIN: 'yes' } as NodeJS.ProcessEnv)).toThrow(/SVC_KEYCHAIN/);
    expect(readSettings({ SVC_HOME: '/x', SVC_KEY: 'k' } as NodeJS.ProcessEnv)).toMatchObject({ home: '/x', keyName: 'k', keychain: false });
  });

  it('the CLI refuses plain http to a remote relay before doing anything, with a clear message', async () => {
    const home = tempHome();
    const r = await runBridge(['token'], { home, relayUrl: 'http://relay.example:8787' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('INSECURE_API');
    expect(r.stderr).toContain('clear text');
  }, 30_000);
});
