/**
 * The SEEK indexer: a follow-up to posts.append that tokenises new posts with no lock held
 * and stores them in short batched write transactions (relay/store/seek.ts). The append never
 * waits for it (STYLE.md §8: "tokenising happens before [the write lock]").
 *
 * It runs on a short timer, a small batch at a time with a yield to the event loop between
 * batches (so a backlog never holds appends behind it) and, so a search always sees every post
 * committed before it, `catchUp()` is also called at the start of each SEEK (a no-op when
 * nothing is new).
 */
import type { FastifyInstance } from 'fastify';
import type { Fingerprint } from '../../shared/validate.js';
import { createIntervalJob } from '../jobs/interval-job.js';
import type { PendingPost, PreparedDoc, SeekStore } from '../store/seek.js';
import { documentTerms } from './terms.js';

export const SEEK_INDEX_BATCH = 500;
/** The timer indexes this many posts at a time and yields between batches (a few ms each). */
export const SEEK_INDEX_STEP = 64;
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
  const hasText = (p.title !== null && p.title !== '') || (p.body !== null && p.body !== '');
  return {
    rowId: p.rowId,
    spaceRowId: p.spaceRowId,
    author: p.author,
    postedAt: p.postedAt,
    public: p.public,
    terms: hasText ? documentTerms(p.spaceRowId, p.title, p.body) : null,
    fingerprints: fingerprintsOf(p.fingerprintsJson),
  };
}

export interface SeekIndexer {
  /** Index everything committed so far; answers how many posts were indexed. */
  catchUp(): number;
  start(): void;
  stop(): void;
}

export function createSeekIndexer(seek: SeekStore, opts: { intervalMs?: number; report?: (m: string) => void } = {}): SeekIndexer {
  const report = opts.report ?? ((m: string) => process.stderr.write(`svc-relay: seek indexer: ${m}\n`));

  /** Index at most `most` pending posts; answers how many were pending in the batch. */
  function step(most: number): number {
    const from = seek.watermark();
    const batch = seek.pending(from, most);
    if (batch.length === 0) return 0;
    const docs = batch.map(prepareDoc);
    // Another indexer moved the watermark first: nothing stored; the next step looks again.
    seek.index(from, batch[batch.length - 1]!.rowId, docs);
    return batch.length;
  }

  function catchUp(): number {
    let done = 0;
    for (;;) {
      const n = step(SEEK_INDEX_BATCH);
      done += n;
      if (n < SEEK_INDEX_BATCH) return done;
    }
  }

  async function drain(): Promise<void> {
    while (step(SEEK_INDEX_STEP) === SEEK_INDEX_STEP) await new Promise<void>((r) => setImmediate(r));
  }

  const job = createIntervalJob({ intervalMs: opts.intervalMs ?? SEEK_INDEX_INTERVAL_MS, pass: drain, report });
  return { catchUp, start: job.start, stop: job.stop };
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
  app.addHook('onClose', async () => indexer.stop());
  return indexer;
}
