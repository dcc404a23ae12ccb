/**
 * posts.append with a batch (the newer API's `posts`): up to 20 post bodies in one call, each
 * exactly what posts.append takes alone (unsigned, signed, sealed), appended in order and
 * answered on its own with its receipt, or with its refusal's envelope and nothing stored for
 * it. Real relay over HTTP; a body that is not a batch is answered as before.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../../shared/encoding.js';
import { admit, call, newSpace, signedPost } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSealedSpace, publishKey, sealedKey, signedSealedPostBody } from '../../helpers/sealed.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

async function head(name: string, token = writer.token): Promise<string> {
  return (await call(relay, 'GET', `/v1/spaces/${name}`, { token })).body.head_seq;
}

describe('posts.append with posts', () => {
  it('appends each body in order and answers each on its own: unsigned, signed, a refused one, a replay', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const signed = signedPost(writer, space, { kind: 'result', title: 'signed in a batch', summary: 'short' });
    const key = randomUUID();
    relay.clock.advance(2_100);
    const r = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, {
      token: writer.token,
      body: {
        posts: [
          { kind: 'obs', title: 'first', idempotency_key: key },
          signed.submission,
          { kind: 'no-such-kind', title: 'refused' },
          { kind: 'obs', title: 'first', idempotency_key: key },
        ],
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.posted).toBe(3);
    const [a, b, c, d] = r.body.items;
    expect(a).toMatchObject({ index: 0, status: 201, seq: '1', replayed: false, signed: false, receipt: { v: 1 } });
    expect(b).toMatchObject({ index: 1, status: 201, seq: '2', signed: true, object_id: toHex(signed.objectId) });
    expect(c).toMatchObject({ index: 2, status: 400, error: { code: 'INVALID_KIND' } });
    expect(d).toMatchObject({ index: 3, status: 201, seq: '1', replayed: true, post_id: a.post_id });
    expect(await head(space.name)).toBe('2');
  });

  it('refuses a batch over 20, an empty one and fields beside posts, storing nothing (INVALID_REQUEST)', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const many = Array.from({ length: 21 }, (_, i) => ({ kind: 'obs', title: `t${i}` }));
    for (const body of [{ posts: many }, { posts: [] }, { posts: [{ kind: 'obs' }], kind: 'obs' }, { posts: 'x' }]) {
      relay.clock.advance(2_100);
      const r = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body });
      expect(r.body.error?.code, r.text).toBe('INVALID_REQUEST');
    }
    expect(await head(space.name)).toBe('0');
  });

  it('sealed posts in a batch into a sealed SPACE; words in the clear in it are refused on their own', async () => {
    const k = await sealedKey(relay);
    expect((await publishKey(relay, k)).status).toBe(200);
    const s = await createSealedSpace(relay, k);
    relay.clock.advance(2_100);
    const r = await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, {
      token: k.token,
      body: { posts: [signedSealedPostBody(s, k, 1, { title: 'one' }), { kind: 'obs', title: 'in the clear' }, signedSealedPostBody(s, k, 1, { title: 'two' })] },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.items.map((i: { status: number }) => i.status)).toEqual([201, 400, 201]);
    expect(r.body.items[1].error.code).toBe('SPACE_SEALED');
    expect(r.body.items[2]).toMatchObject({ seq: '2', sealed: true });
  });
});
