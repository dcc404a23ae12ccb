/**
 * The local search index of sealed SPACES: `<SVC_HOME>/cache/<key>.seek.sqlite` (node:sqlite,
 * WAL, mode 0600), a file of its own beside the KEY's other caches so that deleting it forgets
 * only the index (reading the SPACES again, or `svc-bridge index`, rebuilds it).
 *
 * The relay holds only ciphertext of a sealed SPACE, so its SEEK never looks inside one; this
 * index holds what this bridge opened (bridge/sealed/sealing.ts `openPosts`), and svc_seek asks it
 * beside the relay (bridge/sealed/local-seek.ts). Nothing of the sealed content rests here in the
 * clear (bridge/keys/search-keys.ts):
 * - `seek_docs.sealed`: the opened post (its words and what the relay showed of it) sealed
 *   under the content key, associated data naming relay, SPACE and post, so a value moved to
 *   another row does not open;
 * - `seek_entries`: a blind index, one row per (keyed hash of an entry, post), no counts (ranking
 *   counts in the opened words, tools/posts/seek-local.ts). Entries are the post's SEEK terms
 *   (shared/seek/terms.ts `termsOf` of
 *   title and body, the relay's own tokeniser), each fingerprint `scheme:value`, and each
 *   prefix of a fingerprint value from the shortest the relay's SEEK takes (6 bytes) up to
 *   PREFIX_INDEXED_CHARS characters; a longer prefix is found by its first
 *   PREFIX_INDEXED_CHARS characters and checked against the opened fingerprints.
 * What stays in the clear is what the relay shows every member anyway: SPACE ids and names,
 * post ids, positions, kinds, authors, times and the links between posts.
 *
 * A post's document id orders documents by when the post was made, `posted_at` in ms times
 * 1,024 (plus one per post made in the same ms), so "newest matches first" is one backward walk
 * of an entry's rows, whatever order posts were opened in.
 *
 * A post is indexed once: sealed content never changes, so a post already present is skipped.
 * Nothing is removed when the KEY leaves or is removed from a SPACE: it could read those posts
 * (and still holds their keys); it cannot open anything newer, so nothing newer is added. A post
 * a read shows hidden (`unavailable`) is taken out: the SPACE no longer shows its words.
 */
import { join } from 'node:path';
import { utf8 } from '../../shared/encoding.js';
import { ownerOnlySqliteFile } from '../cache/cache-file.js';
import { BridgeError } from '../../tools/errors.js';
import { checkKeyName, type KeyDirectory } from '../keys/keys.js';
import type { IndexedSpace } from '../../tools/ports.js';
import type { SearchKeys } from '../keys/search-keys.js';
import { closer, immediate, migrate, openSqliteFile, statement, type DatabaseSync, type SQLInputValue } from '../cache/sqlite.js';
import { termsOf } from '../../shared/seek/terms.js';
import { FINGERPRINT_PREFIX_MIN_BYTES } from '../../shared/limits.js';
import { utf8Length } from '../../shared/encoding.js';

type Obj = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The fingerprints of an opened record. */
export function fingerprintsIn(record: Obj): { scheme: string; value: string }[] {
  const f = record.fingerprints;
  return Array.isArray(f) ? f.filter((x): x is { scheme: string; value: string } => typeof x === 'object' && x !== null && typeof x.scheme === 'string' && typeof x.value === 'string') : [];
}

/** Fingerprint prefixes are indexed up to this many characters; longer ones are checked after decryption. */
export const PREFIX_INDEXED_CHARS = 16;
/** Document ids: posted_at in ms times this, plus one per post of the same ms. */
const SAME_MS = 1024;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE seek_spaces (
     id INTEGER PRIMARY KEY,
     relay TEXT NOT NULL,
     space_id TEXT NOT NULL,
     name TEXT NOT NULL,
     UNIQUE (relay, space_id)
   ) STRICT;
   CREATE TABLE seek_docs (
     id INTEGER PRIMARY KEY,
     space INTEGER NOT NULL REFERENCES seek_spaces (id),
     post_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     kind TEXT NOT NULL,
     author TEXT NOT NULL,
     supersedes TEXT,
     retracts TEXT,
     sealed BLOB NOT NULL,
     indexed_at INTEGER NOT NULL,
     UNIQUE (post_id, space)
   ) STRICT;
   CREATE INDEX seek_docs_supersedes ON seek_docs (supersedes) WHERE supersedes IS NOT NULL;
   CREATE INDEX seek_docs_retracts ON seek_docs (retracts) WHERE retracts IS NOT NULL;
   CREATE TABLE seek_entries (
     hash INTEGER NOT NULL,
     doc INTEGER NOT NULL,
     PRIMARY KEY (hash, doc)
   ) STRICT, WITHOUT ROWID;`,
];

/** A post this bridge opened, as the index takes it. */
export interface OpenedPost {
  readonly relay: string;
  readonly spaceId: string;
  /** The SPACE's name when it was read. */
  readonly space: string;
  readonly postId: string;
  readonly seq: number;
  readonly kind: string;
  readonly author: string;
  /** ISO time the relay gave the post. */
  readonly postedAt: string;
  readonly supersedes: string | null;
  readonly retracts: string | null;
  readonly title: string | null;
  readonly body: string | null;
  readonly fingerprints: readonly { scheme: string; value: string }[];
  /** The post as the bridge shows it once opened (the fields of a `full` read it had, with its words). */
  readonly record: Obj;
}

/** A document row found by a query (its content still sealed). */
export interface DocRow {
  readonly id: number;
  readonly space: number;
  readonly postId: string;
  readonly sealed: Uint8Array;
}

/** What a candidate walk keeps to. */
export interface DocScope {
  readonly relay: string;
  /** Only this indexed SPACE (its row). */
  readonly space?: number | undefined;
  readonly kinds?: readonly string[] | undefined;
  readonly author?: string | undefined;
}

export interface SealedIndex {
  readonly path: string;
  /** Index `posts` not indexed yet, in one transaction; the number added. */
  add(posts: readonly OpenedPost[], now: number): number;
  /** The SPACES with posts indexed at `relay`. */
  spaces(relay: string): IndexedSpace[];
  /** Posts indexed of a SPACE row. */
  docsIn(row: number): number;
  /**
   * Documents in `scope` holding every entry of `all` (keyed hashes), newest first, at most
   * `scan` of them; the walk follows `all[0]`'s rows (put the rarest first).
   */
  candidates(all: readonly bigint[], scope: DocScope, scan: number): IterableIterator<DocRow>;
  /** The opened post a document holds (undefined when it does not open under this KEY). */
  open(relay: string, spaceId: string, doc: DocRow): Obj | undefined;
  /**
   * Take posts out of the index (a post the relay now shows hidden): each document's entries are
   * found again from its opened words. The number taken out.
   */
  forget(relay: string, postIds: readonly string[]): number;
  /** The SPACE id of an indexed SPACE row. */
  spaceIdOf(row: number): string | undefined;
  /** Post ids that supersede or retract each of `postIds`, as far as the index knows. */
  revisions(relay: string, postIds: readonly string[]): Map<string, { supersededBy: string[]; retractedBy: string[] }>;
  close(): void;
}

/** The index's file beside the KEY's cache file (`<key>.sqlite` → `<key>.seek.sqlite`). */
export function sealedIndexPathBeside(cachePath: string): string {
  return cachePath.replace(/\.sqlite$/, '') + '.seek.sqlite';
}

export function sealedIndexPath(dir: KeyDirectory, keyName: string): string {
  return join(dir.cacheDir, `${checkKeyName(keyName)}.seek.sqlite`);
}

function aad(relay: string, spaceId: string, postId: string): Uint8Array {
  return utf8(`svc bridge sealed search\n${relay}\n${spaceId}\n${postId}`);
}

/** The index entries of a post: its terms and fingerprints (with their prefixes), each once. */
export function entriesOf(post: Pick<OpenedPost, 'title' | 'body' | 'fingerprints'>): Set<string> {
  const out = new Set<string>();
  const add = (e: string) => out.add(e);
  if ((post.title ?? '') !== '' || (post.body ?? '') !== '') for (const t of termsOf(`${post.title ?? ''}\n${post.body ?? ''}`)) add(termEntry(t));
  for (const fp of post.fingerprints) {
    add(fingerprintEntry(fp.scheme, fp.value));
    for (const p of indexedPrefixes(fp.value)) add(prefixEntry(fp.scheme, p));
  }
  return out;
}

export const termEntry = (term: string) => `t\n${term}`;
export const fingerprintEntry = (scheme: string, value: string) => `f\n${scheme}:${value}`;
export const prefixEntry = (scheme: string, prefix: string) => `p\n${scheme}:${prefix}`;

/** The prefixes of a value the index holds: from the first of at least 6 UTF-8 bytes up to PREFIX_INDEXED_CHARS code points. */
export function indexedPrefixes(value: string): string[] {
  const chars = [...value];
  const out: string[] = [];
  let p = '';
  for (let i = 0; i < chars.length && i < PREFIX_INDEXED_CHARS; i++) {
    p += chars[i];
    if (utf8Length(p) >= FINGERPRINT_PREFIX_MIN_BYTES) out.push(p);
  }
  return out;
}

/** The entry a query prefix is looked up by: itself, or its first PREFIX_INDEXED_CHARS code points. */
export function prefixLookup(prefix: string): string {
  const chars = [...prefix];
  return chars.length > PREFIX_INDEXED_CHARS ? chars.slice(0, PREFIX_INDEXED_CHARS).join('') : prefix;
}

function postedMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** Open (and make, mode 0600) the index at `path`. */
export function openSealedIndex(path: string, keys: SearchKeys): SealedIndex {
  let db: DatabaseSync;
  try {
    ownerOnlySqliteFile(path);
    db = openSqliteFile(path);
    migrate(db, MIGRATIONS);
  } catch (e) {
    throw new BridgeError(
      'KEY_FILE',
      `cannot open the local search index ${path}: ${(e as Error).message}`,
      'Check the key directory. Deleting the file forgets only the local index of sealed SPACES; reading them again (or svc-bridge index SPACE) rebuilds it.',
      undefined,
      { cause: e },
    );
  }

  const selSpace = statement<[string, string], { id: number; name: string }>(db, 'SELECT id, name FROM seek_spaces WHERE relay = ? AND space_id = ?');
  const insSpace = statement<[string, string, string], { id: number }>(db, 'INSERT INTO seek_spaces (relay, space_id, name) VALUES (?, ?, ?) RETURNING id');
  const renameSpace = statement<[string, number]>(db, 'UPDATE seek_spaces SET name = ? WHERE id = ?');
  const hasDoc = statement<[number, string], { id: number }>(db, 'SELECT id FROM seek_docs WHERE space = ? AND post_id = ?');
  const idTaken = statement<[number], { id: number }>(db, 'SELECT id FROM seek_docs WHERE id = ?');
  const insDoc = statement<[number, number, string, number, string, string, string | null, string | null, Uint8Array, number]>(
    db,
    'INSERT INTO seek_docs (id, space, post_id, seq, kind, author, supersedes, retracts, sealed, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insEntry = statement<[bigint, number]>(db, 'INSERT OR IGNORE INTO seek_entries (hash, doc) VALUES (?, ?)');
  const selSpaces = statement<[string], { id: number; space_id: string; name: string }>(
    db,
    'SELECT s.id, s.space_id, s.name FROM seek_spaces s WHERE s.relay = ? AND EXISTS (SELECT 1 FROM seek_docs d WHERE d.space = s.id) ORDER BY s.name',
  );
  const selDocsIn = statement<[number], { n: number }>(db, 'SELECT count(*) AS n FROM seek_docs WHERE space = ?');
  const selSpaceId = statement<[number], { space_id: string }>(db, 'SELECT space_id FROM seek_spaces WHERE id = ?');
  const selByPost = statement<[string, string], { id: number; space: number; post_id: string; sealed: Uint8Array; space_id: string }>(
    db,
    'SELECT d.id, d.space, d.post_id, d.sealed, s.space_id FROM seek_docs d JOIN seek_spaces s ON s.id = d.space WHERE s.relay = ? AND d.post_id = ?',
  );
  const delEntry = statement<[bigint, number]>(db, 'DELETE FROM seek_entries WHERE hash = ? AND doc = ?');
  const delDoc = statement<[number]>(db, 'DELETE FROM seek_docs WHERE id = ?');
  const selRevisions = statement<[string, string, string], { post_id: string; supersedes: string | null; retracts: string | null }>(
    db,
    `SELECT d.post_id, d.supersedes, d.retracts FROM seek_docs d JOIN seek_spaces s ON s.id = d.space
     WHERE s.relay = ? AND (d.supersedes = ? OR d.retracts = ?)`,
  );
  const walks = new Map<string, ReturnType<typeof db.prepare>>();

  function openRecord(relay: string, spaceId: string, doc: DocRow): Obj | undefined {
    const bytes = keys.box.open(new Uint8Array(doc.sealed), aad(relay, spaceId, doc.postId));
    if (bytes === undefined) return undefined;
    try {
      const v: unknown = JSON.parse(Buffer.from(bytes).toString('utf8'));
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
    } catch {
      return undefined;
    }
  }

  function spaceRow(relay: string, spaceId: string, name: string): number {
    const known = selSpace.get(relay, spaceId);
    if (known === undefined) return insSpace.get(relay, spaceId, name)!.id;
    if (known.name !== name) renameSpace.run(name, known.id);
    return known.id;
  }

  function freeId(postedAt: string): number {
    let id = postedMs(postedAt) * SAME_MS;
    while (idTaken.get(id) !== undefined) id++;
    return id;
  }

  function walk(n: number, scope: DocScope): ReturnType<typeof db.prepare> {
    const kinds = scope.kinds?.length ?? 0;
    const key = `${n}/${scope.space !== undefined}/${kinds}/${scope.author !== undefined}`;
    let st = walks.get(key);
    if (st === undefined) {
      const conds = ['s.relay = @relay'];
      if (scope.space !== undefined) conds.push('d.space = @space');
      if (kinds > 0) conds.push(`d.kind IN (${Array.from({ length: kinds }, (_, i) => `@k${i}`).join(', ')})`);
      if (scope.author !== undefined) conds.push('d.author = @author');
      for (let i = 1; i < n; i++) conds.push(`EXISTS (SELECT 1 FROM seek_entries e${i} WHERE e${i}.hash = @h${i} AND e${i}.doc = d.id)`);
      // One backward walk of the first entry's rows (its primary key orders them by document),
      // streamed: the caller stops reading once it has what it needs.
      st = db.prepare(
        `SELECT d.id, d.space, d.post_id, d.sealed FROM seek_entries t
         JOIN seek_docs d ON d.id = t.doc JOIN seek_spaces s ON s.id = d.space
         WHERE t.hash = @h0 AND ${conds.join(' AND ')}
         ORDER BY t.doc DESC LIMIT @scan`,
      );
      walks.set(key, st);
    }
    return st;
  }

  return {
    path,
    add(posts, now) {
      if (posts.length === 0) return 0;
      return immediate(db, () => {
        let added = 0;
        const rows: [bigint, number][] = [];
        for (const p of posts) {
          const space = spaceRow(p.relay, p.spaceId, p.space);
          if (hasDoc.get(space, p.postId) !== undefined) continue;
          const id = freeId(p.postedAt);
          const sealed = keys.box.seal(utf8(JSON.stringify(p.record)), aad(p.relay, p.spaceId, p.postId));
          insDoc.run(id, space, p.postId, p.seq, p.kind, p.author, p.supersedes, p.retracts, sealed, now);
          for (const entry of entriesOf(p)) rows.push([keys.entry(entry), id]);
          added++;
        }
        // In key order, so a batch fills the index's pages one after another instead of at random.
        rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
        for (const [hash, doc] of rows) insEntry.run(hash, doc);
        return added;
      });
    },
    spaces: (relay) => selSpaces.all(relay).map((r) => ({ row: r.id, spaceId: r.space_id, name: r.name })),
    docsIn: (row) => selDocsIn.get(row)?.n ?? 0,
    *candidates(all, scope, scan) {
      if (all.length === 0) return;
      const params: Record<string, SQLInputValue> = { relay: scope.relay, scan };
      all.forEach((h, i) => (params[`h${i}`] = h));
      if (scope.space !== undefined) params.space = scope.space;
      scope.kinds?.forEach((k, i) => (params[`k${i}`] = k));
      if (scope.author !== undefined) params.author = scope.author;
      for (const r of walk(all.length, scope).iterate(params) as IterableIterator<{ id: number; space: number; post_id: string; sealed: Uint8Array }>) {
        yield { id: r.id, space: r.space, postId: r.post_id, sealed: r.sealed };
      }
    },
    open: (relay, spaceId, doc) => openRecord(relay, spaceId, doc),
    forget(relay, postIds) {
      return immediate(db, () => {
        let gone = 0;
        for (const postId of postIds) {
          for (const d of selByPost.all(relay, postId)) {
            const record = openRecord(relay, d.space_id, { id: d.id, space: d.space, postId: d.post_id, sealed: d.sealed });
            if (record !== undefined) {
              const words = { title: str(record.title), body: str(record.body), fingerprints: fingerprintsIn(record) };
              for (const entry of entriesOf(words)) delEntry.run(keys.entry(entry), d.id);
            }
            // A record that does not open leaves its entries behind: they lead to no document.
            delDoc.run(d.id);
            gone++;
          }
        }
        return gone;
      });
    },
    spaceIdOf: (row) => selSpaceId.get(row)?.space_id,
    revisions(relay, postIds) {
      const out = new Map<string, { supersededBy: string[]; retractedBy: string[] }>();
      for (const id of postIds) {
        const r = { supersededBy: [] as string[], retractedBy: [] as string[] };
        for (const row of selRevisions.all(relay, id, id)) {
          if (row.supersedes === id) r.supersededBy.push(row.post_id);
          if (row.retracts === id) r.retractedBy.push(row.post_id);
        }
        out.set(id, r);
      }
      return out;
    },
    close: closer(db),
  };
}

/** What the relay adds to a single post's answer, which an indexed record leaves out. */
const NOT_KEPT = ['proof', 'reply_count', 'linked_from', 'superseded_by', 'retracted_by', 'notice'];

/**
 * The index input of a post opened by a read: `shown` as the read had it, `full` the opened
 * full rendering (header and ciphertext already replaced by `sealed.opened`), `content` its words.
 */
export function indexedRecord(
  relay: string,
  spaceId: string,
  shown: Obj,
  full: Obj,
  content: { title?: string | undefined; body?: string | undefined; fingerprints?: readonly { scheme: string; value: string }[] | undefined },
): OpenedPost {
  const record: Obj = { ...full };
  for (const k of NOT_KEPT) delete record[k];
  return {
    relay,
    spaceId,
    space: str(shown.space) ?? '',
    postId: str(shown.post_id) ?? '',
    seq: typeof shown.seq === 'string' && /^[0-9]{1,15}$/.test(shown.seq) ? Number(shown.seq) : 0,
    kind: str(shown.kind) ?? '',
    author: str(shown.author) ?? '',
    postedAt: str(shown.posted_at) ?? '',
    supersedes: str(full.supersedes),
    retracts: str(full.retracts),
    title: content.title ?? null,
    body: content.body ?? null,
    fingerprints: content.fingerprints ?? [],
    record,
  };
}

/** Index what a read opened; a failure is logged, never the read's. */
export function indexOpened(index: SealedIndex, posts: readonly OpenedPost[], now: number, log: (line: string) => void): void {
  const fit = posts.filter((p) => p.postId !== '' && p.space !== '');
  if (fit.length === 0) return;
  try {
    index.add(fit, now);
  } catch (e) {
    log(`the local search index of sealed SPACES could not take ${fit.length} opened post(s): ${(e as Error).message}`);
  }
}

/** Take hidden posts out of the index; a failure is logged, never the read's. */
export function forgetHidden(index: SealedIndex, relay: string, postIds: readonly string[], log: (line: string) => void): void {
  try {
    index.forget(relay, postIds);
  } catch (e) {
    log(`the local search index of sealed SPACES could not drop ${postIds.length} hidden post(s): ${(e as Error).message}`);
  }
}
