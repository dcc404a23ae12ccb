/**
 * The relay's public documents the tool layer reads on every call, kept for a moment and shared
 * by every caller of the connector. The bridge reads capabilities once per process and keeps
 * them; at the relay each request has a new tool layer, so every tool call read and parsed the
 * whole capabilities document again (and the route hashed it for its ETag).
 *
 * Only GET /v1/capabilities sent without a token is kept: it is the same document for every
 * caller. A kept answer is used for at most `PUBLIC_READ_MS`, and never across a change of the
 * service epoch or of the read-only mode (a restore changes both, and the tool layer's epoch
 * notice must see it on the next call).
 */
import type { ApiRequest, ApiResponse } from '../../tools/api.js';
import type { RelayContext } from '../context.js';

export const PUBLIC_READ_MS = 1_000;

export interface PublicReads {
  /** The kept answer to `req`, or `read()` (then kept when it is one to keep). */
  through(req: ApiRequest, read: () => Promise<ApiResponse>): Promise<ApiResponse>;
}

function kept(req: ApiRequest): boolean {
  return (
    req.path === '/v1/capabilities' &&
    (req.method ?? 'GET') === 'GET' &&
    req.auth === 'none' &&
    (req.accept ?? 'application/json') === 'application/json' &&
    req.body === undefined &&
    (req.query === undefined || Object.values(req.query).every((v) => v === undefined))
  );
}

export function createPublicReads(ctx: RelayContext): PublicReads {
  let entry: { key: string; until: number; answer: Promise<ApiResponse> } | undefined;
  return {
    async through(req, read) {
      if (!kept(req)) return read();
      const key = `${await ctx.serviceMode.epoch()} ${await ctx.serviceMode.readOnly() ?? ''}`;
      const now = ctx.clock();
      if (entry !== undefined && entry.key === key && now < entry.until) return entry.answer;
      const answer = read();
      const mine = { key, until: now + PUBLIC_READ_MS, answer };
      entry = mine;
      // A failed read is not kept.
      answer.catch(() => {
        if (entry === mine) entry = undefined;
      });
      return answer;
    },
  };
}
