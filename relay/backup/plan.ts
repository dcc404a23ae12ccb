/**
 * What a restore must do, read from the checkpoint log and the restored database
 * (spec/1-concepts.md "Space status", Versioning 6; relay/checkpoint-log.ts):
 *
 * - per SPACE and stream the log names, the checkpoints signed since the last restore that cut
 *   it; every one whose range the restored database still holds must end on the same link
 *   (else the log is of another history, and the restore stops before changing anything);
 * - `imports`: those checkpoints the database lacks, in chain order, so a restore that lost
 *   nothing keeps every checkpoint a client may hold (no range is signed twice);
 * - `cuts`: each stream whose newest signed checkpoint ends past the surviving head: positions
 *   were lost, so the SPACE is closed and continued and a notice is signed;
 * - `missing`: SPACES the log names that the backup does not hold at all (made after it).
 *
 * Every log checkpoint is verified (signature, certificate, the backup's root) before any of
 * this; here they are trusted.
 */
import type { CheckpointFields, ReadCheckpoint, Stream } from '../../shared/checkpoint.js';
import { streamGenesis } from '../../shared/checkpoint.js';
import { toHex } from '../../shared/encoding.js';
import type { RecoveryChain } from '../../shared/recovery.js';
import type { LogEntry } from '../checkpoint-log.js';

export interface StreamView {
  /** The SPACE's row id in the restored database, or undefined when it is not there. */
  spaceRowId(spaceId: string): Promise<number | undefined>;
  head(spaceRowId: number, stream: Stream): Promise<number>;
  /** The link at `position` (1 ≤ position ≤ head), hex. */
  linkAt(spaceRowId: number, stream: Stream, position: number): Promise<string>;
  /** The newest stored checkpoint's last position and id (hex), if any. */
  latest(spaceRowId: number, stream: Stream): Promise<{ last: number; id: string } | undefined>;
}

export interface Cut {
  spaceRowId: number;
  spaceId: string;
  chain: RecoveryChain;
}

export interface RestorePlan {
  imports: { spaceRowId: number; checkpoint: ReadCheckpoint }[];
  cuts: Cut[];
  missing: string[];
}

type Key = `${string} ${Stream}`;

/** Checkpoints per stream after replaying restore markers, in log order. */
function signedPerStream(entries: readonly LogEntry[], read: (entry: LogEntry, line: number) => ReadCheckpoint | undefined): Map<Key, ReadCheckpoint[]> {
  const streams = new Map<Key, ReadCheckpoint[]>();
  entries.forEach((entry, i) => {
    if ('restore' in entry) {
      for (const cut of entry.restore.cuts) {
        const key: Key = `${cut.space_id} ${cut.stream}`;
        const kept = (streams.get(key) ?? []).filter((c) => BigInt(c.fields.last) <= BigInt(cut.survived_last));
        streams.set(key, kept);
      }
      return;
    }
    const c = read(entry, i + 1);
    if (c === undefined) return;
    const key: Key = `${c.fields.space_id} ${c.fields.stream}`;
    streams.set(key, [...(streams.get(key) ?? []), c]);
  });
  return streams;
}

export async function planRestore(
  entries: readonly LogEntry[],
  read: (entry: LogEntry, line: number) => ReadCheckpoint | undefined,
  view: StreamView,
): Promise<RestorePlan> {
  const plan: RestorePlan = { imports: [], cuts: [], missing: [] };
  const missing = new Set<string>();
  const ordered = (a: ReadCheckpoint, b: ReadCheckpoint) => Number(BigInt(a.fields.last) - BigInt(b.fields.last));
  for (const checkpoints of signedPerStream(entries, read).values()) {
    if (checkpoints.length === 0) continue;
    const { space_id: spaceId, stream } = checkpoints[0]!.fields;
    const rowId = await view.spaceRowId(spaceId);
    if (rowId === undefined) {
      missing.add(spaceId);
      continue;
    }
    const head = await view.head(rowId, stream);
    for (const c of checkpoints) {
      const last = Number(c.fields.last);
      if (last <= head && await view.linkAt(rowId, stream, last) !== c.fields.ending_hash) {
        throw new Error(
          `the checkpoint log does not match this backup: SPACE ${spaceId} ${stream} position ${last} was signed with another link; use the log this relay kept`,
        );
      }
    }
    // Imports: follow the chain from the newest stored checkpoint, within what survived.
    const byPrevious = new Map<string | null, ReadCheckpoint[]>();
    for (const c of checkpoints) byPrevious.set(c.fields.previous_checkpoint_id, [...(byPrevious.get(c.fields.previous_checkpoint_id) ?? []), c]);
    let at = await view.latest(rowId, stream);
    for (;;) {
      const candidates = byPrevious.get(at === undefined ? null : at.id) ?? [];
      const next = candidates.find((c) => nextOf(c.fields, at) && Number(c.fields.last) <= head);
      if (next === undefined) break;
      plan.imports.push({ spaceRowId: rowId, checkpoint: next });
      at = { last: Number(next.fields.last), id: toHex(next.id) };
    }
    const newest = [...checkpoints].sort(ordered)[checkpoints.length - 1]!;
    if (Number(newest.fields.last) > head) {
      plan.cuts.push({
        spaceRowId: rowId,
        spaceId,
        chain: {
          stream,
          signed_last: newest.fields.last,
          signed_checkpoint_id: toHex(newest.id),
          signed_ending_hash: newest.fields.ending_hash,
          survived_last: String(head),
          survived_hash: head === 0 ? toHex(streamGenesis(spaceId, stream)) : await view.linkAt(rowId, stream, head),
        },
      });
    }
  }
  plan.missing = [...missing];
  return plan;
}

function nextOf(f: CheckpointFields, at: { last: number; id: string } | undefined): boolean {
  if (at === undefined) return f.first === '1' && f.previous_checkpoint_id === null;
  return Number(f.first) === at.last + 1 && f.previous_checkpoint_id === at.id;
}
