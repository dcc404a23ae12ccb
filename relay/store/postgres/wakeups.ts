/**
 * Topics between the relay processes on one PostgreSQL database, over LISTEN/NOTIFY on one
 * channel (`svc_wake`).
 *
 * Each process holds one dedicated connection (not from the pool: a pooled connection would
 * stop listening when given back) that has run `LISTEN svc_wake`. Publishing gathers the
 * topics of one turn of the event loop and sends them with `pg_notify` on a pooled connection,
 * as few notifications as fit: each payload is `<process id>\n<topic>\n<topic>…`, under
 * PostgreSQL's limit of 8000 bytes. A process skips its own notifications (its waiters were
 * woken in process). A notification is delivered only once the sending transaction commits,
 * and `publish` is called after the commit that caused the topic, so a process that hears it
 * reads what caused it.
 *
 * The listening connection can drop (server restart, network, an idle timeout on the way).
 * It is then opened again with a growing delay (100 ms doubling to 5 s), and once it listens
 * again every `onResync` listener is told: notifications sent meanwhile are lost, so every
 * waiter re-reads. A connection that dies without telling (a peer vanished from the network)
 * is found by a `SELECT 1` every HEARTBEAT_MS that fails or does not answer in time.
 *
 * Nothing here carries content: a topic only says "read again" about something named.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const WAKE_CHANNEL = 'svc_wake';
/** PostgreSQL refuses a payload of 8000 bytes or more (its default build). */
export const PAYLOAD_MAX_BYTES = 7999;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;
const HEARTBEAT_MS = 15_000;

export interface WakeupsOptions {
  /** The pool notifications are sent on. */
  pool: pg.Pool;
  /** The database URL, for the listening connection. */
  url: string;
  applicationName?: string | undefined;
  log: (message: string) => void;
  /** How long the heartbeat may take before the connection counts as lost (default 10 s). */
  heartbeatTimeoutMs?: number;
}

/** Split `topics` into payloads under the limit, each starting with the sender's id. */
export function payloads(sender: string, topics: Iterable<string>): string[] {
  const out: string[] = [];
  let current = sender;
  let bytes = Buffer.byteLength(sender);
  for (const topic of topics) {
    const size = 1 + Buffer.byteLength(topic);
    // A topic that cannot fit even alone is dropped: topics are ids the relay makes, far shorter.
    if (Buffer.byteLength(sender) + size > PAYLOAD_MAX_BYTES) continue;
    if (bytes + size > PAYLOAD_MAX_BYTES) {
      out.push(current);
      current = sender;
      bytes = Buffer.byteLength(sender);
    }
    current += `\n${topic}`;
    bytes += size;
  }
  if (current !== sender) out.push(current);
  return out;
}

/** The listening connection and the sender of one process; a stateful resource, hence a class. */
export class PostgresWakeups {
  /** This process's id in every payload it sends (random: process ids repeat across machines). */
  readonly sender = randomBytes(8).toString('hex');
  private readonly options: WakeupsOptions;
  private readonly topicListeners = new Set<(topic: string) => void>();
  private readonly resyncListeners = new Set<() => void>();
  private readonly pending = new Set<string>();
  private scheduled = false;
  private client: pg.Client | undefined;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;
  /** True once a connection was tried: any later one that listens may have missed notifications. */
  private attempted = false;
  /** Sends under way (close waits for them). */
  private readonly sending = new Set<Promise<void>>();

  constructor(options: WakeupsOptions) {
    this.options = options;
  }

  /** Open the listening connection; resolves once it listens (a failure is retried in the background). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** True while the listening connection listens. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  publish(topic: string): void {
    if (this.stopped) return;
    this.pending.add(topic);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  subscribe(listener: (topic: string) => void): () => void {
    const entry = (topic: string): void => listener(topic);
    this.topicListeners.add(entry);
    return () => void this.topicListeners.delete(entry);
  }

  onResync(listener: () => void): () => void {
    const entry = (): void => listener();
    this.resyncListeners.add(entry);
    return () => void this.resyncListeners.delete(entry);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.stopHeartbeat();
    if (this.pending.size > 0) this.flush();
    await Promise.all([...this.sending]);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Send what this turn published. */
  private flush(): void {
    this.scheduled = false;
    const topics = [...this.pending];
    this.pending.clear();
    for (const payload of payloads(this.sender, topics)) {
      const p = this.options.pool
        .query('SELECT pg_notify($1, $2)', [WAKE_CHANNEL, payload])
        .then(
          () => undefined,
          // Lost: the other processes' waiters end at their timeout and re-read then.
          (e: unknown) => this.options.log(`a wake-up could not be sent: ${(e as Error).message}`),
        )
        .finally(() => this.sending.delete(p));
      this.sending.add(p);
    }
  }

  private receive(payload: string): void {
    const lines = payload.split('\n');
    if (lines[0] === this.sender) return;
    for (const topic of lines.slice(1)) {
      for (const l of [...this.topicListeners]) {
        try {
          l(topic);
        } catch (e) {
          this.options.log(`a wake-up listener failed: ${(e as Error).message}`);
        }
      }
    }
  }

  private resync(): void {
    for (const l of [...this.resyncListeners]) {
      try {
        l();
      } catch (e) {
        this.options.log(`a resync listener failed: ${(e as Error).message}`);
      }
    }
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const again = this.attempted;
    this.attempted = true;
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: `${this.options.applicationName ?? 'svc-relay'} wake-ups`,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (why: string): void => {
      if (lost) return;
      lost = true;
      if (this.client === client) {
        this.client = undefined;
        this.stopHeartbeat();
      }
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.options.log(`the wake-up connection was lost (${why}); listening again in ${this.retryMs} ms`);
      this.retry();
    };
    client.on('error', (e) => onLost(e.message));
    client.on('end', () => onLost('closed'));
    client.on('notification', (n) => {
      if (n.channel === WAKE_CHANNEL && n.payload !== undefined) this.receive(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WAKE_CHANNEL}`);
    } catch (e) {
      onLost((e as Error).message);
      return;
    }
    if (this.stopped || lost) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = RETRY_FIRST_MS;
    this.startHeartbeat(client, onLost);
    if (again) this.resync();
  }

  private retry(): void {
    if (this.retryTimer !== undefined || this.stopped) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  private startHeartbeat(client: pg.Client, onLost: (why: string) => void): void {
    this.stopHeartbeat();
    const timeoutMs = this.options.heartbeatTimeoutMs ?? 10_000;
    this.heartbeat = setInterval(() => {
      const timer = setTimeout(() => onLost('no answer to the heartbeat'), timeoutMs);
      timer.unref();
      client.query('SELECT 1').then(
        () => clearTimeout(timer),
        (e: unknown) => {
          clearTimeout(timer);
          onLost((e as Error).message);
        },
      );
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
