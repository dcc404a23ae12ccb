/**
 * A small real HTTP proxy for tests that need a relay that misbehaves: it listens on
 * 127.0.0.1 port 0, forwards every request to the real relay, and lets a test rewrite an
 * answer (a byte of a receipt, a checkpoint, the capability document) or drop the connection
 * after the relay has answered (a lost answer). Not a mock: the relay behind it is real.
 *
 * Start it before the relay, so the relay can be told its public address is the proxy's (the
 * bridge checks that a sign-in challenge names the host it talks to).
 */
import { createServer, request, type ClientRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedAnswer {
  readonly method: string;
  /** Path and query, as the client sent them. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/**
 * A new body, a new status with its body (a refusal the relay would send in another state),
 * `'drop'` to cut the connection after the relay answered, or undefined to pass.
 */
export type Rewrite = (a: ProxiedAnswer) => string | { status: number; body: string } | 'drop' | undefined;

export interface RunningProxy {
  readonly url: string;
  /** Where requests go (the real relay); set once the relay listens. */
  target: string;
  /** The current rewrite (none by default). */
  rewrite: Rewrite | undefined;
  /** Requests seen, as `METHOD url`. */
  readonly seen: string[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

export async function startProxy(): Promise<RunningProxy> {
  const state: { target: string; rewrite: Rewrite | undefined; seen: string[] } = { target: '', rewrite: undefined, seen: [] };
  // Upstream requests in flight: aborted when their client goes away or the proxy closes, so a
  // long poll a dead bridge left behind does not keep the relay's connection busy.
  const inflight = new Set<ClientRequest>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      state.seen.push(`${method} ${url}`);
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)) headers[k] = v;
      }
      // One connection per request (no pooling), destroyed when the client goes away.
      const upstream = await new Promise<{ status: number; headers: Record<string, string>; text: string }>((resolve, reject) => {
        const out = request(`${state.target}${url}`, { method, headers, agent: false }, (up) => {
          const parts: Buffer[] = [];
          up.on('data', (d: Buffer) => parts.push(d));
          up.on('end', () => {
            const h: Record<string, string> = {};
            for (const [k, v] of Object.entries(up.headers)) if (typeof v === 'string') h[k] = v;
            resolve({ status: up.statusCode ?? 502, headers: h, text: Buffer.concat(parts).toString('utf8') });
          });
          up.on('error', reject);
        });
        inflight.add(out);
        out.on('close', () => inflight.delete(out));
        res.once('close', () => {
          if (!res.writableFinished) out.destroy();
        });
        out.on('error', reject);
        out.end(body.length > 0 ? body : undefined);
      });
      const contentType = upstream.headers['content-type'] ?? '';
      const changed = state.rewrite?.({ method, url, status: upstream.status, contentType, body: upstream.text });
      if (changed === 'drop') {
        req.socket.destroy();
        return;
      }
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(upstream.headers)) {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) out[k] = v;
      }
      const replaced = typeof changed === 'object' ? changed : undefined;
      res.writeHead(replaced?.status ?? upstream.status, out);
      res.end(replaced?.body ?? (typeof changed === 'string' ? changed : upstream.text));
    })().catch((e: unknown) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${(e as Error).message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get target() {
      return state.target;
    },
    set target(t: string) {
      state.target = t;
    },
    get rewrite() {
      return state.rewrite;
    },
    set rewrite(r: Rewrite | undefined) {
      state.rewrite = r;
    },
    seen: state.seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of inflight) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
