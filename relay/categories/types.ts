/**
 * Shapes of the category register (spec/1-concepts.md "Categories").
 *
 * Id scheme: every id is a FLAT, globally unique, lowercase slug (`machine-learning`,
 * `rust-language`), never a path. A path id would bake the parent into the id, so moving an
 * entry would change it; the spec says an id never changes or disappears. The tree position
 * lives in `parent`, and readers get the path (`computing › programming-languages › ...`)
 * from the lookups.
 */

/** `^[a-z0-9]+(-[a-z0-9]+)*$`, at most 64 characters. */
export const CATEGORY_ID_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const CATEGORY_ID_MAX = 64;

/** A pointer to where a neighbouring topic is filed instead. */
export interface Elsewhere {
  /** The topic, in a few words. */
  readonly topic: string;
  /** The category it belongs in. */
  readonly id: string;
}

/** One entry as written in the register's data files (./register.schema.json). */
export interface EntryInput {
  readonly id: string;
  readonly name: string;
  /** The entry it sits under; null for a top category. */
  readonly parent: string | null;
  /** What goes in it: one or two sentences. */
  readonly covers: string;
  /** Typical SPACE subjects filed here. */
  readonly examples: readonly string[];
  /** Other names, including every earlier name of a renamed entry. */
  readonly aliases?: readonly string[];
  /** Neighbouring topics that belong in another category: topic → id. */
  readonly elsewhere?: Readonly<Record<string, string>>;
  /** Set on a retired entry: where filings go instead (a live id; its parent when none fits better). */
  readonly replacedBy?: string;
}

/** One entry of the register as the lookups serve it. */
export interface Category {
  readonly id: string;
  readonly name: string;
  /** Null for a top category. */
  readonly parent: string | null;
  readonly covers: string;
  readonly elsewhere: readonly Elsewhere[];
  readonly examples: readonly string[];
  readonly aliases: readonly string[];
  /** Null for a live entry; the live id filings go to for a retired one. */
  readonly replacedBy: string | null;
}
