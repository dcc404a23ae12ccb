/**
 * Streamable HTTP for tests: `serveHttp` puts a web-standard handler (the SDK's
 * `createMcpHandler(...).fetch`, or any `Request -> Response`) behind a node:http server on
 * 127.0.0.1, streaming SSE bodies as they are written; `bridgeOverHttp` serves the bridge's own
 * `createServer` factory that way, with the deps `svc-bridge serve` opens (the KEY from a key
 * directory, the relay client, the caches), because the official conformance suite speaks HTTP
 * only while the bridge is a stdio program.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { openCache } from '../../bridge/cache/cache-file.js';
import { RelayClient } from '../../bridge/relay-client.js';
import { createSealer } from '../../bridge/sealed/encryption.js';
import type { BridgeDeps } from '../../tools/deps.js';
import { chooseKey, openKeyDirectory } from '../../bridge/keys/keys.js';
import { createSealing } from '../../bridge/sealed/sealing.js';
import { sealingPort } from '../../bridge/sealed/sealing-port.js';
import { createServer } from '../../bridge/server.js';
import { packageVersion } from '../../launch/package-version.js';
import { tempHome } from './bridge.js';

export interface HttpEndpoint {
  /** The endpoint's address, e.g. http://127.0.0.1:1234/mcp. */
  url: string;
  close(): Promise<void>;
}

async function webRequest(req: IncomingMessage, abort: AbortSignal): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const method = req.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method, headers, body, signal: abort });
}

async function writeResponse(res: ServerResponse, answer: Response): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((v, k) => void (headers[k] = v));
  res.writeHead(answer.status, headers);
  if (answer.body === null) {
    res.end();
    return;
  }
  const reader = answer.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client went away mid-stream.
  }
  res.end();
}

/** Serve `handle` at http://127.0.0.1:<port><path> (other paths: 404). */
export async function serveHttp(handle: (req: Request) => Promise<Response>, path = '/mcp'): Promise<HttpEndpoint> {
  const server = createHttpServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== path) {
      res.writeHead(404).end('not found');
      return;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    void webRequest(req, abort.signal)
      .then(handle)
      .then((answer) => writeResponse(res, answer))
      .catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The deps `svc-bridge serve` opens (a fresh KEY of its own), for a bridge server in this process. */
export function bridgeDeps(relayUrl: string): { deps: BridgeDeps; close(): void } {
  const log = () => {};
  const dir = openKeyDirectory(tempHome('svc-bridge-http-'));
  const k = chooseKey(dir, undefined);
  const api = new RelayClient({ api: new URL(relayUrl), key: k, dir, log });
  const cache = openCache(dir, k.name);
  const sealing = createSealing(
    { api, identity: { peerId: k.peerId }, signer: k.signer, sealer: createSealer(k), privateSalt: k.privateSalt, now: Date.now, log },
    cache.path,
  );
  const deps: BridgeDeps = {
    api,
    identity: { keyName: k.name, peerId: k.peerId, publicKey: k.publicKey },
    signer: k.signer,
    cache,
    runId: crypto.randomUUID(),
    version: packageVersion(),
    now: Date.now,
    log,
    privateSalt: k.privateSalt,
    unsigned: false,
    sealing: sealingPort(sealing, cache),
  };
  return {
    deps,
    close() {
      sealing.close();
      cache.close();
    },
  };
}

/**
 * The bridge's MCP server (bridge/server.ts `createServer`) behind a loopback Streamable HTTP
 * endpoint, talking to the relay at `relayUrl`. Served statelessly (the SDK's default): every
 * request is answered by a fresh server instance that closes when it has answered.
 */
export async function bridgeOverHttp(relayUrl: string): Promise<HttpEndpoint & { deps: BridgeDeps }> {
  const opened = bridgeDeps(relayUrl);
  const handler = createMcpHandler(() => createServer(opened.deps));
  const endpoint = await serveHttp((req) => handler.fetch(req));
  return {
    ...endpoint,
    deps: opened.deps,
    async close() {
      await endpoint.close();
      await handler.close();
      opened.close();
    },
  };
}
