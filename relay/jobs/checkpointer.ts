/**
 * The background checkpointer (spec/1-concepts.md "Chains, checkpoints and proofs";
 * protocol/objects.md §11-§12): per SPACE and stream (`posts`, `events`) it signs the next
 * uncovered range once 1,024 positions are uncovered, or once the oldest uncovered position
 * is ten minutes old (then everything uncovered, up to 1,024). Each checkpoint names the
 * previous one and starts from its ending link; the first starts at 1 from the genesis.
 *
 * Publishing is apart from sequencing (STYLE.md, after Tessera): the append never waits for
 * it. Leaves, root and signature are computed outside any transaction; only the insert takes
 * the write lock, and it re-checks that the stream's newest checkpoint is still the one this
 * range extends.
 *
 * A range is signed only when complete and linked: every position present, each link's
 * `previous_hash` equal to the link before (the genesis, or the previous checkpoint's ending
 * link, for the first). A range that is not is left unsigned and reported on stderr.
 *
 * Every signed checkpoint is appended to the checkpoint log (relay/checkpoint-log.ts), fsync'd,
 * before it is stored, so the log holds everything a client could have read. While a restore
 * runs (the service is read-only) nothing is signed: the restore decides what survived.
 *
 * Time comes from the injected clock: `runOnce(now)` lets tests move it. `start()` runs every
 * `intervalMs` (default 60 s, as the reference's worker) until `stop()` (relay/jobs/interval-job.ts).
 */
import { renderCheckpoint, signCheckpoint, streamGenesis, type SignedCheckpoint, type Stream } from '../../shared/checkpoint.js';
import { equalBytes, fromHex, toHex } from '../../shared/encoding.js';
import { CHECKPOINT_MAX_AGE_SECONDS, CHECKPOINT_MAX_POSITIONS } from '../../shared/limits.js';
import { eventLeaf, merkleRoot, postLeaf } from '../../shared/merkle.js';
import type { ServedSigner, ServiceSigner } from '../../shared/service-keys.js';
import type { CheckpointLog } from '../checkpoint-log.js';
import type { CheckpointStore, StreamLink } from '../store/checkpoints.js';
import { createIntervalJob } from './interval-job.js';

export const CHECKPOINT_INTERVAL_MS = 60_000;
const MAX_AGE_MS = CHECKPOINT_MAX_AGE_SECONDS * 1000;

export interface CheckpointerDeps {
  checkpoints: CheckpointStore;
  clock: () => number;
  signer: ServiceSigner;
  rendering: ServedSigner;
  /** The epoch checkpoints name: a value, or read at each signature (it changes after a restore). */
  serviceEpoch: string | (() => Promise<string>);
  /** Where every signed checkpoint is appended before it is stored (none in memory-only tests). */
  log?: CheckpointLog | undefined;
  /** True while the service is read-only (a restore runs): nothing is signed then. */
  paused?: () => Promise<boolean>;
  /**
   * Run a pass only when no other relay process on the database runs one (Cluster.runAlone on
   * PostgreSQL; undefined when another does, and this pass is skipped). None: one process.
   */
  alone?: <T>(pass: () => Promise<T>) => Promise<T | undefined>;
  intervalMs?: number;
  /** Where faults go (default stderr). */
  report?: (message: string) => void;
}

export interface CheckpointRun {
  /** Checkpoints signed and stored in this run. */
  signed: number;
  /** (SPACE, stream) pairs still holding uncovered positions. */
  pending: number;
}

export interface Checkpointer {
  /** One pass over every SPACE with uncovered positions, at time `now` (ms). */
  runOnce(now?: number): Promise<CheckpointRun>;
  start(): void;
  stop(): Promise<void>;
}

/** Build the fields of the range first..last from its links (already checked complete). */
async function rangeCheckpoint(
  deps: CheckpointerDeps,
  spaceId: string,
  stream: Stream,
  previous: SignedCheckpoint | undefined,
  links: readonly StreamLink[],
  now: number,
): Promise<SignedCheckpoint> {
  const leaf = stream === 'posts' ? postLeaf : eventLeaf;
  const leaves = links.map((l) => leaf(spaceId, l.position, l.id, l.chainHash));
  return signCheckpoint(deps.signer, {
    space_id: spaceId,
    stream,
    first: String(links[0]!.position),
    last: String(links[links.length - 1]!.position),
    predecessor_hash: previous ? previous.fields.ending_hash : toHex(streamGenesis(spaceId, stream)),
    ending_hash: toHex(links[links.length - 1]!.chainHash),
    merkle_root: toHex(merkleRoot(leaves)),
    previous_checkpoint_id: previous ? toHex(previous.id) : null,
    service_epoch: typeof deps.serviceEpoch === 'string' ? deps.serviceEpoch : await deps.serviceEpoch(),
    created_at: new Date(now).toISOString(),
  });
}

/** Why the links of first..last cannot be signed, or undefined when they can. */
function linkProblem(links: readonly StreamLink[], first: number, last: number, predecessor: Uint8Array): string | undefined {
  if (links.length !== last - first + 1) return `${links.length} of ${last - first + 1} positions present`;
  let previous = predecessor;
  for (let i = 0; i < links.length; i++) {
    const l = links[i]!;
    if (l.position !== first + i) return `position ${first + i} missing`;
    if (!equalBytes(l.previousHash, previous)) return `position ${l.position} does not link to the one before`;
    previous = l.chainHash;
  }
  return undefined;
}

export function createCheckpointer(deps: CheckpointerDeps): Checkpointer {
  const store = deps.checkpoints;
  const report = deps.report ?? ((m: string) => process.stderr.write(`svc-relay: checkpointer: ${m}\n`));
  const dirty = new Map<string, { spaceRowId: number; stream: Stream }>();
  /** Highest posts row id already looked at; newer rows mark their SPACE dirty. */
  let postWatermark = 0;
  /** Newest revision seen per SPACE, so an unchanged log is not re-examined. */
  const eventsSeen = new Map<number, number>();

  const mark = (spaceRowId: number, stream: Stream): void => {
    dirty.set(`${stream}:${spaceRowId}`, { spaceRowId, stream });
  };

  /** Sign what is due in one stream, at most `most` ranges; answers [signed, still pending]. */
  async function settle(spaceRowId: number, stream: Stream, now: number, most = Infinity): Promise<[number, boolean]> {
    const spaceId = await store.spaceIdOf(spaceRowId);
    if (spaceId === undefined) return [0, false];
    let signed = 0;
    for (;;) {
      if (signed >= most) return [signed, true];
      const previous = await store.latest(spaceRowId, stream);
      const covered = previous ? Number(previous.fields.last) : 0;
      const head = await store.streamHead(spaceRowId, stream);
      if (head <= covered) return [signed, false];
      const first = covered + 1;
      let last: number;
      if (head - covered >= CHECKPOINT_MAX_POSITIONS) {
        last = covered + CHECKPOINT_MAX_POSITIONS;
      } else {
        const oldest = await store.timeAt(spaceRowId, stream, first);
        if (oldest === undefined || now - oldest < MAX_AGE_MS) return [signed, true];
        last = head;
      }
      const links = await store.links(spaceRowId, stream, first, last);
      const predecessor = previous ? fromHex(previous.fields.ending_hash, 32) : streamGenesis(spaceId, stream);
      const problem = linkProblem(links, first, last, predecessor);
      if (problem !== undefined) {
        report(`SPACE row ${spaceRowId} ${stream} ${first}-${last} left unsigned: ${problem}`);
        return [signed, true];
      }
      const checkpoint = await rangeCheckpoint(deps, spaceId, stream, previous, links, now);
      deps.log?.append({ checkpoint: renderCheckpoint(checkpoint, deps.rendering) });
      if (!await store.insert(spaceRowId, checkpoint, deps.rendering, now)) return [signed, true];
      signed++;
    }
  }

  /** Mark the SPACES whose streams moved since the last look. */
  async function look(): Promise<void> {
    const fresh = await store.spacesWithNewPosts(postWatermark);
    postWatermark = fresh.upto;
    for (const id of fresh.spaces) mark(id, 'posts');
    for (const { spaceRowId, head } of await store.eventHeads()) {
      if (eventsSeen.get(spaceRowId) !== head) {
        eventsSeen.set(spaceRowId, head);
        mark(spaceRowId, 'events');
      }
    }
  }

  /**
   * A pass runs alone: when another process's pass holds the job, this one does nothing (not
   * even look, so its marks wait for a pass of its own), and the ranges are signed once, by
   * whichever pass holds it.
   */
  const alone = async <T>(pass: () => Promise<T>, skipped: T): Promise<T> =>
    deps.alone === undefined ? await pass() : ((await deps.alone(pass)) ?? skipped);

  async function runOnce(now: number = deps.clock()): Promise<CheckpointRun> {
    return await alone(async () => await runOnceHere(now), { signed: 0, pending: dirty.size });
  }

  async function runOnceHere(now: number): Promise<CheckpointRun> {
    if (await deps.paused?.() === true) return { signed: 0, pending: dirty.size };
    await look();
    let signed = 0;
    for (const [key, { spaceRowId, stream }] of dirty) {
      const [n, pending] = await settle(spaceRowId, stream, now);
      signed += n;
      if (!pending) dirty.delete(key);
    }
    return { signed, pending: dirty.size };
  }

  /**
   * The timer's pass: the same work one range at a time, yielding to the event loop between
   * ranges, so signing a backlog (a Merkle root over 1,024 leaves is about a millisecond)
   * never holds appends and reads waiting behind it.
   */
  async function runInSteps(): Promise<void> {
    if (await deps.paused?.() === true) return;
    await look();
    for (const [key, { spaceRowId, stream }] of dirty) {
      for (;;) {
        if (await deps.paused?.() === true) return;
        const [n, pending] = await settle(spaceRowId, stream, deps.clock(), 1);
        if (!pending) dirty.delete(key);
        if (n === 0 || !pending) break;
        await new Promise<void>((r) => setImmediate(r));
      }
    }
  }

  const job = createIntervalJob({ intervalMs: deps.intervalMs ?? CHECKPOINT_INTERVAL_MS, pass: async () => await alone(runInSteps, undefined), report });
  return { runOnce, start: job.start, stop: job.stop };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's checkpointer (tests call `runOnce(now)` on it). */
    checkpointer: Checkpointer;
  }
}

/** Make the app's checkpointer: started when the app is ready, stopped when it closes. */
export function registerCheckpointer(
  app: import('fastify').FastifyInstance,
  ctx: Pick<import('../context.js').RelayContext, 'store' | 'clock' | 'serviceKeys' | 'serviceMode' | 'checkpointLog'>,
): Checkpointer {
  // Several relay processes on one PostgreSQL database: one signs at a time (advisory lock).
  const cluster = ctx.store.cluster;
  const checkpointer = createCheckpointer({
    checkpoints: ctx.store.checkpoints,
    clock: ctx.clock,
    signer: ctx.serviceKeys.signer,
    rendering: ctx.serviceKeys.rendering,
    serviceEpoch: async () => await ctx.serviceMode.epoch(),
    log: ctx.checkpointLog,
    paused: async () => await ctx.serviceMode.readOnly() !== undefined,
    alone: cluster === undefined ? undefined : async (pass) => await cluster.runAlone('checkpointer', pass),
  });
  app.decorate('checkpointer', checkpointer);
  app.addHook('onReady', async () => checkpointer.start());
  app.addHook('onClose', async () => await checkpointer.stop());
  return checkpointer;
}
