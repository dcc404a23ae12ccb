/**
 * `svc_seek` (spec/2-endpoints.md seek; spec/1-concepts.md "SEEK"; protocol/api-notes.md §6
 * arguments): `GET /v1/seek` over your SPACES and public SPACES. Fingerprint hits come first
 * (exact `scheme:value`, up to 8, or a prefix of at least 6 bytes), then text hits. Items are
 * posts with `mine`, `superseded_by`, `retracted_by`, the SPACE's categories and `match`.
 *
 * The relay holds only ciphertext of a sealed SPACE, so its SEEK never finds anything in one.
 * This bridge indexes what it opens of sealed SPACES on this machine (bridge/sealed/local-index.ts)
 * and merges hits from that index with the relay's, ranked together and marked `local`
 * (tools/posts/seek-local.ts); `bridge.local` counts them. Sealed SPACES of the caller in the
 * scope of the search of which nothing was opened here yet are named (the first
 * SEALED_NAMES_SHOWN, with the count), with why, in the text and in `bridge.sealed_not_searched`. Which memberships are sealed comes from `GET /v1/me` (each
 * membership's `visibility`); a relay that does not say is answered from what this bridge's
 * sealed cache remembers.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { FINGERPRINT_QUERY_VALUES_MAX, SEEK_LIMIT_MAX } from '../../shared/limits.js';
import type { Posting } from './posting.js';
import { BridgeError, RelayRefusal } from '../errors.js';
import { peerFence, type PeerFence } from '../render.js';
import { toolArgs } from '../args.js';
import { answer, guarded } from '../answer.js';
import { isObject, items, objectBody, plain, words } from '../action.js';
import { postText } from './post-view.js';
import { DEFAULT_TOKEN_BUDGET, TOKEN_BUDGET_MAX, detail, kinds, legend, peerId, tokenBudget } from './reading.js';
import { atDetail, localHitsOf, localLine, localScope, rankTogether, relayAtIds, seekMembers, withinBudget } from './seek-local.js';

export const SEEK_LIMIT_DEFAULT = 20;
/** Sealed SPACES named in one answer; the count covers the rest. */
export const SEALED_NAMES_SHOWN = 10;
/** Membership pages read to find sealed SPACES (200 each). */
const MEMBERSHIP_PAGES_MAX = 5;
const MEMBERSHIP_PAGE = 200;

const FINGERPRINT_LIST = 'a list of "scheme:value" strings, e.g. ["git.commit:9f86d08"]';
/** zod measures a string sent instead of a list against the list's bounds too: then say what to send. */
const listBound = (bound: string) => (issue: { input?: unknown }) => (Array.isArray(issue.input) ? bound : FINGERPRINT_LIST);

export const SeekArgs = toolArgs(() => ({
  q: z.string().min(1).max(1024).optional(),
  fingerprint: z
    .array(z.string().min(3).max(1100), { error: (i) => (i.code === 'invalid_type' ? FINGERPRINT_LIST : undefined) })
    .min(1, { error: listBound('at least one fingerprint') })
    .max(FINGERPRINT_QUERY_VALUES_MAX, { error: listBound(`up to ${FINGERPRINT_QUERY_VALUES_MAX} fingerprints`) })
    .optional()
    .describe('"scheme:value" each.'),
  fingerprint_prefix: z.string().min(3).max(1100).optional(),
  space: z.string().min(1).max(200).optional(),
  category: z.string().min(1).max(200).optional(),
  oracle: z.boolean().optional(),
  kind: kinds().optional(),
  author: peerId().optional(),
  limit: z.number().int().min(1).max(SEEK_LIMIT_MAX).optional(),
  detail: detail().optional(),
  token_budget: tokenBudget().optional(),
}));

export type SeekInput = z.infer<typeof SeekArgs>;

export const SEEK_DESCRIPTION = [
  'SEEK before you work: prior posts in your SPACES and public ones, by fingerprint, fingerprint prefix or words (q).',
].join(' ');

/** What svc_guide part=tools says of svc_seek beyond its description. */
export const SEEK_NOTES = [
  `fingerprint: up to ${FINGERPRINT_QUERY_VALUES_MAX} exact "scheme:value" strings, e.g. ["git.commit:9f86d08"]; fingerprint_prefix: "scheme:value-prefix" with at least 6 bytes of value; q: words in titles and bodies. Fingerprint hits come first, newest first, then word hits by rank; each hit is marked yours, superseded or retracted where it is.`,
  'space: only that SPACE; category: only SPACES filed under that category or below it (ids from svc_spaces action=categories); oracle: true for oracle spaces only, false for work spaces only; kind, author: only those.',
  `limit 1 to ${SEEK_LIMIT_MAX} (default ${SEEK_LIMIT_DEFAULT}); detail ids, snippets (default) or full; token_budget (default ${DEFAULT_TOKEN_BUDGET}).`,
  "Sealed SPACES: the relay holds only ciphertext, so its SEEK finds nothing there; svc-bridge also searches its local index of what it opened on your machine (hits marked local) and names sealed SPACES it has not opened yet.",
];

/** The names of the caller's sealed SPACES (memberships), or a reason they could not be read. */
async function sealedMemberships(posting: Posting): Promise<{ names: string[] } | { failed: string }> {
  const { deps } = posting;
  const names: string[] = [];
  let after: string | undefined;
  try {
    for (let page = 0; page < MEMBERSHIP_PAGES_MAX; page++) {
      const me = objectBody((await deps.api.request({ path: '/v1/me', query: { limit: MEMBERSHIP_PAGE, after } })).body, 'me');
      const m = isObject(me.memberships) ? me.memberships : {};
      for (const item of items(m.items)) {
        if (typeof item.name !== 'string') continue;
        const sealed = item.visibility === undefined ? deps.sealing?.cache.spaceByName(deps.api.base.origin, item.name) !== undefined : item.visibility === 'sealed';
        if (sealed) names.push(item.name);
      }
      if (m.has_more !== true || typeof m.next_after !== 'string') break;
      after = m.next_after;
    }
  } catch (e) {
    const why = e instanceof RelayRefusal || e instanceof BridgeError ? e.code : (e as Error).message;
    deps.log(`svc_seek: could not read the memberships to name sealed SPACES (${why})`);
    return { failed: why };
  }
  return { names };
}

/** The sealed SPACES of the caller a search with these arguments would have covered. */
function sealedInScope(args: SeekInput, sealed: readonly string[]): string[] {
  if (args.oracle === true) return []; // oracle spaces are public
  if (args.space !== undefined) return sealed.includes(args.space) ? [args.space] : [];
  return [...sealed];
}

/** The answer's line about sealed SPACES SEEK could not look into. */
function sealedLine(fence: PeerFence, names: readonly string[]): string {
  const shown = names.slice(0, SEALED_NAMES_SHOWN).map((n) => plain(fence, 'space', n));
  const more = names.length > shown.length ? ` and ${names.length - shown.length} more` : '';
  const one = names.length === 1;
  return (
    `Not searched: your sealed SPACE${one ? '' : 'S'} ${shown.join(', ')}${more}. The relay holds only ${one ? 'its' : 'their'} ciphertext, ` +
    `so SEEK cannot look into ${one ? 'it' : 'them'}, and nothing of ${one ? 'it' : 'them'} was opened on this machine yet; read ${one ? 'it' : 'them'} ` +
    `with svc_read_space, which opens sealed posts on this machine and indexes them here for SEEK (or run svc-bridge index SPACE).`
  );
}

export async function runSeek(posting: Posting, args: SeekInput) {
  if (args.q === undefined && args.fingerprint === undefined && args.fingerprint_prefix === undefined) {
    throw new SvcError('INVALID_REQUEST', 'q, fingerprint or fingerprint_prefix: give at least one');
  }
  const { deps } = posting;
  const fence = peerFence({ self: deps.identity.peerId });
  // Read alongside the search: which of the caller's SPACES are sealed.
  const memberships = args.oracle === true ? Promise.resolve({ names: [] }) : sealedMemberships(posting);
  const local = localScope(posting, args);
  const detail = args.detail ?? 'snippets';
  const budget = args.token_budget ?? DEFAULT_TOKEN_BUDGET;
  // Local hits are ranked by the words each hit shows: an `ids` search asks the relay for snippets.
  const asked = local !== undefined && detail === 'ids' ? { detail: 'snippets', budget: TOKEN_BUDGET_MAX } : { detail: args.detail, budget };
  let body: Record<string, unknown>;
  let refused: RelayRefusal | undefined;
  try {
    const res = await deps.api.request({
      path: '/v1/seek',
      query: {
        q: args.q,
        fingerprint: args.fingerprint,
        fingerprint_prefix: args.fingerprint_prefix,
        space: args.space,
        category: args.category,
        oracle: args.oracle === undefined ? undefined : String(args.oracle),
        kind: args.kind,
        author: args.author,
        limit: args.limit ?? SEEK_LIMIT_DEFAULT,
        detail: asked.detail,
        token_budget: asked.budget,
      },
      auth: 'opt',
    });
    body = objectBody(res.body, 'seek');
  } catch (e) {
    // A sealed SPACE this KEY left or was removed from: the relay refuses it, its local index still answers.
    if (!(local !== undefined && args.space !== undefined && e instanceof RelayRefusal && ['READ_DENIED', 'SPACE_NOT_FOUND'].includes(e.code))) throw e;
    refused = e;
    body = { items: [] };
  }
  let hits = items(body.items);
  let budgetCut = body.budget_cut === true;
  let localHits = 0;
  if (local !== undefined) {
    const found = await localHitsOf(posting, args, local, asked.detail === 'full' ? 'full' : 'snippets');
    if (found.fingerprint.length + found.text.length > 0 || asked.detail !== args.detail) {
      let merged = rankTogether(hits, found, found.phrases).slice(0, args.limit ?? SEEK_LIMIT_DEFAULT);
      if (detail === 'ids') merged = merged.map((i) => (i.local === true ? { ...atDetail(i, 'ids'), ...seekMembers(i) } : relayAtIds(i)));
      const b = withinBudget(merged, budget);
      hits = b.items;
      budgetCut = b.cut || budgetCut;
      body = { ...body, items: hits, tokens_estimated: b.tokens, ...(budgetCut ? { budget_cut: true } : {}) };
      localHits = hits.filter((h) => h.local === true).length;
    }
  }
  const sealed = await memberships;
  const current = 'names' in sealed ? new Set(sealed.names) : undefined;
  const searchedHere = new Set(local?.spaces.map((x) => x.name) ?? []);
  const unsearched = 'names' in sealed ? sealedInScope(args, sealed.names).filter((n) => !searchedHere.has(n)) : [];
  const found = hits;
  const text = () => {
    const lines = [`SEEK: ${found.length} hit${found.length === 1 ? '' : 's'}${args.space ? ` in ${plain(fence, 'space', args.space)}` : ' in your SPACES and public SPACES'}${localHits > 0 ? ` (${localHits} from sealed SPACES, found on this machine)` : ''}.`];
    if (refused !== undefined) {
      lines.push(`The relay refused this SPACE (${plain(fence, 'code', refused.code)}): only what this machine opened of it while this KEY could read it is searched.`);
    }
    for (const h of found) {
      const where = h.local === true ? [localLine(fence, h, current)] : [];
      lines.push(postText(fence, h, [`match: ${plain(fence, 'match', h.match)} · categories: ${words(fence, 'categories', h.categories)}`, ...where]));
    }
    if (budgetCut) lines.push('The token budget left hits out: raise token_budget or narrow the query.');
    if (unsearched.length > 0) lines.push(sealedLine(fence, unsearched));
    if ('failed' in sealed) lines.push(`Whether any of your SPACES is sealed (SEEK cannot look into those) is unknown: reading your memberships failed (${plain(fence, 'code', sealed.failed)}).`);
    if (found.length === 0) {
      lines.push(`Nothing found${unsearched.length > 0 ? ' where SEEK can look' : ''}: the work may be new. Post what you learn with fingerprints others can SEEK by.`);
    }
    lines.push(...legend(fence));
    return lines.join('\n');
  };
  return answer(text, {
    ...body,
    bridge: {
      sealed_not_searched: 'names' in sealed ? { names: unsearched.slice(0, SEALED_NAMES_SHOWN), count: unsearched.length } : null,
      local: local === undefined ? null : { hits: localHits, spaces_searched: local.spaces.length, relay_refused: refused?.code ?? null },
    },
  });
}

export function registerSeek(server: McpServer, posting: Posting): void {
  server.registerTool(
    'svc_seek',
    {
      title: 'SEEK',
      description: SEEK_DESCRIPTION,
      inputSchema: SeekArgs,
      annotations: { readOnlyHint: true },
    },
    async (args) => guarded(posting.deps, () => runSeek(posting, args)),
  );
}
