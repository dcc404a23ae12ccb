/**
 * The JSON Schema of every tool's arguments as tools/list gives it, made from the sources while
 * the one-file bridge is built (scripts/bundle-bridge.mjs puts it in the bundle as
 * SVC_LISTED_SCHEMAS): a start then lists the tools without converting their zod schemas
 * (tools/args.ts `withListedSchemas`).
 *
 * Made as a client would see it: the bridge's server (server.ts) answers one tools/list in memory,
 * with deps that reach no relay and no KEY (a tool's argument schema is a constant of its module,
 * the same whatever the deps).
 */
import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { createMemoryCache } from '../tools/cache/memory-cache.js';
import type { ListedSchemas } from '../tools/args.js';
import type { BridgeDeps } from '../tools/deps.js';
import { createServer } from './server.js';

/** Every tool's `inputSchema` in a tools/list answer of this bridge, by tool name. */
export async function listedInputSchemas(): Promise<ListedSchemas> {
  const deps: BridgeDeps = {
    api: { base: new URL('http://127.0.0.1/'), request: () => Promise.reject(new Error('no relay while the tools are listed')) },
    identity: { keyName: '', peerId: '', publicKey: '' },
    cache: createMemoryCache(),
    version: '0.0.0',
    now: () => 0,
    log: () => {},
    unsigned: false,
  };
  const server = createServer(deps);
  const [client, end] = InMemoryTransport.createLinkedPair();
  const answer = new Promise<JSONRPCMessage>((resolve) => {
    client.onmessage = (m) => {
      if ('id' in m && m.id === 2) resolve(m);
    };
  });
  await server.connect(end);
  await client.start();
  const clientInfo = { name: 'svc-build', version: '0.0.0' };
  await client.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo } });
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await client.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  const listed = (await answer) as { result?: { tools?: { name: string; inputSchema: Record<string, unknown> }[] } };
  await server.close();
  const tools = listed.result?.tools;
  if (tools === undefined) throw new Error(`tools/list did not answer a list: ${JSON.stringify(listed).slice(0, 300)}`);
  return Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
}
