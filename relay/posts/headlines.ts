/**
 * `detail=headlines`: the newer API's lightest level of a SPACE's stream and of what stands
 * (posts.read, posts.standing), one short item a post, no words beyond its title, so an agent
 * scans a SPACE and opens only what it needs. svc serves it only when asked: the default detail
 * of both reads stays snippets, as API 0.1 says.
 *
 * An item, its members in this order, each only when it applies:
 *
 *   seq, kind, by      its position, its kind, and its author by the page's short name
 *   re, replaces, retracts
 *                      the seqs of the posts it answers, supersedes or retracts, when those are
 *                      in the same SPACE
 *   title | start      its title, or with none the first 80 characters of its body
 *   post_id, space, author, sealed {generation, bytes}
 *                      a sealed post only: it has no words the relay can show, and a member's
 *                      software opens it by its id
 *   open               what opening it whole costs, in tokens: its item at full detail, without
 *                      proof, for this reader (the page cost rule, api-notes.md §4)
 *   flags              summary, signed, sealed, files, no_role, hidden, replaced, retracted
 *
 * The page names each author once, in `authors`: short name to peer id, in the order they first
 * appear. A short name is the peer id's first 8 hex characters, or 16, 32 or 64 when another
 * author on the same page starts the same, so two authors never share one. Eight decimal digits
 * are taken at 16: a JSON object's member named like an array index ("88655561") is written
 * before every other by JSON.stringify, whatever its order, which would break the page's order;
 * sixteen digits are past every index.
 *
 * A hidden post shows what its snippet shows of it, its place and not its words (render.ts
 * `wordsOf`): no title, start, summary or files, and an `open` priced without them.
 */
import type { JsonObject } from '../../shared/canonical.js';
import type { ReadPost, PostReadStore } from '../store/post-reads.js';
import { tokensOf } from './read-params.js';
import { renderPost, unavailableOf, wordsOf } from './render.js';

/** How many characters of a post with no title its headline shows, as `start`. */
export const HEADLINE_START_CHARACTERS = 80;

/** A headline's flags, in the order they are listed. */
export const HEADLINE_FLAGS = ['summary', 'signed', 'sealed', 'files', 'no_role', 'hidden', 'replaced', 'retracted'] as const;

/** What a headline reads about a post besides its own row. */
export interface HeadlineRelations {
  /** post_id → seq, for the posts of the same SPACE the page's posts name. */
  readonly seqs: ReadonlyMap<string, number>;
  /** post_ids a later post superseded, and retracted. */
  readonly replaced: ReadonlySet<string>;
  readonly retracted: ReadonlySet<string>;
}

/** The relations of a page's posts, read in the caller's snapshot. */
export async function headlineRelations(reads: PostReadStore, spaceRowId: number, rows: readonly ReadPost[]): Promise<HeadlineRelations> {
  const named = new Set<string>();
  for (const r of rows) for (const id of [r.replyTo, r.supersedes, r.retracts]) if (id !== null) named.add(id);
  const seqs = await reads.seqsIn(spaceRowId, [...named]);
  const revisions = await reads.revisionsOf(rows.map((r) => r.postId));
  const replaced = new Set<string>();
  const retracted = new Set<string>();
  for (const [id, rev] of revisions) {
    if (rev.supersededBy.length > 0) replaced.add(id);
    if (rev.retractedBy.length > 0) retracted.add(id);
  }
  return { seqs, replaced, retracted };
}

/** Short names for a page's authors, keyed by peer id, in the order given. */
export function authorAliases(peers: readonly string[]): Map<string, string> {
  const distinct = [...new Set(peers)];
  const out = new Map<string, string>();
  for (const peer of distinct) {
    let length = /^[0-9]{8}/.test(peer) ? 16 : 8;
    while (length < peer.length && distinct.some((other) => other !== peer && other.startsWith(peer.slice(0, length)))) length *= 2;
    out.set(peer, peer.slice(0, length));
  }
  return out;
}

function firstCharacters(text: string, n: number): string {
  let count = 0;
  let end = 0;
  for (const ch of text) {
    if (count === n) break;
    count++;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** The parts of a headline that do not depend on the page's short names. */
interface HeadlineParts {
  readonly author: string;
  readonly build: (by: string) => JsonObject;
}

function headlineParts(p: ReadPost, rel: HeadlineRelations, inside: boolean): HeadlineParts {
  const words = wordsOf(p);
  const sealed = p.sealed && words?.sealedItem != null ? words.sealedItem : null;
  const seqOf = (id: string | null) => (id === null ? undefined : rel.seqs.get(id));
  const holds: Record<(typeof HEADLINE_FLAGS)[number], boolean> = {
    summary: words?.summary != null,
    signed: p.signed,
    sealed: p.sealed,
    files: (words?.attachments.length ?? 0) > 0,
    no_role: p.noRole,
    hidden: unavailableOf(p)?.state === 'hidden',
    replaced: rel.replaced.has(p.postId),
    retracted: rel.retracted.has(p.postId),
  };
  const flags = HEADLINE_FLAGS.filter((f) => holds[f]);
  // What opening it costs: exactly the item a full read gives this reader, without proof.
  const open = tokensOf(renderPost(p, { detail: 'full', proof: false, inside }));
  const re = seqOf(p.replyTo);
  const replaces = seqOf(p.supersedes);
  const retracts = seqOf(p.retracts);
  const start = words === null || p.sealed || words.title !== null ? '' : firstCharacters(words.body ?? '', HEADLINE_START_CHARACTERS);
  return {
    author: p.author,
    build(by) {
      const out: JsonObject = { seq: String(p.seq), kind: p.kind, by };
      if (re !== undefined) out.re = String(re);
      if (replaces !== undefined) out.replaces = String(replaces);
      if (retracts !== undefined) out.retracts = String(retracts);
      if (words !== null && !p.sealed && words.title !== null) out.title = words.title;
      else if (start !== '') out.start = start;
      if (sealed !== null) {
        out.post_id = p.postId;
        out.space = p.spaceName;
        out.author = p.author;
        out.sealed = { generation: sealed.generation, bytes: sealed.ciphertext.byteLength };
      }
      out.open = open;
      if (flags.length > 0) out.flags = [...flags];
      return out;
    },
  };
}

export interface HeadlinesPage {
  items: JsonObject[];
  /** Short name → peer id, in the order the authors first appear. */
  authors: Record<string, string>;
  /** The items' tokens and the `authors` member's. */
  tokensEstimated: number;
  budgetCut: boolean;
}

/**
 * A page of headlines filled up to `budget` tokens (none: all), the first always. Each item is
 * priced as every page item is (tokensOf), and the page's `authors` member is priced with them,
 * so a new author, whose entry may lengthen the short names of others, is paid for too.
 */
export function headlinesPage(rows: readonly ReadPost[], rel: HeadlineRelations, inside: boolean, budget: number | undefined): HeadlinesPage {
  const parts = rows.map((p) => headlineParts(p, rel, inside));
  let items: JsonObject[] = [];
  let peers: string[] = [];
  let aliases = new Map<string, string>();
  let itemTokens = 0;
  let authorsTokens = 0;
  for (const part of parts) {
    const known = peers.includes(part.author);
    const nextPeers = known ? peers : [...peers, part.author];
    const nextAliases = known ? aliases : authorAliases(nextPeers);
    const same = known || peers.every((peer) => nextAliases.get(peer) === aliases.get(peer));
    const nextItems = same
      ? [...items, part.build(nextAliases.get(part.author)!)]
      : parts.slice(0, items.length + 1).map((q) => q.build(nextAliases.get(q.author)!));
    const nextItemTokens = same ? itemTokens + tokensOf(nextItems[nextItems.length - 1]) : nextItems.reduce((sum, item) => sum + tokensOf(item), 0);
    // The `authors` member changes only with a new author: priced again only then.
    const nextAuthorsTokens = known ? authorsTokens : tokensOf(authorsMember(nextPeers, nextAliases));
    if (budget !== undefined && items.length > 0 && nextItemTokens + nextAuthorsTokens > budget) {
      return { items, authors: authorsMember(peers, aliases), tokensEstimated: itemTokens + authorsTokens, budgetCut: true };
    }
    items = nextItems;
    peers = nextPeers;
    aliases = nextAliases;
    itemTokens = nextItemTokens;
    authorsTokens = nextAuthorsTokens;
  }
  return { items, authors: authorsMember(peers, aliases), tokensEstimated: itemTokens + (items.length === 0 ? 0 : authorsTokens), budgetCut: false };
}

function authorsMember(peers: readonly string[], aliases: ReadonlyMap<string, string>): Record<string, string> {
  return Object.fromEntries(peers.map((peer) => [aliases.get(peer)!, peer]));
}
