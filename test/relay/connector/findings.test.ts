/**
 * Findings through the relay's `/mcp` with the MCP SDK client, as the public service's bridge
 * passes them: svc_post with kind finding and its data (claim, status, confidence, sources),
 * svc_post with a warn citing it in data.sources, and svc_spaces action=findings reading where
 * each stands; svc_read_space shows a finding's snippet. The claim and a warn's title are their authors' words: shown between peer
 * markers. A refused finding is tool output with its code, and nothing is posted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../../helpers/bridge.js';
import { callConnector, twoCallers, type ConnectorClient, type TwoCallers } from '../../helpers/connector.js';
import { admit, get, newSpace } from '../../helpers/posts.js';
import { type MintedToken, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let asOwner: ConnectorClient;
let asWriter: ConnectorClient;
let callers: TwoCallers;

beforeAll(async () => {
  callers = await twoCallers();
  ({ relay, owner, writer, asOwner, asWriter } = callers);
});
afterAll(() => callers.close());

async function tool(c: ConnectorClient, name: string, args: Record<string, unknown>): Promise<{ text: string; body: any; error: boolean }> {
  relay.clock.advance(2_100);
  const r = await callConnector(c, name, args);
  return { text: textOf(r), body: r.structuredContent, error: r.isError === true };
}

describe('findings at /mcp', () => {
  it('svc_post takes kind finding, a warn citing it contests it, and svc_spaces action=findings shows both', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const base = await tool(asWriter, 'svc_post', { space: space.name, kind: 'result', title: 'bench', body: 'p50 12 ms' });
    expect(base.error, base.text).toBe(false);
    const made = await tool(asWriter, 'svc_post', {
      space: space.name,
      kind: 'finding',
      title: 'Cache halves p50',
      data: { claim: 'The cache halves p50', status: 'supported', confidence: 'high', sources: [base.body.post_id] },
    });
    expect(made.error, made.text).toBe(false);
    const warn = await tool(asOwner, 'svc_post', { space: space.name, kind: 'warn', title: 'Cold cache only', data: { sources: [made.body.post_id] } });
    expect(warn.error, warn.text).toBe(false);

    const read = await tool(asOwner, 'svc_spaces', { action: 'findings', name: space.name });
    expect(read.error, read.text).toBe(false);
    expect(read.body.items).toMatchObject([
      {
        number: 1,
        post_id: made.body.post_id,
        claim: 'The cache halves p50',
        status: 'supported',
        confidence: 'high',
        sources: [base.body.post_id],
        contested: [{ cause: 'warn', by: owner.peerId, title: 'Cold cache only' }],
      },
    ]);
    expect(read.text).toMatch(/claim: ⟦peer claim [0-9a-f]+⟧The cache halves p50⟦\/peer [0-9a-f]+⟧/);
    expect(read.text).toMatch(/contested on seq \d+: warn seq \d+ by [0-9a-f]{64}: ⟦own title [0-9a-f]+⟧Cold cache only/);
    // A page of snippets names the claim too, between the peer markers of its author.
    const page = await tool(asOwner, 'svc_read_space', { space: space.name, after: '0' });
    expect(page.error, page.text).toBe(false);
    expect(page.text).toMatch(/finding: supported, confidence high, rests on 1; claim: ⟦peer claim [0-9a-f]+⟧The cache halves p50⟦\/peer [0-9a-f]+⟧/);
    const narrowed = await tool(asOwner, 'svc_spaces', { action: 'findings', name: space.name, status: 'withdrawn' });
    expect(narrowed.body.items).toEqual([]);
  });

  it('a finding with a wrong field is refused as tool output with its code, nothing posted', async () => {
    const space = await newSpace(relay, owner);
    const before = (await get(relay, `/v1/spaces/${space.name}/posts?detail=ids`, owner)).body.head_seq;
    const r = await tool(asOwner, 'svc_post', { space: space.name, kind: 'finding', title: 'bad', data: { claim: 'c', status: 'withdrawn', confidence: 'high' } });
    expect(r.error).toBe(true);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
    expect(r.text).toContain('data.status');
    const gone = await tool(asOwner, 'svc_post', { space: space.name, kind: 'finding', title: 'far', data: { claim: 'c', status: 'proposed', confidence: 'low', sources: ['40'] } });
    expect(gone.body.error.code).toBe('SOURCE_NOT_FOUND');
    expect((await get(relay, `/v1/spaces/${space.name}/posts?detail=ids`, owner)).body.head_seq).toBe(before);
  });
});
