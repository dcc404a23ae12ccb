/**
 * In-process wake-ups for long polling (spec/1-concepts.md "Long polling"): a read with `wait`
 * holds while its page is empty and re-reads as soon as something lands in the SPACE (posts)
 * or the KEY's mailbox.
 *
 * One notifier per database, found with `notifierFor(db)`, so a store module can signal from
 * inside its write transaction without holding any extra dependency:
 *
 *   notifierFor(db).space(spaceRowId)   // a post landed (posts.append, after or inside the commit)
 *   notifierFor(db).mailbox(peerId)     // a mailbox row was delivered to this KEY
 *   notifierFor(db).conversation(id)    // a message landed in this conversation
 *
 * Signals are delivered on a later turn of the event loop (setImmediate), so a signal raised
 * inside a better-sqlite3 transaction (synchronous) reaches waiters only after the commit. A
 * transaction that rolls back gives a spurious wake-up, which is harmless: a waiter always
 * re-reads and goes back to waiting when it still finds nothing new.
 *
 * Nothing here carries content; a wake-up only says "read again".
 */

import { WAITING_READS_PER_KEY } from '../../shared/limits.js';
import type { Db } from '../store/database.js';

type Listener = () => void;

export interface Notifier {
  /** Something landed in the SPACE with this row id. */
  space(spaceRowId: number): void;
  /** Something was delivered to this KEY's mailbox. */
  mailbox(peerId: string): void;
  /** A message landed in the conversation with this id. */
  conversation(conversationId: string): void;
  /**
   * Resolve after the next signal for `topic` or after `ms`, whichever comes first, or at once
   * when `signal` aborts. Answers true when woken by a signal.
   */
  waitSpace(spaceRowId: number, ms: number, signal?: AbortSignal): Promise<boolean>;
  waitMailbox(peerId: string, ms: number, signal?: AbortSignal): Promise<boolean>;
  waitConversation(conversationId: string, ms: number, signal?: AbortSignal): Promise<boolean>;
  /**
   * Take one of a KEY's waiting-read places (2 per KEY, posts reads and mailbox together):
   * a release function, or undefined when both are taken (the read is then BUSY).
   */
  enterWait(peerId: string): (() => void) | undefined;
  /** How many waits are pending (for tests and diagnostics). */
  readonly waiting: number;
  /**
   * The relay is stopping: every pending wait ends now (as if woken) and `closed` turns true, so
   * each held read stops waiting and answers what it has instead of holding the stop for up to
   * 25 seconds. Later waits are not cut short: a loop that waits again (a live stream's) would
   * spin; those end through their own stop.
   */
  close(): void;
  readonly closed: boolean;
}

/** Listeners per topic, fired once each (a stateful resource, hence a class). */
class TopicWaiters {
  private readonly topics = new Map<string, Set<Listener>>();
  private readonly pending = new Set<string>();
  private scheduled = false;
  count = 0;
  closed = false;

  closeAll(): void {
    this.closed = true;
    const listeners = [...this.topics.values()].flatMap((set) => [...set]);
    this.topics.clear();
    for (const l of listeners) l();
  }

  /** Every waiter at once, on a later turn (as `signal` does each topic). */
  signalAll(): void {
    for (const topic of this.topics.keys()) this.signal(topic);
  }

  signal(topic: string): void {
    if (!this.topics.has(topic)) return;
    this.pending.add(topic);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const topics = [...this.pending];
    this.pending.clear();
    for (const topic of topics) {
      const listeners = this.topics.get(topic);
      if (!listeners) continue;
      this.topics.delete(topic);
      for (const l of listeners) l();
    }
  }

  wait(topic: string, ms: number, abort?: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      if (abort?.aborted) {
        resolve(false);
        return;
      }
      let done = false;
      const finish = (woken: boolean): void => {
        if (done) return;
        done = true;
        this.count--;
        clearTimeout(timer);
        abort?.removeEventListener('abort', onAbort);
        const set = this.topics.get(topic);
        if (set) {
          set.delete(listener);
          if (set.size === 0) this.topics.delete(topic);
        }
        resolve(woken);
      };
      const listener: Listener = () => finish(true);
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(false), Math.max(0, ms));
      abort?.addEventListener('abort', onAbort, { once: true });
      this.count++;
      let set = this.topics.get(topic);
      if (!set) {
        set = new Set();
        this.topics.set(topic, set);
      }
      set.add(listener);
    });
  }
}

/**
 * Where signals go besides this process's waiters. `defer` holds a signal raised inside a
 * write transaction until it commits (relay/store/database.ts `afterCommit`), so a woken read
 * on any connection finds what woke it. `publish` carries each signal, after its commit, to
 * the other relay processes on the same database (PostgreSQL LISTEN/NOTIFY), which hand it to
 * `receive`.
 */
export interface NotifierLinks {
  defer?: (fn: () => void) => void;
  publish?: (topic: string) => void;
}

/**
 * What the link between processes hands the notifier: a topic another process published, or,
 * after it may have missed some (its connection to the others was lost), a wake-up of every
 * waiter: a spare re-read is harmless, a missed one would hold a read to its timeout.
 */
export interface LinkedNotifier extends Notifier {
  receive(topic: string): void;
  receiveAll(): void;
}

export function createNotifier(links: NotifierLinks = {}): LinkedNotifier {
  const waiters = new TopicWaiters();
  const holding = new Map<string, number>();
  const { defer, publish } = links;
  const signal = (topic: string): void => {
    if (defer === undefined && publish === undefined) return waiters.signal(topic);
    const send = (): void => {
      waiters.signal(topic);
      publish?.(topic);
    };
    if (defer === undefined) send();
    else defer(send);
  };
  return {
    receive: (topic) => waiters.signal(topic),
    receiveAll: () => waiters.signalAll(),
    enterWait(peer) {
      const n = holding.get(peer) ?? 0;
      if (n >= WAITING_READS_PER_KEY) return undefined;
      holding.set(peer, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const m = (holding.get(peer) ?? 1) - 1;
        if (m <= 0) holding.delete(peer);
        else holding.set(peer, m);
      };
    },
    space: (id) => signal(`s:${id}`),
    mailbox: (peer) => signal(`m:${peer}`),
    waitSpace: (id, ms, signal) => waiters.wait(`s:${id}`, ms, signal),
    waitMailbox: (peer, ms, signal) => waiters.wait(`m:${peer}`, ms, signal),
    conversation: (id) => signal(`c:${id}`),
    waitConversation: (id, ms, signal) => waiters.wait(`c:${id}`, ms, signal),
    get waiting() {
      return waiters.count;
    },
    close: () => waiters.closeAll(),
    get closed() {
      return waiters.closed;
    },
  };
}

const byDatabase = new WeakMap<object, LinkedNotifier>();

/**
 * The notifier of one database (the store's `db`), made on first use; its signals wait for the
 * commit of the transaction that raised them. `links.publish` (given by whoever links the
 * processes, before the first use) carries them to other processes.
 */
export function notifierFor(db: Db, links: Omit<NotifierLinks, 'defer'> = {}): LinkedNotifier {
  let n = byDatabase.get(db);
  if (!n) {
    n = createNotifier({ defer: (fn) => db.afterCommit(fn), ...links });
    byDatabase.set(db, n);
  }
  return n;
}
