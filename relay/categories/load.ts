/**
 * Reads the category register's data (./register/<top-id>.json, one file per top category)
 * and checks it before anything serves it (spec/1-concepts.md "Categories"): a register that
 * breaks a rule stops the relay at start, with a message that names the file and the entry.
 *
 * Each file is checked against ./register.schema.json first (the fields and their form, one
 * entry at a time); then what an entry cannot say alone:
 * - each file is one branch: its top category's own entry first (parent null, id = the file's
 *   name), every other entry somewhere under it;
 * - ids are unique across the register;
 * - every parent exists, and following parents reaches the top without going round;
 * - depth: up to level 4 under artificial-intelligence, level 3 inside programming-languages,
 *   level 2 everywhere else (level 1 = a top category);
 * - a retired entry names a live replacement other than itself and has no live children;
 * - every pointer elsewhere names another live entry;
 * - no id, name or other name of one entry is, once normalised, the id, name or other name of
 *   another (so a lookup by any of them finds one entry), and none normalises to nothing.
 */
import * as z from 'zod';
import schema from './register.schema.json' with { type: 'json' };
import { normalise } from './search.js';
import type { Category, EntryInput } from './types.js';

/** One data file as read: its name (the top category's id) and its parsed JSON. */
export interface RegisterFile {
  readonly name: string;
  readonly data: unknown;
}

/** A register that breaks one of the rules above. */
export class RegisterError extends Error {
  override readonly name = 'RegisterError';
}

const FILE_SCHEMA = z.fromJSONSchema(schema as z.core.JSONSchema.JSONSchema);

/** How deep a branch goes: the deepest level allowed for an entry on `path` (top first). */
function deepestLevel(path: readonly string[]): number {
  if (path[0] === 'artificial-intelligence') return 4;
  if (path.includes('programming-languages')) return 3;
  return 2;
}

interface Placed {
  readonly file: string;
  readonly entry: EntryInput;
}

function fail(where: Placed | string, problem: string): never {
  const at = typeof where === 'string' ? where : `${where.file}.json "${where.entry.id}"`;
  throw new RegisterError(`category register: ${at}: ${problem}`);
}

/** The file's entries, once the file has the schema's form. */
function entriesOf(file: RegisterFile): readonly EntryInput[] {
  const parsed = FILE_SCHEMA.safeParse(file.data);
  if (parsed.success) return (file.data as { entries: readonly EntryInput[] }).entries;
  const issue = parsed.error.issues[0]!;
  const [top, index, ...rest] = issue.path;
  let at = `${file.name}.json`;
  let field = issue.path.join('.');
  if (top === 'entries' && typeof index === 'number') {
    const id = (file.data as { entries: { id?: unknown }[] }).entries[index]?.id;
    at += ` entries[${index}]${typeof id === 'string' ? ` "${id}"` : ''}`;
    field = rest.join('.');
  }
  return fail(at, `${field === '' ? '' : `${field}: `}${issue.message} (register.schema.json)`);
}

/**
 * The register from its data files, given in the order of the top categories: the top
 * categories first, then each file's other entries as written (the order lookups break ties
 * by). Throws RegisterError naming the first entry that breaks a rule.
 */
export function loadRegister(files: readonly RegisterFile[]): readonly Category[] {
  const branches = files.map((file) => ({ name: file.name, entries: entriesOf(file) }));
  const placed: Placed[] = branches.flatMap((b) => b.entries.map((entry) => ({ file: b.name, entry })));
  const byId = new Map<string, Placed>();
  for (const p of placed) {
    const other = byId.get(p.entry.id);
    if (other) fail(p, `the id is also in ${other.file}.json`);
    byId.set(p.entry.id, p);
  }
  checkBranches(branches);
  checkTree(placed, byId);
  checkLinks(placed, byId);
  checkNames(placed);
  const tops = placed.filter((p) => p.entry.parent === null);
  const rest = placed.filter((p) => p.entry.parent !== null);
  return Object.freeze([...tops, ...rest].map(({ entry }) => category(entry)));
}

/** Each file holds one branch, its top category's own entry first. */
function checkBranches(branches: readonly { name: string; entries: readonly EntryInput[] }[]): void {
  for (const { name, entries } of branches) {
    const [first, ...others] = entries;
    if (first!.id !== name || first!.parent !== null) {
      fail(`${name}.json`, `the first entry must be the top category "${name}", with parent null`);
    }
    for (const entry of others) if (entry.parent === null) fail({ file: name, entry }, `only the file's first entry is a top category`);
  }
}

/** Parents exist, lead to the file's top category without going round, and no deeper than allowed. */
function checkTree(placed: readonly Placed[], byId: ReadonlyMap<string, Placed>): void {
  for (const p of placed) {
    if (p.entry.parent !== null && !byId.has(p.entry.parent)) fail(p, `parent "${p.entry.parent}" is not in the register`);
  }
  for (const p of placed) {
    const path = [p.entry.id];
    for (let at = p.entry.parent; at !== null; at = byId.get(at)!.entry.parent) {
      if (path.includes(at)) fail(p, `its parents go round: ${[at, ...path].join(' › ')}`);
      path.unshift(at);
    }
    if (path[0] !== p.file) fail(p, `it sits under ${path[0]}, so it belongs in ${path[0]}.json`);
    const deepest = deepestLevel(path);
    if (path.length > deepest) fail(p, `level ${path.length} (${path.join(' › ')}); this branch goes ${deepest} levels deep`);
  }
}

/** Replacements and pointers elsewhere name live entries; a retired entry has no live children. */
function checkLinks(placed: readonly Placed[], byId: ReadonlyMap<string, Placed>): void {
  const live = (id: string): boolean => byId.get(id)?.entry.replacedBy === undefined;
  for (const p of placed) {
    const to = p.entry.replacedBy;
    if (to !== undefined) {
      if (!byId.has(to)) fail(p, `retired in favour of "${to}", which is not in the register`);
      if (to === p.entry.id || !live(to)) fail(p, `retired in favour of "${to}", which is not another live entry`);
    }
    if (p.entry.parent !== null && !live(p.entry.parent) && live(p.entry.id)) {
      fail(p, `a live entry under the retired "${p.entry.parent}"`);
    }
    for (const [topic, id] of Object.entries(p.entry.elsewhere ?? {})) {
      if (!byId.has(id)) fail(p, `elsewhere "${topic}" points at "${id}", which is not in the register`);
      if (id === p.entry.id || !live(id)) fail(p, `elsewhere "${topic}" points at "${id}", which is not another live entry`);
    }
  }
}

/** Every id, name and other name, normalised as lookups read them, belongs to one entry. */
function checkNames(placed: readonly Placed[]): void {
  const owner = new Map<string, Placed>();
  for (const p of placed) {
    for (const text of new Set([p.entry.id, p.entry.name, ...(p.entry.aliases ?? [])])) {
      const key = normalise(text);
      if (key === '') fail(p, `"${text}" has no letters or digits to look it up by`);
      const other = owner.get(key);
      if (other && other !== p) fail(p, `"${text}" reads as "${key}", which is already ${other.file}.json "${other.entry.id}"`);
      owner.set(key, p);
    }
  }
}

function category(e: EntryInput): Category {
  return Object.freeze({
    id: e.id,
    name: e.name,
    parent: e.parent,
    covers: e.covers,
    elsewhere: Object.freeze(Object.entries(e.elsewhere ?? {}).map(([topic, id]) => Object.freeze({ topic, id }))),
    examples: Object.freeze([...e.examples]),
    aliases: Object.freeze([...(e.aliases ?? [])]),
    replacedBy: e.replacedBy ?? null,
  });
}
