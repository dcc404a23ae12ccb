/**
 * What `svc-relay migrate` checks on the target before it reports success, reading back what
 * the target stores (through the relay's own database interface, so through the same driver a
 * relay on it will use):
 *
 * - every copied table holds as many rows as the source's;
 * - every SPACE's governance chain, revision by revision from the genesis: each event's
 *   command_id is the hash of its stored bytes, which name this SPACE and revision, and each
 *   link follows from the one before (shared/chain.ts);
 * - every SPACE's post chain, seq by seq from the genesis: object_id from the stored canonical
 *   bytes, the admission from its revision and control hash, which is the governance link at
 *   that revision, and each link (and the stored previous link) from the one before;
 * - every checkpoint: its signed bytes read strictly, its id, its signature and the signer's
 *   certificate under the service's root key (shared/checkpoint.ts), its SPACE, stream and
 *   range as stored, extending the one before it, and its predecessor, ending link and Merkle
 *   root recomputed from the stored links it covers (shared/merkle.ts);
 * - every recovery notice (a SPACE closed by a restore that lost positions): its signed bytes,
 *   id, signature and signer under the root key (shared/recovery.ts), and its SPACE; and its
 *   withheld form, if any, the same way, naming that notice;
 * - SEEK's rebuilt index covers every post, and where the source had indexed a post the
 *   target's document agrees (its SPACE, public and unscoped, the per-day cap of unscoped SEEK
 *   decided the same way).
 *
 * Each problem is one line naming the table, or the SPACE, stream and position.
 */
import { verifyControlChain, verifyPostChain, controlGenesis, objectAdmission, type ChainStart } from '../../shared/chain.js';
import { checkExtends, readCheckpointBytes, renderCheckpoint, streamGenesis, verifyCheckpoint, type CheckpointLink, type Stream } from '../../shared/checkpoint.js';
import { equalBytes, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { eventLeaf, merkleRoot, postLeaf } from '../../shared/merkle.js';
import { readRecoveryBytes, renderRecovery, verifyRecovery } from '../../shared/recovery.js';
import type { ServedSigner } from '../../shared/service-keys.js';
import { createCheckpointStore } from '../store/checkpoints.js';
import { plainBytes, type Db } from '../store/database.js';

/** Rows read per query while walking a chain. */
const PAGE = 2_000;
/** Problems listed before the rest are only counted. */
const MAX_PROBLEMS = 20;

export interface VerifyInput {
  db: Db;
  /** The service's root public key (the data directory's root seed). */
  rootKey: Uint8Array;
  /** Row counts of the copied tables in the source. */
  sourceCounts: ReadonlyMap<string, number>;
  /** The source's SEEK documents it had indexed (post_row, space_row_id, public, unscoped), by post_row. */
  sourceSeekDocs: Iterable<readonly [number, number, number, number]>;
  /** Called as positions are checked (done, total). */
  progress?: (done: number, total: number) => void;
}

export interface VerifyResult {
  spaces: number;
  posts: number;
  events: number;
  checkpoints: number;
  /** One line each; empty when everything holds. */
  problems: string[];
  /** Problems found beyond the ones listed. */
  moreProblems: number;
}

interface SpaceRef {
  id: number;
  space_id: string;
  name: string;
}

function detailOf(e: unknown): string {
  if (e instanceof SvcError) return e.detail ?? e.message;
  return e instanceof Error ? e.message : String(e);
}

export async function verifyTarget(input: VerifyInput): Promise<VerifyResult> {
  const { db } = input;
  const result: VerifyResult = { spaces: 0, posts: 0, events: 0, checkpoints: 0, problems: [], moreProblems: 0 };
  const problem = (line: string): void => {
    if (result.problems.length < MAX_PROBLEMS) result.problems.push(line);
    else result.moreProblems++;
  };

  for (const [table, expected] of input.sourceCounts) {
    const got = Number(await db.prepare(`SELECT count(*) AS n FROM "${table}"`).pluck().get());
    if (got !== expected) problem(`table ${table}: ${expected} rows in the source, ${got} on the target`);
  }

  const total =
    Number(await db.prepare('SELECT count(*) FROM posts').pluck().get()) +
    Number(await db.prepare('SELECT count(*) FROM space_events').pluck().get()) +
    Number(await db.prepare('SELECT count(*) FROM checkpoints').pluck().get());
  let done = 0;
  const advance = (n: number): void => {
    done += n;
    input.progress?.(done, total);
  };

  const spaces = await db.prepare<[], SpaceRef>('SELECT id, space_id, name FROM spaces ORDER BY id').all();
  const links = createCheckpointStore(db);
  for (const space of spaces) {
    result.spaces++;
    const where = `SPACE ${space.name} (${space.space_id})`;
    const controlLinks = await verifyEvents(db, space, where, problem, advance, result);
    await verifyPosts(db, space, where, controlLinks, problem, advance, result);
    const checkpoints = await db
      .prepare<[number], { stream: Stream; first: number; last: number; checkpoint_id: Uint8Array; canonical: Uint8Array; signature: Uint8Array; rendering: string }>(
        `SELECT c.stream, c.first, c.last, c.checkpoint_id, c.canonical, c.signature, s.rendering
           FROM checkpoints c JOIN checkpoint_signers s ON s.id = c.signer_row
          WHERE c.space_row_id = ? ORDER BY c.stream, c.last`,
      )
      .all(space.id);
    const previous = new Map<Stream, CheckpointLink>();
    for (const row of checkpoints) {
      result.checkpoints++;
      advance(1);
      const at = `${where} ${row.stream} checkpoint ${row.first}-${row.last}`;
      let fields;
      try {
        const canonical = plainBytes(row.canonical);
        const checked = verifyCheckpoint(
          renderCheckpoint(
            { fields: readCheckpointBytes(canonical), canonical, id: plainBytes(row.checkpoint_id), signature: plainBytes(row.signature) },
            JSON.parse(row.rendering) as ServedSigner,
          ),
          input.rootKey,
        );
        fields = checked.fields;
        if (fields.space_id !== space.space_id) throw new Error('signed for another SPACE');
        if (fields.stream !== row.stream || BigInt(fields.first) !== BigInt(row.first) || BigInt(fields.last) !== BigInt(row.last)) {
          throw new Error(`signed as ${fields.stream} ${fields.first}-${fields.last}`);
        }
        const before = previous.get(row.stream);
        if (before !== undefined) checkExtends(before, checked);
        else if (row.first !== 1) throw new Error('the first checkpoint of the stream does not start at 1');
        previous.set(row.stream, checked);
      } catch (e) {
        problem(`${at}: ${detailOf(e)}`);
        continue;
      }
      const covered = await links.links(space.id, row.stream, row.first, row.last);
      if (covered.length !== row.last - row.first + 1 || covered[0]?.position !== row.first) {
        problem(`${at}: the target holds ${covered.length} of its ${row.last - row.first + 1} positions`);
        continue;
      }
      const predecessor = row.first === 1 ? streamGenesis(space.space_id, row.stream) : plainBytes(covered[0]!.previousHash);
      const leaf = row.stream === 'posts' ? postLeaf : eventLeaf;
      const root = merkleRoot(covered.map((l) => leaf(space.space_id, l.position, plainBytes(l.id), plainBytes(l.chainHash))));
      if (fields.predecessor_hash !== toHex(predecessor)) problem(`${at}: predecessor_hash is not the stored link before ${row.first}`);
      if (fields.ending_hash !== toHex(plainBytes(covered.at(-1)!.chainHash))) problem(`${at}: ending_hash is not the stored link at ${row.last}`);
      if (fields.merkle_root !== toHex(root)) problem(`${at}: merkle_root does not match the stored links it covers`);
    }
  }

  await verifyNotices(input, problem);
  await verifySeek(input, problem);
  return result;
}

/** Every recovery notice and withheld form verifies under the root key and names the SPACE (and notice) it is stored for. */
async function verifyNotices(input: VerifyInput, problem: (line: string) => void): Promise<void> {
  type Row = { id: number; recovery_id: Uint8Array; canonical: Uint8Array; signature: Uint8Array; rendering: string; space_id: string | null; whole_id: Uint8Array };
  const check = (n: Row, withheld: boolean): void => {
    const canonical = plainBytes(n.canonical);
    const fields = readRecoveryBytes(canonical);
    verifyRecovery(
      renderRecovery({ fields, canonical, id: plainBytes(n.recovery_id), signature: plainBytes(n.signature) }, JSON.parse(n.rendering) as ServedSigner),
      input.rootKey,
    );
    if (fields.space_id !== n.space_id) throw new Error('names another SPACE than the one it is stored for');
    if (!withheld && fields.full_recovery_id !== undefined) throw new Error('is a withheld form, not a whole notice');
    if (withheld && fields.full_recovery_id !== toHex(plainBytes(n.whole_id))) throw new Error('is not the withheld form of the notice it is stored for');
  };
  const notices = await input.db
    .prepare<[], Row>(
      `SELECT n.id, n.recovery_id, n.canonical, n.signature, g.rendering, s.space_id, n.recovery_id AS whole_id
         FROM recovery_notices n JOIN checkpoint_signers g ON g.id = n.signer_row LEFT JOIN spaces s ON s.id = n.space_row_id
        ORDER BY n.id`,
    )
    .all();
  for (const n of notices) {
    try {
      check(n, false);
    } catch (e) {
      problem(`table recovery_notices: notice ${n.id}: ${detailOf(e)}`);
    }
  }
  const withheld = await input.db
    .prepare<[], Row>(
      `SELECT w.notice_row_id AS id, w.recovery_id, w.canonical, w.signature, g.rendering, s.space_id, n.recovery_id AS whole_id
         FROM recovery_withheld w JOIN checkpoint_signers g ON g.id = w.signer_row JOIN recovery_notices n ON n.id = w.notice_row_id
         LEFT JOIN spaces s ON s.id = n.space_row_id
        ORDER BY w.notice_row_id`,
    )
    .all();
  for (const n of withheld) {
    try {
      check(n, true);
    } catch (e) {
      problem(`table recovery_withheld: notice ${n.id}: ${detailOf(e)}`);
    }
  }
}

async function verifyEvents(
  db: Db,
  space: SpaceRef,
  where: string,
  problem: (line: string) => void,
  advance: (n: number) => void,
  result: VerifyResult,
): Promise<Map<number, Uint8Array>> {
  const page = db.prepare<[number, number, number], { revision: number; canonical: Uint8Array; command_id: Uint8Array; previous_hash: Uint8Array; chain_hash: Uint8Array }>(
    'SELECT revision, canonical, command_id, previous_hash, chain_hash FROM space_events WHERE space_row_id = ? AND revision > ? ORDER BY revision LIMIT ?',
  );
  const chain = new Map<number, Uint8Array>([[0, controlGenesis(space.space_id)]]);
  let start: ChainStart | undefined;
  let after = 0;
  for (;;) {
    const rows = await page.all(space.id, after, PAGE);
    if (rows.length === 0) return chain;
    const verdict = verifyControlChain(
      space.space_id,
      rows.map((r) => ({ revision: r.revision, commandId: plainBytes(r.command_id), chainHash: plainBytes(r.chain_hash), canonical: plainBytes(r.canonical) })),
      start,
    );
    if (!verdict.ok) {
      problem(`${where} events revision ${verdict.position}: ${verdict.reason}`);
      return chain;
    }
    for (const r of rows) {
      if (!equalBytes(plainBytes(r.previous_hash), chain.get(r.revision - 1)!)) {
        problem(`${where} events revision ${r.revision}: previous_hash is not the link before it`);
        return chain;
      }
      chain.set(r.revision, plainBytes(r.chain_hash));
    }
    result.events += rows.length;
    advance(rows.length);
    after = rows.at(-1)!.revision;
    start = { position: after, chainHash: chain.get(after)! };
  }
}

async function verifyPosts(
  db: Db,
  space: SpaceRef,
  where: string,
  controlLinks: ReadonlyMap<number, Uint8Array>,
  problem: (line: string) => void,
  advance: (n: number) => void,
  result: VerifyResult,
): Promise<void> {
  const page = db.prepare<
    [number, number, number],
    { seq: number; canonical: Uint8Array; object_id: Uint8Array; admission: Uint8Array; admitted_revision: number; admitted_control_hash: Uint8Array; previous_hash: Uint8Array; chain_hash: Uint8Array }
  >(
    `SELECT seq, canonical, object_id, admission, admitted_revision, admitted_control_hash, previous_hash, chain_hash
       FROM posts WHERE space_row_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
  );
  let start: ChainStart | undefined;
  let after = 0;
  let previous: Uint8Array | undefined;
  for (;;) {
    const rows = await page.all(space.id, after, PAGE);
    if (rows.length === 0) return;
    const verdict = verifyPostChain(
      space.space_id,
      rows.map((r) => ({
        seq: r.seq,
        objectId: plainBytes(r.object_id),
        admission: plainBytes(r.admission),
        chainHash: plainBytes(r.chain_hash),
        admittedRevision: r.admitted_revision,
        admittedControlHash: plainBytes(r.admitted_control_hash),
        canonical: plainBytes(r.canonical),
      })),
      start,
    );
    if (!verdict.ok) {
      problem(`${where} posts seq ${verdict.position}: ${verdict.reason}`);
      return;
    }
    for (const r of rows) {
      const before = previous ?? streamGenesis(space.space_id, 'posts');
      if (!equalBytes(plainBytes(r.previous_hash), before)) {
        problem(`${where} posts seq ${r.seq}: previous_hash is not the link before it`);
        return;
      }
      // The admission names a governance state that exists in this SPACE's chain.
      const control = controlLinks.get(r.admitted_revision);
      if (control === undefined || !equalBytes(objectAdmission(r.admitted_revision, control), plainBytes(r.admission))) {
        problem(`${where} posts seq ${r.seq}: admitted under revision ${r.admitted_revision}, which is not that revision's link`);
        return;
      }
      previous = plainBytes(r.chain_hash);
    }
    result.posts += rows.length;
    advance(rows.length);
    after = rows.at(-1)!.seq;
    start = { position: after, chainHash: previous! };
  }
}

/** The rebuilt index reaches the newest post, and agrees with what the source had decided. */
async function verifySeek(input: VerifyInput, problem: (line: string) => void): Promise<void> {
  const { db } = input;
  const newest = Number((await db.prepare('SELECT coalesce(max(id), 0) FROM posts').pluck().get()) ?? 0);
  const upto = Number((await db.prepare('SELECT indexed_upto FROM seek_state WHERE id = 1').pluck().get()) ?? 0);
  if (upto < newest) problem(`table seek_state: SEEK indexed up to post row ${upto}, the newest is ${newest}`);
  const page = db.prepare<[number, number], { post_row: number; space_row_id: number; public: number; unscoped: number }>(
    'SELECT post_row, space_row_id, public, unscoped FROM seek_docs WHERE post_row > ? ORDER BY post_row LIMIT ?',
  );
  let target: { post_row: number; space_row_id: number; public: number; unscoped: number }[] = [];
  let at = 0;
  let after = 0;
  const next = async () => {
    if (at === target.length) {
      target = await page.all(after, PAGE);
      at = 0;
      if (target.length > 0) after = target.at(-1)!.post_row;
    }
    return target[at++];
  };
  for (const [postRow, spaceRowId, pub, unscoped] of input.sourceSeekDocs) {
    let t = await next();
    while (t !== undefined && t.post_row < postRow) t = await next();
    if (t === undefined || t.post_row !== postRow) {
      problem(`table seek_docs: post row ${postRow} is indexed in the source, not on the target`);
      return;
    }
    if (t.space_row_id !== spaceRowId || t.public !== pub || t.unscoped !== unscoped) {
      problem(`table seek_docs: post row ${postRow} is indexed differently (public ${t.public}, unscoped ${t.unscoped}; the source: ${pub}, ${unscoped})`);
      return;
    }
  }
}
