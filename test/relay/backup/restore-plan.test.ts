/**
 * What a restore decides from the checkpoint log and the restored database
 * (relay/backup/plan.ts), on a database described by hand: which log checkpoints it takes,
 * which streams lost positions, and when the log is not of this history.
 */
import { describe, expect, it } from 'vitest';
import type { CheckpointFields, ReadCheckpoint, Stream } from '../../../shared/checkpoint.js';
import { streamGenesis } from '../../../shared/checkpoint.js';
import { toHex, utf8 } from '../../../shared/encoding.js';
import { sha256 } from '../../../shared/hash.js';
import type { LogEntry } from '../../../relay/checkpoint-log.js';
import { planRestore, type StreamView } from '../../../relay/backup/plan.js';

const SPACE = '0190cccc-0000-7000-8000-000000000001';
const GONE = '0190cccc-0000-7000-8000-000000000009';
const link = (n: number, fork = '') => toHex(sha256(utf8(`link ${fork}${n}`)));

function checkpoint(first: number, last: number, previous: ReadCheckpoint | null, opts: { space?: string; stream?: Stream; fork?: string } = {}): ReadCheckpoint {
  const fields: CheckpointFields = {
    space_id: opts.space ?? SPACE,
    stream: opts.stream ?? 'posts',
    first: String(first),
    last: String(last),
    predecessor_hash: link(first - 1),
    ending_hash: link(last, opts.fork),
    merkle_root: link(1000 + last),
    previous_checkpoint_id: previous === null ? null : toHex(previous.id),
    service_epoch: '0190dddd-0000-7000-8000-000000000001',
    signer_key_id: link(0),
    created_at: '2026-09-10T12:00:00.000Z',
  };
  return { fields, id: sha256(utf8(JSON.stringify(fields))), canonical: new Uint8Array(), signature: new Uint8Array(), signer: {} as ReadCheckpoint['signer'] };
}

/** A database holding SPACE's posts 1..head, with stored checkpoints up to `stored`. */
function view(head: number, stored?: ReadCheckpoint): StreamView {
  return {
    spaceRowId: async (id) => (id === SPACE ? 7 : undefined),
    head: async (_row, stream) => (stream === 'posts' ? head : 0),
    linkAt: async (_row, _stream, position) => link(position),
    latest: async (_row, stream) => (stream === 'posts' && stored ? { last: Number(stored.fields.last), id: toHex(stored.id) } : undefined),
  };
}

function entries(...cs: (ReadCheckpoint | LogEntry)[]): { log: LogEntry[]; read: (e: LogEntry) => ReadCheckpoint | undefined } {
  const map = new Map<LogEntry, ReadCheckpoint>();
  const log = cs.map((c) => {
    if ('restore' in c || 'checkpoint' in c) return c as LogEntry;
    const e = { checkpoint: {} } as LogEntry;
    map.set(e, c as ReadCheckpoint);
    return e;
  });
  return { log, read: (e) => map.get(e) };
}

describe('planning a restore', () => {
  const a = checkpoint(1, 4, null);
  const b = checkpoint(5, 9, a);
  const c = checkpoint(10, 12, b);

  it('takes the log checkpoints the database lacks within what survived, and names the cut past it', async () => {
    const { log, read } = entries(a, b, c);
    const plan = await planRestore(log, read, view(10, a));
    expect(plan.imports.map((i) => i.checkpoint)).toEqual([b]);
    expect(plan.cuts).toEqual([
      {
        spaceRowId: 7,
        spaceId: SPACE,
        chain: { stream: 'posts', signed_last: '12', signed_checkpoint_id: toHex(c.id), signed_ending_hash: link(12), survived_last: '10', survived_hash: link(10) },
      },
    ]);
  });

  it('loses nothing when every signed range survived', async () => {
    const { log, read } = entries(a, b);
    const plan = await planRestore(log, read, view(9));
    expect(plan.imports.map((i) => i.checkpoint)).toEqual([a, b]);
    expect(plan.cuts).toEqual([]);
  });

  it('a stream with nothing left survives from its genesis', async () => {
    const { log, read } = entries(a);
    const plan = await planRestore(log, read, view(0));
    expect(plan.cuts[0]!.chain).toMatchObject({ survived_last: '0', survived_hash: toHex(streamGenesis(SPACE, 'posts')) });
  });

  it('a restore line forgets what an earlier restore already declared lost', async () => {
    const after = checkpoint(5, 6, a);
    const { log, read } = entries(a, b, { restore: { at: 'x', previous_epoch: 'p', service_epoch: 'n', cuts: [{ space_id: SPACE, stream: 'posts', survived_last: '4' }] } }, after);
    const plan = await planRestore(log, read, view(6, a));
    expect(plan.imports.map((i) => i.checkpoint)).toEqual([after]);
    expect(plan.cuts).toEqual([]);
  });

  it('names a SPACE the backup does not hold, and refuses a log that signed another link at a surviving position', async () => {
    const { log, read } = entries(a, checkpoint(1, 2, null, { space: GONE }));
    expect((await planRestore(log, read, view(4))).missing).toEqual([GONE]);
    const forked = entries(checkpoint(1, 3, null, { fork: 'other ' }));
    await expect(planRestore(forked.log, forked.read, view(4))).rejects.toThrow(/does not match this backup: SPACE .* posts position 3/);
  });
});
