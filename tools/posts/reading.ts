/**
 * What the reading tools share: connector defaults (protocol/api-notes.md §6: `limit` 20,
 * `token_budget` 3,000 up to 20,000), argument schemas, the answer's legend line, and the
 * proof checks of a page (objects.md §13 steps 1-6 per post, with the checkpoint history rule).
 */
import * as z from 'zod';
import { builtOnce } from '../args.js';
import type { CursorPlan } from '../cache/cursors.js';
import type { Posting } from './posting.js';
import { legendLines, type PeerFence } from '../render.js';
import { servedByRelay } from '../served.js';
import { checkPostProof } from '../../shared/post-proof.js';
import type { Check, InclusionCheck } from '../verify/verify.js';
import { isObject, plain, segment } from '../action.js';
import { postNotes } from './post-view.js';

export const DEFAULT_LIMIT = 20;
export const DEFAULT_TOKEN_BUDGET = 3000;
export const TOKEN_BUDGET_MAX = 20_000;
/** Posts whose inclusion one read checks (each costs one posts.proof read). */
export const PROOF_READS_MAX = 50;
/** Inclusion reads in flight at once (the relay allows 6 reads at once per KEY). */
const PROOF_CONCURRENCY = 2;

// The argument schemas the reading tools share, each built when a tool's arguments first need it (tools/args.ts builtOnce).
export const position = builtOnce(() => z.string().regex(/^(0|[1-9][0-9]{0,19})$/, 'a decimal position'));
export const detail = builtOnce(() => z.enum(['ids', 'snippets', 'full']));
/** A SPACE's stream and what stands also take the newer API's headlines (relay/posts/headlines.ts). */
export const pageDetail = builtOnce(() => z.enum(['ids', 'headlines', 'snippets', 'full']));
export const tokenBudget = builtOnce(() => z.number().int().min(1).max(TOKEN_BUDGET_MAX));
export const kinds = builtOnce(() => z.array(z.string().min(1).max(64)).min(1).max(24));
export const peerId = builtOnce(() => z.string().regex(/^[0-9a-f]{64}$/, 'a peer id: 64 lowercase hex'));
export const postId = builtOnce(() => z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a post id: lowercase uuid'));

/**
 * The last lines of an answer: what its post views marked in a word means, once (post-view.ts
 * `postNotes`), and what the peer markers mean, when something was fenced (tools/render.ts).
 */
export function legend(fence: PeerFence): string[] {
  return [...postNotes(fence), ...legendLines(fence)];
}

/** Where an ascending read started: `after N`, marked when N was the saved cursor. */
export function startedAfter(plan: CursorPlan): string {
  return `after ${plan.after}${plan.from === 'saved' ? ' (your saved cursor)' : ''}`;
}

/** The line that closes the token budget's cut of a page. */
export const BUDGET_CUT_LINE = 'The token budget cut this page; the rest follows on the next read.';

/**
 * The cursor line of an ascending read, after the page was rendered and the cursor settled:
 * where the saved cursor is now and how to read on. `what` names the entries ("items", "posts").
 * The relay's `next_after` is attacker-influenced text and goes through `plain`.
 */
export function cursorLine(
  fence: PeerFence,
  plan: CursorPlan,
  read: { saved: string | undefined; moved: boolean; filtered: boolean; hasMore: boolean; nextAfter: unknown; what: string },
): string {
  if (plan.advances) {
    return `cursor: saved at ${read.saved ?? '0'}${read.moved ? '' : ' (unchanged)'}.${read.hasMore ? ` More ${read.what} wait: call again without after.` : ''}`;
  }
  return (
    `cursor: your saved cursor stays at ${read.saved ?? 'none'} (${read.filtered ? 'a filtered read does not move it' : 'this read started past it'}).` +
    (read.hasMore ? ` More: call again with after=${plain(fence, 'next_after', read.nextAfter)}.` : '')
  );
}

export interface PostChecks {
  readonly proof: Check;
  readonly inclusion: InclusionCheck;
}

/** Run `work` over `items` with at most `n` in flight, keeping order. */
async function pool<T, R>(items: readonly T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  });
  await Promise.all(runners);
  return out;
}

/**
 * The checks of posts read with their proof blocks: steps 1-5 locally, then each post's
 * inclusion (posts.proof) under the certified signer, then the history rule for its checkpoint.
 */
/**
 * What the relay's own connector says instead of checks: the relay checking its own answers
 * proves nothing (a relay that rewrote history would pass its own check), so it reads no
 * proofs and says where they are checked.
 */
export const NOT_CHECKED_AT_RELAY: PostChecks = {
  proof: { ok: null, detail: "not checked here: the relay's own connector does not check its own proofs; svc-bridge on your machine does" },
  inclusion: { ok: null, detail: 'not checked here (svc-bridge checks inclusion under a signed checkpoint and the history rule)' },
};

export async function checkPosts(
  posting: Posting,
  posts: readonly Record<string, unknown>[],
  served?: Record<string, unknown>,
): Promise<PostChecks[]> {
  if (servedByRelay(posting.deps)) return posts.map(() => NOT_CHECKED_AT_RELAY);
  // The passkey policy is read only when a passkey signature is shown.
  const passkeySigned = posts.some((p) => isObject(p.proof) && isObject(p.proof.signature) && p.proof.signature.alg === 'webauthn');
  const passkeys = passkeySigned ? await posting.verifier.passkeyPolicy() : null;
  return pool(posts, PROOF_CONCURRENCY, async (p) => {
    const proof = checkPostProof(p, passkeys);
    if (proof.ok === false || typeof p.space !== 'string' || typeof p.seq !== 'string') {
      return { proof, inclusion: { ok: null, detail: 'inclusion not checked (the proof block failed or is missing)' } };
    }
    // `served`: a posts.proof answer already read for a single post.
    const evidence =
      served ??
      (await (async () => {
        const res = await posting.deps.api.request({ path: `/v1/spaces/${segment(p.space as string, 'space')}/posts/${segment(p.seq as string, 'seq')}/proof`, auth: 'opt' });
        return isObject(res.body) ? res.body : {};
      })());
    const inclusion = await posting.verifier.inclusion(p.space, p, evidence);
    return { proof, inclusion };
  });
}

/** What an answer of the relay's connector says once, in place of two lines on every post it shows. */
export const NOT_CHECKED_AT_RELAY_LINE = `proof and inclusion: ${NOT_CHECKED_AT_RELAY.proof.detail}`;

/** The lines a post's checks add to its block: none for a post the relay served itself (`uncheckedLine` says it once). */
export function checkLines(c: PostChecks): string[] {
  if (c === NOT_CHECKED_AT_RELAY) return [];
  const lines = [`proof: ${c.proof.ok === false ? `FAILED: ${c.proof.detail}` : c.proof.detail}`];
  const inc = c.inclusion;
  if (inc.history?.changed === true) lines.push(`!!! ${inc.history.detail}`);
  else lines.push(`inclusion: ${inc.ok === false ? `FAILED: ${inc.detail}` : inc.detail}${inc.history !== undefined && inc.history.ok !== null ? `; ${inc.history.detail}` : ''}`);
  return lines;
}

/** The one line an answer of the relay's connector carries for the posts it did not check; none elsewhere. */
export function uncheckedLine(checks: readonly PostChecks[]): string[] {
  return checks.includes(NOT_CHECKED_AT_RELAY) ? [NOT_CHECKED_AT_RELAY_LINE] : [];
}

/**
 * The lines at the top of an answer when a check found changed history (loud), or a history
 * cut back by a restore that a verified recovery notice declares (a notice).
 */
export function historyAlarm(checks: readonly PostChecks[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const say = (line: string) => {
    if (!seen.has(line)) {
      seen.add(line);
      out.push(line);
    }
  };
  for (const c of checks) {
    const h = c.inclusion.history;
    if (h?.changed === true) say(`!!! ${h.detail}`);
    if (c.inclusion.warning !== undefined) say(`!!! ${c.inclusion.warning}`);
    if (h?.recovered !== undefined) say(`NOTICE: ${h.detail}`);
  }
  return out;
}

/** The structured form of a post's checks. */
export function checksJson(c: PostChecks): Record<string, unknown> {
  return {
    proof: { ok: c.proof.ok, detail: c.proof.detail },
    inclusion: {
      ok: c.inclusion.ok,
      detail: c.inclusion.detail,
      checkpoint: c.inclusion.checkpoint ?? null,
      development: c.inclusion.development ?? null,
      warning: c.inclusion.warning ?? null,
      history: c.inclusion.history
        ? { ok: c.inclusion.history.ok, changed: c.inclusion.history.changed, detail: c.inclusion.history.detail, recovered: c.inclusion.history.recovered ?? null }
        : null,
    },
  };
}
