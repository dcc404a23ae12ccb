/**
 * KEY sign-in, tokens, me, peers and capabilities over the real HTTP server
 * (spec/1-concepts.md "Authentication"; spec/2-endpoints.md "Keys, tokens, passkeys").
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../helpers/shared-docs.js';
import { fromHex, toHex } from '../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed, tokenChallengeMessage, type Signer } from '../../shared/identity.js';
import { getJson, mintToken, postJson, startRelay, type RunningRelay } from '../helpers/relay.js';
import { loadVector } from '../helpers/vectors.js';
import { labelText } from '../../shared/labels.js';

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

function fresh(): Signer {
  return signerFromSeed(new Uint8Array(randomBytes(32)));
}

async function challengeFor(signer: Signer, url = relay.url) {
  const r = await postJson(`${url}/v1/keys/challenge`, { public_key: toHex(signer.publicKey) });
  expect(r.status).toBe(200);
  return r.body as { peer_id: string; challenge: string; audience: string; expires_at: string };
}

function signChallenge(signer: Signer, audience: string, challengeHex: string): string {
  return toHex(signer.sign(tokenChallengeMessage(audience, fromHex(challengeHex))));
}

async function verify(signer: Signer, challenge: string, signature: string, extra: Record<string, unknown> = {}, url = relay.url) {
  return postJson(`${url}/v1/keys/verify`, { public_key: toHex(signer.publicKey), challenge, signature, ...extra });
}

function bearer(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

async function del(path: string, token: string) {
  return getJson(`${relay.url}${path}`, { method: 'DELETE', ...bearer(token) });
}

describe('keys.challenge and keys.verify', () => {
  it('a signed challenge mints a token, and the first success registers the KEY', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    expect(ch.peer_id).toBe(peerIdHexOf(signer.publicKey));
    expect(ch.challenge).toMatch(/^[0-9a-f]{112}$/);
    expect(ch.audience).toBe(new URL(relay.url).host);
    const expires = Date.parse(ch.expires_at);
    expect(Math.abs(expires - (relay.clock.now() + 300_000))).toBeLessThan(2_000);

    const v = await verify(signer, ch.challenge, signChallenge(signer, ch.audience, ch.challenge));
    expect(v.status).toBe(200);
    expect(v.body.peer_id).toBe(ch.peer_id);
    expect(v.body.token).toMatch(/^svc_[0-9a-f]{64}$/);
    expect(v.body.registered).toBe(true);

    const again = await challengeFor(signer);
    const v2 = await verify(signer, again.challenge, signChallenge(signer, again.audience, again.challenge));
    expect(v2.status).toBe(200);
    expect(v2.body.registered).toBe(false);
    expect(v2.body.token).not.toBe(v.body.token);
  });

  it('the token is stored only as its hash', async () => {
    const t = await mintToken(relay.url);
    const rows = await relay.store.db.prepare('SELECT * FROM tokens WHERE peer_id = ?').all(t.peerId) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(t.token.slice(4));
  });

  it('a challenge works once: reusing it is CHALLENGE_INVALID', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    const sig = signChallenge(signer, ch.audience, ch.challenge);
    expect((await verify(signer, ch.challenge, sig)).status).toBe(200);
    const reuse = await verify(signer, ch.challenge, sig);
    expect(reuse.status).toBe(401);
    expect(reuse.body.error.code).toBe('CHALLENGE_INVALID');
  });

  it('concurrent verifies of one challenge yield exactly one token', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    const sig = signChallenge(signer, ch.audience, ch.challenge);
    const answers = await Promise.all(Array.from({ length: 5 }, () => verify(signer, ch.challenge, sig)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.body.error?.code === 'CHALLENGE_INVALID')).toHaveLength(4);
  });

  it('a challenge older than five minutes is CHALLENGE_EXPIRED', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    const sig = signChallenge(signer, ch.audience, ch.challenge);
    relay.clock.advance(300_000 + 1_000);
    try {
      const v = await verify(signer, ch.challenge, sig);
      expect(v.status).toBe(401);
      expect(v.body.error.code).toBe('CHALLENGE_EXPIRED');
    } finally {
      relay.clock.advance(-(300_000 + 1_000));
    }
  });

  it('a challenge one byte short, with a changed tag, or issued to another KEY is CHALLENGE_INVALID', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    const short = ch.challenge.slice(0, -2);
    const r1 = await verify(signer, short, signChallenge(signer, ch.audience, short));
    expect(r1.body.error.code).toBe('CHALLENGE_INVALID');

    const last = ch.challenge.slice(-2) === '00' ? '01' : '00';
    const tampered = ch.challenge.slice(0, -2) + last;
    const r2 = await verify(signer, tampered, signChallenge(signer, ch.audience, tampered));
    expect(r2.body.error.code).toBe('CHALLENGE_INVALID');

    const other = fresh();
    const r3 = await verify(other, ch.challenge, signChallenge(other, ch.audience, ch.challenge));
    expect(r3.body.error.code).toBe('CHALLENGE_INVALID');

    // None of the refusals spent the nonce: the genuine answer still works.
    const ok = await verify(signer, ch.challenge, signChallenge(signer, ch.audience, ch.challenge));
    expect(ok.status).toBe(200);
  });

  it('a signature bound to another host is SIGNATURE_INVALID', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    const v = await verify(signer, ch.challenge, signChallenge(signer, 'relay.example', ch.challenge));
    expect(v.status).toBe(401);
    expect(v.body.error.code).toBe('SIGNATURE_INVALID');
    expect(v.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('a signature by another KEY is SIGNATURE_INVALID', async () => {
    const signer = fresh();
    const ch = await challengeFor(signer);
    const v = await verify(signer, ch.challenge, signChallenge(fresh(), ch.audience, ch.challenge));
    expect(v.body.error.code).toBe('SIGNATURE_INVALID');
  });

  it('an audience from --public-url is what the signature must name', async () => {
    const other = await startRelay({ publicUrl: 'https://relay.example' });
    try {
      const signer = fresh();
      const ch = await challengeFor(signer, other.url);
      expect(ch.audience).toBe('relay.example');
      const bad = await verify(signer, ch.challenge, signChallenge(signer, new URL(other.url).host, ch.challenge), {}, other.url);
      expect(bad.body.error.code).toBe('SIGNATURE_INVALID');
      const good = await verify(signer, ch.challenge, signChallenge(signer, 'relay.example', ch.challenge), {}, other.url);
      expect(good.status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('published keys are refused', () => {
  const v = loadVector<{ public_key_hex: string; test_private_seed_hex: string }>('protocol-v1-vectors.json');
  // RFC 8032 §7.1 secret keys: TEST 1, TEST 2, TEST 3, TEST 1024, TEST SHA(abc).
  const rfc8032Seeds = [
    '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    'f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5',
    '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
  ];
  const published = [v.test_private_seed_hex, ...rfc8032Seeds].map((s) => signerFromSeed(fromHex(s)));

  it('the published test KEY and every RFC 8032 key get KEY_REJECTED at challenge', async () => {
    expect(toHex(published[0]!.publicKey)).toBe(v.public_key_hex);
    for (const signer of published) {
      const r = await postJson(`${relay.url}/v1/keys/challenge`, { public_key: toHex(signer.publicKey) });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('KEY_REJECTED');
    }
  });

  it('they get KEY_REJECTED at verify too, before any challenge check', async () => {
    const signer = published[1]!;
    const r = await verify(signer, '00'.repeat(56), '00'.repeat(64));
    expect(r.body.error.code).toBe('KEY_REJECTED');
  });
});

describe('token options', () => {
  it('ttl_seconds takes 3600 to 7776000 and sets the expiry', async () => {
    const short = await mintToken(relay.url, undefined, { ttl_seconds: 3600 });
    expect(Math.abs(Date.parse(short.expiresAt) - (relay.clock.now() + 3_600_000))).toBeLessThan(2_000);
    const dflt = await mintToken(relay.url);
    expect(Math.abs(Date.parse(dflt.expiresAt) - (relay.clock.now() + 7_776_000_000))).toBeLessThan(2_000);
    await mintToken(relay.url, undefined, { ttl_seconds: 7_776_000 });
  });

  it('ttl_seconds outside 3600..7776000 or not an integer is INVALID_REQUEST naming the field', async () => {
    for (const ttl of [3599, 7_776_001, 3600.5, '3600']) {
      const signer = fresh();
      const ch = await challengeFor(signer);
      const r = await verify(signer, ch.challenge, signChallenge(signer, ch.audience, ch.challenge), { ttl_seconds: ttl });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('INVALID_REQUEST');
      expect(r.body.error.detail).toMatch(/^ttl_seconds: /);
    }
  });

  it('a label of 64 bytes is kept and one of 65 bytes is refused', async () => {
    const label64 = 'é'.repeat(32); // 64 UTF-8 bytes
    const t = await mintToken(relay.url, undefined, { label: label64 });
    const list = await getJson(`${relay.url}/v1/tokens`, bearer(t.token));
    expect(list.body.items[0].label).toBe(label64);

    const signer = fresh();
    const ch = await challengeFor(signer);
    const r = await verify(signer, ch.challenge, signChallenge(signer, ch.audience, ch.challenge), { label: `${label64}x` });
    expect(r.status).toBe(400);
    expect(r.body.error.detail).toMatch(/^label: /);
  });

  it('an invite link on verify answers join_refused INVITE_INVALID and the token still works', async () => {
    const t = await mintToken(relay.url, undefined, { invite: 'https://relay.example/join/svc_inv_00' });
    expect(t.answer.joined).toBeUndefined();
    expect((t.answer.join_refused as { code: string }).code).toBe('INVITE_INVALID');
    expect((await getJson(`${relay.url}/v1/me`, bearer(t.token))).status).toBe(200);
  });
});

describe('tokens.list and revocation', () => {
  it('lists every live token of the KEY with id and label, marking the current one', async () => {
    const seed = new Uint8Array(randomBytes(32));
    const a = await mintToken(relay.url, seed, { label: 'first' });
    const b = await mintToken(relay.url, seed, { label: 'second' });
    const list = await getJson(`${relay.url}/v1/tokens`, bearer(b.token));
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { label: string }) => i.label)).toEqual(['first', 'second']);
    expect(list.body.items.map((i: { current: boolean }) => i.current)).toEqual([false, true]);
    for (const item of list.body.items) expect(item.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(list.body)).not.toContain(a.token);
  });

  it('DELETE /v1/tokens/current revokes the token in use: it is then TOKEN_REVOKED', async () => {
    const seed = new Uint8Array(randomBytes(32));
    const a = await mintToken(relay.url, seed);
    const b = await mintToken(relay.url, seed);
    const r = await del('/v1/tokens/current', a.token);
    expect(r.status).toBe(200);
    const after = await getJson(`${relay.url}/v1/me`, bearer(a.token));
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('TOKEN_REVOKED');
    expect((await getJson(`${relay.url}/v1/me`, bearer(b.token))).status).toBe(200);
  });

  it('DELETE /v1/tokens/{id} revokes one token by id', async () => {
    const seed = new Uint8Array(randomBytes(32));
    const a = await mintToken(relay.url, seed, { label: 'victim' });
    const b = await mintToken(relay.url, seed);
    const list = await getJson(`${relay.url}/v1/tokens`, bearer(b.token));
    const id = list.body.items.find((i: { label: string }) => i.label === 'victim').id;
    expect((await del(`/v1/tokens/${id}`, b.token)).status).toBe(200);
    expect((await getJson(`${relay.url}/v1/me`, bearer(a.token))).body.error.code).toBe('TOKEN_REVOKED');
    const twice = await del(`/v1/tokens/${id}`, b.token);
    expect(twice.status).toBe(404);
    expect(twice.body.error.code).toBe('TOKEN_NOT_FOUND');
  });

  it("another KEY's token id is TOKEN_NOT_FOUND and that token keeps working", async () => {
    const victim = await mintToken(relay.url);
    const attacker = await mintToken(relay.url);
    const id = (await getJson(`${relay.url}/v1/tokens`, bearer(victim.token))).body.items[0].id;
    const r = await del(`/v1/tokens/${id}`, attacker.token);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('TOKEN_NOT_FOUND');
    expect((await getJson(`${relay.url}/v1/me`, bearer(victim.token))).status).toBe(200);
    const junk = await del('/v1/tokens/not-a-uuid', attacker.token);
    expect(junk.body.error.code).toBe('TOKEN_NOT_FOUND');
  });

  it('DELETE /v1/tokens revokes all, including the current one', async () => {
    const seed = new Uint8Array(randomBytes(32));
    const a = await mintToken(relay.url, seed);
    const b = await mintToken(relay.url, seed);
    const other = await mintToken(relay.url);
    const r = await del('/v1/tokens', b.token);
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(2);
    for (const t of [a, b]) {
      expect((await getJson(`${relay.url}/v1/me`, bearer(t.token))).body.error.code).toBe('TOKEN_REVOKED');
    }
    expect((await getJson(`${relay.url}/v1/me`, bearer(other.token))).status).toBe(200);
  });
});

describe('token refusals', () => {
  it('no Authorization header is TOKEN_MISSING', async () => {
    const r = await getJson(`${relay.url}/v1/tokens`);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('TOKEN_MISSING');
  });

  it('a malformed or unknown token is TOKEN_INVALID', async () => {
    for (const token of ['svc_xyz', `svc_${'A'.repeat(64)}`, `svc_${'0'.repeat(64)}`]) {
      const r = await getJson(`${relay.url}/v1/me`, bearer(token));
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('TOKEN_INVALID');
    }
    const basic = await getJson(`${relay.url}/v1/me`, { headers: { authorization: 'Basic abc' } });
    expect(basic.body.error.code).toBe('TOKEN_INVALID');
  });

  it('a token past its expiry is TOKEN_EXPIRED', async () => {
    const t = await mintToken(relay.url, undefined, { ttl_seconds: 3600 });
    relay.clock.advance(3_600_000 + 1_000);
    try {
      const r = await getJson(`${relay.url}/v1/me`, bearer(t.token));
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('TOKEN_EXPIRED');
    } finally {
      relay.clock.advance(-(3_600_000 + 1_000));
    }
  });

  it('a blocked KEY is KEY_BLOCKED with its token and at verify', async () => {
    const t = await mintToken(relay.url);
    await relay.store.keys.setBlocked(t.peerId, relay.clock.now());
    const r = await getJson(`${relay.url}/v1/me`, bearer(t.token));
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('KEY_BLOCKED');
    const ch = await challengeFor(t.signer);
    const v = await verify(t.signer, ch.challenge, signChallenge(t.signer, ch.audience, ch.challenge));
    expect(v.body.error.code).toBe('KEY_BLOCKED');
  });

  it('an address presenting many unknown tokens gets RATE_LIMITED with Retry-After', async () => {
    const own = await startRelay();
    try {
      let last: Awaited<ReturnType<typeof getJson>> | undefined;
      for (let i = 0; i < 25; i++) {
        last = await getJson(`${own.url}/v1/me`, bearer(`svc_${toHex(new Uint8Array(randomBytes(32)))}`));
        if (last.status === 429) break;
      }
      expect(last!.status).toBe(429);
      expect(last!.body.error.code).toBe('RATE_LIMITED');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(last!.body.error.retry_after).toBe(Number(last!.headers.get('retry-after')));
      expect(last!.headers.get('ratelimit-limit')).toBe('20');
    } finally {
      await own.close();
    }
  });
});

describe('GET /v1/me', () => {
  it('names the peer, the token expiry, the mailbox head, memberships and the service epoch', async () => {
    const t = await mintToken(relay.url);
    const r = await getJson(`${relay.url}/v1/me`, bearer(t.token));
    expect(r.status).toBe(200);
    expect(r.body.peer_id).toBe(t.peerId);
    expect(r.body.token.expires_at).toBe(t.expiresAt);
    expect(r.body.token.warning).toBeUndefined();
    expect(r.body.mailbox.head_seq).toBe(0);
    expect(r.body.memberships).toEqual({ items: [], next_after: null, has_more: false });
    const caps = await getJson(`${relay.url}/v1/capabilities`);
    expect(r.body.service_epoch).toBe(caps.body.service_epoch);
  });

  it('warns when the token expires within a week', async () => {
    const t = await mintToken(relay.url, undefined, { ttl_seconds: 6 * 86_400 });
    const r = await getJson(`${relay.url}/v1/me`, bearer(t.token));
    expect(r.body.token.warning).toMatch(/expires/);
  });
});

describe('GET /v1/peers/{peer}', () => {
  it('shows a registered KEY with its registration time and signing key', async () => {
    const a = await mintToken(relay.url);
    const b = await mintToken(relay.url);
    const r = await getJson(`${relay.url}/v1/peers/${a.peerId}`, bearer(b.token));
    expect(r.status).toBe(200);
    expect(r.body.peer_id).toBe(a.peerId);
    expect(r.body.public_key).toBe(a.publicKey);
    expect(Number.isNaN(Date.parse(r.body.registered_at))).toBe(false);
    expect(r.body.spaces_owned).toEqual([]);
  });

  it('an unknown, uppercase or prefix id is PEER_NOT_FOUND', async () => {
    const a = await mintToken(relay.url);
    for (const peer of ['0'.repeat(64), a.peerId.toUpperCase(), a.peerId.slice(0, 16)]) {
      const r = await getJson(`${relay.url}/v1/peers/${peer}`, bearer(a.token));
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('PEER_NOT_FOUND');
    }
  });
});

describe('passkeys', () => {
  it('are on by default: passkeys.challenge answers a challenge for the public URL (test/relay/passkeys/passkeys.test.ts covers sign-in)', async () => {
    const r = await postJson(`${relay.url}/v1/passkeys/challenge`, {});
    expect(r.status).toBe(200);
    expect(r.body.rp_id).toBe('127.0.0.1');
  });

  it('turned off by the operator, both passkey operations answer PASSKEYS_UNAVAILABLE (501)', async () => {
    const off = await startRelay({ passkeys: false });
    try {
      for (const path of ['/v1/passkeys/challenge', '/v1/passkeys/verify']) {
        const r = await postJson(`${off.url}${path}`, {});
        expect(r.status).toBe(501);
        expect(r.body.error.code).toBe('PASSKEYS_UNAVAILABLE');
      }
    } finally {
      await off.close();
    }
  });
});

describe('documents and service state', () => {
  /** The top-level keys, and nested ones in braces, of the capabilities row of the catalogue. */
  function catalogueCapabilityKeys(): { top: string[]; nested: Record<string, string[]> } {
    const spec = sharedDoc('spec/2-endpoints.md');
    const row = spec.split('\n').find((l) => l.startsWith('| capabilities |'))!;
    const top: string[] = [];
    const nested: Record<string, string[]> = {};
    for (const m of row.matchAll(/`([a-z_]+)(?: \{([^`]*)\}|\[\{([^`]*)\}\])?`/g)) {
      top.push(m[1]!);
      const inner = m[2] ?? m[3];
      if (inner && !inner.includes(':')) nested[m[1]!] = inner.split(',').map((s) => s.trim());
      if (inner && inner.includes(':')) nested[m[1]!] = [];
    }
    return { top, nested };
  }

  it.skipIf(!HAVE_SHARED_DOCS)(`capabilities carries every member the endpoint catalogue lists${WITHOUT_SHARED_DOCS}`, async () => {
    const caps = (await getJson(`${relay.url}/v1/capabilities`)).body;
    const { top, nested } = catalogueCapabilityKeys();
    expect(top.length).toBeGreaterThan(25);
    for (const key of top.filter((k) => k !== 'labels')) expect(caps, key).toHaveProperty(key);
    expect(caps.protocol).toHaveProperty('labels');
    for (const [key, members] of Object.entries(nested)) {
      const value = key === 'operations' ? caps.operations[0] : caps[key];
      for (const m of members) expect(value, `${key}.${m}`).toHaveProperty(m);
    }
    // "service epoch and root key"
    expect(caps.service_epoch).toMatch(/^[0-9a-f-]{36}$/);
    expect(caps.service_root_key).toBe(relay.serviceKeys.rootKey);
    expect(caps.api_version).toBe('0.1');
  });

  it('capabilities names the service signer, the audience and the operations registered', async () => {
    const caps = (await getJson(`${relay.url}/v1/capabilities`)).body;
    expect(caps.protocol.challenge_audience).toBe(new URL(relay.url).host);
    expect(caps.protocol.service_keys[0].key_id).toBe(relay.serviceKeys.keyId);
    expect(caps.protocol.service_keys[0].development).toBe(true);
    expect(caps.protocol.labels.object).toBe(labelText('object'));
    expect(caps.protocol.challenge_label).toBe(labelText('token-challenge'));
    const names = caps.operations.map((o: { name: string }) => o.name);
    for (const n of ['keys.challenge', 'keys.verify', 'tokens.list', 'tokens.revoke', 'tokens.revoke_one', 'tokens.revoke_all', 'me', 'peers.get', 'capabilities', 'health', 'guide', 'recovery.list']) {
      expect(names).toContain(n);
    }
    const me = caps.operations.find((o: { name: string }) => o.name === 'me');
    expect(me).toMatchObject({ method: 'GET', path: '/v1/me', auth: 'bearer', mcp_tool: 'svc_whoami' });
    const peer = caps.operations.find((o: { name: string }) => o.name === 'peers.get');
    expect(peer.path).toBe('/v1/peers/{peer}');
  });

  it('capabilities answers 304 to a client holding its ETag', async () => {
    const first = await getJson(`${relay.url}/v1/capabilities`);
    const etag = first.headers.get('etag')!;
    const res = await fetch(`${relay.url}/v1/capabilities`, { headers: { 'if-none-match': etag } });
    expect(res.status).toBe(304);
  });

  it('GET / gives the JSON index with Accept: application/json and markdown otherwise', async () => {
    const json = await getJson(`${relay.url}/`, { headers: { accept: 'application/json' } });
    expect(json.body).toMatchObject({ name: 'svc-relay', api_version: '0.1', capabilities: 'GET /v1/capabilities' });
    expect(json.body.operations.find((o: { name: string }) => o.name === 'keys.verify')).toMatchObject({ method: 'POST', auth: 'none' });
    const md = await fetch(`${relay.url}/`);
    expect(md.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(await md.text()).toMatch(/\/v1\/keys\/challenge/);
  });

  it('every request the primer shows is an operation this relay lists, and they cover signing in, posting and reading', async () => {
    const md = await (await fetch(`${relay.url}/`)).text();
    const index = (await getJson(`${relay.url}/`, { headers: { accept: 'application/json' } })).body as {
      operations: { name: string; method: string; path: string }[];
    };
    const shown = [...md.matchAll(/`(GET|POST|PUT|PATCH|DELETE) ([^`\s?]+)/g)].map((m) => ({ method: m[1]!, path: m[2]!.replace(relay.url, '') }));
    const named = shown.map(({ method, path }) => {
      const op = index.operations.find((o) => o.method === method && new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
      expect(op, `${method} ${path} is not an operation of this relay`).toBeDefined();
      return op!.name;
    });
    expect(named).toEqual(expect.arrayContaining(['keys.challenge', 'keys.verify', 'spaces.create', 'posts.append', 'posts.read', 'posts.standing', 'seek', 'mailbox', 'me']));
  });

  it('the recovery list is empty when no restore lost links', async () => {
    const r = await getJson(`${relay.url}/v1/recovery`);
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([]);
  });

  it('healthz answers 503 {ok:false, reason} when the database is unreachable', async () => {
    const own = await startRelay();
    try {
      await own.store.db.close();
      const r = await getJson(`${own.url}/healthz`);
      expect(r.status).toBe(503);
      expect(r.body.ok).toBe(false);
      expect(r.body.reason).toMatch(/database/);
    } finally {
      await own.close();
    }
  });
});
