/**
 * svc_seek's local half: hits from the index of sealed SPACES this bridge opened
 * (bridge/sealed/local-seek.ts), rendered as the relay renders SEEK items and ranked together with
 * the relay's hits.
 *
 * One ranking for both sides: fingerprint hits first, newest first; then text hits by the
 * relay's own BM25 (shared/seek/rank.ts `rankScores`: the same phrase counts over the same
 * terms, k1 1.2, b 0.75) over the text each hit shows at the answer's detail (its title and
 * snippet, or title and body at `full`), with the idf of each phrase and the average length
 * taken over the relay's and the local candidates together. The relay scored its own hits with
 * more of each post than its answer carries, so its order is kept as it is, and local hits are
 * merged into it by score (each side's order stays; of two equal scores the newer post first).
 *
 * Each local item carries `local: true`, `mine`, `superseded_by` and `retracted_by` as far as
 * the local index knows them, the SPACE's `categories` (spaces.get) and `match`.
 */
import { SNIPPET_CHARACTERS, SNIPPET_FINGERPRINTS, TOKEN_ESTIMATOR_BYTES_PER_TOKEN } from '../../shared/limits.js';
import { utf8Length } from '../../shared/encoding.js';
import { phraseCounter, rankScores, rankText, type RankCollection } from '../../shared/seek/rank.js';
import { textQuery } from '../../shared/seek/terms.js';
import { parseFingerprintPrefix, validateFingerprintQueries } from '../../shared/validate.js';
import type { RelayApi } from '../api.js';
import type { Posting } from './posting.js';
import type { PeerFence } from '../render.js';
import type { IndexedSpace, LocalHit, LocalIndex } from '../ports.js';
import { isObject, plain } from '../action.js';

type Obj = Record<string, unknown>;
export type Detail = 'ids' | 'snippets' | 'full';

/** Category records read to place a SPACE's category under the one asked for, at most. */
const CATEGORY_READS_MAX = 24;

const IDS = ['post_id', 'space', 'seq', 'kind', 'author', 'posted_at', 'unavailable', 'no_role'];
const HEAD = ['title', 'sealed', 'to', 'reply_to', 'admitted_revision', 'budget', 'fingerprints', 'fingerprint_count', 'signed', 'signed_by', 'attachment_count', 'attachment_bytes'];
const TAIL = ['body', 'attachments', 'data', 'run_id', 'supersedes', 'retracts', 'reply_to_seq', 'supersedes_seq', 'retracts_seq', 'space_id', 'object_id'];

function pick(record: Obj, keys: readonly string[], into: Obj): void {
  for (const k of keys) if (k in record) into[k] = record[k];
}

/** A kept record (a `full` rendering with its words) as a read at `detail` renders it. */
export function atDetail(record: Obj, detail: Detail): Obj {
  const out: Obj = {};
  pick(record, IDS, out);
  if (detail === 'ids') return out;
  pick(record, HEAD, out);
  if (detail === 'full') {
    pick(record, TAIL, out);
    return out;
  }
  if (Array.isArray(out.fingerprints)) out.fingerprints = out.fingerprints.slice(0, SNIPPET_FINGERPRINTS);
  const body = [...(typeof record.body === 'string' ? record.body : '')];
  out.snippet = body.slice(0, SNIPPET_CHARACTERS).join('');
  out.snippet_truncated = body.length > SNIPPET_CHARACTERS;
  return out;
}

/** A local hit as a SEEK item. */
export function localItem(hit: LocalHit, detail: Detail, me: string, index: LocalIndex, relay: string, categories: readonly string[]): Obj {
  const item = atDetail(hit.record, detail);
  const id = String(hit.record.post_id);
  const rev = index.revisions(relay, [id]).get(id);
  item.mine = hit.record.author === me;
  item.superseded_by = rev?.supersededBy ?? [];
  item.retracted_by = rev?.retractedBy ?? [];
  item.categories = [...categories];
  item.match = hit.match;
  item.local = true;
  return item;
}

/** spaces.get reads in flight at once (the relay takes 6 reads at once per KEY). */
const CATEGORY_CONCURRENCY = 2;

/** The categories of each named SPACE (spaces.get), or [] where it cannot be read. */
export async function categoriesOf(api: RelayApi, names: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const queue = [...names];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      try {
        const res = await api.request({ path: `/v1/spaces/${encodeURIComponent(name)}`, auth: 'opt' });
        const c = isObject(res.body) && Array.isArray(res.body.categories) ? res.body.categories : [];
        out.set(name, c.filter((x): x is string => typeof x === 'string'));
      } catch {
        out.set(name, []);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CATEGORY_CONCURRENCY, names.length) }, worker));
  return out;
}

/**
 * Whether any of `filed` is `wanted` or sits under it in the register (the relay's `category`
 * filter takes descendants): each category's parents are read (categories.get) up to the top.
 */
export async function filedUnder(api: RelayApi, filed: readonly string[], wanted: string, parents = new Map<string, string | null>()): Promise<boolean> {
  let reads = 0;
  for (const start of filed) {
    let at: string | null = start;
    const walked = new Set<string>();
    while (at !== null && !walked.has(at)) {
      if (at === wanted) return true;
      walked.add(at);
      if (!parents.has(at)) {
        if (reads++ >= CATEGORY_READS_MAX) return false;
        try {
          const res = await api.request({ path: `/v1/categories/${encodeURIComponent(at)}`, auth: 'opt' });
          const b = isObject(res.body) ? res.body : {};
          parents.set(at, typeof b.parent === 'string' ? b.parent : typeof b.replaced_by === 'string' ? b.replaced_by : null);
        } catch {
          parents.set(at, null);
        }
      }
      at = parents.get(at) ?? null;
    }
  }
  return false;
}

const textOf = (item: Obj) => ({ title: typeof item.title === 'string' ? item.title : null, body: typeof item.body === 'string' ? item.body : typeof item.snippet === 'string' ? item.snippet : null });
const postedAt = (item: Obj) => (typeof item.posted_at === 'string' ? item.posted_at : '');

/** Merge two lists, each kept in its order, taking the head that `before` puts first. */
function mergeKeeping<T>(a: readonly T[], b: readonly T[], before: (x: T, y: T) => boolean): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && !before(b[j]!, a[i]!))) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

/**
 * The relay's items (in its order: fingerprint hits, then text hits) and local items
 * (`fingerprint` newest first, `text` in any order), ranked together as the header says.
 * `phrases` are the query's (shared/seek/terms.ts `textQuery`), undefined without `q`.
 */
export function rankTogether(relayItems: readonly Obj[], local: { fingerprint: readonly Obj[]; text: readonly Obj[] }, phrases: readonly (readonly string[])[] | undefined): Obj[] {
  const relayFp = relayItems.filter((i) => i.match !== 'text');
  const relayText = relayItems.filter((i) => i.match === 'text');
  const fp = mergeKeeping(relayFp, local.fingerprint, (x, y) => postedAt(x) > postedAt(y));
  let text: Obj[];
  if (phrases === undefined || local.text.length === 0) {
    text = [...relayText, ...local.text];
  } else {
    const all = [...relayText, ...local.text];
    const count = phraseCounter(phrases);
    const counted = all.map((i) => count(rankText(textOf(i))).counts);
    const collection = (): RankCollection => ({
      size: all.length,
      matching: (phrase) => {
        const p = phrases.indexOf(phrase);
        return counted.filter((c) => (c[p] ?? 0) > 0).length;
      },
    });
    const scores = rankScores(phrases, all.map(textOf), collection);
    const scored = all.map((item, k) => ({ item, score: scores[k]! }));
    const relaySide = scored.slice(0, relayText.length);
    const localSide = scored.slice(relayText.length).sort((x, y) => x.score - y.score || (postedAt(y.item) > postedAt(x.item) ? 1 : -1));
    text = mergeKeeping(relaySide, localSide, (x, y) => x.score < y.score || (x.score === y.score && postedAt(x.item) > postedAt(y.item))).map((s) => s.item);
  }
  const seen = new Set<unknown>();
  return [...fp, ...text].filter((i) => (seen.has(i.post_id) ? false : (seen.add(i.post_id), true)));
}

/** Keep items while they fit `budget` tokens (ceil(UTF-8 bytes of JSON / 3) each, the relay's estimator); the first always stays. */
export function withinBudget(list: readonly Obj[], budget: number): { items: Obj[]; tokens: number; cut: boolean } {
  const kept: Obj[] = [];
  let tokens = 0;
  for (const item of list) {
    const cost = Math.ceil(utf8Length(JSON.stringify(item)) / TOKEN_ESTIMATOR_BYTES_PER_TOKEN);
    if (kept.length > 0 && tokens + cost > budget) return { items: kept, tokens, cut: true };
    kept.push(item);
    tokens += cost;
  }
  return { items: kept, tokens, cut: false };
}

/** A relay item read at `snippets` as an `ids` read renders it, with SEEK's own members. */
export function relayAtIds(item: Obj): Obj {
  const out = atDetail(item, 'ids');
  pick(item, ['mine', 'superseded_by', 'retracted_by', 'categories', 'match'], out);
  return out;
}

const SEEK_MEMBERS = ['mine', 'superseded_by', 'retracted_by', 'categories', 'match', 'local'];

/** SEEK's own members of an item (beside the post's rendering). */
export function seekMembers(item: Obj): Obj {
  const out: Obj = {};
  pick(item, SEEK_MEMBERS, out);
  return out;
}

/** What of svc_seek's arguments the local half reads (tools/posts/seek.ts `SeekInput`). */
export interface LocalQuery {
  readonly space?: string | undefined;
  readonly oracle?: boolean | undefined;
  readonly q?: string | undefined;
  readonly fingerprint?: readonly string[] | undefined;
  readonly fingerprint_prefix?: string | undefined;
  readonly kind?: readonly string[] | undefined;
  readonly author?: string | undefined;
  readonly category?: string | undefined;
}

/** The local index and what of it a search covers; undefined when it covers nothing. */
export interface LocalScope {
  readonly index: LocalIndex;
  readonly relay: string;
  readonly spaces: readonly IndexedSpace[];
}

/** What of the local index a search with `args` covers (oracle SPACES are public: none of it). */
export function localScope(posting: Posting, args: LocalQuery): LocalScope | undefined {
  const sealing = posting.deps.sealing;
  const index = sealing?.index;
  if (sealing === undefined || index === undefined || args.oracle === true) return undefined;
  const relay = posting.deps.api.base.origin;
  const spaces = index.spaces(relay).filter((s) => args.space === undefined || s.name === args.space);
  return spaces.length === 0 ? undefined : { index, relay, spaces };
}

/** The local hits of a search as SEEK items at `detail`, with the query's phrases. */
export async function localHitsOf(
  posting: Posting,
  args: LocalQuery,
  scope: LocalScope,
  detail: Detail,
): Promise<{ fingerprint: Obj[]; text: Obj[]; phrases: string[][] | undefined }> {
  const text = args.q === undefined ? undefined : textQuery(args.q);
  const found = scope.index.seek({
    relay: scope.relay,
    text,
    fingerprints: validateFingerprintQueries(args.fingerprint),
    prefix: args.fingerprint_prefix === undefined ? undefined : parseFingerprintPrefix(args.fingerprint_prefix),
    space: args.space,
    kinds: args.kind,
    author: args.author,
  });
  const all = [...found.fingerprint, ...found.text];
  const names = [...new Set(all.map((h) => String(h.record.space)))];
  const categories = all.length === 0 ? new Map<string, string[]>() : await categoriesOf(posting.deps.api, names);
  let keep = (_: LocalHit) => true;
  if (args.category !== undefined) {
    const parents = new Map<string, string | null>();
    const under = new Set<string>();
    for (const n of names) if (await filedUnder(posting.deps.api, categories.get(n) ?? [], args.category, parents)) under.add(n);
    keep = (h) => under.has(String(h.record.space));
  }
  const me = posting.deps.identity.peerId;
  const item = (h: LocalHit) => localItem(h, detail, me, scope.index, scope.relay, categories.get(String(h.record.space)) ?? []);
  return { fingerprint: found.fingerprint.filter(keep).map(item), text: found.text.filter(keep).map(item), phrases: text?.phrases };
}

/** The line a local hit carries in the answer's text. */
export function localLine(fence: PeerFence, item: Obj, memberOf: ReadonlySet<string> | undefined): string {
  const left = memberOf !== undefined && typeof item.space === 'string' && !memberOf.has(item.space);
  return (
    `local: opened on this machine and found in its own index of sealed SPACES (the relay holds only ciphertext)` +
    (left ? `; this KEY is no longer a member of ${plain(fence, 'space', item.space)}: kept from when it could read it` : '')
  );
}
