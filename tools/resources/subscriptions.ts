/**
 * Resource subscriptions (spec/2-endpoints.md "Connector"; spec/1-concepts.md "Connector
 * live updates", "Long polling"): `svc://mailbox` and the SPACE addresses `svc://spaces/{name}`,
 * `.../latest`, `.../dossier` and `.../document`, at most 16 per stream. A change sends
 * `notifications/resources/updated` with the address only, never content; the client re-reads.
 * An oracle document changes when a version becomes current: a `version` post (current at once
 * by the owner or an admin) or a `go` (a decision). Seeing one, the feed reads which version is
 * current and notifies only when that moved, so a proposal left waiting notifies nothing.
 *
 * The two protocol revisions ask in two ways, and both land in one feed per server instance:
 * - 2025-11-25: `resources/subscribe` / `resources/unsubscribe`, handled here (at most 16
 *   addresses); notifications go out unsolicited.
 * - 2026-07-28: `subscriptions/listen` is served by the SDK's stdio entry, which never shows the
 *   request to the server instance. `ListenTap` wraps the stdio transport to see it: it keeps
 *   only the addresses this bridge can feed, at most 16 (so the entry's acknowledgement names
 *   exactly those), and tells the feed which addresses are open; the entry routes the
 *   instance's `notifications/resources/updated` onto the streams that asked for them.
 *
 * The feed reads the relay (long polling, spec "Long polling"): one address stream alone is
 * held with `wait`; several are polled without `wait`, a round every few seconds, so the feed
 * never holds more than one of the two waiting reads a KEY may have (the agent's own
 * `wait` reads keep the other). Positions are the feed's own: it never moves a saved cursor.
 */
import { ProtocolError, ProtocolErrorCode, type JSONRPCMessage, type McpServer, type Transport } from '@modelcontextprotocol/server';
import { SUBSCRIPTIONS_PER_STREAM } from '../../shared/limits.js';
import { isRelayRefusal } from '../errors.js';
import type { ListenStreams } from '../ports.js';
import type { Posting } from '../posts/posting.js';
import { tapTransport } from './transport-tap.js';

/** The wait of a single watched stream (seconds, up to the relay's 25). */
export const FEED_WAIT_SECONDS = 20;
/** A polling round of several streams takes at least this long, plus half a second per stream. */
const ROUND_MS = 3_000;
/** After a failed read of a stream, wait this long before reading it again. */
const BACKOFF_MS = 10_000;

/** Which posts of a SPACE's stream concern an address: any, own dossiers, or a new current version. */
export type SpaceView = 'posts' | 'dossier' | 'document';

/** What an address watches: the mailbox, or a SPACE's stream seen through one view. */
export type Watch = { readonly stream: 'mailbox' } | { readonly stream: string; readonly space: string; readonly view: SpaceView };

/** The watch behind a subscribable address, or undefined for any other address. */
export function watchOf(uri: string): Watch | undefined {
  if (uri === 'svc://mailbox') return { stream: 'mailbox' };
  const m = /^svc:\/\/spaces\/([^/?#]+)(\/latest|\/dossier|\/document)?$/.exec(uri);
  if (m === null) return undefined;
  let space: string;
  try {
    space = decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
  if (space === '' || space.length > 200) return undefined;
  return { stream: `space:${space}`, space, view: m[2] === '/dossier' ? 'dossier' : m[2] === '/document' ? 'document' : 'posts' };
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The stdio entry's `subscriptions/listen` streams, seen from the transport (2026-07-28).
 * Inbound listen requests are passed on narrowed to the addresses `watchOf` knows, at most 16; a
 * `notifications/cancelled` naming a listen request, or the entry's final answer to it, closes
 * that stream.
 */
export class ListenTap implements ListenStreams {
  private readonly streams = new Map<string | number, readonly string[]>();
  private readonly listeners = new Set<(addresses: readonly string[]) => void>();

  /** Every address an open stream asks for. */
  addresses(): string[] {
    return [...new Set([...this.streams.values()].flat())];
  }

  /** Be told whenever the open addresses change; returns the function that stops it. */
  onChange(listener: (addresses: readonly string[]) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private changed(): void {
    const now = this.addresses();
    for (const l of this.listeners) l(now);
  }

  /** Look at one inbound message; a listen request comes back narrowed (a new message). */
  inbound(message: JSONRPCMessage): JSONRPCMessage {
    const m = message as { method?: string; id?: string | number; params?: Obj };
    if (m.method === 'subscriptions/listen' && m.id !== undefined && isObject(m.params) && isObject(m.params.notifications)) {
      const n = m.params.notifications;
      if (!Array.isArray(n.resourceSubscriptions)) return message;
      const kept = [...new Set(n.resourceSubscriptions.filter((u): u is string => typeof u === 'string' && watchOf(u) !== undefined))].slice(
        0,
        SUBSCRIPTIONS_PER_STREAM,
      );
      this.streams.set(m.id, kept);
      this.changed();
      return { ...message, params: { ...m.params, notifications: { ...n, resourceSubscriptions: kept } } } as JSONRPCMessage;
    }
    if (m.method === 'notifications/cancelled' && isObject(m.params)) {
      const id = m.params.requestId as string | number | undefined;
      if (id !== undefined && this.streams.delete(id)) this.changed();
    }
    return message;
  }

  /** Look at one outbound message: the answer to a listen request ends its stream. */
  outbound(message: JSONRPCMessage): void {
    const m = message as { method?: string; id?: string | number };
    if (m.method === undefined && m.id !== undefined && this.streams.delete(m.id)) this.changed();
  }

  /** A transport that passes everything through `inner`, looking at it on the way. */
  wrap(inner: Transport): Transport {
    return tapTransport(inner, {
      inbound: (message) => this.inbound(message),
      outbound: (message) => {
        this.outbound(message);
        return message;
      },
    });
  }
}

interface StreamState {
  /** The newest position seen; undefined until the head is read. */
  after: string | undefined;
  /** Do not read before this time (ms) after a failure. */
  notBefore: number;
  /** The head read made when the stream was first watched (changes are what comes after it). */
  ready: Promise<void>;
}

/**
 * The feed of one server instance: the addresses it watches and the loop that reads them.
 * A stateful resource; `close()` stops it (a read in flight finishes, nothing is sent after).
 */
export class SubscriptionFeed {
  private readonly posting: Posting;
  private readonly notify: (uri: string) => Promise<void>;
  private addresses: readonly string[] = [];
  private readonly state = new Map<string, StreamState>();
  /** Per SPACE with a document address: the current version id last seen (null: none yet; undefined: unknown). */
  private readonly documents = new Map<string, Promise<string | null | undefined>>();
  private running = false;
  private closed = false;
  /** The addresses changed since the current round began. */
  private changed = false;
  private wake: (() => void) | undefined;

  constructor(posting: Posting, notify: (uri: string) => Promise<void>) {
    this.posting = posting;
    this.notify = notify;
  }

  /** Watch exactly these addresses (those `watchOf` knows). */
  set(addresses: Iterable<string>): void {
    this.addresses = [...new Set(addresses)].filter((u) => watchOf(u) !== undefined);
    const streams = new Map(this.addresses.map((u) => [watchOf(u)!.stream, watchOf(u)!]));
    for (const s of [...this.state.keys()]) if (!streams.has(s)) this.state.delete(s);
    const documents = new Set(this.addresses.map((u) => watchOf(u)!).flatMap((w) => ('space' in w && w.view === 'document' ? [w.space] : [])));
    for (const space of [...this.documents.keys()]) if (!documents.has(space)) this.documents.delete(space);
    for (const space of documents) if (!this.documents.has(space)) this.documents.set(space, this.currentVersion(space));
    // A new stream's head is read now, not when the loop reaches it: what changes after the
    // subscription is what gets notified.
    for (const [stream, watch] of streams) {
      if (this.state.has(stream)) continue;
      const st: StreamState = { after: undefined, notBefore: 0, ready: Promise.resolve() };
      st.ready = this.readHead(watch, st);
      this.state.set(stream, st);
    }
    this.changed = true;
    this.wake?.();
    if (!this.running && !this.closed && this.addresses.length > 0) void this.loop();
  }

  /** Where a stream stands now. */
  private async readHead(watch: Watch, st: StreamState): Promise<void> {
    const space = 'space' in watch;
    try {
      const head = await this.posting.deps.api.request({
        path: space ? `/v1/spaces/${encodeURIComponent(watch.space)}/posts` : '/v1/mailbox',
        query: space ? { order: 'desc', limit: 1, detail: 'ids' } : { after: 0, limit: 1, detail: 'ids' },
      });
      const h = isObject(head.body) ? head.body.head_seq : undefined;
      st.after = typeof h === 'string' ? h : '0';
    } catch (e) {
      st.notBefore = Date.now() + BACKOFF_MS;
      this.posting.deps.log(`subscription feed: reading ${watch.stream} failed (${isRelayRefusal(e) ? e.code : (e as Error).message}); trying again in ${BACKOFF_MS / 1000} s`);
    }
  }

  /** The SPACE's current version id (null before the first); undefined when it cannot be read. */
  private async currentVersion(space: string): Promise<string | null | undefined> {
    try {
      const res = await this.posting.deps.api.request({ path: `/v1/spaces/${encodeURIComponent(space)}/document`, auth: 'opt' });
      const v = isObject(res.body) ? res.body.version : undefined;
      if (v === null) return null;
      return isObject(v) && typeof v.post_id === 'string' ? v.post_id : undefined;
    } catch (e) {
      this.posting.deps.log(`subscription feed: reading the document of ${space} failed (${isRelayRefusal(e) ? e.code : (e as Error).message})`);
      return undefined;
    }
  }

  /** Whether new posts `got` changed the SPACE's current version (unknown counts as changed). */
  private async documentMoved(space: string, got: readonly Obj[]): Promise<boolean> {
    if (!got.some((p) => p.kind === 'version' || p.kind === 'go')) return false;
    const before = await this.documents.get(space);
    const now = this.currentVersion(space);
    this.documents.set(space, now);
    const after = await now;
    return before === undefined || after === undefined || after !== before;
  }

  watching(): readonly string[] {
    return this.addresses;
  }

  close(): void {
    this.closed = true;
    this.addresses = [];
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      t.unref?.();
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed && this.addresses.length > 0) {
        const started = Date.now();
        this.changed = false;
        const byStream = new Map<string, string[]>();
        for (const u of this.addresses) {
          const s = watchOf(u)!.stream;
          byStream.set(s, [...(byStream.get(s) ?? []), u]);
        }
        const alone = byStream.size === 1;
        for (const [stream, uris] of byStream) {
          if (this.closed) return;
          await this.readStream(stream, uris, alone ? FEED_WAIT_SECONDS : 0);
        }
        if (this.changed) continue;
        if (!alone) {
          const round = Math.max(ROUND_MS, 500 * byStream.size);
          const left = round - (Date.now() - started);
          if (left > 0) await this.sleep(left);
        } else {
          // A waiting read that came back at once (new items, or a failure) must not spin.
          if (Date.now() - started < 200) await this.sleep(200);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** One read of one stream; notifies the addresses the new items concern. */
  private async readStream(stream: string, uris: readonly string[], wait: number): Promise<void> {
    const st = this.state.get(stream);
    if (st === undefined) return;
    await st.ready;
    // The server instance may have closed while the head was read: nothing is delivered any more.
    if (this.closed || this.state.get(stream) !== st) return;
    if (Date.now() < st.notBefore) return;
    const watch = watchOf(uris[0]!)!;
    if (st.after === undefined) {
      st.ready = this.readHead(watch, st);
      return;
    }
    const { api } = this.posting.deps;
    const me = this.posting.deps.identity.peerId;
    try {
      const path = 'space' in watch ? `/v1/spaces/${encodeURIComponent(watch.space)}/posts` : '/v1/mailbox';
      const res = await api.request({
        path,
        query: { after: st.after, limit: 50, detail: 'ids', wait: wait > 0 ? wait : undefined },
        timeoutMs: 30_000 + wait * 1000,
      });
      if (this.closed || this.state.get(stream) !== st) return;
      const body = isObject(res.body) ? res.body : {};
      const got = Array.isArray(body.items) ? body.items.filter(isObject) : [];
      if (typeof body.next_after === 'string') st.after = body.next_after;
      if (got.length === 0) return;
      let moved: Promise<boolean> | undefined;
      // The stream's addresses as they are now: one subscribed while this read waited is told too.
      for (const uri of this.addresses.filter((u) => watchOf(u)!.stream === stream)) {
        const w = watchOf(uri)!;
        let concerns = true;
        if ('space' in w && w.view === 'dossier') concerns = got.some((p) => p.kind === 'dossier' && p.author === me);
        if ('space' in w && w.view === 'document') concerns = await (moved ??= this.documentMoved(w.space, got));
        if (concerns && this.addresses.includes(uri)) await this.notify(uri);
      }
    } catch (e) {
      st.notBefore = Date.now() + BACKOFF_MS;
      // CURSOR_AHEAD: the relay lost positions (a restore); start again from its head.
      if (isRelayRefusal(e, 'CURSOR_AHEAD')) st.after = undefined;
      this.posting.deps.log(`subscription feed: reading ${stream} failed (${isRelayRefusal(e) ? e.code : (e as Error).message}); trying again in ${BACKOFF_MS / 1000} s`);
    }
  }
}

/**
 * Subscriptions on one server instance: the capability, the 2025-11-25 handlers, the
 * 2026-07-28 streams through the tap, and one feed for both.
 */
export function registerSubscriptions(server: McpServer, posting: Posting): SubscriptionFeed {
  const low = server.server;
  low.registerCapabilities({ resources: { subscribe: true } });
  const feed = new SubscriptionFeed(posting, (uri) => low.sendResourceUpdated({ uri }).catch(() => {}));
  const legacy = new Set<string>();
  const tap = posting.deps.listen;
  const update = () => feed.set([...legacy, ...(tap?.addresses() ?? [])]);
  const stopTap = tap?.onChange(update);

  low.setRequestHandler('resources/subscribe', async (request) => {
    const uri = request.params.uri;
    if (watchOf(uri) === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `${uri}: only svc://mailbox, svc://spaces/{name}, svc://spaces/{name}/latest, svc://spaces/{name}/dossier and svc://spaces/{name}/document can be subscribed to`,
      );
    }
    if (!legacy.has(uri) && legacy.size >= SUBSCRIPTIONS_PER_STREAM) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `at most ${SUBSCRIPTIONS_PER_STREAM} subscriptions: unsubscribe from one first`);
    }
    legacy.add(uri);
    update();
    return {};
  });
  low.setRequestHandler('resources/unsubscribe', async (request) => {
    legacy.delete(request.params.uri);
    update();
    return {};
  });

  const previous = low.onclose;
  low.onclose = () => {
    stopTap?.();
    feed.close();
    previous?.();
  };
  if (tap !== undefined && tap.addresses().length > 0) update();
  return feed;
}
