/**
 * Sending the outbox (bridge/outbox/store.ts) once the relay answers again.
 *
 * What queues a write (tools/outbox/writes.ts `unreachable`): the relay could not be reached (connection refused, DNS,
 * timeout), or answered that it cannot take it now: a 5xx (BUSY, SERVICE_READ_ONLY, INTERNAL; a
 * gateway's 5xx without the envelope) or a rate limit (429). Every other refusal is an answer
 * about the write itself and is the caller's to act on.
 *
 * How it is sent: one item at a time, oldest first, an item only when no older item of its
 * target is left (a SPACE's posts in order), each claimed with a lease so two bridges of the KEY
 * never send one item at once. The same body goes again with the same idempotency key, so a
 * second send is the first post (a replay answer counts as delivered). A delivered post's receipt
 * is checked as a direct post's is (tools/verify/verify.ts), against the SPACE and object this bridge
 * signed. Then:
 * - delivered: the item leaves the outbox and the next tool call says so (post id, seq, receipt);
 * - refused for a reason of its own (any other 4xx: WRITE_DENIED, SPACE_CLOSED, …): the item
 *   leaves the outbox and the next tool call shows the refusal, once;
 * - unreachable again: the item stays; sending stops until the next try, which comes from a
 *   background timer (exponential backoff from 1 s to 60 s with jitter, never before the relay's
 *   Retry-After; unref'd, so it never keeps the process alive) or from the next tool call,
 *   whichever is first.
 */
import type { ApiResponse, RelayApi } from '../../tools/api.js';
import type { Cache } from '../../tools/cache/cache.js';
import { BridgeError, isBridgeError, isRelayRefusal } from '../../tools/errors.js';
import type { OutboxItem, OutboxStore } from './store.js';
import { causeWords, unreachable } from '../../tools/outbox/writes.js';
import type { Outbox as OutboxPort, OutboxCaps, OutboxSummary, QueuedWrite } from '../../tools/ports.js';
import { peerFence, refusalText } from '../../tools/render.js';
import { plain } from '../../tools/action.js';
import { Verifier } from '../../tools/verify/verify.js';

export const OUTBOX_MAX_ITEMS_ENV = 'SVC_OUTBOX_MAX_ITEMS';
export const OUTBOX_MAX_MIB_ENV = 'SVC_OUTBOX_MAX_MIB';
export const OUTBOX_MAX_ITEMS_DEFAULT = 1000;
export const OUTBOX_MAX_MIB_DEFAULT = 16;

/** The first retry after a failure, and the longest wait between two. */
export const BACKOFF_FIRST_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;
/** A claim outlives the longest send (its 20 s timeout, a token minted first). */
const LEASE_MS = 60_000;
const SEND_TIMEOUT_MS = 20_000;
/** A tool call waits this long for the outbox before it runs (sending goes on meanwhile). */
const TOOL_WAIT_MS = 5_000;
/** How long stopping waits for a send in progress. */
const STOP_GRACE_MS = 2_000;
/** Notices shown with one tool answer; the rest are counted. */
const NOTICES_SHOWN = 20;

/**
 * SVC_OUTBOX_MAX_ITEMS (default 1,000; 0 turns offline writes off: an unreachable relay is an
 * error again) and SVC_OUTBOX_MAX_MIB (default 16) cap the outbox per KEY and relay.
 */
export function outboxCaps(env: NodeJS.ProcessEnv): OutboxCaps {
  const read = (name: string, fallback: number, max: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    if (!/^[0-9]{1,7}$/.test(text) || Number(text) > max) {
      throw new BridgeError('CONFIG', `${name} must be a whole number from 0 to ${max}, not ${JSON.stringify(text)}`, `Set ${name} (default ${fallback}) or unset it.`);
    }
    return Number(text);
  };
  return { maxItems: read(OUTBOX_MAX_ITEMS_ENV, OUTBOX_MAX_ITEMS_DEFAULT, 1_000_000), maxBytes: read(OUTBOX_MAX_MIB_ENV, OUTBOX_MAX_MIB_DEFAULT, 4096) * 1048576 };
}

export interface OutboxDeps {
  readonly api: RelayApi;
  readonly cache: Cache;
  readonly now: () => number;
  readonly log: (line: string) => void;
  /** Randomness for the jitter (Math.random unless given). */
  readonly random?: () => number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The outbox of one KEY at one relay in this process: queue, send, tell. */
export class Outbox implements OutboxPort {
  readonly relay: string;
  readonly caps: OutboxCaps;
  private readonly deps: OutboxDeps;
  private readonly store: OutboxStore;
  private readonly verifier: Verifier;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;

  constructor(deps: OutboxDeps, store: OutboxStore, caps: OutboxCaps) {
    this.deps = deps;
    this.store = store;
    this.caps = caps;
    this.relay = deps.api.base.origin;
    this.verifier = new Verifier(deps);
  }

  /**
   * The key of the relay identity followed now at this address (tools/cache/cache.ts): writes queued
   * for another relay that stood here stay with it, never sent to this one.
   */
  private get scope(): string {
    return this.deps.cache.relayScope(this.relay);
  }

  /** Offline writes are on (a cap of 0 items turns them off). */
  get enabled(): boolean {
    return this.caps.maxItems > 0;
  }

  /**
   * Keep a write signed (or sealed) already; the background sending is started. Its id, how many
   * wait, and whether it was queued already (the same idempotency key to the same place: kept once).
   */
  queue(w: QueuedWrite, cause?: unknown): { id: number; waiting: number; already: boolean } {
    const now = this.deps.now();
    const queued = this.store.queuedKey(this.scope, w.target, w.idempotencyKey);
    if (queued !== undefined) return { id: queued, waiting: this.store.summary(this.scope, now).count, already: true };
    // The relay's Retry-After holds for the queued write too: neither the timer nor a tool call sends it before.
    const notBefore = isRelayRefusal(cause) && cause.retryAfter !== undefined ? now + cause.retryAfter * 1000 : 0;
    const id = this.store.add({ ...w, relay: this.scope }, this.caps, now, cause === undefined ? undefined : { error: causeWords(cause), notBefore });
    this.deps.log(`the relay cannot take it now: ${w.kind} to ${w.label} queued in the outbox (idempotency key ${w.idempotencyKey})`);
    this.schedule(Math.max(BACKOFF_FIRST_MS, notBefore - now));
    return { id, waiting: this.store.summary(this.scope, this.deps.now()).count, already: false };
  }

  /** Whether writes to `target` wait in the outbox (a new one then goes behind them). */
  waiting(target: string): boolean {
    return this.store.waiting(this.scope, target);
  }

  rememberSpace(name: string, spaceId: string, sealed: boolean): void {
    this.store.rememberSpace(this.scope, name, { spaceId, sealed }, this.deps.now());
  }

  knownSpace(name: string) {
    return this.store.knownSpace(this.scope, name);
  }

  summary(): OutboxSummary {
    return this.store.summary(this.scope, this.deps.now());
  }

  /** Start sending what an earlier run left, soon after start. */
  start(): void {
    if (this.summary().count > 0) this.schedule(BACKOFF_FIRST_MS);
  }

  /** No send starts after this; resolves once the one in progress ended, or after a short grace (its item stays claimed until the lease ends). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise<void>((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(grace);
  }

  /** Before a tool runs: send what waits, for at most a few seconds (sending goes on after). */
  async beforeTool(): Promise<void> {
    if (this.store.summary(this.scope, this.deps.now()).count === 0) return;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (timeout = setTimeout(resolve, TOOL_WAIT_MS)))]);
    clearTimeout(timeout);
  }

  /** The waiting notices, each taken once, in the order they were noted. */
  notices(): string[] {
    const all = this.store.takeNotices(this.scope);
    if (all.length <= NOTICES_SHOWN) return all;
    return [...all.slice(0, NOTICES_SHOWN), `… and ${all.length - NOTICES_SHOWN} more notices of the outbox (delivered or refused writes).`];
  }

  /** Send what can be sent now; one run at a time in this process. */
  flush(): Promise<void> {
    this.running ??= this.sendAll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
    this.timer.unref();
  }

  /** The next background try after `failures` tries in a row found the relay away: 1 s doubling to 60 s, jittered down by up to half. */
  private backoff(notBefore: number | undefined): number {
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, this.failures - 1));
    const jittered = base / 2 + (this.deps.random ?? Math.random)() * (base / 2);
    return Math.max(jittered, notBefore === undefined ? 0 : notBefore - this.deps.now());
  }

  private async sendAll(): Promise<void> {
    let away = false;
    try {
      for (;;) {
        if (this.stopped) return;
        const item = this.store.claim(this.scope, this.deps.now(), LEASE_MS);
        if (item === undefined) break;
        if (!(await this.sendOne(item))) {
          away = true;
          break;
        }
      }
    } catch (e) {
      // The cache itself failed (a full disk): said, and tried again later.
      away = true;
      this.deps.log(`outbox: ${(e as Error)?.message ?? String(e)}`);
    }
    const left = this.store.summary(this.scope, this.deps.now());
    if (left.count === 0) {
      this.failures = 0;
      return;
    }
    // Items left: the relay is away, or another bridge of the KEY holds the next one.
    this.failures = away ? this.failures + 1 : Math.max(1, this.failures);
    this.schedule(this.backoff(left.notBefore));
  }

  /** Send one claimed item; false when the relay is away (the item stays). */
  private async sendOne(item: OutboxItem): Promise<boolean> {
    const now = this.deps.now;
    try {
      const shut = item.check.plainInto === undefined ? undefined : await this.sealedNow(item.check.plainInto);
      if (shut !== undefined) {
        this.store.refused(item.id, shut, now());
        return true;
      }
      const res = await this.deps.api.request({ method: 'POST', path: item.path, query: item.query, body: item.body, timeoutMs: SEND_TIMEOUT_MS });
      const notice = await this.deliveredNotice(item, res);
      if (!this.store.delivered(item.id, notice, now())) this.deps.log(`outbox: item ${item.id} was taken over by another bridge of this KEY while it was sent`);
      return true;
    } catch (e) {
      if (isRelayRefusal(e) && !unreachable(e)) {
        this.store.refused(item.id, this.refusedNotice(item, e), now());
        this.deps.log(`outbox: the relay refused a queued ${item.kind} to ${item.label} (${e.code}); it left the outbox`);
        return true;
      }
      const notBefore = isRelayRefusal(e) && e.retryAfter !== undefined ? now() + e.retryAfter * 1000 : 0;
      this.store.failed(item.id, causeWords(e), notBefore, now());
      return false;
    }
  }

  /** A plain message queued into a conversation: the relay must not show it sealed now (plain words never go into one). */
  private async sealedNow(conversationId: string): Promise<string | undefined> {
    const res = await this.deps.api.request({ path: `/v1/conversations/${encodeURIComponent(conversationId)}`, timeoutMs: SEND_TIMEOUT_MS });
    if (!isObj(res.body) || res.body.sealed !== true) return undefined;
    return `NOT SENT: a message queued into conversation ${conversationId} was kept in plain words, and the relay shows that conversation sealed: it was not sent and left the outbox. Send it again with svc_message action=send (it is sealed then).`;
  }

  private async deliveredNotice(item: OutboxItem, res: ApiResponse): Promise<string> {
    const fence = peerFence();
    const a = isObj(res.body) ? res.body : {};
    const replay = a.replayed === true ? ' (the relay had it already: answered as a replay)' : '';
    if (item.kind === 'post') {
      if (typeof a.post_id !== 'string' || typeof a.seq !== 'string') {
        throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: the post answer has no post_id or seq', 'Check that SVC_API points at an svc relay.');
      }
      const check = await this.verifier.receipt(a, { spaceId: item.check.spaceId, objectId: item.check.objectId });
      const receipt = check.ok === false ? `!!! the receipt DOES NOT VERIFY: ${check.detail}` : check.detail;
      return `Queued post delivered to SPACE ${item.label} at seq ${plain(fence, 'seq', a.seq)}${replay}: post_id ${plain(fence, 'post_id', a.post_id)}, idempotency_key ${item.idempotencyKey}; ${receipt}.${check.warning === undefined ? '' : ` !!! ${check.warning}`}`;
    }
    const conv = isObj(a.conversation) ? a.conversation : {};
    const msg = isObj(a.message) ? a.message : {};
    return `Queued message delivered (${item.label})${replay}: conversation ${plain(fence, 'conversation_id', conv.conversation_id ?? msg.conversation_id)}, seq ${plain(fence, 'seq', msg.seq)}, idempotency_key ${item.idempotencyKey}.`;
  }

  private refusedNotice(item: OutboxItem, e: Parameters<typeof refusalText>[0]): string {
    return `NOT SENT: the relay refused a ${item.kind} queued at ${iso(item.createdAt)} for ${item.label} (idempotency_key ${item.idempotencyKey}); it left the outbox. ${refusalText(e)}`;
  }
}
