/**
 * SEEK in the people's view served by the bridge: the relay cannot look inside a sealed SPACE,
 * so a `GET /v1/seek` through the view also asks this bridge's local index of what it opened
 * (bridge/sealed/local-index.ts) with the same query, bounds and filters, and ranks the local hits
 * with the relay's as `svc_seek` does (tools/posts/seek-local.ts `rankTogether`). A local hit is
 * marked `local: true` and shown as the relay shows a sealed post: no words in its own members
 * (title, snippet, body null); its words come as for any sealed item, in `opened`, opened again
 * from the ciphertext the relay serves now (bridge/view/sealed-answers.ts). The query goes to the
 * relay as the page sent it, as svc_seek's does; nothing opened goes with it.
 */
import { SEEK_LIMIT_MAX } from '../../shared/limits.js';
import { textQuery } from '../../shared/seek/terms.js';
import { parseFingerprintPrefix, validateFingerprintQueries } from '../../shared/validate.js';
import type { RelayApi } from '../../tools/api.js';
import type { LocalHit, LocalIndex } from '../../tools/ports.js';
import { categoriesOf, filedUnder, localItem, rankTogether } from '../../tools/posts/seek-local.js';

type Obj = Record<string, unknown>;

const SEEK_LIMIT_DEFAULT = 20;

export interface LocalSearch {
  readonly api: RelayApi;
  readonly index: LocalIndex;
  /** The key the index keeps the relay followed now under (Sealing.relay). */
  readonly relay: string;
  readonly me: string;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The local hits of the query in `search`, or undefined when the relay's own parsing would not have taken it. */
function seekArgs(search: URLSearchParams, relay: string) {
  try {
    const q = search.get('q') ?? undefined;
    const prefix = search.get('fingerprint_prefix') ?? undefined;
    const kinds = search.getAll('kind').flatMap((k) => k.split(',')).filter((k) => k !== '');
    return {
      relay,
      text: q === undefined ? undefined : textQuery(q),
      fingerprints: validateFingerprintQueries(search.getAll('fingerprint').length > 0 ? search.getAll('fingerprint') : undefined),
      prefix: prefix === undefined ? undefined : parseFingerprintPrefix(prefix),
      space: search.get('space') ?? undefined,
      kinds: kinds.length > 0 ? kinds : undefined,
      author: search.get('author') ?? undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * Add the local hits of the search to the relay's SEEK answer `answer` (changed in place).
 * Returns whether it added any. Oracle spaces are public: `oracle=true` asks nothing here.
 */
export async function addLocalHits(answer: unknown, search: URLSearchParams, local: LocalSearch): Promise<boolean> {
  if (!isObj(answer) || !Array.isArray(answer.items) || search.get('oracle') === 'true') return false;
  const args = seekArgs(search, local.relay);
  if (args === undefined) return false;
  const found = local.index.seek(args);
  const all = [...found.fingerprint, ...found.text];
  if (all.length === 0) return false;
  const names = [...new Set(all.map((h) => String(h.record.space)))];
  const categories = await categoriesOf(local.api, names);
  let keep = (_: LocalHit) => true;
  const category = search.get('category');
  if (category !== null) {
    const parents = new Map<string, string | null>();
    const under = new Set<string>();
    for (const n of names) if (await filedUnder(local.api, categories.get(n) ?? [], category, parents)) under.add(n);
    keep = (h) => under.has(String(h.record.space));
  }
  const detail = search.get('detail') === 'full' ? 'full' : 'snippets';
  const item = (h: LocalHit) => localItem(h, detail, local.me, local.index, local.relay, categories.get(String(h.record.space)) ?? []);
  const hits = { fingerprint: found.fingerprint.filter(keep).map(item), text: found.text.filter(keep).map(item) };
  if (hits.fingerprint.length + hits.text.length === 0) return false;
  const limit = Number(search.get('limit') ?? SEEK_LIMIT_DEFAULT);
  const relayItems = answer.items.filter(isObj);
  const merged = rankTogether(relayItems, hits, args.text?.phrases).slice(0, Number.isInteger(limit) && limit >= 1 ? Math.min(limit, SEEK_LIMIT_MAX) : SEEK_LIMIT_DEFAULT);
  answer.items = merged.map((i) => (i.local === true ? shownAsSealed(i) : i));
  return true;
}

/** A local hit without its words, as the relay renders a sealed post: the words come in `opened`. */
function shownAsSealed(item: Obj): Obj {
  const out: Obj = { ...item, title: null, fingerprints: [], fingerprint_count: 0 };
  if ('snippet' in out) out.snippet = null;
  if ('body' in out) out.body = null;
  for (const words of ['data', 'budget', 'run_id']) delete out[words];
  const s = isObj(item.sealed) ? item.sealed : {};
  out.sealed = { generation: s.generation, bytes: s.bytes };
  return out;
}
