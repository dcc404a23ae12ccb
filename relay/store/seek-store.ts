/**
 * The SEEK index's interface, the same on both databases (relay/store/seek.ts on SQLite's FTS5,
 * which documents the design; relay/store/postgres/seek.ts on tsvector), and the shapes it
 * takes and answers.
 */
import type { Fingerprint } from '../../shared/validate.js';

/** A post waiting to be indexed, with what tokenising needs. */
export interface PendingPost {
  rowId: number;
  spaceRowId: number;
  author: string;
  title: string | null;
  body: string | null;
  fingerprintsJson: string | null;
  postedAt: number;
  public: boolean;
}

/** A post ready to store: tokenised text (or null for none) and its fingerprints. */
export interface PreparedDoc {
  rowId: number;
  spaceRowId: number;
  author: string;
  postedAt: number;
  public: boolean;
  terms: string | null;
  fingerprints: Fingerprint[];
}

/** Where a search may look. */
export interface SeekScope {
  /** The caller's KEY, or null when anonymous (public SPACES only). */
  caller: string | null;
  /** Scoped to one SPACE (row id) the caller may read: any of its posts may be a candidate. */
  spaceRowId?: number | undefined;
  /** Only SPACES filed in one of these categories. */
  categories?: readonly string[] | undefined;
  /** Only oracle spaces (true) or only work spaces (false). */
  oracle?: boolean | undefined;
  /** Only posts of these kinds. */
  kinds?: readonly string[] | undefined;
  /** Only posts by this KEY. */
  author?: string | undefined;
}

export interface SeekCandidate {
  rowId: number;
  spaceRowId: number;
  /** The SPACE's owner. */
  owner: string;
  /** In one of the caller's own SPACES. */
  own: boolean;
  /** BM25 score of a text hit (shared/seek/rank.ts; lower is better); 0 for fingerprint hits. */
  score: number;
}

/** A text candidate: where it is, and what ranking reads of it. */
export interface TextCandidate extends SeekCandidate {
  title: string | null;
  /** The first `chars` characters of the body. */
  body: string | null;
}

/** Bounds of one text walk. */
export interface TextWalk {
  /** Matches looked at, newest first, at most. */
  scan: number;
  /** Visible candidates kept, at most. */
  cap: number;
  /** Unscoped only: candidates kept from one SPACE / one owner's SPACES, outside the caller's own. */
  perSpace: number;
  perOwner: number;
  /** Characters of each candidate's body read for ranking. */
  chars: number;
}

export interface SeekStore {
  /** The highest posts row id indexed. */
  watermark(): Promise<number>;
  /** Posts above `after` (row id), ascending, at most `limit` (PostgreSQL: only those not indexed). */
  pending(after: number, limit: number): Promise<PendingPost[]>;
  /**
   * Store prepared docs covering row ids (from, upto]; answers false, storing nothing, when
   * the watermark is no longer `from`.
   */
  index(from: number, upto: number, docs: readonly PreparedDoc[]): Promise<boolean>;
  /**
   * Inside the caller's write transaction: store `doc` when its row is the one just above the
   * watermark and move the watermark to it; answers false, storing nothing, otherwise (the
   * follow-up indexer then stores it with the rows before it). PostgreSQL, where writers to
   * different SPACES commit side by side: always store it, never move the watermark (`pending`
   * moves it; relay/store/postgres/seek.ts).
   */
  indexNext(doc: PreparedDoc): Promise<boolean>;
  /** The newest visible matches of an FTS5 expression, newest first, within the walk's bounds; hidden posts left out. */
  textCandidates(expression: string, scope: SeekScope, walk: TextWalk): Promise<TextCandidate[]>;
  /** How many of an expression's `most` newest matches exist, and the oldest one's row id (0 when none). */
  newestMatches(expression: string, most: number): Promise<{ found: number; oldest: number }>;
  /** Newest posts carrying exactly this fingerprint, visible in `scope`, at most `cap`. */
  fingerprint(fp: Fingerprint, scope: SeekScope, cap: number): Promise<SeekCandidate[]>;
  /** Newest posts with a fingerprint of `scheme` whose value starts with `prefix`, among the first `scan` index entries. */
  fingerprintPrefix(fp: Fingerprint, scope: SeekScope, cap: number, scan: number): Promise<SeekCandidate[]>;
}
