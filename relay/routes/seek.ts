/**
 * SEEK `GET /v1/seek` (spec/2-endpoints.md seek; spec/1-concepts.md "SEEK", Limits "reads",
 * "unscoped SEEK"; protocol/api-notes.md §6 `svc_seek`).
 *
 * Query `q` (text over titles and bodies), `fingerprint` (`scheme:value`, repeatable up to 8,
 * exact), `fingerprint_prefix` (`scheme:value`, at least 6 bytes of value), filters `space`,
 * `category` (with its descendants), `oracle`, `kind`, `author`; `limit` 1 to 50 (default 20),
 * `detail` (default snippets), `token_budget`. Fingerprint hits come first (newest first), then
 * text hits ranked by BM25 within a bounded, newest-first candidate set: at most 100 visible
 * matches, from no further back than the 10,000 newest matches of the query (in the SPACE,
 * when scoped), so a common word stays as fast as a rare one (relay/seek/search.ts).
 *
 * Hits come only from the caller's own SPACES and public SPACES. Unscoped (no `space`), at most
 * 2 results from one public SPACE and 3 from one owner's public SPACES (the caller's own SPACES
 * are not capped), and only a KEY's first 200 public posts a day join (the indexer marks them).
 * Items are posts as reads render them, plus `mine`, `superseded_by`, `retracted_by`, the
 * SPACE's `categories` and `match` (`fingerprint` or `text`).
 *
 * 120 a minute and one at a time per caller (KEY, or address without one): BUSY beyond.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { RATE_LIMITS, SEEK_LIMIT_MAX, SEEK_RESULTS_PER_OWNER, SEEK_RESULTS_PER_PUBLIC_SPACE } from '../../shared/limits.js';
import { parseFingerprintPrefix, validateFingerprintQueries } from '../../shared/validate.js';
import { categoryFilter } from '../categories/index.js';
import type { RelayContext } from '../context.js';
import { RelayRefusal } from '../http/errors.js';
import { GateMap, releaseOnClose } from '../http/rate-limit.js';
import { accessCache, spaceForPosts } from '../posts/access.js';
import { answerPeerContent, postMarkdown } from '../posts/markdown.js';
import {
  boolParam,
  budgetPage,
  detailParam,
  intParam,
  kindsParam,
  listValue,
  oneValue,
  peerParam,
  tokenBudgetParam,
} from '../posts/read-params.js';
import { renderPost } from '../posts/render.js';
import '../seek/indexer.js';
import { SEEK_SCAN } from '../../shared/seek/rank.js';
import { searchText } from '../seek/search.js';
import { textQuery } from '../../shared/seek/terms.js';
import { createPostReadStore } from '../store/post-reads.js';
import type { SeekCandidate, SeekScope } from '../store/seek-store.js';

export const SEEK_LIMIT_DEFAULT = 20;
/** Fingerprint matches looked at per fingerprint. */
export const SEEK_FINGERPRINT_CANDIDATES = 200;

const SeekQuery = z.strictObject({
  q: oneValue,
  fingerprint: listValue,
  fingerprint_prefix: oneValue,
  space: oneValue,
  category: oneValue,
  oracle: oneValue,
  kind: listValue,
  author: oneValue,
  limit: oneValue,
  detail: oneValue,
  token_budget: oneValue,
});

interface Hit extends SeekCandidate {
  match: 'fingerprint' | 'text';
}

/** Fingerprint hits first (newest first), then text hits by score, each post once. */
function mergeHits(fingerprintHits: SeekCandidate[], textHits: SeekCandidate[]): Hit[] {
  const seen = new Set<number>();
  const out: Hit[] = [];
  for (const h of [...fingerprintHits].sort((a, b) => b.rowId - a.rowId)) {
    if (seen.has(h.rowId)) continue;
    seen.add(h.rowId);
    out.push({ ...h, match: 'fingerprint' });
  }
  for (const h of [...textHits].sort((a, b) => a.score - b.score || b.rowId - a.rowId)) {
    if (seen.has(h.rowId)) continue;
    seen.add(h.rowId);
    out.push({ ...h, match: 'text' });
  }
  return out;
}

/** Unscoped fairness: at most 2 hits per public SPACE and 3 per owner's public SPACES (own SPACES uncapped). */
function fairHits(hits: readonly Hit[], limit: number): Hit[] {
  const perSpace = new Map<number, number>();
  const perOwner = new Map<string, number>();
  const out: Hit[] = [];
  for (const h of hits) {
    if (out.length >= limit) break;
    if (!h.own) {
      const s = perSpace.get(h.spaceRowId) ?? 0;
      const o = perOwner.get(h.owner) ?? 0;
      if (s >= SEEK_RESULTS_PER_PUBLIC_SPACE || o >= SEEK_RESULTS_PER_OWNER) continue;
      perSpace.set(h.spaceRowId, s + 1);
      perOwner.set(h.owner, o + 1);
    }
    out.push(h);
  }
  return out;
}

export const seekRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const reads = createPostReadStore(ctx.store.db);
  const bucket = ctx.limiter.bucket('seek', RATE_LIMITS.seek);
  const gate = new GateMap(RATE_LIMITS.seek.concurrent);

  app.get(
    '/v1/seek',
    {
      schema: { querystring: SeekQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'seek',
        describe: 'Search prior work by fingerprint or text in your SPACES and public SPACES.',
        mcp: { tool: 'svc_seek' },
      },
    },
    async (req, reply) => {
      const caller = req.identity?.peerId ?? null;
      // SEEK's own ceiling, beside the read class: 120 a minute, one at a time per caller.
      // (Off with every other limit when the relay runs with rateLimits false: benchmarks only.)
      if (ctx.limiter.enabled) {
        const who = caller ?? `address:${req.ip}`;
        const spent = await bucket.spend(who, ctx.clock());
        if (spent.wait > 0) {
          throw new RelayRefusal('BUSY', 'SEEK: 120 a minute per caller', spent.wait, {
            'ratelimit-limit': String(bucket.capacity),
            'ratelimit-remaining': String(spent.remaining),
            'ratelimit-reset': String(spent.wait),
          });
        }
        const release = gate.enter(who);
        if (!release) throw new RelayRefusal('BUSY', 'SEEK: one at a time per caller', 1, {});
        releaseOnClose(req, reply, release);
      }

      const q = req.query as z.infer<typeof SeekQuery>;
      const fingerprints = validateFingerprintQueries(q.fingerprint);
      const prefix = q.fingerprint_prefix === undefined ? undefined : parseFingerprintPrefix(q.fingerprint_prefix);
      const text = q.q === undefined ? undefined : textQuery(q.q);
      if (q.q !== undefined && text === undefined) throw new SvcError('INVALID_REQUEST', 'q: no word to search for');
      if (text === undefined && fingerprints.length === 0 && prefix === undefined) {
        throw new SvcError('INVALID_REQUEST', 'q, fingerprint or fingerprint_prefix: send at least one');
      }
      const limit = intParam(q.limit, 'limit', 1, SEEK_LIMIT_MAX) ?? SEEK_LIMIT_DEFAULT;
      const detail = detailParam(q.detail, 'snippets');
      const tokenBudget = tokenBudgetParam(q.token_budget);
      const categories = q.category === undefined ? undefined : categoryFilter(q.category);
      const oracle = boolParam(q.oracle, 'oracle');
      const kinds = kindsParam(q.kind);
      const author = peerParam(q.author, 'author');
      const space = q.space === undefined ? undefined : (await spaceForPosts(ctx, q.space, caller)).space;

      // Read-your-writes: everything committed before this SEEK is indexed first.
      await app.seekIndexer.catchUp();
      const scope: SeekScope = { caller, spaceRowId: space?.id, categories, oracle, kinds, author };
      const fpHits: SeekCandidate[] = [];
      for (const fp of fingerprints) fpHits.push(...await ctx.store.seek.fingerprint(fp, scope, SEEK_FINGERPRINT_CANDIDATES));
      if (prefix) fpHits.push(...await ctx.store.seek.fingerprintPrefix(prefix, scope, SEEK_FINGERPRINT_CANDIDATES, SEEK_SCAN));
      const textHits = text === undefined ? [] : await searchText(ctx.store.seek, text, scope);
      const merged = mergeHits(fpHits, textHits);
      const hits = space ? merged.slice(0, limit) : fairHits(merged, limit);

      const access = accessCache(ctx, caller);
      const rows = new Map((await reads.byRowIds(hits.map((h) => h.rowId))).map((p) => [p.rowId, p]));
      const revisions = await reads.revisionsOf([...rows.values()].map((p) => p.postId));
      const items: JsonObject[] = [];
      for (const h of hits) {
        const post = rows.get(h.rowId);
        const a = post ? await access(post.spaceRowId) : undefined;
        if (!post || !a) continue; // access changed since indexing: leave it out
        const item = renderPost(post, { detail, proof: false, inside: a.inside });
        const rev = revisions.get(post.postId);
        item.mine = caller === post.author;
        item.superseded_by = rev?.supersededBy ?? [];
        item.retracted_by = rev?.retractedBy ?? [];
        item.categories = [...a.space.categories];
        item.match = h.match;
        items.push(item);
      }
      const b = budgetPage(items, tokenBudget);
      const answer: Record<string, unknown> = { items: b.items, tokens_estimated: b.tokensEstimated };
      return answerPeerContent(req, reply, ctx.random, answer, b.budgetCut, (fence) => ({
        title: 'SEEK',
        facts: { results: b.items.length, scope: space ? space.name : caller ? 'your SPACES and public SPACES' : 'public SPACES' },
        sections: b.items.map((p) => `match: ${String(p.match)}\n${postMarkdown(p, fence)}`),
      }));
    },
  );
};
