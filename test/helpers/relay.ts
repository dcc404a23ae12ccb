/**
 * Test helpers that run the REAL relay: `startRelay` builds the app in-process on a temporary
 * data directory and listens on 127.0.0.1 port 0 (real HTTP, real SQLite, real crypto), with a
 * clock tests can move; `spawnRelay` runs the relay as its own process (for kill -9 restarts);
 * `mintToken` signs in over HTTP with a real Ed25519 signature; `call` sends any request.
 */
import { openCheckpointLog } from '../../relay/checkpoint-log.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../relay/app.js';
import type { RelayConfig } from '../../relay/config.js';
import { openStore, type Store } from '../../relay/store/index.js';
import { onPostgres, testDatabase } from './test-store.js';
import { loadServiceKeys, type ServiceKeys } from '../../relay/service-keys.js';
import { fromHex, toHex } from '../../shared/encoding.js';
import { signerFromSeed, tokenChallengeMessage, type Signer } from '../../shared/identity.js';
import { RELAY_BUILD_ERROR_ENV, RELAY_MAIN_ENV } from './relay-build.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ClockControl {
  /** Now as the relay sees it (ms). */
  now(): number;
  /** Move the relay's clock forward (or back, with a negative amount). */
  advance(ms: number): void;
}

export interface RunningRelay {
  url: string;
  app: FastifyInstance;
  store: Store;
  serviceKeys: ServiceKeys;
  dataDir: string;
  /** What openStore took: the data directory, or the postgres:// URL of its own database (test/helpers/test-store.ts). */
  database: string;
  clock: ClockControl;
  /** Close the server, then the database; remove the data directory unless it was given. */
  close(): Promise<void>;
}

export interface StartRelayOptions {
  /** Use this data directory (kept on close) instead of a fresh temporary one. */
  dataDir?: string;
  /** Listen on this port of 127.0.0.1 (0, the default, picks a free one). */
  port?: number;
  publicUrl?: string;
  dev?: boolean;
  /** Start the clock this many ms from real time. */
  clockOffsetMs?: number;
  /** The relay's randomness (crypto randomBytes unless given). */
  random?: (n: number) => Uint8Array;
  /** --public-space-key-age: seconds a KEY waits before creating a public SPACE (default a day). */
  publicSpaceKeyAgeSeconds?: number;
  /** Passkey settings (false: --no-passkeys); default on, rp_id and origin from the public URL. */
  passkeys?: RelayConfig['passkeys'];
  /** OAuth app sign-in (false: --no-app-sign-in); default on. */
  appSignIn?: boolean;
  /** --allow-loopback-client-documents: client ID metadata documents from http://127.0.0.1 too. */
  allowLoopbackClientDocuments?: boolean;
  /** The one-file bridge served at /bridge.mjs (a path: test/helpers/bundle.ts); none by default, as from the sources. */
  bridgeBundle?: string;
  /** Append every signed checkpoint to this log (--checkpoint-log); none by default. */
  checkpointLog?: string;
  /** false turns every rate limit and concurrency gate off (as SVC_RELAY_NO_RATE_LIMITS=1 does); default on. */
  rateLimits?: boolean;
  /** true: signed posts' Ed25519 checks on the thread pool (as SVC_RELAY_VERIFY_OFF_THREAD=1 does); default off. */
  verifyOffThread?: boolean;
  /** false: the connector answers every request through the MCP SDK (relay/connector/direct.ts off). */
  connectorDirect?: boolean;
  /** Further settings, over the ones above (the monitoring ones: minFreeDisk, metrics, logLevel). */
  config?: Partial<RelayConfig>;
}

/** relay/main.ts through tsx, from the checkout the process runs in. */
const RELAY_SOURCES = ['--import', 'tsx', 'relay/main.ts'];

/**
 * What `node` takes to start the relay from this checkout (cwd REPO_ROOT), before its own
 * arguments: the run's compiled relay (test/helpers/relay-build.ts) when the global setup built
 * it, else relay/main.ts through tsx (SVC_TEST_RELAY=sources, or a script run without the
 * setup, as the benches are).
 */
export function relayEntry(): string[] {
  const main = process.env[RELAY_MAIN_ENV];
  if (main !== undefined && main !== '') return [main];
  const error = process.env[RELAY_BUILD_ERROR_ENV];
  if (error !== undefined && error !== '') throw new Error(error);
  return RELAY_SOURCES;
}

export function tempDataDir(prefix = 'svc-relay-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startRelay(opts: StartRelayOptions = {}): Promise<RunningRelay> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? tempDataDir();
  let offset = opts.clockOffsetMs ?? 0;
  const clock = () => Date.now() + offset;
  const random = opts.random ?? ((n: number) => new Uint8Array(randomBytes(n)));
  const config: RelayConfig = {
    host: '127.0.0.1',
    port: opts.port ?? 0,
    dataDir,
    publicUrl: opts.publicUrl,
    dev: opts.dev ?? true,
    publicSpaceKeyAgeSeconds: opts.publicSpaceKeyAgeSeconds,
    passkeys: opts.passkeys,
    appSignIn: opts.appSignIn,
    allowLoopbackClientDocuments: opts.allowLoopbackClientDocuments,
    bridgeBundle: opts.bridgeBundle,
    ...opts.config,
  };
  const database = await testDatabase(dataDir, !ownDir);
  const store = await openStore(database.location);
  const serviceKeys = loadServiceKeys({ dataDir, dev: config.dev, now: clock(), random });
  const checkpointLog = opts.checkpointLog === undefined ? undefined : openCheckpointLog(opts.checkpointLog);
  const app = buildApp({ config, store, clock, random, serviceKeys, checkpointLog, rateLimits: opts.rateLimits, verifyOffThread: opts.verifyOffThread, connectorDirect: opts.connectorDirect });
  await app.listen({ port: config.port, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address !== 'object') throw new Error('relay did not bind');
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    store,
    serviceKeys,
    dataDir,
    database: database.location,
    clock: { now: clock, advance: (ms) => void (offset += ms) },
    async close() {
      await app.close();
      await store.close();
      await database.drop();
      checkpointLog?.close();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface MintedToken {
  token: string;
  peerId: string;
  publicKey: string;
  signer: Signer;
  seed: Uint8Array;
  expiresAt: string;
  registered: boolean;
  /** The whole verify answer. */
  answer: Record<string, unknown>;
}

/** An answer of `call`: status, the body parsed when it is JSON, the raw text and the headers. */
export interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/**
 * Any request to the relay with an optional bearer token and JSON body. The body is parsed
 * only when the answer says `application/json` (an ndjson export stays in `text`).
 */
export async function call(
  relay: RunningRelay,
  method: string,
  path: string,
  opts: { token?: string | undefined; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text && (res.headers.get('content-type') ?? '').includes('application/json') ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** POST JSON and read the JSON answer (status and headers too). */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Fetch and read the JSON answer. */
export async function getJson(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/**
 * Sign in over HTTP: challenge, sign `L("token-challenge") ‖ audience ‖ 0 ‖ challenge` with
 * the KEY (a fresh random one unless `seed` is given), verify. Throws on any refusal.
 */
export async function mintToken(
  url: string,
  seed: Uint8Array = new Uint8Array(randomBytes(32)),
  extra: { label?: string; ttl_seconds?: number; invite?: string } = {},
): Promise<MintedToken> {
  const signer = signerFromSeed(seed);
  const publicKey = toHex(signer.publicKey);
  const ch = await postJson(`${url}/v1/keys/challenge`, { public_key: publicKey });
  if (ch.status !== 200) throw new Error(`challenge refused: ${JSON.stringify(ch.body)}`);
  const signature = signer.sign(tokenChallengeMessage(ch.body.audience, fromHex(ch.body.challenge)));
  const v = await postJson(`${url}/v1/keys/verify`, {
    public_key: publicKey,
    challenge: ch.body.challenge,
    signature: toHex(signature),
    ...extra,
  });
  if (v.status !== 200) throw new Error(`verify refused: ${JSON.stringify(v.body)}`);
  return {
    token: v.body.token,
    peerId: v.body.peer_id,
    publicKey,
    signer,
    seed,
    expiresAt: v.body.expires_at,
    registered: v.body.registered,
    answer: v.body,
  };
}

export interface SpawnedRelay {
  url: string;
  process: ChildProcess;
  /** Lines the process wrote to stderr so far. */
  stderr(): string;
  /** Lines the process wrote to stdout so far (its log, when SVC_LOG_LEVEL asks for one). */
  stdout(): string;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Run the relay as a separate process on `dataDir` (port 0) and wait for its "listening on"
 * line. Uses dist/relay/main.js when `built` is true, else `relayEntry()` (relay/main.ts through
 * tsx for another checkout's `root`). Its request log is off (SVC_LOG_LEVEL=silent) unless the
 * environment asks for one.
 */
export async function spawnRelay(
  dataDir: string,
  opts: { built?: boolean; args?: string[]; env?: Record<string, string>; root?: string } = {},
): Promise<SpawnedRelay> {
  const entry = opts.built ? ['dist/relay/main.js'] : opts.root !== undefined ? RELAY_SOURCES : relayEntry();
  // On the PostgreSQL test store the data directory's own database, unless the test names one.
  const given = opts.args?.includes('--database') === true;
  const database = onPostgres && !given ? ['--database', (await testDatabase(dataDir, true)).location] : [];
  const child = spawn(process.execPath, [...entry, '--port', '0', '--data', dataDir, ...database, ...(opts.args ?? [])], {
    cwd: opts.root ?? REPO_ROOT,
    env: { SVC_LOG_LEVEL: 'silent', ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay did not start: ${err}`)), 30_000);
    // Heard until the line is found, then no more: with a request log on stdout, searching the
    // whole log so far on every chunk flattens a string of megabytes each time (measured: 2.6 ms
    // a chunk at 4.6 MB, a chunk each event-loop turn of the relay), which in a benchmark starves
    // the clients that share this process and the machine with the relay.
    const listening = (): void => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', listening);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', listening);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`relay exited (${code}) before listening: ${err}`));
    });
  });
  return {
    url,
    process: child,
    stderr: () => err,
    stdout: () => out,
    exited,
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      child.kill(signal);
      return exited;
    },
  };
}
