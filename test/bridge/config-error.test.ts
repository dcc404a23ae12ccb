/**
 * A bridge that cannot start (a bad setting, a key file it cannot read) still serves MCP over
 * stdio, so the client shows the reason instead of "Connection closed": every tool of the real
 * bridge is listed and every call answers one clear message as a tool error, logged once to
 * stderr. The real bridge process, the MCP SDK client over stdio, no relay needed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BRIDGE_TOOL_NAMES } from '../../bridge/config-error-server.js';
import { callTool, startBridge, tempHome, textOf, type RunningBridge, type StartBridgeOptions } from '../helpers/bridge.js';

const NO_RELAY = 'http://127.0.0.1:9';
let running: RunningBridge | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(opts: StartBridgeOptions): Promise<RunningBridge> {
  running = await startBridge(opts);
  return running;
}

/** Call a few tools and check each answers the same error text; return that text. */
async function everyToolSays(bridge: RunningBridge): Promise<string> {
  const texts: string[] = [];
  for (const [name, args] of [
    ['svc_whoami', {}],
    ['svc_post', { space: 'notes', title: 't', body: 'b' }],
    ['svc_seek', { query: 'anything' }],
  ] as const) {
    const r = await callTool(bridge, name, args);
    expect(r.isError, name).toBe(true);
    texts.push(textOf(r));
  }
  expect(new Set(texts).size).toBe(1);
  expect(texts[0]).toMatch(/^svc-bridge could not start, so no svc tool works until this is fixed: /);
  expect(texts[0]).toContain('restart the svc MCP server');
  return texts[0]!;
}

/** The message appears in stderr exactly once. */
function loggedOnce(bridge: RunningBridge, message: string): void {
  expect(bridge.stderr().split(message).length - 1).toBe(1);
}

describe('a bridge that cannot start explains itself over MCP', () => {
  it('it offers the same tools as a bridge that started', async () => {
    const good = await startBridge({ relayUrl: NO_RELAY });
    const goodNames = (await good.client.listTools()).tools.map((t) => t.name).sort();
    await good.close();
    const bad = await start({ relayUrl: 'relay.example' });
    const badNames = (await bad.client.listTools()).tools.map((t) => t.name).sort();
    expect(badNames).toEqual(goodNames);
    expect(badNames).toEqual([...BRIDGE_TOOL_NAMES].sort());
  }, 60_000);

  it('a bad SVC_API: every tool call says SVC_API is not a URL and how to set it', async () => {
    const bridge = await start({ relayUrl: 'relay.example' });
    const text = await everyToolSays(bridge);
    expect(text).toContain('CONFIG. SVC_API is not an absolute URL: "relay.example".');
    expect(text).toContain('Set SVC_API to the relay address');
    loggedOnce(bridge, text);
  }, 60_000);

  it('plain http to another host in SVC_API is explained the same way, on revision 2026-07-28 too', async () => {
    const bridge = await start({ relayUrl: 'http://relay.example', revision: '2026-07-28' });
    const text = await everyToolSays(bridge);
    expect(text).toContain('INSECURE_API');
    expect(text).toContain('Use the https:// address of the relay');
  }, 60_000);

  it('an unreadable key file: every tool call names the file and how to recover', async () => {
    const home = tempHome();
    mkdirSync(join(home, 'keys'), { recursive: true, mode: 0o700 });
    const pem = join(home, 'keys', 'default.pem');
    writeFileSync(pem, 'this is not a key\n', { mode: 0o600 });
    const bridge = await start({ relayUrl: NO_RELAY, home });
    const text = await everyToolSays(bridge);
    expect(text).toContain(`KEY_FILE. ${pem}: not a PKCS#8 PEM private key.`);
    expect(text).toContain('svc-bridge keys new');
    loggedOnce(bridge, text);
  }, 60_000);

  it('a malformed SVC_TOKEN: every tool call says so without repeating the token', async () => {
    const token = 'svc_NOT-A-REAL-TOKEN-0123';
    const bridge = await start({ relayUrl: NO_RELAY, env: { SVC_TOKEN: token } });
    const text = await everyToolSays(bridge);
    expect(text).toContain('CONFIG. SVC_TOKEN is not a token');
    expect(text).toContain('Unset SVC_TOKEN');
    expect(text).not.toContain(token);
    expect(bridge.stderr()).not.toContain(token);
    loggedOnce(bridge, text);
  }, 60_000);
});
