/**
 * Tool calls from a client that signs and seals on its own machine, as the newer API's bridge
 * sends them to `/mcp` (written here from what its published code sends): `svc_post` with
 * `canonical`, `private`, `alg`, `signature` and, in a sealed SPACE, `sealed` {header,
 * ciphertext}; `svc_space_control` create with `sealed` {space_id, commitment, lock};
 * `svc_message` start and send with `sealed` parts. Each reaches the route an HTTP client
 * would call, as it was sent, and the relay's rules apply to it. The SDK's Streamable HTTP
 * client against the real relay on a loopback port.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, fromHex, toHex } from '../../../shared/encoding.js';
import { objectIdOf } from '../../../shared/objects.js';
import { commitmentHex, pairContainer } from '../../../shared/sealed/generations.js';
import { openMessage, openPost, sealMessage, sealedTransport } from '../../../shared/sealed/items.js';
import { openLock, sealLock, sealedSpaceCreation } from '../../../shared/sealed/locks.js';
import { textOf } from '../../helpers/bridge.js';
import { callConnector, connectConnector, type ConnectorClient } from '../../helpers/connector.js';
import { acquaint } from '../../helpers/conversations.js';
import { admit, newSpace, signedPost } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { publishKey, sealedKey, signedSealedPostBody, type SealedKey, type SealedSpace } from '../../helpers/sealed.js';
import { spaceContainer } from '../../../shared/sealed/generations.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay?.close();
});

const fresh = (n: number) => new Uint8Array(randomBytes(n));

function refusalCode(r: { isError?: boolean; structuredContent?: unknown }): string | undefined {
  return r.isError === true ? ((r.structuredContent as { error?: { code?: string } } | undefined)?.error?.code ?? undefined) : undefined;
}

async function withClient<T>(token: string, run: (c: ConnectorClient) => Promise<T>): Promise<T> {
  const c = await connectConnector(relay.url, { token });
  try {
    return await run(c);
  } finally {
    await c.close();
  }
}

async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  expect((await publishKey(relay, k)).status).toBe(200);
  return k;
}

async function headSeq(name: string, token: string): Promise<string> {
  return (await call(relay, 'GET', `/v1/spaces/${name}`, { token })).body.head_seq;
}

describe('svc_post signed on the client', () => {
  let owner: MintedToken;
  let writer: MintedToken;
  beforeAll(async () => {
    owner = await mintToken(relay.url);
    writer = await mintToken(relay.url);
  });

  it('canonical, private, alg and signature go to posts.append as sent: signed by the KEY, its summary kept, the same call again replays', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const s = signedPost(writer, space, { kind: 'result', title: 'Build passes', summary: 'Both runs passed on linux.', body: 'Reproduced.' }, { data: { x_runs: 2 } });
    const args = { space: space.name, ...s.submission };
    await withClient(writer.token, async (c) => {
      const r = await callConnector(c, 'svc_post', args);
      expect(r.isError, textOf(r)).toBeFalsy();
      const sc = r.structuredContent as any;
      expect(sc.object_id).toBe(toHex(s.objectId));
      expect(sc.bridge).toMatchObject({ signed: true, idempotency_key: s.object.idempotency_key, receipt_check: { ok: null } });
      const again = await callConnector(c, 'svc_post', args);
      expect((again.structuredContent as any)).toMatchObject({ replayed: true, post_id: sc.post_id });
      const read = await call(relay, 'GET', `/v1/posts/${sc.post_id}`, { token: writer.token });
      expect(read.body).toMatchObject({ signed: true, summary: 'Both runs passed on linux.', data: { x_runs: 2 } });
      expect(read.body.proof.signature.value).toBe(s.submission.signature);
    });
  });

  it('a field beside canonical is refused before anything is sent (INVALID_REQUEST naming it); a bad signature is the relay\'s POST_SIGNATURE_INVALID', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const s = signedPost(writer, space, { kind: 'obs', title: 'signed' });
    await withClient(writer.token, async (c) => {
      const head = await headSeq(space.name, writer.token);
      const beside = await callConnector(c, 'svc_post', { space: space.name, ...s.submission, title: 'in the clear too' });
      expect(refusalCode(beside)).toBe('INVALID_REQUEST');
      expect(textOf(beside)).toContain('title');
      const forged = await callConnector(c, 'svc_post', { space: space.name, ...s.submission, signature: '00'.repeat(64) });
      expect(refusalCode(forged)).toBe('POST_SIGNATURE_INVALID');
      expect(await headSeq(space.name, writer.token)).toBe(head);
    });
  });

  it('summary as a field of an unsigned post at the connector: written into the object, shown on the post', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    await withClient(writer.token, async (c) => {
      const r = await callConnector(c, 'svc_post', { space: space.name, kind: 'obs', title: 'with a summary', summary: 'the short reading' });
      expect(r.isError, textOf(r)).toBeFalsy();
      const read = await call(relay, 'GET', `/v1/posts/${(r.structuredContent as any).post_id}`, { token: writer.token });
      expect(read.body.summary).toBe('the short reading');
      expect(JSON.parse(Buffer.from(fromBase64url(read.body.proof.canonical)).toString('utf8')).summary).toBe('the short reading');
    });
  });
});

describe('a sealed SPACE made, posted to and read by a client that seals on its own machine', () => {
  it('create with sealed {space_id, commitment, lock}, then a signed sealed post; the owner opens it; words in the clear are still refused', async () => {
    const owner = await keyed();
    const spaceId = randomUUID();
    const secret = fresh(32);
    const sealed = sealedSpaceCreation({ spaceId, secret, owner: { peerId: owner.peerId, publicKey: owner.enc.publicKey, privateKey: owner.enc.privateKey }, ephemeral: fresh(32) });
    const name = `sealedc-${toHex(fresh(4))}`;
    await withClient(owner.token, async (c) => {
      const created = await callConnector(c, 'svc_space_control', { action: 'create', name, title: 'Sealed by the client', visibility: 'sealed', sealed });
      expect(created.isError, textOf(created)).toBeFalsy();
      const st = await call(relay, 'GET', `/v1/spaces/${name}/sealed`, { token: owner.token });
      expect(st.body).toMatchObject({ space_id: spaceId, generation: 1, commitment: sealed.commitment });
      expect(st.body.locks[0]).toMatchObject({ generation: '1', lock: sealed.lock });

      const s: SealedSpace = { name, spaceId, container: spaceContainer(spaceId), owner, secrets: [new Uint8Array(0), secret] };
      const submission = signedSealedPostBody(s, owner, 1, { title: 'sealed title', body: 'sealed body' });
      const posted = await callConnector(c, 'svc_post', { space: name, ...submission });
      expect(posted.isError, textOf(posted)).toBeFalsy();
      const sc = posted.structuredContent as any;
      expect(sc.bridge).toMatchObject({ signed: true, sealed: {}, receipt_check: { ok: null } });
      expect(sc.object_id).toBe(toHex(objectIdOf(fromBase64url(submission.canonical as string))));
      const read = await call(relay, 'GET', `/v1/posts?ids=${sc.post_id}&detail=full`, { token: owner.token });
      const item = read.body.items[0];
      expect(item).toMatchObject({ signed: true, title: null, body: null });
      expect(openPost(fromBase64url(item.sealed.header), fromBase64url(item.sealed.ciphertext), secret).content).toMatchObject({ title: 'sealed title', body: 'sealed body' });

      const head = await headSeq(name, owner.token);
      const clear = await callConnector(c, 'svc_post', { space: name, kind: 'obs', title: 'words in the clear' });
      expect(refusalCode(clear)).toBe('SEALED_NEEDS_BRIDGE');
      const asked = await callConnector(c, 'svc_post', { space: name, kind: 'obs', title: 'seal it for me', sealed: true });
      expect(refusalCode(asked)).toBe('SEALED_NEEDS_BRIDGE');
      expect(await headSeq(name, owner.token)).toBe(head);
    });
  });

  it('create with visibility sealed and no sealed parts is still SEALED_NEEDS_BRIDGE; malformed parts are the relay\'s INVALID_REQUEST; nothing is created', async () => {
    const owner = await keyed();
    const name = `sealedx-${toHex(fresh(4))}`;
    await withClient(owner.token, async (c) => {
      expect(refusalCode(await callConnector(c, 'svc_space_control', { action: 'create', name, visibility: 'sealed' }))).toBe('SEALED_NEEDS_BRIDGE');
      const bad = await callConnector(c, 'svc_space_control', { action: 'create', name, visibility: 'sealed', sealed: { space_id: randomUUID(), commitment: 'zz', lock: '00' } });
      expect(refusalCode(bad)).toBe('INVALID_REQUEST');
      expect((await call(relay, 'GET', `/v1/spaces/${name}`, { token: owner.token })).status).toBe(404);
    });
  });
});

describe('a sealed pair started and answered by clients that seal on their own machines', () => {
  it('start with sealed {header, ciphertext, commitment, locks}, send with sealed {header, ciphertext}; each opens the other\'s words', async () => {
    const a = await keyed();
    const b = await keyed();
    await acquaint(relay, a, b);
    const container = pairContainer(a.peerId, b.peerId);
    const secret = fresh(32);
    const lock = (k: SealedKey) =>
      toHex(sealLock({ container, generation: 1, secret, recipient: { peerId: k.peerId, publicKey: k.enc.publicKey }, sender: { peerId: a.peerId, privateKey: a.enc.privateKey }, ephemeral: fresh(32) }));
    const first = sealMessage({ header: { author: a.peerId, peer: b.peerId }, body: 'first, sealed by a', secret, salt: fresh(16) });
    const startArgs = {
      action: 'start',
      to: [b.peerId],
      idempotency_key: randomUUID(),
      sealed: { commitment: commitmentHex(container, 1, secret), locks: { [a.peerId]: lock(a), [b.peerId]: lock(b) }, ...sealedTransport(first.headerBytes, first.ciphertext) },
    };
    const id = await withClient(a.token, async (c) => {
      const r = await callConnector(c, 'svc_message', startArgs);
      expect(r.isError, textOf(r)).toBeFalsy();
      const sc = r.structuredContent as any;
      expect(sc.conversation).toMatchObject({ kind: 'pair', sealed: true });
      expect(sc.bridge).toMatchObject({ sealed: true });
      const again = await callConnector(c, 'svc_message', startArgs);
      expect((again.structuredContent as any).replayed, textOf(again)).toBe(true);
      return sc.conversation.conversation_id as string;
    });

    await withClient(b.token, async (c) => {
      const conv = await call(relay, 'GET', `/v1/conversations/${id}`, { token: b.token });
      const opened = openLock({ container, generation: 1, lock: fromHex(conv.body.lock.lock), commitment: conv.body.commitment, recipient: { peerId: b.peerId, privateKey: b.enc.privateKey }, sender: { peerId: a.peerId, publicKey: a.enc.publicKey } });
      const reply = sealMessage({ header: { author: b.peerId, peer: a.peerId }, body: 'reply, sealed by b', secret: opened, salt: fresh(16) });
      const r = await callConnector(c, 'svc_message', { action: 'send', conversation_id: id, idempotency_key: randomUUID(), sealed: sealedTransport(reply.headerBytes, reply.ciphertext) });
      expect(r.isError, textOf(r)).toBeFalsy();
      const words = await callConnector(c, 'svc_message', { action: 'send', conversation_id: id, body: 'plain words', sealed: sealedTransport(reply.headerBytes, reply.ciphertext) });
      expect(refusalCode(words)).toBe('INVALID_REQUEST');
    });

    const read = await call(relay, 'GET', `/v1/conversations/${id}/messages?detail=full`, { token: a.token });
    const bodies = read.body.items.map((m: any) => openMessage(fromBase64url(m.sealed.header), fromBase64url(m.sealed.ciphertext), secret).content.body);
    expect(bodies).toEqual(['first, sealed by a', 'reply, sealed by b']);
  });
});
