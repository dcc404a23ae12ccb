/**
 * The governance log of each SPACE: the control chain (protocol/objects.md §8, spec/1-concepts.md
 * "Audit log events", "Audit event").
 *
 *   event bytes = canonical({"actor","event","payload","revision","space_id","v":1})
 *   command_id  = H(L("control") || event bytes)
 *   chain_hash  = H(L("control-chain") || uuid16 || u64(revision) || previous || command_id)
 *
 * All hashing is shared/chain.ts; this module only sequences and stores. `append` reads the head
 * and inserts revision head+1 inside the caller's write transaction, so revisions are gap-free.
 * Rows are never updated or deleted. The payload is read back from the canonical bytes (one
 * source of truth).
 *
 * Every governance change of a SPACE appends its event in the transaction that makes it, so
 * `onAppended` is where whatever depends on a SPACE's governance (who may read it: the
 * connector's live streams) hears that it may have changed, once the change has committed.
 */
import { readCanonicalObject, type JsonObject } from '../../shared/canonical.js';
import { commandIdOf, controlGenesis, controlLink, governanceEventBytes } from '../../shared/chain.js';
import { toHex } from '../../shared/encoding.js';
import type { SpaceEvent } from '../../shared/vocabulary.js';
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';

/** The SPACE fields the log needs (a SpaceRow satisfies it). */
export interface EventSpace {
  id: number;
  spaceId: string;
}

export interface AppendedEvent {
  revision: number;
  /** Hex. */
  commandId: string;
  /** Hex. */
  chainHash: string;
}

/** One stored event, as read back. */
export interface EventRecord {
  revision: number;
  event: string;
  actor: string;
  payload: JsonObject;
  at: number;
  canonical: Uint8Array;
  commandId: Uint8Array;
  previousHash: Uint8Array;
  chainHash: Uint8Array;
}

export interface EventStore {
  /**
   * Append the next event. MUST be called inside a write transaction (db.transaction(...)
   * .immediate()), together with the change it records. Payload: the full resulting parameters,
   * never a code, hash or request message.
   */
  append(space: EventSpace, actor: string, event: SpaceEvent, payload: JsonObject, now: number): Promise<AppendedEvent>;
  /** The newest revision and its link; revision 0 answers the control genesis. */
  head(spaceRowId: number): Promise<{ revision: number; chainHash: Uint8Array }>;
  /** The link at `revision` (0 = genesis). Throws RangeError past the head. */
  chainHashAt(spaceRowId: number, revision: number): Promise<Uint8Array>;
  /** Events with revision > after, ascending, at most `limit`. */
  list(spaceRowId: number, after: number, limit: number): Promise<EventRecord[]>;
  /**
   * Hear each event appended to a SPACE's log once the transaction that appended it has
   * committed (never one rolled back); answers the function that stops listening.
   */
  onAppended(listener: (spaceRowId: number, event: SpaceEvent) => void): () => void;
}

interface EventRow {
  revision: number;
  event: string;
  actor: string;
  canonical: Uint8Array;
  command_id: Uint8Array;
  previous_hash: Uint8Array;
  chain_hash: Uint8Array;
  at: number;
}

function toRecord(r: EventRow): EventRecord {
  const canonical = plainBytes(r.canonical);
  const o = readCanonicalObject(canonical, 'stored event');
  return {
    revision: r.revision,
    event: r.event,
    actor: r.actor,
    payload: o.payload as JsonObject,
    at: r.at,
    canonical,
    commandId: plainBytes(r.command_id),
    previousHash: plainBytes(r.previous_hash),
    chainHash: plainBytes(r.chain_hash),
  };
}

export function createEventStore(db: Db): EventStore {
  // The head is read on every append: its parameter fixed so SQLite does not plan it again each call (dialect.ts).
  const sql = dialectOf(db);
  const selectHead = db.prepare<[number], { revision: number; chain_hash: Uint8Array }>(
    `SELECT revision, chain_hash FROM space_events WHERE space_row_id = ${sql.fixed('?')} ORDER BY revision DESC LIMIT 1`,
  );
  const selectSpaceId = db.prepare<[number], { space_id: string }>('SELECT space_id FROM spaces WHERE id = ?');
  const selectAt = db.prepare<[number, number], { chain_hash: Uint8Array }>(
    'SELECT chain_hash FROM space_events WHERE space_row_id = ? AND revision = ?',
  );
  const selectPage = db.prepare<[number, number, number], EventRow>(
    `SELECT revision, event, actor, canonical, command_id, previous_hash, chain_hash, at
       FROM space_events WHERE space_row_id = ? AND revision > ? ORDER BY revision LIMIT ?`,
  );
  const insert = db.prepare(
    `INSERT INTO space_events (space_row_id, revision, event, actor, canonical, command_id, previous_hash, chain_hash, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  const appended = new Set<(spaceRowId: number, event: SpaceEvent) => void>();

  async function genesisOf(spaceRowId: number): Promise<Uint8Array> {
    const s = await selectSpaceId.get(spaceRowId);
    if (!s) throw new RangeError(`no SPACE with row id ${spaceRowId}`);
    return controlGenesis(s.space_id);
  }

  return {
    async append(space, actor, event, payload, now) {
      if (!db.inTransaction) throw new Error('events.append must run inside a write transaction');
      const head = await selectHead.get(space.id);
      const revision = (head?.revision ?? 0) + 1;
      const previous = head ? plainBytes(head.chain_hash) : controlGenesis(space.spaceId);
      const canonical = governanceEventBytes({ spaceId: space.spaceId, revision, actor, event, payload });
      const commandId = commandIdOf(canonical);
      const chainHash = controlLink({ spaceId: space.spaceId, revision, previous, commandId });
      await insert.run(space.id, revision, event, actor, canonical, commandId, previous, chainHash, now);
      if (appended.size > 0) {
        db.afterCommit(() => {
          for (const l of [...appended]) l(space.id, event);
        });
      }
      return { revision, commandId: toHex(commandId), chainHash: toHex(chainHash) };
    },
    async head(spaceRowId) {
      const h = await selectHead.get(spaceRowId);
      if (h) return { revision: h.revision, chainHash: plainBytes(h.chain_hash) };
      return { revision: 0, chainHash: await genesisOf(spaceRowId) };
    },
    async chainHashAt(spaceRowId, revision) {
      if (revision === 0) return await genesisOf(spaceRowId);
      const r = await selectAt.get(spaceRowId, revision);
      if (!r) throw new RangeError(`no revision ${revision} in SPACE row ${spaceRowId}`);
      return plainBytes(r.chain_hash);
    },
    async list(spaceRowId, after, limit) {
      return (await selectPage.all(spaceRowId, after, limit)).map(toRecord);
    },
    onAppended(listener) {
      // Each subscription its own entry, so one listener added twice is heard twice and taken back once per stop.
      const entry = (spaceRowId: number, event: SpaceEvent): void => listener(spaceRowId, event);
      appended.add(entry);
      return () => void appended.delete(entry);
    },
  };
}
