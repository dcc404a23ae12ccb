/**
 * The SEEK follow-up indexer. Appends index their own posts inside their transaction
 * (relay/store/seek.ts `indexNext`, tokenised before the lock: STYLE.md rule 8); this indexer
 * stores what they left: every post above the watermark when the index is behind, as in a
 * database written before appends indexed inline. Until it has caught up, appends leave their
 * rows to it too, so the index never has holes.
 *
 * It runs on a short timer, a step of SEEK_INDEX_STEP posts at a time. Tokenising an 8 KiB post
 * takes about 150 µs, so a whole step at once would hold the event loop (and the appends
 * waiting on it) for 10 ms and more: the timer's pass tokenises in slices of at most
 * SEEK_INDEX_SLICE_MS, with a turn of the event loop between slices, then stores the step in
 * one write transaction. So that a search always sees every post committed before it,
 * `catchUp()` is also called at the start of each SEEK (a no-op when nothing is behind; it
 * does not yield).
 */
import type { FastifyInstance } from 'fastify';
import type { Fingerprint } from '../../shared/validate.js';
import { createIntervalJob } from '../jobs/interval-job.js';
import type { PendingPost, PreparedDoc, SeekStore } from '../store/seek-store.js';
import { postTerms } from '../../shared/seek/terms.js';

export const SEEK_INDEX_BATCH = 500;
/** The timer stores this many posts at a time and yields between steps. */
export const SEEK_INDEX_STEP = 64;
/**
 * The timer tokenises for about this long, then yields a turn of the event loop (bench appends,
 * 16 clients, one SPACE: 8 KiB p99 from about 53 to 32 ms, same throughput).
 */
export const SEEK_INDEX_SLICE_MS = 3;
export const SEEK_INDEX_INTERVAL_MS = 250;

function fingerprintsOf(json: string | null): Fingerprint[] {
  if (json === null) return [];
  const list = JSON.parse(json) as unknown;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (f): f is Fingerprint => typeof f === 'object' && f !== null && typeof f.scheme === 'string' && typeof f.value === 'string',
  );
}

/** Tokenise one post (pure; no lock). */
export function prepareDoc(p: PendingPost): PreparedDoc {
  return {
    rowId: p.rowId,
    spaceRowId: p.spaceRowId,
    author: p.author,
    postedAt: p.postedAt,
    public: p.public,
    terms: postTerms(p.spaceRowId, p.title, p.body),
    fingerprints: fingerprintsOf(p.fingerprintsJson),
  };
}

export interface SeekIndexer {
  /** Index everything committed so far; answers how many posts were indexed. */
  catchUp(): Promise<number>;
  /** One timer pass (tokenising in slices, yielding between them); answers how many posts were indexed. */
  pass(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export function createSeekIndexer(
  seek: SeekStore,
  opts: { intervalMs?: number; sliceMs?: number; report?: (m: string) => void } = {},
): SeekIndexer {
  const sliceMs = opts.sliceMs ?? SEEK_INDEX_SLICE_MS;
  const report = opts.report ?? ((m: string) => process.stderr.write(`svc-relay: seek indexer: ${m}\n`));

  /** Index at most `most` pending posts; answers how many were pending in the batch. */
  async function step(most: number): Promise<number> {
    const from = await seek.watermark();
    const batch = await seek.pending(from, most);
    if (batch.length === 0) return 0;
    const docs = batch.map(prepareDoc);
    // Another indexer moved the watermark first: nothing stored; the next step looks again.
    await seek.index(from, batch[batch.length - 1]!.rowId, docs);
    return batch.length;
  }

  async function catchUp(): Promise<number> {
    let done = 0;
    for (;;) {
      const n = await step(SEEK_INDEX_BATCH);
      done += n;
      if (n < SEEK_INDEX_BATCH) return done;
    }
  }

  const nextTurn = () => new Promise<void>((r) => setImmediate(r));

  /** The timer's pass: `step` with tokenising sliced, until a step finds fewer than a full one. */
  async function pass(): Promise<number> {
    let done = 0;
    for (;;) {
      const from = await seek.watermark();
      const batch = await seek.pending(from, SEEK_INDEX_STEP);
      if (batch.length === 0) return done;
      const docs: PreparedDoc[] = [];
      let sliceEnd = performance.now() + sliceMs;
      for (const p of batch) {
        docs.push(prepareDoc(p));
        if (performance.now() >= sliceEnd) {
          await nextTurn();
          sliceEnd = performance.now() + sliceMs;
        }
      }
      // A SEEK's catchUp (or another indexer) moved the watermark meanwhile: nothing stored;
      // the next round looks again from the new watermark.
      if (await seek.index(from, batch[batch.length - 1]!.rowId, docs)) done += batch.length;
      if (batch.length < SEEK_INDEX_STEP) return done;
      await nextTurn();
    }
  }

  const job = createIntervalJob({
    intervalMs: opts.intervalMs ?? SEEK_INDEX_INTERVAL_MS,
    pass: async () => void (await pass()),
    report,
  });
  return { catchUp, pass, start: job.start, stop: job.stop };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's SEEK indexer (the seek route catches it up; tests may stop it). */
    seekIndexer: SeekIndexer;
  }
}

/** Make the app's SEEK indexer: started when the app is ready, stopped when it closes. */
export function registerSeekIndexer(app: FastifyInstance, seek: SeekStore): SeekIndexer {
  const indexer = createSeekIndexer(seek);
  app.decorate('seekIndexer', indexer);
  app.addHook('onReady', async () => indexer.start());
  app.addHook('onClose', async () => await indexer.stop());
  return indexer;
}
