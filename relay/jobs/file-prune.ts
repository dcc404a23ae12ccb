/**
 * The pending files job (relay/files/): uploaded bytes wait a day for their uploader to attach
 * them. Once an hour, uploads older than that are forgotten and every file that no upload and no
 * post holds is deleted, in one short write transaction. A file a post attaches is never
 * removed. `runOnce(now)` lets tests move the clock.
 */
import type { FastifyInstance } from 'fastify';
import type { RelayContext } from '../context.js';
import { ATTACHMENT_LIMITS } from '../files/limits.js';
import { createIntervalJob } from './interval-job.js';

export const FILE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export interface FilePruneJob {
  /** One pass at `now` (ms); answers how many files were deleted. */
  runOnce(now?: number): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's pending files job (tests call `runOnce()` after moving the clock). */
    filePrune: FilePruneJob;
  }
}

export function registerFilePrune(app: FastifyInstance, ctx: Pick<RelayContext, 'store' | 'clock'>): FilePruneJob {
  const pendingMs = ATTACHMENT_LIMITS.pendingHours * 60 * 60 * 1000;
  const runOnce = async (now = ctx.clock()): Promise<number> =>
    await ctx.store.db.transaction(async () => await ctx.store.files.prune(now - pendingMs)).immediate();
  const timer = createIntervalJob({
    intervalMs: FILE_PRUNE_INTERVAL_MS,
    pass: async () => {
      await runOnce();
    },
    report: (m) => process.stderr.write(`svc-relay: pending files: ${m}\n`),
  });
  const job: FilePruneJob = { runOnce, start: () => timer.start(), stop: () => timer.stop() };
  app.decorate('filePrune', job);
  app.addHook('onReady', async () => job.start());
  app.addHook('onClose', async () => await job.stop());
  return job;
}
