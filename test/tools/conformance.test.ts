/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
 * the bridge's MCP server (its own `createServer` factory behind a loopback Streamable HTTP
 * endpoint, since the suite speaks HTTP only) and against the relay's connector at `/mcp`.
 * Scenarios svc does not answer are skipped by name with the reason (test/helpers/conformance.ts);
 * what the fixture scenarios check in general is checked here on svc's own tools, resources and
 * prompts with the SDK's Streamable HTTP client.
 *
 * @module-tag slow
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLICABLE, SKIPPED, failures, serverScenarios } from '../helpers/conformance.js';
import { bridgeOverHttp, serveHttp, type HttpEndpoint } from '../helpers/http-mcp.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
let bridge: HttpEndpoint;
let key: MintedToken;
/** The relay's /mcp for a KEY: a loopback front that adds the KEY's bearer (the suite sends no header of its own). */
let keyed: HttpEndpoint;

beforeAll(async () => {
  relay = await startRelay();
  bridge = await bridgeOverHttp(relay.url);
  key = await mintToken(relay.url);
  keyed = await serveHttp(async (req) => {
    const headers = new Headers(req.headers);
    headers.set('authorization', `Bearer ${key.token}`);
    headers.delete('host');
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
    return fetch(`${relay.url}/mcp`, { method: req.method, headers, body, signal: req.signal });
  });
});

afterAll(async () => {
  await keyed?.close();
  await bridge?.close();
  await relay?.close();
});

async function connect(url: string, revision: '2025-11-25' | '2026-07-28', token?: string): Promise<Client> {
  const client = new Client({ name: 'svc-conformance', version: '0.0.0' }, revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/**
 * What the suite's fixture scenarios check, on svc's own surface, for one endpoint and revision.
 * `subscribe`: the endpoint takes 2025-11-25 resources/subscribe (the bridge; the relay serves
 * that revision statelessly, with no session to deliver on, and offers 2026-07-28 listen instead).
 */
async function fixtureEquivalents(url: string, revision: '2025-11-25' | '2026-07-28', opts: { token?: string; subscribe: boolean }): Promise<void> {
  const { token } = opts;
  const client = await connect(url, revision, token);
  try {
    // tools-call-error: a refusal is an isError result with its text, not a protocol error.
    const err = (await client.callTool({ name: 'svc_get', arguments: { post_id: '00000000-0000-4000-8000-000000000000' } })) as CallToolResult;
    expect(err.isError).toBe(true);
    expect(err.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/\S/) });
    // tools-call-simple-text: a tool answers text content.
    const ok = (await client.callTool({ name: 'svc_guide', arguments: { part: 'primer' } })) as CallToolResult;
    expect(ok.isError ?? false).toBe(false);
    expect(ok.content.find((c) => c.type === 'text')).toMatchObject({ text: expect.stringMatching(/\S/) });
    // resources-read-text: a listed resource reads as text with its uri and type.
    const guide = await client.readResource({ uri: 'svc://guide' });
    expect(guide.contents[0]).toMatchObject({ uri: 'svc://guide', mimeType: expect.any(String), text: expect.stringMatching(/\S/) });
    // resources-templates-read: a template read reflects its parameter.
    const space = await client.readResource({ uri: 'svc://spaces/no-such-space-here' }).catch((e: Error) => e);
    expect(space instanceof Error ? space.message : JSON.stringify(space)).toContain('no-such-space-here');
    // prompts-get-with-args: a prompt's arguments appear in its messages.
    const prompt = await client.getPrompt({ name: 'write_dossier', arguments: { space: 'conformance-space' } });
    expect(JSON.stringify(prompt.messages)).toContain('conformance-space');
    // resources-subscribe / resources-unsubscribe (2025-11-25): a subscribable address answers {}.
    if (revision === '2025-11-25' && opts.subscribe) {
      expect(await client.subscribeResource({ uri: 'svc://mailbox' })).toEqual({});
      expect(await client.unsubscribeResource({ uri: 'svc://mailbox' })).toEqual({});
    }
    // The same at 2026-07-28: subscriptions/listen acknowledges what it will follow.
    if (revision === '2026-07-28' && token !== undefined) {
      const sub = await client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: ['svc://mailbox'] });
      // Closing the client below ends the stream too.
    }
  } finally {
    await client.close();
  }
}

describe('the conformance suite', () => {
  it('knows every server scenario of the installed suite as applicable or skipped with a reason', async () => {
    const known = await serverScenarios();
    expect(known.length).toBeGreaterThan(10);
    const unclassified = known.filter((s) => !APPLICABLE.includes(s) && SKIPPED[s] === undefined);
    expect(unclassified).toEqual([]);
    for (const s of APPLICABLE) expect(SKIPPED[s]).toBeUndefined();
  });
});

describe('the bridge over Streamable HTTP', () => {
  it('passes every applicable scenario of the conformance suite', async () => {
    // dns-rebinding-protection checks the HTTP front, and this loopback front is the test's own:
    // the bridge itself serves stdio only.
    expect(await failures(bridge.url, APPLICABLE.filter((s) => s !== 'dns-rebinding-protection'))).toEqual([]);
  });

  it('answers what the fixture scenarios check with its own tools, resources and prompts (2025-11-25)', async () => {
    await fixtureEquivalents(bridge.url, '2025-11-25', { subscribe: true });
  });

  it('answers what the fixture scenarios check with its own tools, resources and prompts (2026-07-28)', async () => {
    await fixtureEquivalents(bridge.url, '2026-07-28', { subscribe: true });
  });
});

describe("the relay's connector at /mcp", () => {
  const hostChecked = (s: string) => s !== 'dns-rebinding-protection';

  it('passes every applicable scenario of the conformance suite without a token', async () => {
    expect(await failures(`${relay.url}/mcp`, APPLICABLE.filter(hostChecked))).toEqual([]);
  });

  it('passes every applicable scenario of the conformance suite for a KEY', async () => {
    // The front adding the bearer is the test's own, so its Host handling is not the relay's.
    expect(await failures(keyed.url, APPLICABLE.filter(hostChecked))).toEqual([]);
  });

  // A relay on a loopback address refuses a foreign Host and Origin (relay/connector/origin.ts),
  // so a web page that rebinds its own name to 127.0.0.1 does not reach it.
  it('refuses a request naming a foreign Host or Origin (dns-rebinding-protection)', async () => {
    expect(await failures(`${relay.url}/mcp`, ['dns-rebinding-protection'])).toEqual([]);
  });

  it('answers what the fixture scenarios check with its own tools, resources and prompts (2025-11-25)', async () => {
    await fixtureEquivalents(`${relay.url}/mcp`, '2025-11-25', { token: key.token, subscribe: false });
  });

  it('answers what the fixture scenarios check with its own tools, resources and prompts (2026-07-28)', async () => {
    await fixtureEquivalents(`${relay.url}/mcp`, '2026-07-28', { token: key.token, subscribe: false });
  });
});
