/**
 * HTTP client for a relay that speaks the endpoint catalogue (spec/2-endpoints.md), with token
 * minting and renewal (spec/1-concepts.md "Tokens", "Minting with an Ed25519 KEY").
 *
 * - Minting: `POST /v1/keys/challenge`, check that the challenge's `audience` is the host
 *   SVC_API names (a signature bound to another host is never made), sign
 *   L("token-challenge") ‖ audience ‖ 0x00 ‖ challenge with the KEY, `POST /v1/keys/verify`.
 *   The token goes to the token file (replaced whole) so other bridges of the KEY share it.
 * - Renewal: a week before expiry (the time `GET /v1/me` starts warning), a fresh token is
 *   taken before the next call. Expiry is judged on the relay's clock: the offset from the
 *   local clock is learnt from each challenge (it expires five minutes after the relay made
 *   it), the same clock that stamps token expiry. (The HTTP `Date` header is not used: it comes
 *   from the HTTP layer, which need not share the application's clock.)
 * - A call refused with TOKEN_EXPIRED, TOKEN_REVOKED or TOKEN_INVALID is retried with another
 *   token: the token file's when it holds a different one (another bridge of the KEY renewed),
 *   else a freshly minted one. The file's token is taken unchecked, so when the retry is refused
 *   for its token too (another process left a token there that was revoked since), a fresh one
 *   is minted and the call sent a third time; a token once refused is never taken from the file
 *   again. The relay refuses a bad token before doing anything, so retries are safe for writes
 *   too. With SVC_TOKEN the token is fixed: no minting, no retry.
 * - Tokens go only to the configured address: redirects are not followed.
 * - Before minting, which registers the KEY at a relay new to it, `beforeMint` is shown the
 *   relay's capabilities and may refuse: the bridge checks there that the relay is the one whose
 *   root key it pinned (tools/verify/relay-identity.ts), so a new relay at the same address learns
 *   nothing of the KEY until it is accepted.
 *
 * Everything the relay sends is attacker-controlled input and is checked before use
 * (tools/api.ts `refusalFrom` for refusals).
 */
import { fromHex, toHex } from '../shared/encoding.js';
import { tokenChallengeMessage } from '../shared/identity.js';
import { CHALLENGE_TTL_SECONDS, TOKEN_EXPIRY_WARNING_SECONDS } from '../shared/limits.js';
import { badResponse, clip, refusalFrom, type ApiRequest, type ApiResponse, type RelayApi } from '../tools/api.js';
import { BridgeError, isRelayRefusal } from '../tools/errors.js';
import type { KeyDirectory, LoadedKey } from './keys/keys.js';
import { TOKEN_RE, readTokenFile, writeTokenFile, type StoredToken } from './keys/token-file.js';

export interface ClientOptions {
  /** The relay's base address, already checked (settings.ts checkApi). */
  readonly api: URL;
  readonly key: LoadedKey;
  /** Key directory for the shared token file; without it tokens live in memory only. */
  readonly dir?: KeyDirectory;
  /** SVC_TOKEN: use this token, never mint. */
  readonly fixedToken?: string;
  /** Label given to minted tokens (tokens.list shows it). */
  readonly label?: string;
  readonly fetch?: typeof fetch;
  /** Local clock (ms). */
  readonly now?: () => number;
  /** One line per event, to stderr in the CLI. Never receives a token or a key. */
  readonly log?: (line: string) => void;
  /** Shown the relay's capabilities (`GET /v1/capabilities`) before each mint; throws to refuse it. */
  readonly beforeMint?: (capabilities: unknown) => void | Promise<void>;
}

/** Token refusals that a fresh token cures (spec/3-errors.md: "Mint a new token"). */
export const RENEW_ON: readonly string[] = ['TOKEN_EXPIRED', 'TOKEN_REVOKED', 'TOKEN_INVALID'];

/** How many refused tokens the client remembers, so none of them is taken from the file again. */
const REFUSED_KEPT = 8;

/** A replacement token and whether this client minted it (else it came from the token file). */
interface Replacement {
  readonly record: StoredToken;
  readonly minted: boolean;
}

/** Renew this long before expiry (GET /v1/me warns from then on). */
export const RENEW_BEFORE_MS = TOKEN_EXPIRY_WARNING_SECONDS * 1000;

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * The largest answer read from the relay: well above the largest page (200 posts at full detail
 * with proofs), far below what would exhaust the bridge's memory. A larger answer is
 * BAD_RESPONSE and the connection is dropped after at most this many bytes.
 */
export const RESPONSE_MAX_BYTES = 64 * 1024 * 1024;
const CHALLENGE_RE = /^(?:[0-9a-f]{2}){1,1024}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The answer's text, or undefined (the body cancelled) once it passes `max` bytes. Relay-controlled. */
async function readCapped(res: Response, max: number): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > max) {
    await res.body?.cancel();
    return undefined;
  }
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

export class RelayClient implements RelayApi {
  readonly base: URL;
  private readonly key: LoadedKey;
  private readonly dir: KeyDirectory | undefined;
  private readonly fixedToken: string | undefined;
  private readonly label: string;
  private readonly fetchFn: typeof fetch;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly beforeMint: ((capabilities: unknown) => void | Promise<void>) | undefined;
  /** Relay clock minus local clock (ms), from the latest challenge. */
  private skewMs = 0;
  private held: StoredToken | undefined;
  private pending: Promise<Replacement> | undefined;
  /** Tokens the relay refused lately (newest last): never taken from the token file again. */
  private readonly refused: string[] = [];

  constructor(opts: ClientOptions) {
    this.base = new URL(opts.api.href);
    this.key = opts.key;
    this.dir = opts.dir;
    this.fixedToken = opts.fixedToken;
    if (this.fixedToken !== undefined && !TOKEN_RE.test(this.fixedToken)) {
      throw new BridgeError('CONFIG', 'SVC_TOKEN is not a token (svc_ followed by 64 lowercase hex)', 'Unset SVC_TOKEN or paste the whole token.');
    }
    this.label = opts.label ?? 'svc-bridge';
    this.fetchFn = opts.fetch ?? fetch;
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? (() => {});
    this.beforeMint = opts.beforeMint;
  }

  /** The relay's clock as last seen (ms). */
  relayNow(): number {
    return this.now() + this.skewMs;
  }

  /** The token held in memory, if any (SVC_TOKEN has no expiry known here). */
  get heldToken(): StoredToken | undefined {
    return this.held;
  }

  private needsRenewal(t: StoredToken): boolean {
    return t.expiresAt - this.relayNow() <= RENEW_BEFORE_MS;
  }

  /** A token to send: the held one, the shared file's, or a fresh one. */
  async token(): Promise<string> {
    if (this.fixedToken !== undefined) return this.fixedToken;
    if (this.held !== undefined && !this.needsRenewal(this.held)) return this.held.token;
    return (await this.replace(this.held?.token)).record.token;
  }

  /** Remember a token the relay refused (a short list: only the latest few matter). */
  private markRefused(token: string): void {
    if (this.refused.includes(token)) return;
    this.refused.push(token);
    if (this.refused.length > REFUSED_KEPT) this.refused.shift();
  }

  /**
   * Another token than `stale`: the token file's when another bridge already put one there that
   * was not refused here, else a newly minted one (`mint` forces minting). Concurrent callers
   * share one replacement; one that hands back a token refused meanwhile is not taken.
   */
  private async replace(stale: string | undefined, mint = false): Promise<Replacement> {
    for (let round = 0; ; round++) {
      this.pending ??= this.replaceOnce(stale, mint).finally(() => {
        this.pending = undefined;
      });
      const got = await this.pending;
      if (round > 0 || (got.record.token !== stale && !this.refused.includes(got.record.token))) return got;
    }
  }

  private async replaceOnce(stale: string | undefined, mint: boolean): Promise<Replacement> {
    const usable = (t: StoredToken) => t.token !== stale && !this.refused.includes(t.token) && !this.needsRenewal(t);
    // Another caller already replaced the stale token while this one waited for its answer.
    if (stale !== undefined && this.held !== undefined && usable(this.held)) return { record: this.held, minted: false };
    if (this.dir !== undefined && !mint) {
      const shared = readTokenFile(this.dir, this.key.name, this.base, this.key.peerId);
      if (shared !== undefined && usable(shared)) {
        this.held = shared;
        return { record: shared, minted: false };
      }
    }
    return { record: await this.mint(), minted: true };
  }

  /** Mint a token now (challenge, signature bound to the audience, verify) and store it. */
  async mint(): Promise<StoredToken> {
    if (this.beforeMint !== undefined) await this.beforeMint((await this.send({ path: '/v1/capabilities' }, undefined)).body);
    const publicKey = this.key.publicKey;
    const ch = await this.send({ method: 'POST', path: '/v1/keys/challenge', body: { public_key: publicKey } }, undefined);
    const c = ch.body;
    if (!isObject(c)) throw badResponse('keys.challenge answer is not a JSON object');
    if (c.peer_id !== this.key.peerId) throw badResponse('keys.challenge names another peer_id');
    if (typeof c.audience !== 'string' || c.audience === '' || c.audience.includes('\u0000')) {
      throw badResponse('keys.challenge audience is not a host');
    }
    // spec "Tokens" 2: the signature is bound to a host and the token goes only there.
    if (c.audience.toLowerCase() !== this.base.host.toLowerCase()) {
      throw new BridgeError(
        'AUDIENCE_MISMATCH',
        `the relay at ${this.base.host} asked for a sign-in signature bound to "${clip(c.audience, 200)}"; refused, nothing was signed`,
        'Set SVC_API to the address the relay calls itself (its public URL), or fix the relay\'s --public-url.',
      );
    }
    if (typeof c.challenge !== 'string' || !CHALLENGE_RE.test(c.challenge)) throw badResponse('keys.challenge challenge is not lowercase hex');
    const challengeExpiry = typeof c.expires_at === 'string' ? Date.parse(c.expires_at) : NaN;
    if (Number.isFinite(challengeExpiry)) this.skewMs = challengeExpiry - CHALLENGE_TTL_SECONDS * 1000 - this.now();
    const signature = this.key.signer.sign(tokenChallengeMessage(c.audience, fromHex(c.challenge, undefined, 'challenge')));
    const v = await this.send(
      {
        method: 'POST',
        path: '/v1/keys/verify',
        body: { public_key: publicKey, challenge: c.challenge, signature: toHex(signature), label: this.label },
      },
      undefined,
    );
    const a = v.body;
    if (!isObject(a)) throw badResponse('keys.verify answer is not a JSON object');
    if (a.peer_id !== this.key.peerId) throw badResponse('keys.verify names another peer_id');
    if (typeof a.token !== 'string' || !TOKEN_RE.test(a.token)) throw badResponse('keys.verify token is not svc_ and 64 lowercase hex');
    const expiresAt = typeof a.expires_at === 'string' ? Date.parse(a.expires_at) : NaN;
    if (!Number.isFinite(expiresAt)) throw badResponse('keys.verify expires_at is not a date-time');
    const record: StoredToken = { token: a.token, expiresAt, relay: this.base.origin, peerId: this.key.peerId, mintedAt: this.now() };
    if (this.dir !== undefined) writeTokenFile(this.dir, this.key.name, this.base, record);
    this.held = record;
    this.log(
      `${a.registered === true ? 'registered KEY' : 'minted a token for KEY'} "${this.key.name}" at ${this.base.host}; it expires ${new Date(expiresAt).toISOString()}`,
    );
    return record;
  }

  /** One call to the relay; a token refusal is cured once and the call retried once. */
  async request(req: ApiRequest): Promise<ApiResponse> {
    if ((req.auth ?? 'req') === 'none') return this.send(req, undefined);
    const token = await this.token();
    try {
      return await this.send(req, token);
    } catch (e) {
      if (this.fixedToken !== undefined || !isRelayRefusal(e, ...RENEW_ON)) throw e;
      this.log(`the relay refused the token (${e.code}); taking a fresh one and retrying once`);
      this.markRefused(token);
      const next = await this.replace(token);
      try {
        return await this.send(req, next.record.token);
      } catch (again) {
        // A token this bridge just minted and the relay refused is a real revocation (or a
        // relay that takes no token): that is the answer. One taken from the file unchecked
        // may be one another process left there after it was revoked: mint instead.
        if (next.minted || !isRelayRefusal(again, ...RENEW_ON)) throw again;
        this.log(`the token file's token was refused too (${again.code}); minting a fresh one`);
        this.markRefused(next.record.token);
        const fresh = await this.replace(next.record.token, true);
        return this.send(req, fresh.record.token);
      }
    }
  }

  private url(req: ApiRequest): URL {
    if (!req.path.startsWith('/') || req.path.startsWith('//')) throw new TypeError(`path must start with one "/": ${req.path}`);
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(`${this.base.origin}${prefix}${req.path}`);
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(name, v);
      else url.searchParams.set(name, String(value));
    }
    return url;
  }

  private async send(req: ApiRequest, token: string | undefined): Promise<ApiResponse> {
    const url = this.url(req);
    const headers: Record<string, string> = { accept: req.accept ?? 'application/json' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string | undefined;
    try {
      res = await this.fetchFn(url, {
        method: req.method ?? 'GET',
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        redirect: 'manual',
        signal: AbortSignal.timeout(req.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
      text = await readCapped(res, RESPONSE_MAX_BYTES);
    } catch (e) {
      const cause = (e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new BridgeError(
        'TRANSPORT',
        `the relay at ${this.base.origin} is unreachable (${cause})`,
        'Check SVC_API and that the relay is running and reachable; then call again.',
        undefined,
        { cause: e },
      );
    }
    if (text === undefined) throw badResponse(`an answer larger than ${RESPONSE_MAX_BYTES} bytes`);
    if (res.status >= 300 && res.status < 400) {
      throw badResponse(`a redirect (${res.status}); tokens are sent to the configured address only`);
    }
    const type = res.headers.get('content-type') ?? '';
    let body: unknown = text;
    if (/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        throw badResponse(`${req.method ?? 'GET'} ${req.path} answered malformed JSON`);
      }
    }
    if (!res.ok) throw refusalFrom(res.status, body, res.headers);
    return { status: res.status, headers: res.headers, body, text };
  }
}
