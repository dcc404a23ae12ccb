/**
 * Oracle limits over the real HTTP relay, on the relay's injected clock (spec/1-concepts.md
 * Limits "oracle": 3 waiting per KEY and 100 per SPACE in one oracle, 30 proposals a day per
 * KEY, 5 on its first day), and the key age public and oracle SPACES need
 * (`--public-space-key-age`, capabilities `limits.public_space_key_age_seconds`, KEY_TOO_NEW).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPublicSpaceKeyAge, isLoopbackHost, parsePublicSpaceKeyAge } from '../../../relay/config.js';
import { admit } from '../../helpers/posts.js';
import { refusedUnchanged as expectRefused } from '../../helpers/state.js';
import { oracleSpace, oracleStateProbe } from '../../helpers/oracle-documents.js';
import { call, mintToken, spawnRelay, startRelay, tempDataDir, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { ageKeys, createSpace, freshName } from '../../helpers/spaces.js';

const HOUR = 60 * 60 * 1000;

function append(relay: RunningRelay, who: MintedToken, name: string, body: Record<string, unknown>): Promise<Answer> {
  relay.clock.advance(2_100);
  return call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: who.token, body });
}

async function ok(r: Promise<Answer>): Promise<any> {
  const a = await r;
  expect(a.status, a.text).toBe(201);
  return a.body;
}

async function refusedUnchanged(relay: RunningRelay, run: () => Promise<Answer>, code: string, status: number): Promise<Answer> {
  return await expectRefused(await oracleStateProbe(relay), code, status, run);
}

describe('proposal limits', () => {
  let relay: RunningRelay;
  let owner: MintedToken;

  beforeAll(async () => {
    relay = await startRelay({ publicSpaceKeyAgeSeconds: 0 });
    owner = await mintToken(relay.url);
  });
  afterAll(async () => relay.close());

  /** A document with a first version by the owner. */
  async function started(): Promise<{ name: string; v1: string }> {
    const name = await oracleSpace(relay, owner);
    const v1 = await ok(append(relay, owner, name, { kind: 'version', title: 'v1', body: 'one\n' }));
    return { name, v1: v1.post_id };
  }

  const proposal = (v1: string, n: number) => ({ kind: 'version', title: `p${n}`, body: `one\n${n}\n`, supersedes: v1 });

  it('a KEY has at most 3 proposals waiting in one oracle: the 4th is PROPOSAL_LIMIT naming yours; a decision frees a place', async () => {
    const { name, v1 } = await started();
    const { name: elsewhere, v1: w1 } = await started();
    const who = await mintToken(relay.url);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await ok(append(relay, who, name, proposal(v1, n)))).post_id);
    const r = await refusedUnchanged(relay, () => append(relay, who, name, proposal(v1, 3)), 'PROPOSAL_LIMIT', 429);
    expect(r.body.error.detail).toBe('yours: 3 waiting in this SPACE');
    // Counted per oracle: the same KEY still proposes in another one; another KEY still proposes here.
    await ok(append(relay, who, elsewhere, proposal(w1, 0)));
    await ok(append(relay, await mintToken(relay.url), name, proposal(v1, 9)));
    await ok(append(relay, owner, name, { kind: 'veto', reply_to: ids[0], body: 'no' }));
    await ok(append(relay, who, name, proposal(v1, 3)));
  });

  it('an oracle has at most 100 proposals waiting: the 101st is PROPOSAL_LIMIT naming the SPACE', async () => {
    const { name, v1 } = await started();
    const keys = await Promise.all(Array.from({ length: 34 }, () => mintToken(relay.url)));
    let n = 0;
    for (const k of keys) {
      for (let i = 0; i < 3 && n < 100; i++, n++) await ok(append(relay, k, name, proposal(v1, n)));
    }
    expect(await relay.store.oracle.waitingCount((await relay.store.spaces.byName(name))!.id)).toBe(100);
    const r = await refusedUnchanged(relay, () => append(relay, keys[33]!, name, proposal(v1, 100)), 'PROPOSAL_LIMIT', 429);
    expect(r.body.error.detail).toBe('this SPACE: 100 waiting');
    // The owner's own version is no proposal: it is current at once, and all 100 go out of date.
    const v2 = await ok(append(relay, owner, name, { kind: 'version', title: 'v2', body: 'two\n', supersedes: v1 }));
    expect(v2.oracle.state).toBe('current');
    expect(await relay.store.oracle.waitingCount((await relay.store.spaces.byName(name))!.id)).toBe(0);
  }, 60_000);

  it('5 proposals on a KEY\'s first day, then 30 a day, across oracles, with Retry-After until the oldest leaves the day', async () => {
    const { name, v1 } = await started();
    const { name: other, v1: o1 } = await started();
    const who = await mintToken(relay.url);
    const made: string[] = [];
    const proposeAndDecline = async (space: string, base: string, n: number) => {
      const p = await ok(append(relay, who, space, proposal(base, n)));
      made.push(p.post_id);
      await ok(append(relay, owner, space, { kind: 'veto', reply_to: p.post_id, body: 'no' }));
    };
    for (let n = 0; n < 5; n++) await proposeAndDecline(n % 2 === 0 ? name : other, n % 2 === 0 ? v1 : o1, n);
    const first = await refusedUnchanged(relay, () => append(relay, who, name, proposal(v1, 5)), 'PROPOSAL_LIMIT', 429);
    expect(first.body.error.detail).toBe("yours: 5 proposals a day on a KEY's first day");
    const wait = Number(first.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(first.body.error.retry_after).toBe(wait);

    // A day after registration the allowance is 30 a day, counted over the last 24 hours.
    relay.clock.advance(24 * HOUR);
    for (let n = 0; n < 30; n++) await proposeAndDecline(n % 2 === 0 ? name : other, n % 2 === 0 ? v1 : o1, 100 + n);
    const daily = await refusedUnchanged(relay, () => append(relay, who, other, proposal(o1, 200)), 'PROPOSAL_LIMIT', 429);
    expect(daily.body.error.detail).toBe('yours: 30 proposals a day');
    relay.clock.advance(Number(daily.headers.get('retry-after')) * 1000);
    await ok(append(relay, who, other, proposal(o1, 200)));
  }, 60_000);

  it('the owner and admins are never limited: their versions are no proposals', async () => {
    const name = await oracleSpace(relay, owner);
    const admin = await mintToken(relay.url);
    await admit(relay, (await relay.store.spaces.byName(name))!, admin, 'admin');
    let current: string | undefined;
    for (let n = 0; n < 8; n++) {
      const who = n % 2 === 0 ? owner : admin;
      const v = await ok(append(relay, who, name, { kind: 'version', title: `v${n}`, body: `${n}\n`, ...(current ? { supersedes: current } : {}) }));
      expect(v.oracle.state).toBe('current');
      current = v.post_id;
    }
  });
});

describe('the key age public and oracle SPACES need', () => {
  it('is a day by default: a new KEY is KEY_TOO_NEW for a public or oracle SPACE, changing nothing, and may after the wait', async () => {
    const relay = await startRelay();
    try {
      const caps = await call(relay, 'GET', '/v1/capabilities');
      expect(caps.body.limits.public_space_key_age_seconds).toBe(86_400);
      const k = await mintToken(relay.url);
      const body = { name: freshName('or'), title: 'doc', visibility: 'public', oracle: true, categories: ['general'] };
      const r = await refusedUnchanged(relay, () => call(relay, 'POST', '/v1/spaces', { token: k.token, body }), 'KEY_TOO_NEW', 403);
      expect(r.body.error.detail).toMatch(/86400 seconds/);
      await refusedUnchanged(
        relay,
        () => call(relay, 'POST', '/v1/spaces', { token: k.token, body: { ...body, oracle: false, name: freshName('pb') } }),
        'KEY_TOO_NEW',
        403,
      );
      // A private SPACE needs no wait.
      await createSpace(relay, k.token, { name: freshName('pv'), title: 'mine' });
      ageKeys(relay);
      await createSpace(relay, k.token, body);
    } finally {
      await relay.close();
    }
  });

  it('follows the operator: 0 lets a new KEY create one at once; an hour waits exactly an hour', async () => {
    const off = await startRelay({ publicSpaceKeyAgeSeconds: 0 });
    try {
      expect((await call(off, 'GET', '/v1/capabilities')).body.limits.public_space_key_age_seconds).toBe(0);
      const k = await mintToken(off.url);
      await createSpace(off, k.token, { name: freshName('or'), title: 'doc', visibility: 'public', oracle: true, categories: ['general'] });
    } finally {
      await off.close();
    }
    const hour = await startRelay({ publicSpaceKeyAgeSeconds: 3600 });
    try {
      expect((await call(hour, 'GET', '/v1/capabilities')).body.limits.public_space_key_age_seconds).toBe(3600);
      const k = await mintToken(hour.url);
      const body = { name: freshName('pb'), title: 'pub', visibility: 'public', categories: ['general'] };
      hour.clock.advance(3599 * 1000);
      const r = await call(hour, 'POST', '/v1/spaces', { token: k.token, body });
      expect(r.body.error.code).toBe('KEY_TOO_NEW');
      hour.clock.advance(1000);
      await createSpace(hour, k.token, body);
    } finally {
      await hour.close();
    }
  });

  it('is read from --public-space-key-age and SVC_PUBLIC_SPACE_KEY_AGE: whole seconds from 0 to a year', async () => {
    for (const good of ['0', '86400', '31536000']) expect(parsePublicSpaceKeyAge(good)).toBe(Number(good));
    for (const bad of ['', '-1', '1.5', '1e3', 'day', '31536001']) expect(() => parsePublicSpaceKeyAge(bad), bad).toThrow(/--public-space-key-age/);
    const byFlag = await spawnRelay(tempDataDir(), { args: ['--public-space-key-age', '0', '--public-url', 'https://relay.example'] });
    const byEnv = await spawnRelay(tempDataDir(), { env: { SVC_PUBLIC_SPACE_KEY_AGE: '7200' } });
    try {
      const flagCaps = (await (await fetch(`${byFlag.url}/v1/capabilities`)).json()) as any;
      const envCaps = (await (await fetch(`${byEnv.url}/v1/capabilities`)).json()) as any;
      expect(flagCaps.limits.public_space_key_age_seconds).toBe(0);
      expect(envCaps.limits.public_space_key_age_seconds).toBe(7200);
      // Set by the operator, the wait is not announced as a default.
      expect(byFlag.stdout() + byEnv.stdout()).not.toContain('no key age');
    } finally {
      await Promise.all([byFlag.kill(), byEnv.kill()]);
    }
  }, 60_000);

  it('is none by default on a relay that listens on loopback only with no public URL, which says so in its first lines; a day with a public URL', async () => {
    const local = await spawnRelay(tempDataDir());
    const published = await spawnRelay(tempDataDir(), { args: ['--public-url', 'https://relay.example'] });
    try {
      const localCaps = (await (await fetch(`${local.url}/v1/capabilities`)).json()) as any;
      const publishedCaps = (await (await fetch(`${published.url}/v1/capabilities`)).json()) as any;
      expect(localCaps.limits.public_space_key_age_seconds).toBe(0);
      expect(publishedCaps.limits.public_space_key_age_seconds).toBe(86_400);
      const [first, second] = local.stdout().split('\n');
      expect(first).toMatch(/^svc-relay listening on http:\/\/127\.0\.0\.1:\d+$/);
      expect(second).toMatch(/^svc-relay: no key age: new KEYS may create public and oracle SPACES at once, since this relay listens on loopback only and has no public URL \(--public-space-key-age 86400/);
      expect(published.stdout()).not.toContain('no key age');
      // A new KEY makes an oracle space at once on the local relay.
      const k = await mintToken(local.url);
      const r = await fetch(`${local.url}/v1/spaces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: freshName('lo'), title: 'doc', visibility: 'public', oracle: true, categories: ['general'] }),
      });
      expect(r.status).toBe(201);
    } finally {
      await Promise.all([local.kill(), published.kill()]);
    }
  }, 60_000);

  it('takes loopback to be 127.0.0.0/8, ::1 and localhost; any other address, or a public URL, keeps the day', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', 'relay.localhost']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(defaultPublicSpaceKeyAge({ host, publicUrl: undefined }), host).toBe(0);
      expect(defaultPublicSpaceKeyAge({ host, publicUrl: 'https://relay.example' }), host).toBe(86_400);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'relay.example', '128.0.0.1', '::2', 'localhost.example']) {
      expect(isLoopbackHost(host), host).toBe(false);
      expect(defaultPublicSpaceKeyAge({ host, publicUrl: undefined }), host).toBe(86_400);
    }
  });

  it('KEY_TOO_NEW says the wait left (also as retry_after) and names the operator\'s flag', async () => {
    const relay = await startRelay();
    try {
      const k = await mintToken(relay.url);
      relay.clock.advance(HOUR);
      const r = await call(relay, 'POST', '/v1/spaces', { token: k.token, body: { name: freshName('pb'), title: 'pub', visibility: 'public', categories: ['general'] } });
      expect(r.body.error.code).toBe('KEY_TOO_NEW');
      expect(r.body.error.retry_after).toBeGreaterThanOrEqual(23 * 3600 - 5);
      expect(r.body.error.retry_after).toBeLessThanOrEqual(23 * 3600);
      expect(r.headers.get('retry-after')).toBe(String(r.body.error.retry_after));
      expect(r.body.error.detail).toMatch(/^a public or oracle SPACE needs a KEY registered 86400 seconds ago; yours is ready in \d+ seconds \(2[23] h( \d+ min)?\); the relay's operator sets the wait with --public-space-key-age$/);
    } finally {
      await relay.close();
    }
  });
});
