/**
 * SEEK's text search (spec/1-concepts.md "SEEK"), ranked within a bounded, recency-ordered
 * candidate set: the newest visible matches of the query are the candidates
 * (relay/store/seek.ts walks at most SEEK_SCAN matches, newest first, and keeps at most
 * SEEK_TEXT_CANDIDATES visible ones), then BM25 ranks them (shared/seek/rank.ts). Older
 * matches than the window are not found; a common word costs what a rare one does.
 */
import { SEEK_RESULTS_PER_OWNER, SEEK_RESULTS_PER_PUBLIC_SPACE } from '../../shared/limits.js';
import type { SeekCandidate, SeekScope, SeekStore } from '../store/seek-store.js';
import { RANK_DF_SCAN, RANK_TEXT_CHARS, SEEK_SCAN, SEEK_TEXT_CANDIDATES, estimateMatching, rankScores, type RankCollection } from '../../shared/seek/rank.js';
import { phraseExpression, scopedExpression, type TextQuery } from '../../shared/seek/terms.js';

/**
 * Unscoped, candidates from one public SPACE / one owner's public SPACES, at most: a few more
 * than the 2 and 3 results the unscoped caps keep, so ranking chooses among them.
 */
export const SEEK_CANDIDATES_PER_SPACE = 2 * SEEK_RESULTS_PER_PUBLIC_SPACE;
export const SEEK_CANDIDATES_PER_OWNER = 2 * SEEK_RESULTS_PER_OWNER;

/** Text hits of `query` visible in `scope`, each with its BM25 score (lower is better), newest first. */
export async function searchText(seek: SeekStore, query: TextQuery, scope: SeekScope): Promise<SeekCandidate[]> {
  const match = scope.spaceRowId === undefined ? query.expression : scopedExpression(query.expression, scope.spaceRowId);
  const candidates = await seek.textCandidates(match, scope, {
    scan: SEEK_SCAN,
    cap: SEEK_TEXT_CANDIDATES,
    perSpace: SEEK_CANDIDATES_PER_SPACE,
    perOwner: SEEK_CANDIDATES_PER_OWNER,
    chars: RANK_TEXT_CHARS,
  });
  // Phrase counts over the whole index, bounded walks, asked before ranking (which is
  // synchronous) and only for a query of several phrases, as rankScores would ask them.
  let collected: RankCollection | undefined;
  if (candidates.length > 0 && query.phrases.length > 1) {
    const size = await seek.watermark();
    const counts = new Map<readonly string[], number>();
    for (const phrase of query.phrases) {
      const { found, oldest } = await seek.newestMatches(phraseExpression(phrase), RANK_DF_SCAN);
      counts.set(phrase, estimateMatching(found, oldest, size, RANK_DF_SCAN));
    }
    collected = { size, matching: (phrase) => counts.get(phrase)! };
  }
  const collection = (): RankCollection => collected!;
  const scores = rankScores(query.phrases, candidates, collection);
  return candidates.map((c, i) => ({ rowId: c.rowId, spaceRowId: c.spaceRowId, owner: c.owner, own: c.own, score: scores[i]! }));
}
