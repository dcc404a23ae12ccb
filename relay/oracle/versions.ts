/**
 * Oracle versions and proposals inside posts.append (spec/1-concepts.md "Oracle document and
 * version", "States: Oracle proposal", Limits "oracle", Mailbox reasons `proposal`,
 * `out_of_date`, `changed`, `reply`; spec/2-endpoints.md posts.append refusals).
 *
 * - A `version` post by the owner or an admin whose `supersedes` is the current version (none
 *   for the first) becomes current at once. By anyone else it waits as a proposal: 3 waiting
 *   per KEY and 100 per SPACE in one oracle, 30 proposals a day per KEY (5 in the 24 hours after
 *   its registration), PROPOSAL_LIMIT past any of them, the detail saying whose.
 * - A `go` or `veto` replying to a version post is a decision: only the owner, an admin or the
 *   service reviewer (CONTROL_DENIED), only on a waiting proposal (PROPOSAL_DECIDED, detail its
 *   state); a veto gives its reason in the body. Go makes the proposal current.
 * - Whenever a version becomes current, the one before is superseded and every other waiting
 *   proposal out of date (also when the owner or an admin posts a version directly: a waiting
 *   proposal was based on the version it would have replaced), their authors get
 *   `out_of_date`, and the document's watchers get `changed` (not the version's author, nor
 *   the decider who made it current: both know). The links index (relay/store/oracle-links.ts)
 *   follows in the same transaction.
 * - A post whose `retracts` names a waiting proposal (its author's own: relay/posts/append.ts
 *   checks that) withdraws it: the proposal is declined with the reason RETRACTED_REASON, the
 *   retracting post recorded as the decision, by its author. It stops waiting, so it no longer
 *   counts toward the waiting limits, and a later go or veto on it is PROPOSAL_DECIDED. The
 *   state set stays the spec's: a retraction is the author declining its own proposal, and the
 *   reason says so. Retracting a version that no longer waits changes no state.
 * - A proposal reaches the owner and the first 32 admins as `proposal`; the decision reaches the
 *   proposer as a `reply` (the go/veto replies to it: relay/posts/append.ts delivers it).
 * - With `service_reviewer` on, the rules of relay/oracle/reviewer.ts are applied to each new
 *   proposal in the same transaction that stores it: one that breaks a rule is declined at once
 *   by a `veto` post of the service (unsigned, origin-attested, authored by the service's own
 *   peer id), so the decision is in the chain like a person's; one that breaks none waits.
 *
 * STYLE.md rule 8: `prepareOracle` reads the texts before the write lock (the proposal's and,
 * speculatively, the current version's); `checkOracle` (refusals) and `applyOracle` (state,
 * mailbox) run inside the append's savepoint, so a refused append leaves nothing and a stored
 * one commits with its state and deliveries.
 */
import { SvcError } from '../../shared/errors.js';
import { fromHex } from '../../shared/encoding.js';
import { peerIdHexOf } from '../../shared/identity.js';
import { ORACLE_LIMITS, REQUEST_NOTICE_ADMINS } from '../../shared/limits.js';
import type { MailboxReason } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { mayNotify } from '../joining.js';
import { canDecideProposal, type SpaceRole } from '../policy.js';
import type { PreparedPost } from '../posts/prepared.js';
import type { KeyRecord } from '../store/keys.js';
import type { VersionDecision, VersionRow, VersionState } from '../store/oracle.js';
import type { PostRow } from '../store/posts.js';
import type { SpaceRow } from '../store/spaces.js';
import { analyseText, review, vetoReason, type TextAnalysis } from './reviewer.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The reason oracle.versions shows for a proposal its author retracted while it waited. */
export const RETRACTED_REASON = 'retracted by its author';

/** The append answer's `oracle` (api-notes §4 `oracle?`). */
export type OracleAnswer =
  | {
      /** The version's state after this append (a replay: as it stands now). */
      state: VersionState;
      /** The current version after this append (null while the document has none). */
      current: string | null;
      /** Declined by the service reviewer in the same append: its reason. */
      reason?: string;
    }
  | {
      /** The proposal this go/veto decided, or this retraction withdrew. */
      decided: string;
      state: VersionState;
    };

/** What is read before the write lock. */
export type OraclePrep =
  | { kind: 'version'; proposed: TextAnalysis; current: { postId: string; text: TextAnalysis } | null }
  | { kind: 'decision' }
  | { kind: 'retraction' };

/** What the checks under the lock decided. */
export type OraclePlan =
  | { kind: 'version'; decider: boolean; current: VersionRow | undefined; prep: Extract<OraclePrep, { kind: 'version' }> }
  | { kind: 'decision'; proposal: VersionRow; go: boolean }
  | { kind: 'retraction'; proposal: VersionRow };

/** Writes a post of the service's own KEY replying to `parent` (relay/posts/append.ts). */
export type ServicePostWriter = (author: KeyRecord, body: Record<string, unknown>, parent: PostRow) => Promise<PostRow>;

/** The peer id the service reviewer acts as: the agent id of the service root key (stable). */
export function reviewerPeerId(ctx: Pick<RelayContext, 'serviceKeys'>): string {
  return peerIdHexOf(fromHex(ctx.serviceKeys.rootKey));
}

function isDecisionKind(kind: string): kind is 'go' | 'veto' {
  return kind === 'go' || kind === 'veto';
}

async function textOf(ctx: RelayContext, postId: string): Promise<string> {
  return (await ctx.store.posts.byPostId(postId))?.body ?? '';
}

/** Before the lock: read the texts the reviewer compares. Undefined for a post that is neither. */
export async function prepareOracle(ctx: RelayContext, space: SpaceRow, p: PreparedPost): Promise<OraclePrep | undefined> {
  if (!space.oracle) return undefined;
  const { kind, reply_to } = p.input;
  if (isDecisionKind(kind) && reply_to !== undefined) return { kind: 'decision' };
  if (p.input.retracts !== undefined && kind !== 'version') return { kind: 'retraction' };
  if (kind !== 'version') return undefined;
  const proposed = analyseText(p.input.body ?? '');
  // The current version as it stands now; under the lock it is used only if still current.
  const now = space.serviceReviewer ? await ctx.store.oracle.current(space.id) : undefined;
  return { kind: 'version', proposed, current: now === undefined ? null : { postId: now.postId, text: analyseText(await textOf(ctx, now.postId)) } };
}

/** Under the lock, before anything is written: the refusals. */
export async function checkOracle(
  ctx: RelayContext,
  space: SpaceRow,
  author: string,
  role: SpaceRole,
  registeredAt: number,
  p: PreparedPost,
  prep: OraclePrep,
  parent: PostRow | undefined,
  now: number,
): Promise<OraclePlan | undefined> {
  const { oracle } = ctx.store;
  if (prep.kind === 'retraction') {
    // The target is the author's own post of this SPACE (checked before); only a waiting
    // proposal changes state.
    const proposal = p.input.retracts === undefined ? undefined : await oracle.version(p.input.retracts);
    return proposal?.state === 'waiting' ? { kind: 'retraction', proposal } : undefined;
  }
  if (prep.kind === 'decision') {
    const proposal = parent === undefined ? undefined : await oracle.version(parent.postId);
    if (proposal === undefined) return undefined; // a go/veto replying to a post that is no version: an ordinary reply
    if (!canDecideProposal(role)) {
      throw new SvcError('CONTROL_DENIED', `a ${p.input.kind} on a proposal is for the owner, an admin or the service reviewer`);
    }
    if (proposal.state !== 'waiting') throw new SvcError('PROPOSAL_DECIDED', `the proposal is ${proposal.state}`);
    if (p.input.kind === 'veto' && (p.input.body ?? '').trim() === '') {
      throw new SvcError('INVALID_REQUEST', 'body: a veto gives its reason');
    }
    return { kind: 'decision', proposal, go: p.input.kind === 'go' };
  }
  const current = await oracle.current(space.id);
  const supersedes = p.input.supersedes;
  if (current === undefined && supersedes !== undefined) {
    throw new SvcError('VERSION_CHANGED', 'no version is current yet: the first version has no supersedes');
  }
  if (current !== undefined && supersedes !== current.postId) throw new SvcError('VERSION_CHANGED', current.postId);
  const decider = canDecideProposal(role);
  if (!decider) await checkProposalLimits(ctx, space, author, registeredAt, now);
  return { kind: 'version', decider, current, prep };
}

/** Limits "oracle": 3 waiting per KEY and 100 per SPACE in one oracle; 30 a day per KEY (5 on its first day). */
async function checkProposalLimits(ctx: RelayContext, space: SpaceRow, author: string, registeredAt: number, now: number): Promise<void> {
  const { oracle } = ctx.store;
  if (await oracle.waitingCount(space.id, author) >= ORACLE_LIMITS.waitingPerKey) {
    throw new SvcError('PROPOSAL_LIMIT', `yours: ${ORACLE_LIMITS.waitingPerKey} waiting in this SPACE`);
  }
  if (await oracle.waitingCount(space.id) >= ORACLE_LIMITS.waitingPerSpace) {
    throw new SvcError('PROPOSAL_LIMIT', `this SPACE: ${ORACLE_LIMITS.waitingPerSpace} waiting`);
  }
  const firstDay = now - registeredAt < DAY_MS;
  const perDay = firstDay ? ORACLE_LIMITS.proposalsFirstDay : ORACLE_LIMITS.proposalsPerDay;
  const made = await oracle.proposedSince(author, now - DAY_MS);
  if (made.count >= perDay) {
    const wait = Math.max(1, Math.ceil(((made.oldest ?? now) + DAY_MS - now) / 1000));
    throw new SvcError('PROPOSAL_LIMIT', `yours: ${perDay} proposals a day${firstDay ? ' on a KEY\'s first day' : ''}`, wait);
  }
}

/** Under the lock, after the post is stored: state, the reviewer, deliveries. */
export async function applyOracle(ctx: RelayContext, space: SpaceRow, plan: OraclePlan, post: PostRow, servicePost: ServicePostWriter, now: number): Promise<OracleAnswer> {
  const { oracle } = ctx.store;
  if (plan.kind === 'retraction') {
    await oracle.decline(plan.proposal.postId, { kind: 'veto', by: post.author, reason: RETRACTED_REASON, postId: post.postId, at: now }, now);
    return { decided: plan.proposal.postId, state: 'declined' };
  }
  if (plan.kind === 'decision') {
    const decision: VersionDecision = {
      kind: plan.go ? 'go' : 'veto',
      by: post.author,
      reason: plan.go ? null : post.body,
      postId: post.postId,
      at: now,
    };
    if (plan.go) {
      await makeCurrent(ctx, space, plan.proposal, decision, now);
      return { decided: plan.proposal.postId, state: 'current' };
    }
    await oracle.decline(plan.proposal.postId, decision, now);
    return { decided: plan.proposal.postId, state: 'declined' };
  }
  await oracle.insert({
    postRowId: post.rowId,
    spaceRowId: space.id,
    postId: post.postId,
    seq: post.seq,
    author: post.author,
    supersedes: post.supersedes,
    state: 'waiting',
    proposed: !plan.decider,
    createdAt: now,
  });
  const version = (await oracle.version(post.postId))!;
  if (plan.decider) {
    await makeCurrent(ctx, space, version, null, now);
    return { state: 'current', current: post.postId };
  }
  const current = plan.current?.postId ?? null;
  if (space.serviceReviewer) {
    const declined = await reviewProposal(ctx, space, plan, post, servicePost, now);
    if (declined !== undefined) return { state: 'declined', current, reason: declined };
  }
  const deciders = [space.owner, ...await oracle.firstAdmins(space.id, REQUEST_NOTICE_ADMINS)];
  await deliverEach(ctx, post.author, deciders, 'proposal', post.postId, now);
  return { state: 'waiting', current };
}

/** The service reviewer on a proposal just stored: the veto's reason when it breaks a rule. */
async function reviewProposal(
  ctx: RelayContext,
  space: SpaceRow,
  plan: Extract<OraclePlan, { kind: 'version' }>,
  post: PostRow,
  servicePost: ServicePostWriter,
  now: number,
): Promise<string | undefined> {
  const { prep, current } = plan;
  const currentText =
    current === undefined ? null : prep.current?.postId === current.postId ? prep.current.text : analyseText(await textOf(ctx, current.postId));
  const breaks = await review({
    current: currentText,
    proposed: prep.proposed,
    summary: post.title,
    spaceExists: async (name) => await ctx.store.spaces.byName(name) !== undefined,
  });
  if (breaks.length === 0) return undefined;
  const reason = vetoReason(breaks);
  const reviewer = await ctx.store.keys.ensure(reviewerPeerId(ctx), ctx.serviceKeys.rootKey, now);
  const veto = await servicePost(reviewer, { kind: 'veto', reply_to: post.postId, body: reason }, post);
  await ctx.store.oracle.decline(post.postId, { kind: 'veto', by: reviewer.peerId, reason, postId: veto.postId, at: now }, now);
  return reason;
}

/** `version` becomes current; out of date and changed notices follow. */
async function makeCurrent(ctx: RelayContext, space: SpaceRow, version: VersionRow, decision: VersionDecision | null, now: number): Promise<void> {
  const made = await ctx.store.oracle.makeCurrent(space.id, version.postId, decision, now);
  // links.list shows the links of current texts only: re-indexed in this same transaction.
  await ctx.store.oracleLinks.indexLinks(space.id, version.postId);
  const actor = decision?.by ?? version.author;
  for (const overtaken of made.outOfDate) {
    if (await mayNotify(ctx, actor, overtaken.author)) await ctx.store.mailbox.deliver(overtaken.author, 'out_of_date', { postId: overtaken.postId }, now);
  }
  const watchers = (await ctx.store.oracle.watchers(space.id)).filter((peer) => peer !== version.author && peer !== actor);
  await deliverEach(ctx, actor, watchers, 'changed', version.postId, now);
}

/** One row per KEY (distinct), each past the KEY-to-KEY notice limits, about `postId`. */
async function deliverEach(ctx: RelayContext, from: string, peers: readonly string[], reason: MailboxReason, postId: string, now: number): Promise<void> {
  const told: string[] = [];
  for (const peer of new Set(peers)) if (peer !== from && await mayNotify(ctx, from, peer)) told.push(peer);
  await ctx.store.mailbox.deliverEach(
    told.map((peer) => ({ peer, reason })),
    { postId },
    now,
  );
}

/** A replay's `oracle`: the version or decision as it stands now. */
export async function replayedOracle(ctx: RelayContext, space: SpaceRow, post: PostRow): Promise<OracleAnswer | undefined> {
  if (!space.oracle) return undefined;
  const { oracle } = ctx.store;
  if (post.kind === 'version') {
    const v = await oracle.version(post.postId);
    if (v === undefined) return undefined;
    return { state: v.state, current: (await oracle.current(space.id))?.postId ?? null };
  }
  // A go/veto decides the proposal it replies to; a retraction withdraws the one it retracts.
  for (const target of [isDecisionKind(post.kind) ? post.replyTo : null, post.retracts]) {
    const v = target === null ? undefined : await oracle.version(target);
    if (v !== undefined && v.decision?.postId === post.postId) return { decided: v.postId, state: v.state };
  }
  return undefined;
}
