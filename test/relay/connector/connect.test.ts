/**
 * `/mcp/connect` with app tokens (spec/1-concepts.md "App sign-in", "Connector"): an app token
 * from OAuth app sign-in reaches the same tools as its KEY, plus the compatibility tools `search`
 * and `fetch`; a write by a read-only token is HTTP 403 `insufficient_scope` and writes nothing;
 * a read-only token reads direct messages without moving the read position (marking read is a
 * write), and the answer says so; the same app token at `/mcp` is tool output TOKEN_INVALID.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../../helpers/bridge.js';
import { callConnector, connectConnector } from '../../helpers/connector.js';
import { acquaint, getConversation, send, started } from '../../helpers/conversations.js';
import { appToken } from '../../helpers/oauth-flow.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let key: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  key = await mintToken(relay.url);
});

afterAll(async () => {
  await relay?.close();
});

for (const revision of ['2025-11-25', '2026-07-28'] as const) {
  describe(`app tokens at /mcp/connect (${revision})`, () => {
    const space = `app-${revision.replace(/-/g, '')}`;

    it('a read and write app token lists the tools plus search and fetch, posts for its KEY, and finds and fetches the post', async () => {
      const { accessToken } = await appToken(relay, { scope: 'read write', keyToken: key.token });
      const c = await connectConnector(relay.url, { token: accessToken, revision, path: '/mcp/connect' });
      try {
        const names = (await c.client.listTools()).tools.map((t) => t.name);
        expect(names).toContain('search');
        expect(names).toContain('fetch');
        expect(names).toContain('svc_post');
        expect(textOf(await callConnector(c, 'svc_whoami', {}))).toContain(key.peerId);
        expect((await callConnector(c, 'svc_space_control', { action: 'create', name: space })).isError ?? false).toBe(false);
        const posted = await callConnector(c, 'svc_post', { space, kind: 'obs', title: 'Connector findings', body: `zebrafish tolerance ${revision}` });
        expect(posted.isError ?? false).toBe(false);
        const postId = (posted.structuredContent as any).post_id as string;

        const search = JSON.parse(textOf(await callConnector(c, 'search', { query: 'zebrafish' })));
        const hit = (search.results as { id: string; title: string; url: string }[]).find((r) => r.id === postId);
        expect(hit?.url).toBe(`${relay.url}/v1/posts/${postId}`);
        expect(hit?.title).toMatch(/Connector findings/);
        const fetched = JSON.parse(textOf(await callConnector(c, 'fetch', { id: postId })));
        expect(fetched).toMatchObject({ id: postId, url: `${relay.url}/v1/posts/${postId}`, metadata: { space, kind: 'obs', author: key.peerId } });
        expect(fetched.text).toContain(`zebrafish tolerance ${revision}`);
      } finally {
        await c.close();
      }
    });

    it('a read-only app token reads, and a write answers HTTP 403 insufficient_scope with nothing written', async () => {
      const { accessToken } = await appToken(relay, { scope: 'read', keyToken: key.token });
      const head = (await call(relay, 'GET', `/v1/spaces/${space}`, { token: key.token })).body.head_seq;
      const c = await connectConnector(relay.url, { token: accessToken, revision, path: '/mcp/connect' });
      try {
        expect((await callConnector(c, 'svc_read_space', { space })).isError ?? false).toBe(false);
        await expect(callConnector(c, 'svc_post', { space, kind: 'obs', title: 'must not land' })).rejects.toThrow(/403|insufficient|scope/i);
      } finally {
        await c.close();
      }
      expect((await call(relay, 'GET', `/v1/spaces/${space}`, { token: key.token })).body.head_seq).toBe(head);

      // On the wire: 403 with the scope challenge naming the resource metadata.
      const res = await fetch(`${relay.url}/mcp/connect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'svc_post', arguments: { space, kind: 'obs', title: 'must not land' } } }),
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer error="insufficient_scope", scope="read write", resource_metadata="${relay.url}/.well-known/oauth-protected-resource/mcp/connect"`,
      );
      expect(JSON.parse(await res.text()).error.code).toBe('INSUFFICIENT_SCOPE');
      expect((await call(relay, 'GET', `/v1/spaces/${space}`, { token: key.token })).body.head_seq).toBe(head);
    });

    it('a read-only app token reads direct messages without moving the read position, says so, and is still refused a write with 403 insufficient_scope', async () => {
      // A KEY that knows `key` (they share a SPACE), so its messages reach `key` as a conversation.
      const peer = await mintToken(relay.url);
      await acquaint(relay, peer, key);
      const conv = await started(relay, peer, [key], { body: `first ${revision}` });
      const id = conv.conversation.conversation_id as string;
      expect((await send(relay, peer, id, { body: `second ${revision}` })).status).toBe(201);
      const before = (await getConversation(relay, key, id)).body;
      expect(before).toMatchObject({ read_seq: '0', unread: true });

      const { accessToken } = await appToken(relay, { scope: 'read', keyToken: key.token });
      const c = await connectConnector(relay.url, { token: accessToken, revision, path: '/mcp/connect' });
      try {
        const read = await callConnector(c, 'svc_messages', { action: 'read', conversation_id: id });
        expect(read.isError ?? false, textOf(read)).toBe(false);
        const text = textOf(read);
        expect(text).toContain(`first ${revision}`);
        expect(text).toContain(`second ${revision}`);
        expect(text).toContain('read-only access: messages not marked read');
        expect((read.structuredContent as any).items.map((m: any) => m.seq)).toEqual(['1', '2']);
        expect((read.structuredContent as any).bridge).toMatchObject({ read_seq: null, read_only: true });
        await expect(callConnector(c, 'svc_message', { action: 'mark_read', conversation_id: id })).rejects.toThrow(/403|insufficient|scope/i);
      } finally {
        await c.close();
      }
      // The read position, as the KEY itself sees it: not moved by the read-only app.
      expect((await getConversation(relay, key, id)).body).toMatchObject({ read_seq: before.read_seq, unread: true });

      // The same read by an app allowed to write does move it.
      const writer = await appToken(relay, { scope: 'read write', keyToken: key.token });
      const w = await connectConnector(relay.url, { token: writer.accessToken, revision, path: '/mcp/connect' });
      try {
        const read = await callConnector(w, 'svc_messages', { action: 'read', conversation_id: id, after: '0' });
        expect(textOf(read)).not.toContain('read-only access');
        expect((read.structuredContent as any).bridge.read_seq).toBe('2');
      } finally {
        await w.close();
      }
      expect((await getConversation(relay, key, id)).body).toMatchObject({ read_seq: '2', unread: false });
    });

    it('an app token at /mcp is tool output TOKEN_INVALID naming /mcp/connect, and search and fetch are not listed there', async () => {
      const { accessToken } = await appToken(relay, { scope: 'read write', keyToken: key.token });
      const c = await connectConnector(relay.url, { token: accessToken, revision });
      try {
        const names = (await c.client.listTools()).tools.map((t) => t.name);
        expect(names).not.toContain('search');
        expect(names).not.toContain('fetch');
        const r = await callConnector(c, 'svc_whoami', {});
        expect(r.isError).toBe(true);
        expect((r.structuredContent as any).error).toMatchObject({ code: 'TOKEN_INVALID', detail: 'token: an app token works at /mcp/connect only' });
      } finally {
        await c.close();
      }
    });

    it('a revoked app token answers 401 at /mcp/connect', async () => {
      const { accessToken } = await appToken(relay, { scope: 'read', keyToken: key.token });
      expect((await call(relay, 'DELETE', '/v1/tokens/current', { token: accessToken })).status).toBeGreaterThanOrEqual(400);
      const list = (await call(relay, 'GET', '/v1/tokens', { token: key.token })).body.items as { id: string; app?: unknown }[];
      for (const t of list.filter((x) => x.app)) await call(relay, 'DELETE', `/v1/tokens/${t.id}`, { token: key.token });
      await expect(connectConnector(relay.url, { token: accessToken, revision, path: '/mcp/connect' })).rejects.toThrow();
    });
  });
}
