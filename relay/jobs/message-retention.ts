/**
 * The message retention job (spec/1-concepts.md item 9: "A direct message is deleted once older
 * than its sender's retention (1 to 720 days, 720 by default, checked hourly, a change applies
 * to messages already sent)").
 *
 * One pass, at one `now`: first every message older than the longest retention (expired
 * whoever sent it), then, KEY by KEY, the messages of each KEY whose retention is shorter. The
 * sender's current setting decides, so shortening it reaches old messages on the next pass.
 * What deleting removes and keeps (seq gaps, mailbox rows) is relay/store/message-retention.ts.
 *
 * Deleting is bounded: at most RETENTION_BATCH messages per write transaction, and a turn of
 * the event loop between steps, so a large backlog (the first pass after a shortening) never
 * holds appends and reads behind one long transaction.
 *
 * Time comes from the injected clock: `runOnce(now)` lets tests move it. `start()` runs a first
 * pass `firstPassMs` after it (default ten seconds: after the relay is listening and its first
 * requests, never in the way of either), then one every `intervalMs` (default an hour,
 * relay/jobs/interval-job.ts) until `stop()`. Without the early pass a relay restarted more
 * often than hourly would never delete anything. Passes never overlap: one still running when
 * the next is due is left to finish, and that turn does nothing.
 */
import type { FastifyInstance } from 'fastify';
import { MESSAGE_RETENTION_DAYS } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { DAY_MS, type MessageRetentionStore } from '../store/message-retention.js';
import { createIntervalJob } from './interval-job.js';

export const MESSAGE_RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** The first pass after start. */
export const MESSAGE_RETENTION_FIRST_PASS_MS = 10_000;
/** Messages deleted per write transaction. */
export const RETENTION_BATCH = 256;
/** KEYS with a shorter retention looked at between two turns of the event loop. */
export const RETENTION_KEY_BATCH = 256;

export interface MessageRetentionJob {
  /** One whole pass at `now` (ms), yielding between steps; answers how many messages were deleted. */
  runOnce(now?: number): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

export function createMessageRetentionJob(deps: {
  retention: MessageRetentionStore;
  clock: () => number;
  intervalMs?: number;
  firstPassMs?: number;
  /** Where faults go (default stderr). */
  report?: (message: string) => void;
}): MessageRetentionJob {
  const store = deps.retention;
  const report = deps.report ?? ((m: string) => process.stderr.write(`svc-relay: message retention: ${m}\n`));

  /** Delete what `next` finds, a batch per transaction, until a batch comes back short. */
  async function drain(next: () => Promise<string[]>): Promise<number> {
    let deleted = 0;
    for (;;) {
      const ids = await next();
      deleted += await store.remove(ids);
      if (ids.length < RETENTION_BATCH) return deleted;
      await nextTurn();
    }
  }

  async function runOnce(now: number = deps.clock()): Promise<number> {
    // No KEY keeps a message longer than the longest retention (the default is the longest).
    const longest = now - MESSAGE_RETENTION_DAYS.max * DAY_MS;
    let deleted = await drain(async () => await store.sentBefore(longest, RETENTION_BATCH));
    let after = '';
    for (;;) {
      const keys = await store.shortRetentions(after, RETENTION_KEY_BATCH);
      for (const k of keys) {
        const cutoff = now - k.days * DAY_MS;
        deleted += await drain(async () => await store.sentByBefore(k.peerId, cutoff, RETENTION_BATCH));
      }
      if (keys.length < RETENTION_KEY_BATCH) return deleted;
      after = keys[keys.length - 1]!.peerId;
      await nextTurn();
    }
  }

  /** The pass under way (from the hourly timer or the early one), which stopping waits for. */
  let passing: Promise<unknown> | undefined;
  async function pass(): Promise<void> {
    if (passing) return;
    passing = runOnce();
    try {
      await passing;
    } finally {
      passing = undefined;
    }
  }

  const hourly = createIntervalJob({ intervalMs: deps.intervalMs ?? MESSAGE_RETENTION_INTERVAL_MS, pass, report });
  let started = false;
  let first: NodeJS.Timeout | undefined;
  return {
    runOnce,
    start() {
      if (started) return;
      started = true;
      hourly.start();
      first = setTimeout(() => {
        first = undefined;
        pass().catch((e: unknown) => report(e instanceof Error ? (e.stack ?? e.message) : String(e)));
      }, deps.firstPassMs ?? MESSAGE_RETENTION_FIRST_PASS_MS);
      first.unref();
    },
    async stop() {
      started = false;
      if (first) clearTimeout(first);
      first = undefined;
      await hourly.stop();
      // The early pass runs outside the hourly timer; its failure was reported by its own handler.
      await passing?.catch(() => undefined);
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's message retention job (tests call `runOnce()` after moving the clock). */
    messageRetention: MessageRetentionJob;
  }
}

/** Make the app's retention job: started when the app is ready, stopped when it closes. */
export function registerMessageRetention(app: FastifyInstance, ctx: Pick<RelayContext, 'store' | 'clock'>): MessageRetentionJob {
  const job = createMessageRetentionJob({ retention: ctx.store.messageRetention, clock: ctx.clock });
  app.decorate('messageRetention', job);
  app.addHook('onReady', async () => job.start());
  app.addHook('onClose', async () => await job.stop());
  return job;
}
