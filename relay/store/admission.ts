/**
 * What an append reads under the write lock before it decides, in one statement: the SPACE,
 * the author's role and block, whether its idempotency key was used, and both heads (posts and
 * governance). relay/posts/append.ts would otherwise ask five stores one after another, which on
 * PostgreSQL is five round trips inside the section every relay process takes turns in, and on
 * SQLite five statements. The answers are the stores' own: the role as members.roleOf (the
 * owner from the SPACE, else the member row), the block as blocks.isBlocked, the heads as
 * posts.head and events.head (revision 0 answers the control genesis).
 *
 * Called inside the append's transaction, after the write lock: nothing can move between this
 * read and the post's insert, so the heads read first are the heads the post is chained onto.
 */
import { controlGenesis } from '../../shared/chain.js';
import type { Role } from '../../shared/vocabulary.js';
import type { SpaceRole } from '../policy.js';
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { PostHead } from './posts.js';
import { toSpace, type SpaceRow, type SpaceTableRow } from './spaces.js';

export interface AdmissionState {
  space: SpaceRow;
  /** The author's role (owner, or a member row's role; null for none). */
  role: SpaceRole;
  blocked: boolean;
  /** An earlier post by the author in this SPACE carries the idempotency key asked about. */
  keyUsed: boolean;
  head: PostHead;
  control: { revision: number; chainHash: Uint8Array };
}

export interface AdmissionStore {
  /** The state for `author` appending to the SPACE with row id `spaceRowId`; undefined when it is gone. */
  read(spaceRowId: number, author: string, idempotencyKey: string | null): Promise<AdmissionState | undefined>;
}

type StateRow = SpaceTableRow & {
  member_role: Role | null;
  blocked: number;
  prior_row: number | null;
  head_seq: number | null;
  head_chain_hash: Uint8Array | null;
  head_object_id: Uint8Array | null;
  head_admission: Uint8Array | null;
  head_previous_hash: Uint8Array | null;
  control_revision: number | null;
  control_chain_hash: Uint8Array | null;
};

export function createAdmissionStore(db: Db): AdmissionStore {
  const sql = dialectOf(db);
  // Parameters fixed: on SQLite the value of one compared with an indexed column would otherwise
  // make it plan this statement again on every call (dialect.ts). Every join meets at most one
  // row: members and blocks by their keys, posts by (SPACE, author, key) and (SPACE, seq),
  // events by (SPACE, revision).
  const select = db.prepare<Record<string, unknown>, StateRow>(`
    SELECT s.*, m.role AS member_role, ${sql.bool('b.peer_id IS NOT NULL')} AS blocked, i.id AS prior_row,
           h.seq AS head_seq, h.chain_hash AS head_chain_hash, h.object_id AS head_object_id,
           h.admission AS head_admission, h.previous_hash AS head_previous_hash,
           e.revision AS control_revision, e.chain_hash AS control_chain_hash
      FROM spaces s
      LEFT JOIN members m ON m.space_row_id = s.id AND m.peer_id = ${sql.fixed('@author')}
      LEFT JOIN space_blocks b ON b.space_row_id = s.id AND b.peer_id = ${sql.fixed('@author')}
      LEFT JOIN posts i ON i.space_row_id = s.id AND i.author = ${sql.fixed('@author')} AND i.idempotency_key = ${sql.fixed('@key')}
      LEFT JOIN posts h ON h.space_row_id = s.id AND h.seq = (SELECT MAX(seq) FROM posts WHERE space_row_id = s.id)
      LEFT JOIN space_events e ON e.space_row_id = s.id
                              AND e.revision = (SELECT MAX(revision) FROM space_events WHERE space_row_id = s.id)
     WHERE s.id = ${sql.fixed('@space')}`);

  return {
    async read(spaceRowId, author, idempotencyKey) {
      const r = await select.get({ space: spaceRowId, author, key: idempotencyKey });
      if (r === undefined) return undefined;
      const space = toSpace(r);
      const head: PostHead =
        r.head_seq === null
          ? { seq: 0, chainHash: null, link: null }
          : {
              seq: r.head_seq,
              chainHash: plainBytes(r.head_chain_hash!),
              link: { objectId: plainBytes(r.head_object_id!), admission: plainBytes(r.head_admission!), previous: plainBytes(r.head_previous_hash!) },
            };
      const control =
        r.control_revision === null
          ? { revision: 0, chainHash: controlGenesis(space.spaceId) }
          : { revision: r.control_revision, chainHash: plainBytes(r.control_chain_hash!) };
      return {
        space,
        role: space.owner === author ? 'owner' : (r.member_role ?? null),
        blocked: r.blocked === 1,
        keyUsed: r.prior_row !== null,
        head,
        control,
      };
    },
  };
}
