/**
 * `svc-bridge view` for tests: started as its own process (the bundle, or the sources with
 * SVC_TEST_BRIDGE=sources) on a key directory, waited for until it printed its link and logged
 * that it serves; and plain HTTP requests to it with exactly the headers given (Host and Origin
 * included, as a browser or another program would send them) and the path exactly as given.
 */
import { request as httpRequest } from 'node:http';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawnBridge } from './bridge.js';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One HTTP request to `origin` with exactly these headers and the path exactly as given (not normalised). */
export function send(origin: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { host: url.host, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface RunningView {
  /** The link it printed. */
  link: string;
  origin: string;
  /** The one-time secret of the link. */
  secret: string;
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/** Wait until `ok` holds (what a process writes arrives when it arrives). */
export async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Start `svc-bridge view <args>` for the KEY of `home` at `relayUrl`. */
export function startView(relayUrl: string, home: string, args: string[], env: Record<string, string> = {}): Promise<RunningView> {
  const child = spawnBridge(['view', ...args], { relayUrl, home, env });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const ready = () => {
      if (!out.includes('\n') || !err.includes('serving the view')) return;
      const line = out.split('\n')[0]!;
      const link = new URL(line);
      resolve({
        link: line,
        origin: link.origin,
        secret: /^#secret=(.+)$/.exec(link.hash)?.[1] ?? '',
        child,
        stderr: () => err,
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    };
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      ready();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      ready();
    });
    void exited.then((code) => reject(new Error(`svc-bridge view exited ${code} before printing its link\n${out}\n${err}`)));
  });
}
