/**
 * The view at /view/ against the real relay: how it is served (strict CSP, no frames, no
 * cookie, nothing inline, host.json naming the root key capabilities publish), and the page's
 * own proof modules (relay/web/view/proof.js, run here on Node's WebCrypto as the browser runs
 * them) on real posts.proof answers: every check passes on an honest answer, and each kind of
 * change to one served value fails the check that covers it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpaceInStore, get, newSpace, post, signedPost } from '../../helpers/posts.js';
import { passkeyKey, passkeyPolicyOf, signPostWebauthn, type PasskeyAlg } from '../../helpers/passkey-authenticator.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { toBase64url, toHex } from '../../../shared/encoding.js';
import { buildPostObject, postObjectBytes } from '../../../shared/objects.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';
import { checkProof } from '../../../relay/web/view/proof.js';

const VIEW_DIR = new URL('../../../relay/web/view/', import.meta.url);
const MINUTE = 60_000;

let relay: RunningRelay;
let owner: MintedToken;
let host: { host: string; service_root_key: string; passkeys: unknown };

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  host = (await get(relay, '/view/host.json')).body;
});
afterAll(async () => {
  await relay.close();
});

type Check = { id: string; ok: boolean | null; detail: string };

function verdicts(checks: Check[]): Record<string, boolean | null> {
  return Object.fromEntries(checks.map((c) => [c.id, c.ok]));
}

/** A signed post and an unsigned one in a fresh SPACE; answers the SPACE. */
async function spaceWithPosts(): Promise<SpaceRow> {
  const space = await newSpace(relay, owner);
  const signed = signedPost(owner, space, { kind: 'result', title: 'Parser fixed', body: 'Tabs in keys parse now.', fingerprints: [{ scheme: 'git.commit', value: 'a'.repeat(40) }] }, { data: { x_runs: 3 } });
  await post(relay, owner, space, signed.submission as unknown as Record<string, unknown>);
  await post(relay, owner, space, { kind: 'obs', title: 'Unsigned note', body: 'Written by the relay for its author.' });
  return space;
}

async function coverAll(): Promise<void> {
  relay.clock.advance(11 * MINUTE);
  await relay.app.checkpointer.runOnce(relay.clock.now());
}

async function proofOf(space: SpaceRow, seq: number, who: MintedToken | undefined = owner): Promise<any> {
  const r = await get(relay, `/v1/spaces/${space.name}/posts/${seq}/proof`, who);
  expect(r.status).toBe(200);
  return r.body;
}

/** Change one character of a hex string (the first one), keeping it hex. */
function flipHex(hex: string, at = 0): string {
  return hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1);
}

describe('the view page', () => {
  it('is served at /view/ with a strict CSP, no framing, no cookie, never cached; /view sends the browser to /view/', async () => {
    const res = await fetch(`${relay.url}/view/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    for (const rule of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'", "require-trusted-types-for 'script'"]) {
      expect(csp).toContain(rule);
    }
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('set-cookie')).toBeNull();
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toContain('style=');

    const bare = await fetch(`${relay.url}/view`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/view/');
    const missing = await call(relay, 'GET', '/view/nothing-here.js');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('INVALID_REQUEST');
  });

  it('serves every module of relay/web/view as JavaScript under the same policy; none writes HTML from a string', async () => {
    const modules = readdirSync(VIEW_DIR).filter((f) => f.endsWith('.js'));
    expect(modules).toContain('api.js');
    for (const file of modules) {
      const res = await fetch(`${relay.url}/view/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(/^text\/javascript/);
      expect(res.headers.get('content-security-policy'), file).toContain("default-src 'none'");
      const js = readFileSync(new URL(file, VIEW_DIR), 'utf8');
      expect(js, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|document\.cookie/);
    }
  });

  it('host.json names the relay as host and the root key capabilities publish', async () => {
    const caps = await get(relay, '/v1/capabilities');
    expect(host).toMatchObject({ host: 'relay', service_root_key: caps.body.protocol.service_root_key });
    expect(host.passkeys).toMatchObject({ rp_id: expect.any(String), origins: expect.any(Array) });
  });
});

describe("the page's proof checks on real answers", () => {
  it('passes every check of a signed post covered by a checkpoint, and says a read carries no receipt', async () => {
    const space = await spaceWithPosts();
    await coverAll();
    const checks: Check[] = await checkProof(await proofOf(space, 1), host);
    expect(verdicts(checks)).toEqual({
      'object-id': true,
      object: true,
      private: true,
      signature: true,
      chain: true,
      receipt: null,
      checkpoint: true,
      merkle: true,
      root: true,
    });
    expect(checks.find((c) => c.id === 'root')!.detail).toContain('development key');
  });

  it('an unsigned post has nothing to check for its signature; a post no checkpoint covers is "not yet covered"', async () => {
    const space = await spaceWithPosts();
    const checks: Check[] = await checkProof(await proofOf(space, 2), host);
    const v = verdicts(checks);
    expect(v).toMatchObject({ 'object-id': true, object: true, signature: null, chain: true, checkpoint: null });
    expect(checks.find((c) => c.id === 'checkpoint')!.detail).toMatch(/^not yet covered/);
    expect(Object.values(v)).not.toContain(false);
  });

  it('fails the check that covers each changed value', async () => {
    const space = await spaceWithPosts();
    await coverAll();
    const honest = await proofOf(space, 1);
    const cases: [string, (a: any) => void][] = [
      ['object', (a) => (a.post.body = a.post.body.replace('Tabs', 'Tab$'))],
      ['object', (a) => (a.post.title = 'Parser broken')],
      ['object', (a) => (a.post.fingerprints = [])],
      ['object-id', (a) => {
        const bytes = Buffer.from(a.post.proof.canonical, 'base64url');
        bytes[bytes.length - 3]! ^= 1;
        a.post.proof.canonical = toBase64url(bytes);
      }],
      ['signature', (a) => (a.post.proof.signature.value = flipHex(a.post.proof.signature.value, 10))],
      ['chain', (a) => (a.post.proof.chain.chain_hash = flipHex(a.post.proof.chain.chain_hash))],
      ['chain', (a) => (a.post.proof.chain.admitted_revision = String(Number(a.post.proof.chain.admitted_revision) + 1))],
      ['merkle', (a) => (a.leaf = flipHex(a.leaf))],
      ['checkpoint', (a) => (a.checkpoint.signature = flipHex(a.checkpoint.signature, 5))],
      ['checkpoint', (a) => (a.checkpoint.last = String(Number(a.checkpoint.last) + 1))],
      ['root', (a) => (a.checkpoint.signer.certificate_signature = flipHex(a.checkpoint.signer.certificate_signature, 7))],
    ];
    for (const [id, change] of cases) {
      const answer = structuredClone(honest);
      change(answer);
      const checks: Check[] = await checkProof(answer, host);
      expect(verdicts(checks)[id], `${id} after ${change.toString()}`).toBe(false);
    }
    // Another root pinned than the one that certified the signing key.
    const pinnedElsewhere: Check[] = await checkProof(honest, { ...host, service_root_key: toHex(new Uint8Array(32).fill(7)) });
    expect(verdicts(pinnedElsewhere).root).toBe(false);
    expect(pinnedElsewhere.find((c) => c.id === 'root')!.detail).toContain('not the pinned');
  });

  it('checks a post in a public SPACE read without a token the same way', async () => {
    const space = await newSpace(relay, owner, { visibility: 'public', categories: ['general'] });
    await post(relay, owner, space, signedPost(owner, space, { kind: 'obs', title: 'Open note', body: 'Anyone may read this.' }).submission as unknown as Record<string, unknown>);
    await coverAll();
    const r = await call(relay, 'GET', `/v1/spaces/${space.name}/posts/1/proof`);
    expect(r.status).toBe(200);
    const v = verdicts(await checkProof(r.body, host));
    expect(v).toMatchObject({ 'object-id': true, object: true, signature: true, chain: true, checkpoint: true, merkle: true, root: true });
    expect(Object.values(v)).not.toContain(false);
  });

  it.each([-7, -8, -257] as PasskeyAlg[])('checks a passkey author\'s WebAuthn signature (COSE %i) under the rp id and origins host.json names', async (alg) => {
    const who = await passkeyKey(relay, alg);
    const space = await createSpaceInStore(relay.store, who.peerId, `pk-${randomUUID().slice(0, 8)}`, relay.clock.now());
    const policy = await passkeyPolicyOf(relay);
    const canonical = postObjectBytes(buildPostObject({ space_id: space.spaceId, author_id: who.peerId, idempotency_key: randomUUID(), kind: 'obs', body: 'signed on a passkey' }, 'signed'));
    relay.clock.advance(2_100);
    const a = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: who.token, body: { alg: 'webauthn', canonical: toBase64url(canonical), ...signPostWebauthn(who.auth, canonical, policy) } });
    expect(a.status, a.text).toBe(201);
    const r = await call(relay, 'GET', `/v1/spaces/${space.name}/posts/1/proof`, { token: who.token });
    const good: Check[] = await checkProof(r.body, host);
    expect(verdicts(good).signature, good.find((c) => c.id === 'signature')!.detail).toBe(true);
    const bent = structuredClone(r.body);
    const sig = Buffer.from(bent.post.proof.signature.value, 'base64url');
    sig[sig.length - 5]! ^= 1;
    bent.post.proof.signature.value = toBase64url(sig);
    expect(verdicts(await checkProof(bent, host)).signature).toBe(false);
    // Another origin than the relay's: the assertion was not made on this service.
    const elsewhere: Check[] = await checkProof(r.body, { ...host, passkeys: { rp_id: 'example.org', origins: ['https://example.org'] } });
    expect(verdicts(elsewhere).signature).toBe(false);
  });

  it('a hidden post is checked as a position in its chain: no words, nothing to check of them, the link and checkpoint still pass', async () => {
    const space = await spaceWithPosts();
    const first = await get(relay, `/v1/spaces/${space.name}/posts?detail=ids`, owner);
    const hidden = await call(relay, 'PUT', `/v1/posts/${first.body.items[0].post_id}/hidden`, { token: owner.token });
    expect(hidden.status, hidden.text).toBe(200);
    await coverAll();
    const answer = await proofOf(space, 1);
    expect(answer.post.unavailable.state).toBe('hidden');
    const v = verdicts(await checkProof(answer, host));
    expect(v).toMatchObject({ 'object-id': null, signature: null, chain: true, checkpoint: true, merkle: true, root: true });
    expect(Object.values(v)).not.toContain(false);
  });
});

describe("the page's proof check of a post's attachments", () => {
  /** A post attaching a file its author uploaded, at `seq` 1 of a fresh SPACE; answers its posts.proof answer. */
  async function withFile(signed: boolean): Promise<any> {
    const space = await newSpace(relay, owner);
    const bytes = Buffer.from(`measured ${randomUUID()}`, 'utf8');
    const file = { sha256: createHash('sha256').update(bytes).digest('hex'), name: 'run.log', media_type: 'text/plain' };
    relay.clock.advance(2_100);
    const up = await fetch(`${relay.url}/v1/spaces/${space.name}/files/${file.sha256}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${owner.token}` }, body: bytes });
    expect(up.status).toBeLessThan(300);
    const body = signed
      ? { ...(signedPost(owner, space, { kind: 'result', body: 'see the log', fingerprints: [{ scheme: 'sha256.file', value: file.sha256 }] }).submission as unknown as Record<string, unknown>), attachments: [file] }
      : { kind: 'result', body: 'see the log', attachments: [file] };
    await post(relay, owner, space, body);
    return await proofOf(space, 1);
  }

  it('passes when each file shown is a sha256.file fingerprint of the object, signed or not, and says so', async () => {
    for (const signed of [true, false]) {
      const answer = await withFile(signed);
      expect(answer.post.attachments).toHaveLength(1);
      const checks: Check[] = await checkProof(answer, host);
      const object = checks.find((c) => c.id === 'object')!;
      expect(object.ok, object.detail).toBe(true);
      expect(object.detail).toContain('its 1 attachment is bound by sha256.file fingerprints of the object');
    }
  });

  it('fails the object check, naming the file, when a shown file is not one of the fingerprints', async () => {
    const answer = await withFile(true);
    const bent = { ...answer, post: { ...answer.post, attachments: [{ ...answer.post.attachments[0], sha256: 'f'.repeat(64), name: 'swapped.bin' }] } };
    const object = (await checkProof(bent, host) as Check[]).find((c) => c.id === 'object')!;
    expect(object.ok).toBe(false);
    expect(object.detail).toBe('attachments[0] ("swapped.bin"): its sha256 is not a sha256.file fingerprint of the post\'s object, so nothing the author wrote binds that file to it');
  });
});

