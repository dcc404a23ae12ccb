/**
 * SEEK over the local index of sealed SPACES (bridge/sealed/local-index.ts), with the relay's own
 * rules (relay/routes/seek.ts, relay/seek/search.ts) where they apply:
 * - the same query: `q` parsed by the relay's `textQuery` (its tokeniser, its limits), each
 *   word a phrase, phrases joined with AND; exact fingerprints; a fingerprint prefix;
 * - the same bounds: text hits are the newest SEEK_TEXT_CANDIDATES matches, among at most
 *   SEEK_SCAN posts holding every term of the query; at most FINGERPRINT_CANDIDATES per
 *   fingerprint, the prefix walk at most SEEK_SCAN posts;
 * - the same filters: `space`, `kind`, `author` (`oracle` and `category` are decided by the
 *   caller, tools/posts/seek-local.ts).
 * The blind index finds posts holding every term of the query; each one is then opened and
 * held to the query exactly (phrases in order, as the relay's FTS5 phrase match does; the
 * fingerprint or prefix itself), which also rules out a collision of truncated hashes.
 */
import type { Fingerprint } from '../../shared/validate.js';
import { SEEK_SCAN, SEEK_TEXT_CANDIDATES, phraseCounter } from '../../shared/seek/rank.js';
import type { LocalSeek, LocalSeekArgs } from '../../tools/ports.js';
import type { SearchKeys } from '../keys/search-keys.js';
import { fingerprintEntry, fingerprintsIn, prefixEntry, prefixLookup, termEntry, type DocRow, type DocScope, type SealedIndex } from './local-index.js';

type Obj = Record<string, unknown>;

/** Fingerprint matches looked at per fingerprint, as the relay's SEEK route. */
export const FINGERPRINT_CANDIDATES = 200;

/** The text a post is matched on: its title and whole body, as the relay's index holds them. */
export function matchText(record: Obj): string {
  return `${typeof record.title === 'string' ? record.title : ''}\n${typeof record.body === 'string' ? record.body : ''}`;
}

/** Hits of `args` in the local index (none when nothing of the scope is indexed). */
export function seekLocal(index: SealedIndex, keys: Pick<SearchKeys, 'entry'>, args: LocalSeekArgs): LocalSeek {
  const out: LocalSeek = { fingerprint: [], text: [] };
  let space: number | undefined;
  const spaceIds = new Map<number, string>();
  if (args.space !== undefined) {
    const s = index.spaces(args.relay).find((x) => x.name === args.space);
    if (s === undefined) return out;
    space = s.row;
  }
  const scope: DocScope = { relay: args.relay, space, kinds: args.kinds, author: args.author };
  const open = (doc: DocRow): { record: Obj; spaceId: string } | undefined => {
    let spaceId = spaceIds.get(doc.space);
    if (spaceId === undefined) {
      spaceId = index.spaceIdOf(doc.space);
      if (spaceId === undefined) return undefined;
      spaceIds.set(doc.space, spaceId);
    }
    const record = index.open(args.relay, spaceId, doc);
    return record === undefined ? undefined : { record, spaceId };
  };
  const seen = new Set<number>();
  const walkFingerprint = (entry: string, scan: number, holds: (fp: Fingerprint) => boolean) => {
    let kept = 0;
    for (const doc of index.candidates([keys.entry(entry)], scope, scan)) {
      if (kept >= FINGERPRINT_CANDIDATES) break;
      const o = open(doc);
      if (o === undefined || !fingerprintsIn(o.record).some(holds)) continue;
      kept++;
      if (seen.has(doc.id)) continue;
      seen.add(doc.id);
      out.fingerprint.push({ record: o.record, match: 'fingerprint', doc: doc.id, spaceId: o.spaceId });
    }
  };
  for (const fp of args.fingerprints) {
    walkFingerprint(fingerprintEntry(fp.scheme, fp.value), FINGERPRINT_CANDIDATES, (x) => x.scheme === fp.scheme && x.value === fp.value);
  }
  if (args.prefix !== undefined) {
    const { scheme, value } = args.prefix;
    walkFingerprint(prefixEntry(scheme, prefixLookup(value)), SEEK_SCAN, (x) => x.scheme === scheme && x.value.startsWith(value));
  }
  out.fingerprint.sort((a, b) => b.doc - a.doc);

  if (args.text !== undefined) {
    const terms = [...new Set(args.text.phrases.flat())];
    // The longest term drives the walk: a guess at the rarest, without counting any.
    terms.sort((a, b) => b.length - a.length);
    const count = phraseCounter(args.text.phrases);
    for (const doc of index.candidates(terms.map((t) => keys.entry(termEntry(t))), scope, SEEK_SCAN)) {
      if (out.text.length >= SEEK_TEXT_CANDIDATES) break;
      const o = open(doc);
      if (o === undefined || count(matchText(o.record)).counts.some((c) => c === 0)) continue;
      out.text.push({ record: o.record, match: 'text', doc: doc.id, spaceId: o.spaceId });
    }
  }
  return out;
}
