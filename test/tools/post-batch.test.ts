/**
 * svc_post's `posts` (a batch, as posts.append takes one) and `attachments` (files already in
 * the SPACE, `{sha256, name, media_type}`), through the real svc-bridge over stdio (signed posts)
 * and the relay's connector at /mcp with the SDK's HTTP client (unsigned, and signed on the
 * client's machine as the newer API's bridge sends them), against a real relay.
 */
import { createHash, createPrivateKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { checkPostProof } from '../../shared/post-proof.js';
import type { SpaceRow } from '../../relay/store/spaces.js';
import { callTool, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { callConnector, connectConnector, type ConnectorClient } from '../helpers/connector.js';
import { admit, call, newSpace, signedPost } from '../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
let owner: MintedToken;
/** The bridge's own KEY, signed in over HTTP too, to upload files as the bridge's posts' author. */
let bridgeKey: MintedToken;
let writer: MintedToken;
let bridge: RunningBridge;
let connector: ConnectorClient;
let space: SpaceRow;

beforeAll(async () => {
  relay = await startRelay({ config: { metrics: { token: METRICS_SECRET } } });
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  const home = tempHome();
  bridge = await startBridge({ relayUrl: relay.url, home });
  toolOk(await callTool(bridge, 'svc_whoami', {}));
  const pem = readFileSync(join(openKeyDirectory(home).keysDir, 'default.pem'), 'utf8');
  bridgeKey = await mintToken(relay.url, Buffer.from(createPrivateKey(pem).export({ format: 'jwk' }).d!, 'base64url'));
  space = await newSpace(relay, owner);
  await admit(relay, space, bridgeKey, 'writer');
  await admit(relay, space, writer, 'writer');
  connector = await connectConnector(relay.url, { token: writer.token });
}, 60_000);

afterAll(async () => {
  await connector?.close();
  await bridge?.close();
  await relay?.close();
});

const METRICS_SECRET = 'post-batch-metrics-0123456789abcdef0123456789abcdef';

/** posts.append requests the relay answered 201, from its own /metrics. */
async function appendRequests(): Promise<number> {
  const text = (await call(relay, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_SECRET}` } })).text;
  const line = text.split('\n').find((l) => l.startsWith('svc_relay_http_requests_total{') && l.includes('route="/v1/spaces/:name/posts"') && l.includes('method="POST"') && l.includes('status="201"'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const headOf = async () => (await call(relay, 'GET', `/v1/spaces/${space.name}`, { token: owner.token })).body.head_seq as string;

/** A file uploaded to the SPACE by `who`: its attachment entry. */
async function upload(who: MintedToken, text: string, name = 'notes.txt') {
  const bytes = Buffer.from(text, 'utf8');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const r = await fetch(`${relay.url}/v1/spaces/${space.name}/files/${sha256}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${who.token}` },
    body: bytes,
  });
  expect(r.status, await r.text()).toBeLessThan(300);
  return { sha256, name, media_type: 'text/plain' };
}

async function readFull(postId: string) {
  const r = await call(relay, 'GET', `/v1/spaces/${space.name}/posts?after=0&limit=200&detail=full&proof=true`, { token: owner.token });
  return r.body.items.find((p: { post_id: string }) => p.post_id === postId);
}

describe('svc_post posts: a batch', () => {
  it('through svc-bridge: each post signed and answered on its own, in order; a refused one stops none after it', async () => {
    const before = BigInt(await headOf());
    const r = await callTool(bridge, 'svc_post', {
      space: space.name,
      posts: [
        { kind: 'obs', title: 'first', body: 'one' },
        { kind: 'nope', body: 'a kind nobody has' },
        { kind: 'result', title: 'third', body: 'three', fingerprints: [{ scheme: 'git.commit', value: 'abc1234' }] },
      ],
    });
    const a = toolOk(r);
    expect(a.items.map((i: { ok: boolean }) => i.ok)).toEqual([true, false, true]);
    expect(a.items[1].error.code).toBe('INVALID_KIND');
    expect(a.items[0].bridge.signed).toBe(true);
    expect(a.items[0].bridge.receipt_check.ok).toBe(true);
    expect(BigInt(a.items[2].seq)).toBe(BigInt(a.items[0].seq) + 1n);
    expect(BigInt(await headOf())).toBe(before + 2n);
    expect(textOf(r)).toMatch(/^Batch of 3 to .*: 2 done \(posted or queued\), 1 refused/);
    expect(textOf(r)).toContain('[1] ');
    const third = await readFull(a.items[2].post_id);
    expect(third).toMatchObject({ title: 'third', signed: true });
    expect(checkPostProof(third)).toMatchObject({ ok: true });
  });

  it('goes as one posts.append request, 201 with each post answered: the relay counts one request for a batch of 20', async () => {
    const posts = Array.from({ length: 20 }, (_, i) => ({ kind: 'obs', body: `batched post ${i}` }));
    const before = await appendRequests();
    const a = toolOk(await callTool(bridge, 'svc_post', { space: space.name, posts }));
    expect(a.done, JSON.stringify(a.items.find((i: { ok: boolean }) => !i.ok))).toBe(20);
    expect(await appendRequests()).toBe(before + 1);
  });

  it('takes nothing beside posts but space, and at most 20, refusing before anything is sent', async () => {
    const before = await headOf();
    const beside = await callTool(bridge, 'svc_post', { space: space.name, kind: 'obs', posts: [{ kind: 'obs', body: 'x' }] });
    expect(beside.isError).toBe(true);
    expect(textOf(beside)).toContain("kind: a batch gives each post's fields inside posts");
    const many = await callTool(bridge, 'svc_post', { space: space.name, posts: Array.from({ length: 21 }, () => ({ kind: 'obs', body: 'x' })) });
    expect(many.isError).toBe(true);
    expect(await headOf()).toBe(before);
  });

  it("at the relay's /mcp: unsigned posts, each answered", async () => {
    const a = toolOk(await callConnector(connector, 'svc_post', { space: space.name, posts: [{ kind: 'obs', body: 'a' }, { kind: 'obs', body: 'b' }] }));
    expect(a.done).toBe(2);
    expect(a.items.map((i: { bridge: { signed: boolean } }) => i.bridge.signed)).toEqual([false, false]);
  });
});

describe('svc_post attachments', () => {
  it('through svc-bridge: the file named beside the post, its hash signed as a sha256.file fingerprint, the proof checks', async () => {
    const file = await upload(bridgeKey, `measured ${randomBytes(4).toString('hex')}`);
    const a = toolOk(await callTool(bridge, 'svc_post', { space: space.name, kind: 'result', body: 'see the file', attachments: [file] }));
    expect(a.bridge.signed).toBe(true);
    const full = await readFull(a.post_id);
    expect(full.attachments).toEqual([{ ...file, bytes: expect.any(Number) }]);
    expect(full.fingerprints).toContainEqual({ scheme: 'sha256.file', value: file.sha256 });
    expect(checkPostProof(full)).toMatchObject({ ok: true });
  });

  it('a file its author did not upload is refused with ATTACHMENT_NOT_FOUND, and nothing is posted', async () => {
    const theirs = await upload(writer, `theirs ${randomBytes(4).toString('hex')}`);
    const before = await headOf();
    const r = await callTool(bridge, 'svc_post', { space: space.name, kind: 'obs', body: 'x', attachments: [theirs] });
    expect(r.isError).toBe(true);
    expect((r.structuredContent as { error: { code: string } }).error.code).toBe('ATTACHMENT_NOT_FOUND');
    expect(await headOf()).toBe(before);
  });

  it("at the relay's /mcp: unsigned with attachments, and signed on the client's machine with attachments beside canonical", async () => {
    const one = await upload(writer, `unsigned ${randomBytes(4).toString('hex')}`);
    const a = toolOk(await callConnector(connector, 'svc_post', { space: space.name, kind: 'obs', body: 'unsigned, with a file', attachments: [one] }));
    expect((await readFull(a.post_id)).attachments.map((f: { sha256: string }) => f.sha256)).toEqual([one.sha256]);

    const two = await upload(writer, `signed ${randomBytes(4).toString('hex')}`, 'data.csv');
    const s = signedPost(writer, space, { kind: 'result', body: 'signed here', fingerprints: [{ scheme: 'sha256.file', value: two.sha256 }] });
    const b = toolOk(await callConnector(connector, 'svc_post', { space: space.name, ...s.submission, attachments: [two] }));
    const full = await readFull(b.post_id);
    expect(full.attachments.map((f: { name: string }) => f.name)).toEqual(['data.csv']);
    expect(checkPostProof(full)).toMatchObject({ ok: true });
  });

  it('the schema takes {sha256, name, media_type} only, at most 4 a post', async () => {
    const bad = await callConnector(connector, 'svc_post', { space: space.name, kind: 'obs', body: 'x', attachments: [{ sha256: 'ab', name: 'n', media_type: 't' }] });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/sha256/);
  });
});
