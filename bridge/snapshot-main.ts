/**
 * The entry of the bridge's startup snapshot (scripts/bundle-bridge.mjs buildBridgeSnapshot). Building
 * the snapshot runs this module: it loads every module of the bridge, then serves one
 * `initialize` and one `tools/list` in memory at each protocol revision, so that what the MCP
 * SDK and zod build lazily on a first request (the SDK's wire schemas, zod's compiled parsers)
 * is built too. V8 keeps the heap that results, and a start from the snapshot skips all of that
 * work: it runs the main function below.
 *
 * Nothing done here may read the environment, the clock, random bytes, files or stdio: whatever
 * runs while the snapshot is built is frozen into it and shared by every start. The modules keep
 * such work in functions (bridge/cli.ts makes its help text when first asked, the run id is made
 * by `serve`), and the warm-up server below has relay-served deps with no KEY, a memory cache, a
 * relay that is never called, and a clock stuck at 0; it is thrown away before the snapshot is
 * taken.
 */
import { startupSnapshot } from 'node:v8';
import { InMemoryTransport, preloadSchemas, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { main } from './cli.js';
import type { BridgeDeps } from '../tools/deps.js';
import { createMemoryCache } from '../tools/cache/memory-cache.js';
import { createServer } from './server.js';

const CLIENT_INFO = { name: 'svc-snapshot', version: '0.0.0' };

/** One request to a fresh server, answered in memory; what it answers is not looked at. */
async function exchange(messages: JSONRPCMessage[], lastId: number): Promise<void> {
  const deps: BridgeDeps = {
    api: {
      base: new URL('http://127.0.0.1/'),
      request: () => Promise.reject(new Error('no relay while the snapshot is built')),
    },
    identity: { keyName: '', peerId: '', publicKey: '' },
    served: 'relay',
    cache: createMemoryCache(),
    version: '0.0.0',
    now: () => 0,
    log: () => {},
    unsigned: true,
  };
  const server = createServer(deps);
  const [client, end] = InMemoryTransport.createLinkedPair();
  const answered = new Promise<void>((resolve) => {
    client.onmessage = (m) => {
      if ('id' in m && m.id === lastId) resolve();
    };
  });
  await server.connect(end);
  await client.start();
  for (const m of messages) await client.send(m);
  await answered;
  await server.close();
}

/**
 * Node keeps random bytes for the next 128 UUIDs in a pool that a snapshot would freeze: every
 * start from it would then make the same run ids. While the snapshot is built, making a UUID
 * fails the build instead; random bytes asked for after a start are fresh (Node reseeds them).
 */
function forbidUuids(): () => void {
  const nodeCrypto = process.getBuiltinModule('node:crypto');
  const web = globalThis.crypto;
  const forbidden = (): never => {
    throw new Error('a UUID was made while the snapshot was built: it would be the same in every start');
  };
  const saved = nodeCrypto.randomUUID;
  nodeCrypto.randomUUID = forbidden;
  Object.defineProperty(web, 'randomUUID', { value: forbidden, configurable: true, writable: true });
  return () => {
    nodeCrypto.randomUUID = saved;
    delete (web as { randomUUID?: unknown }).randomUUID;
  };
}

async function warmUp(): Promise<void> {
  const allowUuids = forbidUuids();
  preloadSchemas();
  await exchange(
    [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    ],
    2,
  );
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  };
  await exchange([{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }], 1);
  allowUuids();
}

/**
 * A snapshot start is `node --snapshot-blob FILE ENTRY_URL [arguments]`: the launcher names the
 * bundle this snapshot stands for first, so that help and errors name the same command.
 */
startupSnapshot.setDeserializeMainFunction(() => {
  const [, entry, ...argv] = process.argv;
  if (entry === undefined || !entry.startsWith('file:')) {
    process.stderr.write('svc-bridge: a snapshot start names its bundle first: node --snapshot-blob FILE file:///path/to/bridge.mjs [command]\n');
    process.exit(2);
  }
  process.argv.splice(1, 1);
  main(argv, process.env, entry);
});

// CommonJS has no top-level await; the snapshot is taken once the event loop is empty. A failed
// warm-up must fail the build: Node writes the snapshot even after an uncaught exception thrown
// from a later tick (and exits 0), but not when the build exits first.
warmUp().catch((e: unknown) => {
  process.stderr.write(`svc-bridge snapshot: the warm-up failed: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
