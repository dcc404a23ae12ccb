/**
 * The roles matrix (spec/1-concepts.md "Roles matrix") as pure functions: the one place that
 * says who may do what in a SPACE. No database, no clock; callers read the roles (inside their
 * write transaction) and ask here.
 *
 * Ranks: owner 5 > admin 4 > coordinator 3 > writer 2 > reader 1 > no role 0.
 * The governing rule: "the actor ranks coordinator or above and touches only a member whose
 * current and new rank are strictly below its own; nobody changes their own role". A
 * coordinator touches only those it brought in. No decision reads a tag.
 *
 * `check*` functions throw SvcError (CONTROL_DENIED and friends) with a detail naming the rule;
 * `can*` functions answer a boolean or a small verdict.
 */
import { SvcError, waitWords } from '../shared/errors.js';
import { ROLE_RANK, type RankedRole, type Role } from '../shared/vocabulary.js';

/** A KEY's standing in a SPACE: a role, `owner`, or null for no role. */
export type SpaceRole = RankedRole | null;

/** The SPACE fields policy reads. */
export interface PolicySpace {
  visibility: 'private' | 'public' | 'sealed';
  oracle: boolean;
  joinPolicy: 'request' | 'invite' | 'open';
  status: 'active' | 'closed';
}

/**
 * How long a KEY must have been registered before it creates a public or oracle SPACE
 * (KEY_TOO_NEW), by default. The spec leaves the wait to capabilities; the operator sets it
 * (relay/config.ts `publicSpaceKeyAge`), shown as `limits.public_space_key_age_seconds`.
 */
export const PUBLIC_SPACE_KEY_AGE_SECONDS = 24 * 60 * 60;

export function rankOf(role: SpaceRole): number {
  return role === null ? 0 : ROLE_RANK[role];
}

/** Whether `role` is a member's or the owner's (anything but no role). */
export function isInside(role: SpaceRole): boolean {
  return role !== null;
}

// ---- reading ------------------------------------------------------------------------------

/** Profile and contacts: anyone, private and sealed SPACES included. */
export function canReadProfile(): boolean {
  return true;
}

/** Posts and head_seq: members and owner; anyone in a public SPACE. */
export function canReadPosts(space: Pick<PolicySpace, 'visibility'>, role: SpaceRole): boolean {
  return space.visibility === 'public' || isInside(role);
}

/** Members list and the event log: members and owner only, public SPACES included. */
export function canReadMembers(role: SpaceRole): boolean {
  return isInside(role);
}

export function canReadEvents(role: SpaceRole): boolean {
  return isInside(role);
}

// ---- posting ------------------------------------------------------------------------------

/**
 * Who may POST: writer and above always; a reader, and a KEY with no role, only in an open or
 * oracle SPACE. `roleless` marks the second case (its posts carry `no_role`, its `to` may name
 * the owner alone, and the roleless-post limits apply). Blocks are checked apart.
 */
export function canPost(space: Pick<PolicySpace, 'joinPolicy' | 'oracle'>, role: SpaceRole): 'member' | 'roleless' | false {
  if (rankOf(role) >= ROLE_RANK.writer) return 'member';
  const openToAll = space.joinPolicy === 'open' || space.oracle;
  if (!openToAll) return false;
  return role === null ? 'roleless' : 'member';
}

// ---- governing members --------------------------------------------------------------------

export interface GovernTarget {
  /** The target's current role (null when it is not a member yet). */
  current: SpaceRole;
  /** The role it would hold (null when it is being removed). */
  next: SpaceRole;
  /** Whether the actor is the one that brought the target in (only matters for coordinators). */
  broughtInByActor: boolean;
  /** Whether actor and target are the same KEY. */
  self: boolean;
}

/** Why `actor` may not admit, change or remove `target`, or undefined when it may. */
export function governDenial(actor: SpaceRole, target: GovernTarget): string | undefined {
  const a = rankOf(actor);
  if (target.self) return 'nobody changes their own role';
  if (a < ROLE_RANK.coordinator) return 'governing members needs coordinator or above';
  if (rankOf(target.current) >= a) return `the member's current role ${target.current} is not below yours (${actor})`;
  if (rankOf(target.next) >= a) return `the role ${target.next} is not below yours (${actor})`;
  if (actor === 'coordinator' && target.current !== null && !target.broughtInByActor) {
    return 'a coordinator changes or removes only members it brought in';
  }
  return undefined;
}

export function canGovern(actor: SpaceRole, target: GovernTarget): boolean {
  return governDenial(actor, target) === undefined;
}

/** Throws CONTROL_DENIED unless `actor` may admit, change or remove `target`. */
export function checkGovern(actor: SpaceRole, target: GovernTarget): void {
  const why = governDenial(actor, target);
  if (why !== undefined) throw new SvcError('CONTROL_DENIED', why);
}

/** Admitting by link, by peer id or by deciding a request: coordinator or above, role below. */
export function canAdmit(actor: SpaceRole, role: Role): boolean {
  return rankOf(actor) >= ROLE_RANK.coordinator && ROLE_RANK[role] < rankOf(actor);
}

/** Making an invite link for `role` (admin never comes by link): the same as admitting. */
export function canMakeLink(actor: SpaceRole, role: Role): boolean {
  return role !== 'admin' && canAdmit(actor, role);
}

/** Listing and revoking links: every member its own; admin and owner all. */
export function linkScope(actor: SpaceRole): 'all' | 'own' | 'none' {
  if (rankOf(actor) >= ROLE_RANK.admin) return 'all';
  return isInside(actor) ? 'own' : 'none';
}

/** Seeing and deciding join requests: coordinator or above. */
export function canDecideRequests(actor: SpaceRole): boolean {
  return rankOf(actor) >= ROLE_RANK.coordinator;
}

// ---- blocks and hiding --------------------------------------------------------------------

/**
 * Blocking a KEY from posting and asking, or hiding its POST: the owner over anyone else; an
 * admin over a KEY ranked below it (members below admin and KEYS with no role).
 */
export function canModerate(actor: SpaceRole, target: SpaceRole): boolean {
  if (actor === 'owner') return target !== 'owner';
  if (actor === 'admin') return rankOf(target) < ROLE_RANK.admin;
  return false;
}

/** Reading the block list: whoever may block (admin and owner). */
export function canListBlocks(actor: SpaceRole): boolean {
  return rankOf(actor) >= ROLE_RANK.admin;
}

export function checkModerate(actor: SpaceRole, target: SpaceRole, self: boolean): void {
  if (self) throw new SvcError('CONTROL_DENIED', 'nobody blocks or hides themselves');
  if (canModerate(actor, target)) return;
  if (rankOf(actor) < ROLE_RANK.admin) throw new SvcError('CONTROL_DENIED', 'blocking and hiding needs admin or owner');
  throw new SvcError('CONTROL_DENIED', `an admin acts only on KEYS ranked below it; this one is ${target}`);
}

// ---- the SPACE itself ---------------------------------------------------------------------

/** Title, description, categories, join policy, signed_only, service_reviewer: owner only. */
export function canUpdateProfile(actor: SpaceRole): boolean {
  return actor === 'owner';
}

/** task_confirmations, task_confirmers, task_claim_hours: owner or admin. */
export function canUpdateTaskSettings(actor: SpaceRole): boolean {
  return rankOf(actor) >= ROLE_RANK.admin;
}

/** Leaving: any member; the owner only by handing the SPACE over. */
export function canLeave(role: SpaceRole): boolean {
  return role !== null && role !== 'owner';
}

/** Handing over one's own role (the owner hands over the SPACE). */
export function canHandOver(role: SpaceRole): boolean {
  return role !== null;
}

/** Deciding an oracle proposal with go/veto: owner or admin (the service reviewer apart). */
export function canDecideProposal(role: SpaceRole): boolean {
  return rankOf(role) >= ROLE_RANK.admin;
}

// ---- tasks (spec "Task", states) ----------------------------------------------------------

/** Adding, taking and finishing tasks: writer or above. */
export function canWorkTasks(role: SpaceRole): boolean {
  return rankOf(role) >= ROLE_RANK.writer;
}

/** Confirming or rejecting another's task, per the SPACE's `task_confirmers`. */
export function canCheckTasks(confirmers: 'members' | 'coordinators', role: SpaceRole): boolean {
  return rankOf(role) >= (confirmers === 'coordinators' ? ROLE_RANK.coordinator : ROLE_RANK.writer);
}

/** Changing a task someone else added, and retiring any task: coordinator or above. */
export function canGovernTasks(role: SpaceRole): boolean {
  return rankOf(role) >= ROLE_RANK.coordinator;
}

/** Releasing another member's claim: owner or admin. */
export function canReleaseOthersTask(role: SpaceRole): boolean {
  return rankOf(role) >= ROLE_RANK.admin;
}

// ---- creation and settings rules ----------------------------------------------------------

/** `open` only for a public work space (spec "Space"). */
export function joinPolicyAllowed(space: { visibility: PolicySpace['visibility']; oracle: boolean }, policy: PolicySpace['joinPolicy']): boolean {
  return policy !== 'open' || (space.visibility === 'public' && !space.oracle);
}

/** Public and oracle SPACES need 1 to 3 categories; private and sealed may have none. */
export function categoriesRequired(space: { visibility: PolicySpace['visibility']; oracle: boolean }): boolean {
  return space.visibility === 'public' || space.oracle;
}

/** Default join policy: request for a public SPACE, invite for private and sealed. */
export function defaultJoinPolicy(visibility: PolicySpace['visibility']): PolicySpace['joinPolicy'] {
  return visibility === 'public' ? 'request' : 'invite';
}

/** Default task confirmations: 2 for public, 0 for private or sealed (spec "Space"). */
export function defaultTaskConfirmations(visibility: PolicySpace['visibility']): number {
  return visibility === 'public' ? 2 : 0;
}

/**
 * Whether a KEY registered at `registeredAt` may create a public SPACE at `now` (ms), with a
 * wait of `ageSeconds` (0: no wait).
 */
export function oldEnoughForPublic(registeredAt: number, now: number, ageSeconds: number = PUBLIC_SPACE_KEY_AGE_SECONDS): boolean {
  return now - registeredAt >= ageSeconds * 1000;
}

/**
 * KEY_TOO_NEW unless the KEY is old enough to create a public or oracle SPACE (spaces.create,
 * oracle.fork). `ageSeconds` is the relay's setting (relay/config.ts `publicSpaceKeyAge`).
 */
export function checkPublicSpaceKeyAge(ageSeconds: number, registeredAt: number, now: number): void {
  if (oldEnoughForPublic(registeredAt, now, ageSeconds)) return;
  const wait = Math.max(1, Math.ceil((registeredAt + ageSeconds * 1000 - now) / 1000));
  // Waiting is the fix, so the wait left is also `retry_after` (api-notes §1); the operator's setting is named for whoever runs the relay.
  throw new SvcError(
    'KEY_TOO_NEW',
    `a public or oracle SPACE needs a KEY registered ${ageSeconds} seconds ago; yours is ready in ${wait} seconds (${waitWords(wait)}); the relay's operator sets the wait with --public-space-key-age`,
    wait,
  );
}

