/**
 * What the relay suites (appends, catch-up, seek) share: a real relay process with rate limits
 * off (SVC_RELAY_NO_RATE_LIMITS=1, benchmarks only), JSON calls over keep-alive fetch, and an
 * in-process relay context on a data directory for the no-HTTP ceiling and for filling a
 * database fast through the relay's own stores.
 */
import { createServiceMode } from '../relay/service-mode.js';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { RelayConfig } from '../relay/config.js';
import type { RelayContext } from '../relay/context.js';
import { createRateLimiter } from '../relay/http/rate-limit.js';
import { newUuid } from '../relay/ids.js';
import { loadServiceKeys } from '../relay/service-keys.js';
import { openPostgresStore, openStore, type Store } from '../relay/store/index.js';
import type { CreateSpaceInput, SpaceRow } from '../relay/store/spaces.js';
import { toHex } from '../shared/encoding.js';
import { peerIdHexOf, signerFromSeed, type Signer } from '../shared/identity.js';
import { createSpaceInStore as createSpace } from '../test/helpers/posts.js';
import { spawnRelay, tempDataDir, type SpawnedRelay } from '../test/helpers/relay.js';
import { createTokenEvents } from '../relay/token-events.js';

export { tempDataDir };

/**
 * The relay as its own process on `dataDir`, every rate limit off (`env` added to its
 * environment, `args` to its command line, e.g. `--database postgres://…`), from the sources
 * of this checkout or of another one at `root`.
 */
export async function spawnBenchRelay(dataDir: string, env: Record<string, string> = {}, args: string[] = [], root?: string): Promise<SpawnedRelay> {
  return await spawnRelay(dataDir, { args, env: { ...env, SVC_RELAY_NO_RATE_LIMITS: '1' }, ...(root === undefined ? {} : { root }) });
}

export interface Answer {
  status: number;
  body: any;
}

/** One JSON request (global fetch keeps connections alive); the answer parsed. */
export async function call(url: string, method: string, token: string | undefined, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** `call`, throwing unless the status is `expected`. */
export async function expectCall(expected: number, url: string, method: string, token: string | undefined, body?: unknown): Promise<any> {
  const r = await call(url, method, token, body);
  if (r.status !== expected) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export function randomSigner(): Signer {
  return signerFromSeed(new Uint8Array(randomBytes(32)));
}

/** An in-process relay context over a data directory: the relay's stores, keys and append pipeline, no HTTP. */
export interface InProcessRelay {
  ctx: RelayContext;
  store: Store;
  dataDir: string;
  /** Close the database; remove the directory when it was made here. */
  close(): void;
}

/** On `dataDir` (a new one when undefined), its database there or, given, the PostgreSQL `database` URL. */
export async function openInProcess(dataDir?: string, database?: string): Promise<InProcessRelay> {
  const own = dataDir === undefined;
  const dir = dataDir ?? tempDataDir('svc-bench-');
  const clock = () => Date.now();
  const random = (n: number) => new Uint8Array(randomBytes(n));
  const store = database === undefined ? await openStore(dir) : await openPostgresStore(database);
  const config: RelayConfig = { host: '127.0.0.1', port: 0, dataDir: dir, publicUrl: undefined, dev: true };
  const serviceKeys = loadServiceKeys({ dataDir: dir, dev: true, now: clock(), random });
  // Read once, as the relay's service mode keeps it between restores.
  const epoch = await store.state.getOrCreate('service_epoch', () => newUuid(random));
  const ctx: RelayContext = {
    config,
    store,
    clock,
    random,
    serviceKeys,
    rateLimits: false,
    limiter: createRateLimiter(clock, { enabled: false }),
    serviceEpoch: async () => epoch,
    serviceMode: createServiceMode(store.state, () => newUuid(random)),
    audience: () => '127.0.0.1',
    baseUrl: () => 'http://127.0.0.1',
    passkeyPolicy: () => ({ rpId: '127.0.0.1', origins: ['http://127.0.0.1'] }),
    operations: [],
    unnamedRoutes: [],
    inProcessRoutes: new Map(),
    tokenEvents: createTokenEvents(),
    connectorSecret: randomBytes(32).toString('hex'),
  };
  return {
    ctx,
    store,
    dataDir: dir,
    async close() {
      await store.close();
      if (own) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Register a KEY straight in the store (as a first keys.verify would), at `now`. */
export async function registerKey(r: InProcessRelay, signer: Signer, now = Date.now()): Promise<string> {
  const peerId = peerIdHexOf(signer.publicKey);
  const minted = await r.store.keys.mint({
    peerId,
    keyType: 'ed25519',
    publicKey: toHex(signer.publicKey),
    nonce: new Uint8Array(randomBytes(16)),
    nonceExpiresAt: now + 300_000,
    tokenId: newUuid(r.ctx.random),
    tokenHash: new Uint8Array(randomBytes(32)),
    label: null,
    now,
    expiresAt: now + 3_600_000,
  });
  if (!minted.ok) throw new Error(`could not register a KEY: ${minted.reason}`);
  return peerId;
}

/** Create a private SPACE straight in the store (the tests' helper, test/helpers/posts.ts), now. */
export async function createSpaceInStore(r: InProcessRelay, owner: string, name: string, opts: Partial<CreateSpaceInput> = {}): Promise<SpaceRow> {
  return await createSpace(r.store, owner, name, Date.now(), { spaceId: newUuid(r.ctx.random), ...opts });
}

/** A text of exactly `n` ASCII characters, different per `seed`. */
export function filler(n: number, seed: number): string {
  const words = ['relay', 'chain', 'receipt', 'signer', 'commit', 'cursor', 'proof', 'merkle', 'space', 'post'];
  let s = `#${seed} `;
  let i = seed;
  while (s.length < n) s += `${words[i++ % words.length]} `;
  return s.slice(0, n);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
