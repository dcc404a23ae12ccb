/**
 * Connector live updates (spec/1-concepts.md "Connector live updates (revision 2026-07-28, with
 * a token)", Limits "live streams") on the real relay, driven by the SDK's Streamable HTTP
 * client at `/mcp`: the acknowledgement lists what the KEY may read, a change sends the address
 * only, four streams per KEY, and a stream ends (gracefully: the client is told to listen again)
 * on revocation, on leaving a private SPACE, after 13 minutes and at token expiry on the relay's
 * clock, and when the relay stops.
 */
import type { McpSubscription } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveClient, stillOpen, waitFor, type ConnectorClient, type Updated } from '../../helpers/connector.js';
import { admit, newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let owner: MintedToken;
let a: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  a = await mintToken(relay.url);
});

afterAll(async () => {
  await relay?.close();
});

/** A 2026-07-28 client at /mcp for `token`, with the updates it was sent. */
async function listener(token: string | undefined, on: RunningRelay = relay): Promise<ConnectorClient & { updates: Updated[] }> {
  return await liveClient(on.url, token);
}

describe('the acknowledgement', () => {
  it('lists only the addresses the KEY may read: a private SPACE it is not in, its posts and a document of a SPACE that is no oracle are left out', async () => {
    const mine = await newSpace(relay, a);
    const closed = await newSpace(relay, owner);
    const open = await newSpace(relay, owner, { visibility: 'public' });
    const oracle = await newSpace(relay, owner, { visibility: 'public', oracle: true });
    const secret = await post(relay, owner, closed, { kind: 'obs', body: 'members only' });
    const c = await listener(a.token);
    try {
      const asked = [
        'svc://mailbox',
        `svc://spaces/${mine.name}`,
        `svc://spaces/${closed.name}`,
        `svc://spaces/${closed.name}/latest`,
        `svc://posts/${secret.post_id}`,
        `svc://spaces/${mine.name}/document`,
        `svc://spaces/${oracle.name}/document`,
        `svc://spaces/${open.name}/latest`,
        'svc://guide',
        'svc://spaces/no-such-space-anywhere',
      ];
      const sub = await c.client.listen({ resourceSubscriptions: asked });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual([
        'svc://mailbox',
        `svc://spaces/${mine.name}`,
        `svc://spaces/${oracle.name}/document`,
        `svc://spaces/${open.name}/latest`,
      ]);
      await sub.close();
      // Nothing the KEY may read: acknowledged empty, and ended at once.
      const none = await c.client.listen({ resourceSubscriptions: [`svc://spaces/${closed.name}`] });
      expect(none.honoredFilter).toEqual({});
      expect(await none.closed).toBe('graceful');
    } finally {
      await c.close();
    }
  });

  it('follows at most 16 addresses, the first asked', async () => {
    const spaces: Awaited<ReturnType<typeof newSpace>>[] = [];
    for (let i = 0; i < 18; i++) spaces.push(await newSpace(relay, a));
    const c = await listener(a.token);
    try {
      const sub = await c.client.listen({ resourceSubscriptions: spaces.map((s) => `svc://spaces/${s.name}`) });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual(spaces.slice(0, 16).map((s) => `svc://spaces/${s.name}`));
      await sub.close();
    } finally {
      await c.close();
    }
  });

  it('needs a KEY token: without one the listen is refused with TOKEN_MISSING before any acknowledgement', async () => {
    const c = await listener(undefined);
    try {
      await expect(c.client.listen({ resourceSubscriptions: ['svc://mailbox'] })).rejects.toThrow(/TOKEN_MISSING/);
    } finally {
      await c.close();
    }
  });
});

describe('updates', () => {
  it('a new post, a mailbox item, the KEY\'s own dossier and a hidden post each send the address only', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, a, 'writer');
    const watched = await post(relay, owner, space, { kind: 'obs', body: 'first' });
    const c = await listener(a.token);
    try {
      const uris = ['svc://mailbox', `svc://spaces/${space.name}`, `svc://spaces/${space.name}/latest`, `svc://spaces/${space.name}/dossier`, `svc://posts/${watched.post_id}`];
      const sub = await c.client.listen({ resourceSubscriptions: uris });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual(uris);
      const seen = (uri: string) => c.updates.filter((u) => u.uri === uri).length;

      await post(relay, owner, space, { kind: 'obs', body: 'news' });
      await waitFor('the SPACE updates', () => seen(`svc://spaces/${space.name}`) === 1 && seen(`svc://spaces/${space.name}/latest`) === 1);
      for (const u of c.updates) expect(Object.keys(u).filter((k) => k !== '_meta')).toEqual(['uri']);
      expect(JSON.stringify(c.updates)).not.toContain('news');
      expect(seen(`svc://spaces/${space.name}/dossier`)).toBe(0);

      await post(relay, owner, space, { kind: 'question', body: 'for you', to: [a.peerId] });
      await waitFor('the mailbox update', () => seen('svc://mailbox') >= 1);

      await post(relay, a, space, { kind: 'dossier', title: 'where I stopped', body: 'cursors' });
      await waitFor('the dossier update', () => seen(`svc://spaces/${space.name}/dossier`) === 1);

      const hid = await call(relay, 'PUT', `/v1/posts/${watched.post_id}/hidden`, { token: owner.token });
      expect(hid.status).toBe(200);
      await waitFor('the post update', () => seen(`svc://posts/${watched.post_id}`) === 1);
      expect(await stillOpen(sub)).toBe(true);
      await sub.close();
      expect(await sub.closed).toBe('local');
    } finally {
      await c.close();
    }
  });

  it('an oracle document is updated when a version becomes current, not for other posts', async () => {
    const space = await newSpace(relay, a, { oracle: true });
    const c = await listener(a.token);
    try {
      const uri = `svc://spaces/${space.name}/document`;
      const sub = await c.client.listen({ resourceSubscriptions: [uri] });
      await post(relay, a, space, { kind: 'version', body: '# Guide\n\nFirst words.\n' });
      await waitFor('the document update', () => c.updates.some((u) => u.uri === uri));
      await post(relay, a, space, { kind: 'obs', body: 'a remark' });
      await new Promise((r) => setTimeout(r, 300));
      expect(c.updates.filter((u) => u.uri === uri)).toHaveLength(1);
      await sub.close();
    } finally {
      await c.close();
    }
  });
});

describe('limits and ends', () => {
  it('a KEY has at most 4 streams: a fifth is refused BUSY naming the limit, and one more fits once one ends', async () => {
    const k = await mintToken(relay.url);
    const c = await listener(k.token);
    try {
      const subs = [];
      for (let i = 0; i < 4; i++) subs.push(await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] }));
      const refused = await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] }).catch((e: Error) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toMatch(/BUSY.*at most 4/);
      // The client's doing, not a fault of the relay: Invalid Request, never -32603 Internal error.
      expect((refused as { code?: unknown }).code).toBe(-32600);
      // Another KEY is not held back by this one's streams.
      const other = await listener(owner.token);
      const theirs = await other.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      await theirs.close();
      await other.close();
      await subs[0]!.close();
      // The relay hears of the close when the client drops the stream: room comes back then.
      let again: McpSubscription | undefined;
      for (let i = 0; i < 40 && again === undefined; i++) {
        again = await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] }).catch(() => undefined);
        if (again === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(again).toBeDefined();
      expect(await stillOpen(again!)).toBe(true);
      for (const s of [...subs.slice(1), again!]) await s.close();
    } finally {
      await c.close();
    }
  });

  it('revoking the token ends its stream at once; a stream on another token of the KEY stays', async () => {
    const seed = new Uint8Array(32).fill(7);
    const first = await mintToken(relay.url, seed);
    const second = await mintToken(relay.url, seed);
    const c1 = await listener(first.token);
    const c2 = await listener(second.token);
    try {
      const s1 = await c1.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      const s2 = await c2.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      const revoked = await call(relay, 'DELETE', '/v1/tokens/current', { token: first.token });
      expect(revoked.status).toBe(200);
      expect(await Promise.race([s1.closed, new Promise((r) => setTimeout(() => r('still open'), 2_000))])).toBe('graceful');
      expect(await stillOpen(s2)).toBe(true);
      await s2.close();
    } finally {
      await c1.close();
      await c2.close();
    }
  });

  it('leaving a private SPACE ends the streams that follow it; a stream following only the mailbox stays', async () => {
    const k = await mintToken(relay.url);
    const space = await newSpace(relay, owner);
    await admit(relay, space, k, 'writer');
    const c = await listener(k.token);
    try {
      const following = await c.client.listen({ resourceSubscriptions: [`svc://spaces/${space.name}`, 'svc://mailbox'] });
      const mailboxOnly = await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      const left = await call(relay, 'DELETE', `/v1/spaces/${space.name}/members/${k.peerId}`, { token: k.token });
      expect(left.status).toBe(200);
      expect(await Promise.race([following.closed, new Promise((r) => setTimeout(() => r('still open'), 2_000))])).toBe('graceful');
      expect(await stillOpen(mailboxOnly)).toBe(true);
      await mailboxOnly.close();
    } finally {
      await c.close();
    }
  });

  it('a stream ends after 13 minutes on the relay\'s clock, not before', async () => {
    const k = await mintToken(relay.url);
    const c = await listener(k.token);
    try {
      const sub = await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      relay.clock.advance(12 * 60_000);
      expect(await stillOpen(sub, 1_500)).toBe(true);
      relay.clock.advance(61_000);
      expect(await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('still open'), 3_000))])).toBe('graceful');
    } finally {
      await c.close();
    }
  });

  it('a stream ends when its token expires, before its 13 minutes are up', async () => {
    const k = await mintToken(relay.url, undefined, { ttl_seconds: 3600 });
    relay.clock.advance(55 * 60_000);
    const c = await listener(k.token);
    try {
      const sub = await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      expect(await stillOpen(sub, 1_200)).toBe(true);
      relay.clock.advance(6 * 60_000);
      expect(await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('still open'), 3_000))])).toBe('graceful');
    } finally {
      await c.close();
    }
  });

  it('stopping the relay ends every stream, telling its client, and the relay stops at once', async () => {
    const other = await startRelay();
    const k = await mintToken(other.url);
    const c = await listener(k.token, other);
    try {
      const subs = [await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] }), await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] })];
      const started = Date.now();
      await other.close();
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await Promise.all(subs.map((s) => s.closed))).toEqual(['graceful', 'graceful']);
    } finally {
      await c.close().catch(() => {});
    }
  });
});
