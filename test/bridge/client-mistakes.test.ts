/**
 * A client's mistake on the bridge's stdio is never -32603 Internal error, which tells a client
 * the server failed (JSON-RPC 2.0 §5.1; MCP "Error handling"): params a method does not take
 * (resources/read without its uri, prompts/get's name as an array, a list's cursor as a number,
 * initialize's capabilities as a string) are -32602 Invalid params naming what is wrong, in one
 * line, and the bridge goes on answering. The messages are written as raw JSON lines, as any
 * client may send them; the SDK's own client would refuse to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInterface } from 'node:readline';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawnBridge, tempHome } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

interface Answer {
  id?: unknown;
  result?: any;
  error?: { code: number; message: string };
}

describe("params a method does not take, on the bridge's stdio", () => {
  let relay: RunningRelay;
  let bridge: ChildProcessWithoutNullStreams;
  const answers = new Map<unknown, Answer>();
  const waiting = new Map<unknown, (a: Answer) => void>();

  const ask = async (id: number, method: string, params?: unknown): Promise<Answer> => {
    const answered = new Promise<Answer>((resolve) => waiting.set(id, resolve));
    bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })}\n`);
    return await answered;
  };

  beforeAll(async () => {
    relay = await startRelay();
    bridge = spawnBridge([], { relayUrl: relay.url, home: tempHome() });
    createInterface({ input: bridge.stdout }).on('line', (line) => {
      const a = JSON.parse(line) as Answer;
      answers.set(a.id, a);
      waiting.get(a.id)?.(a);
    });
    const init = await ask(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mistakes', version: '1' } });
    expect(init.result?.serverInfo?.name).toBe('svc-bridge');
    bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }, 60_000);

  afterAll(async () => {
    bridge?.kill('SIGTERM');
    await relay?.close();
  });

  it.each([
    ['resources/read', {}, 'params.uri'],
    ['prompts/get', { name: ['start_run'] }, 'params.name'],
    ['tools/list', { cursor: 5 }, 'params.cursor'],
    ['resources/list', { cursor: [] }, 'params.cursor'],
  ])('%s with %j is -32602 naming %s', async (method, params, where) => {
    const a = await ask(100 + answers.size, method, params);
    expect(a.error?.code).toBe(-32602);
    expect(a.error?.message).toMatch(new RegExp(`^Invalid params for ${method.replace('/', '\\/')}: ${where.replace('.', '\\.')}: `));
    expect(a.error?.message).not.toContain('\n');
  });

  it('answers well-formed requests as before, after the mistakes', async () => {
    const a = await ask(900, 'tools/list');
    expect(a.error).toBeUndefined();
    expect(a.result.tools.map((t: { name: string }) => t.name)).toContain('svc_whoami');
  });
});

describe("an opening initialize whose params do not fit, on the bridge's stdio", () => {
  it('is -32602 naming what is wrong, and a well-formed initialize after it opens the session', async () => {
    const relay = await startRelay();
    const bridge = spawnBridge([], { relayUrl: relay.url, home: tempHome() });
    try {
      const lines = createInterface({ input: bridge.stdout })[Symbol.asyncIterator]();
      const next = async (): Promise<Answer> => JSON.parse(((await lines.next()).value as string) ?? 'null') as Answer;
      const send = (m: unknown) => bridge.stdin.write(`${JSON.stringify(m)}\n`);
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: 'all', clientInfo: { name: 'mistakes', version: '1' } } });
      const refused = await next();
      expect(refused.id).toBe(1);
      expect(refused.error?.code).toBe(-32602);
      expect(refused.error?.message).toMatch(/^Invalid params for initialize: params\.capabilities: /);
      send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mistakes', version: '1' } } });
      const opened = await next();
      expect(opened.id).toBe(2);
      expect(opened.result?.serverInfo?.name).toBe('svc-bridge');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
      const listed = await next();
      expect(listed.id).toBe(3);
      expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain('svc_whoami');
    } finally {
      bridge.kill('SIGTERM');
      await relay.close();
    }
  }, 60_000);
});
