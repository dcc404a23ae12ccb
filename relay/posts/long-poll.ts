/**
 * Long polling (spec/1-concepts.md "Long polling"): `wait` up to 25 seconds on a SPACE read or
 * the mailbox, with a KEY, ascending only, holds an empty read; 2 waiting reads per KEY, a
 * third is BUSY. The read is re-run each time the notifier signals its topic (a post landed, a
 * mailbox row arrived) and returned as soon as it finds something, or empty when time is up, the
 * client went away or the relay is stopping. The token is checked again after every wait: one revoked (or its KEY
 * blocked) while the read held gets the refusal, not what landed since.
 */
import type { FastifyReply } from 'fastify';
import { SvcError } from '../../shared/errors.js';
import { WAITING_READS_PER_KEY } from '../../shared/limits.js';
import type { Notifier } from './notify.js';

export interface HoldOptions<T> {
  notifier: Notifier;
  /** The waiting KEY. */
  peer: string;
  seconds: number;
  reply: FastifyReply;
  /** Wait for the next signal of this read's topic (or `ms`, or the abort). */
  next: (ms: number, signal: AbortSignal) => Promise<boolean>;
  /** Run the read (re-checking access each time). */
  read: () => Promise<T>;
  /** Throw when the caller's token no longer holds (revoked, expired, KEY blocked); run after each wait. */
  recheck: () => Promise<void>;
  isEmpty: (page: T) => boolean;
}

export async function holdWhileEmpty<T>(o: HoldOptions<T>): Promise<T> {
  let page = await o.read();
  if (o.seconds <= 0 || !o.isEmpty(page)) return page;
  const release = o.notifier.enterWait(o.peer);
  if (!release) throw new SvcError('BUSY', `wait: ${WAITING_READS_PER_KEY} waiting reads per KEY are already held`, 1);
  const abort = new AbortController();
  const onClose = (): void => abort.abort();
  o.reply.raw.once('close', onClose);
  try {
    const deadline = Date.now() + o.seconds * 1000;
    // A stopping relay (notifier closed) answers what the read finds now.
    while (o.isEmpty(page) && !abort.signal.aborted && !o.notifier.closed) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await o.next(left, abort.signal);
      if (abort.signal.aborted) break;
      await o.recheck();
      page = await o.read();
    }
    return page;
  } finally {
    o.reply.raw.off('close', onClose);
    release();
  }
}
