/**
 * Tool answers of structured content alone at the connector (relay/connector/structured.ts): a
 * 2026-07-28 client that declares the extension in its client capabilities gets `content: []`
 * beside the same structured content a client that reads text gets; a refusal keeps its text;
 * a client that declares nothing, and a 2025-11-25 client, get the text as before. Driven by the
 * SDK's client against the real relay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { STRUCTURED_ONLY_EXTENSION } from '../../../relay/connector/structured.js';
import type { McpRevision } from '../../helpers/bridge.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { newSpace, post } from '../../helpers/posts.js';

let relay: RunningRelay;
let owner: MintedToken;
let space: string;
let postId: string;
const clients: Client[] = [];

async function connect(revision: McpRevision, structuredOnly: boolean): Promise<Client> {
  const client = new Client(
    { name: 'svc-structured-test', version: '0.0.0' },
    {
      ...(revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(structuredOnly ? { capabilities: { extensions: { [STRUCTURED_ONLY_EXTENSION]: {} } } } : {}),
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${owner.token}` } } }));
  clients.push(client);
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured content without what differs from one call to the next (the peer markers' nonce is in the text only). */
function structured(r: CallToolResult): unknown {
  return r.structuredContent;
}

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  const s = await newSpace(relay, owner);
  space = s.name;
  for (let i = 0; i < 3; i++) postId = (await post(relay, owner, space, { kind: 'obs', title: `merkle note ${i}`, body: `about a merkle tree, part ${i}` })).post_id;
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await relay?.close();
});

describe('a 2026-07-28 client that declares it reads structured content alone', () => {
  const calls: [string, () => Record<string, unknown>][] = [
    ['svc_read_space', () => ({ space, order: 'desc' })],
    ['svc_get', () => ({ post_id: postId })],
    ['svc_seek', () => ({ q: 'merkle' })],
    ['svc_whoami', () => ({})],
  ];

  for (const [tool, args] of calls) {
    it(`gets ${tool}'s structured content with no text, the same structured content a text client gets`, async () => {
      const alone = await connect('2026-07-28', true);
      const withText = await connect('2026-07-28', false);
      const a = await callTool(alone, tool, args());
      const t = await callTool(withText, tool, args());
      expect(a.isError ?? false).toBe(false);
      expect(a.content).toEqual([]);
      expect(t.content.length).toBe(1);
      expect(t.content[0]!.type).toBe('text');
      expect(structured(a)).toEqual(structured(t));
    });
  }

  it('still gets the text of a refusal', async () => {
    const alone = await connect('2026-07-28', true);
    const r = await callTool(alone, 'svc_read_space', { space: 'no-such-space-here' });
    expect(r.isError).toBe(true);
    expect(r.content.length).toBe(1);
    expect((r.content[0] as { text: string }).text).toContain('SPACE_NOT_FOUND');
    expect((r.structuredContent as { error: { code: string } }).error.code).toBe('SPACE_NOT_FOUND');
  });
});

describe('clients that do not declare it', () => {
  it('a 2025-11-25 client gets the text, even with the extension among its capabilities', async () => {
    const legacy = await connect('2025-11-25', true);
    const r = await callTool(legacy, 'svc_read_space', { space, order: 'desc' });
    expect(r.content.length).toBe(1);
    expect((r.content[0] as { text: string }).text).toContain('merkle note 2');
  });

  it('a 2026-07-28 client without the extension gets the text', async () => {
    const plainClient = await connect('2026-07-28', false);
    const r = await callTool(plainClient, 'svc_get', { post_id: postId });
    expect((r.content[0] as { text: string }).text).toContain('merkle note 2');
  });
});
