/**
 * The refusals of each operation as spec/2-endpoints.md lists them ("refusals" column; a
 * document operation "answers the common refusals only"), plus the common ones the catalogue's
 * preamble gives every operation, every token reader and every write. /openapi.json shows them
 * per operation with their statuses from the error catalogue.
 *
 * The table is the spec's column, row by row ("same as approve" written out);
 * test/relay/spec-endpoints-sweep.test.ts reads the spec and holds the table equal to it.
 */
import type { ErrorCode } from '../../shared/errors.js';
import type { AuthMode } from '../http/auth.js';

/** Every operation can meet these (spec/2-endpoints.md, before the tables). */
export const COMMON_REFUSALS: readonly ErrorCode[] = ['INVALID_REQUEST', 'TOO_LARGE', 'RATE_LIMITED', 'BUSY', 'INTERNAL'];

/** An operation that reads a token can meet these; TOKEN_MISSING only where a token is required. */
export const TOKEN_REFUSALS: readonly ErrorCode[] = ['TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'KEY_BLOCKED'];

/** Every write can meet these (the scope one only where a token is read: a read-only app token). */
export const WRITE_REFUSALS: readonly ErrorCode[] = ['SERVICE_READ_ONLY', 'INSUFFICIENT_SCOPE'];

/**
 * Operations that refuse in OAuth's own shape `{error, error_description}` (spec/3-errors.md
 * "Envelope", exceptions), with the OAuth error names each uses; a limit ahead of them still
 * answers in the service's envelope.
 */
export const OAUTH_FORM_ERRORS: Readonly<Record<string, readonly string[]>> = {
  'oauth.register': ['invalid_request', 'invalid_client_metadata', 'invalid_redirect_uri', 'temporarily_unavailable'],
  'oauth.token': ['unsupported_grant_type', 'invalid_request', 'invalid_grant', 'invalid_target', 'invalid_client', 'temporarily_unavailable'],
};

/** spec/2-endpoints.md, the "refusals" column of every row, in the spec's order. */
/**
 * Operations of the public service's later API versions that svc serves and
 * spec/2-endpoints.md does not list yet; test/relay/spec-endpoints-sweep.test.ts holds every
 * other row equal to the spec (the later codes of shared/errors-catalogue.ts AFTER_SPEC_CODES
 * left aside) and these to operations the spec lacks.
 */
export const AFTER_SPEC_OPERATIONS: readonly string[] = ['tasks.get', 'tasks.change', 'tasks.retire', 'findings.list', 'findings.get'];

/**
 * Refusals the later API versions add to operations the spec lists (`tasks.next` naming a task
 * by its number, `tasks.done` of a task with numbered attempts); test/relay/spec-endpoints-sweep.test.ts leaves them aside as it holds each
 * row to the spec.
 */
export const AFTER_SPEC_REFUSALS: Readonly<Record<string, readonly ErrorCode[]>> = {
  'tasks.next': ['TASK_NOT_FOUND', 'TASK_NOT_OPEN', 'TASK_WAITING'],
  // A task added with numbered attempts: five a cycle, none by a KEY that checked one, none
  // naming a result a reject set aside.
  'tasks.done': ['TASK_LIMIT', 'TASK_ALREADY_CHECKED', 'TASK_NOT_DONE'],
};

export const OPERATION_REFUSALS: Readonly<Record<string, readonly ErrorCode[]>> = {
  // Documents and service state: the common refusals only.
  guide: [],
  reference: [],
  llms: [],
  'tools.sign_post': [],
  'tools.verify_post': [],
  'tools.bridge': [],
  'tools.sealed': [],
  'sealed.spec': [],
  openapi: [],
  skill: [],
  'plugins.marketplace': [],
  'plugins.archive': [],
  robots: [],
  health: [],
  'oracle.reviewer_rules': [],
  capabilities: [],
  'recovery.list': [],
  // Keys, tokens, passkeys.
  'keys.challenge': ['KEY_REJECTED'],
  'keys.verify': ['KEY_REJECTED', 'CHALLENGE_INVALID', 'CHALLENGE_EXPIRED', 'SIGNATURE_INVALID', 'KEY_BLOCKED'],
  'passkeys.challenge': ['PASSKEYS_UNAVAILABLE'],
  'passkeys.verify': ['PASSKEYS_UNAVAILABLE', 'PASSKEY_TAKEN', 'PASSKEY_NOT_REGISTERED', 'CHALLENGE_INVALID', 'CHALLENGE_EXPIRED', 'PASSKEY_INVALID', 'KEY_BLOCKED'],
  me: [],
  'me.encryption_key': ['ENCRYPTION_KEY_INVALID', 'PASSKEYS_UNAVAILABLE', 'ENCRYPTION_KEY_TAKEN', 'ENCRYPTION_KEY_EXISTS'],
  'tokens.list': [],
  'tokens.revoke': [],
  'tokens.revoke_one': ['TOKEN_NOT_FOUND'],
  'tokens.revoke_all': [],
  'peers.get': ['PEER_NOT_FOUND'],
  // App sign-in (OAuth); register, authorize and token answer in OAuth's own forms.
  'oauth.resource': ['OAUTH_UNAVAILABLE'],
  'oauth.metadata': ['OAUTH_UNAVAILABLE'],
  'oauth.register': [],
  'oauth.authorize': [],
  'oauth.token': [],
  'authorizations.get': ['OAUTH_UNAVAILABLE', 'AUTHORIZATION_NOT_FOUND'],
  'authorizations.approve': ['OAUTH_UNAVAILABLE', 'AUTHORIZATION_NOT_FOUND', 'AUTHORIZATION_DECIDED', 'AUTHORIZATION_EXPIRED', 'PEER_NOT_FOUND'],
  'authorizations.decline': ['OAUTH_UNAVAILABLE', 'AUTHORIZATION_NOT_FOUND', 'AUTHORIZATION_DECIDED', 'AUTHORIZATION_EXPIRED', 'PEER_NOT_FOUND'],
  // SPACES, categories, members.
  'spaces.list': ['INVALID_CATEGORY'],
  'categories.list': ['CATEGORY_NOT_FOUND'],
  'categories.get': ['CATEGORY_NOT_FOUND'],
  'spaces.create': ['NAME_RESERVED', 'INVALID_CATEGORY', 'KEY_TOO_NEW', 'PEER_NOT_REGISTERED', 'SPACE_LIMIT', 'SPACE_NAME_TAKEN', 'ENCRYPTION_KEY_MISSING'],
  'spaces.get': ['SPACE_NOT_FOUND'],
  'spaces.update': ['INVALID_CATEGORY', 'SPACE_NOT_FOUND', 'CONTROL_DENIED', 'ORACLE_HAS_NO_TASKS', 'SPACE_CLOSED'],
  'members.list': ['INVALID_ROLE', 'SPACE_NOT_FOUND', 'READ_DENIED'],
  'members.set': ['INVALID_ROLE', 'INVALID_TAGS', 'TAG_RESERVED', 'SPACE_NOT_FOUND', 'CONTROL_DENIED', 'OWNER_IS_NOT_A_MEMBER', 'PEER_NOT_REGISTERED', 'MEMBER_LIMIT', 'SPACE_LIMIT', 'ADMIN_LIMIT', 'ENCRYPTION_KEY_MISSING', 'SPACE_CLOSED'],
  'members.revoke': ['SPACE_NOT_FOUND', 'CONTROL_DENIED', 'OWNER_IS_NOT_A_MEMBER', 'NOT_A_MEMBER', 'OWNER_CANNOT_LEAVE', 'SPACE_CLOSED'],
  'space_blocks.list': ['SPACE_NOT_FOUND', 'CONTROL_DENIED'],
  'space_blocks.set': ['SPACE_NOT_FOUND', 'CONTROL_DENIED', 'PEER_NOT_REGISTERED', 'SPACE_CLOSED'],
  'space_blocks.remove': ['SPACE_NOT_FOUND', 'CONTROL_DENIED', 'PEER_NOT_REGISTERED', 'SPACE_CLOSED'],
  'events.list': ['SPACE_NOT_FOUND', 'READ_DENIED', 'CURSOR_AHEAD'],
  // Invites, requests, joining, hand-over.
  'invites.create': ['INVALID_ROLE', 'INVALID_TAGS', 'TAG_RESERVED', 'SPACE_NOT_FOUND', 'CONTROL_DENIED', 'INVITE_LIMIT', 'SEALED_NO_LINKS', 'SPACE_CLOSED'],
  'invites.list': ['SPACE_NOT_FOUND', 'CONTROL_DENIED'],
  'invites.revoke': ['INVITE_NOT_FOUND', 'SPACE_CLOSED'],
  'invites.look': ['INVITE_INVALID', 'SPACE_NOT_FOUND'],
  'invites.remove': ['INVITE_NOT_FOUND', 'SPACE_CLOSED'],
  'requests.list': ['SPACE_NOT_FOUND', 'CONTROL_DENIED'],
  'requests.approve': ['REQUEST_NOT_FOUND', 'INVALID_ROLE', 'INVALID_TAGS', 'TAG_RESERVED', 'REQUEST_NOT_PENDING', 'REQUEST_EXPIRED', 'CONTROL_DENIED', 'MEMBER_LIMIT', 'SPACE_LIMIT', 'ADMIN_LIMIT', 'ENCRYPTION_KEY_MISSING', 'SPACE_CLOSED'],
  'requests.decline': ['REQUEST_NOT_FOUND', 'REQUEST_NOT_PENDING', 'REQUEST_EXPIRED', 'SPACE_CLOSED'],
  'requests.withdraw': ['REQUEST_NOT_FOUND', 'REQUEST_NOT_PENDING', 'SPACE_CLOSED'],
  join: ['SPACE_NOT_FOUND', 'INVITE_INVALID', 'INVITE_REVOKED', 'INVITE_EXPIRED', 'INVITE_EXHAUSTED', 'CONTROL_DENIED', 'SPACE_LIMIT', 'MEMBER_LIMIT', 'JOIN_BY_INVITE_ONLY', 'WRITE_BLOCKED', 'REQUEST_PENDING', 'ENCRYPTION_KEY_MISSING', 'SPACE_CLOSED'],
  'join.link': ['SPACE_NOT_FOUND', 'INVITE_INVALID', 'INVITE_REVOKED', 'INVITE_EXPIRED', 'INVITE_EXHAUSTED', 'CONTROL_DENIED', 'SPACE_LIMIT', 'MEMBER_LIMIT', 'SPACE_CLOSED'],
  'hand_over.create': ['SPACE_NOT_FOUND', 'CONTROL_DENIED', 'PEER_NOT_REGISTERED', 'HAND_OVER_UNREACHABLE', 'INVITE_LIMIT', 'SEALED_NO_LINKS', 'SPACE_CLOSED'],
  'hand_over.accept': ['INVITE_NOT_FOUND', 'INVITE_REVOKED', 'INVITE_EXHAUSTED', 'INVITE_EXPIRED', 'CONTROL_DENIED', 'SPACE_LIMIT', 'ENCRYPTION_KEY_MISSING', 'SEALED_SUCCESSOR_NOT_KEEPER', 'SEALED_NEEDS_LOCK', 'SPACE_CLOSED'],
  'hand_over.decline': ['INVITE_NOT_FOUND', 'SPACE_CLOSED'],
  // Sealed SPACES.
  'sealed.status': ['SPACE_NOT_FOUND', 'READ_DENIED', 'SPACE_NOT_SEALED'],
  'sealed.chain': ['SPACE_NOT_FOUND', 'READ_DENIED', 'SPACE_NOT_SEALED'],
  'sealed.unlocked': ['SPACE_NOT_FOUND', 'READ_DENIED', 'SPACE_NOT_SEALED'],
  'sealed.requests': ['SPACE_NOT_FOUND', 'READ_DENIED', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER'],
  'sealed.keepers': ['SPACE_NOT_FOUND', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER', 'SEALED_SIGNATURE_INVALID', 'PASSKEYS_UNAVAILABLE', 'KEEPER_LIST_STALE', 'SPACE_CLOSED'],
  'sealed.stamp': ['PEER_NOT_FOUND', 'SEALED_SIGNATURE_INVALID', 'PASSKEYS_UNAVAILABLE', 'SPACE_NOT_FOUND', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER', 'SPACE_CLOSED'],
  'sealed.locks': ['SPACE_NOT_FOUND', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER', 'KEY_CHANGED', 'LOCK_RECIPIENT_NOT_A_MEMBER', 'LOCK_RECIPIENT_NOT_VOUCHED', 'SPACE_CLOSED'],
  'sealed.stage': ['SPACE_NOT_FOUND', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER', 'KEY_CHANGE_STAGED', 'KEY_CHANGED', 'SPACE_CLOSED'],
  'sealed.activate': ['SPACE_NOT_FOUND', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER', 'KEY_CHANGED', 'LOCKS_MISSING', 'SPACE_CLOSED'],
  'sealed.abandon': ['SPACE_NOT_FOUND', 'SPACE_NOT_SEALED', 'NOT_A_KEEPER', 'KEY_CHANGED', 'SPACE_CLOSED'],
  // Posts, reading, SEEK, proofs.
  'posts.append': [
    'INVALID_KIND', 'SCHEME_RESERVED', 'SEALED_HEADER_MISMATCH', 'SPACE_NOT_FOUND', 'POST_SIGNATURE_INVALID', 'PASSKEYS_UNAVAILABLE', 'WRITE_BLOCKED',
    'WRITE_DENIED', 'NOT_AN_ORACLE', 'SPACE_SEALED', 'SPACE_NOT_SEALED', 'VERSION_CHANGED', 'IDEMPOTENCY_CONFLICT', 'SIGNATURE_REQUIRED', 'KEY_CHANGED',
    'PROPOSAL_LIMIT', 'CONTROL_DENIED', 'PROPOSAL_DECIDED', 'RECIPIENT_NOT_REGISTERED', 'RECIPIENT_NOT_A_MEMBER', 'REPLY_TARGET_NOT_FOUND',
    'REVISION_TARGET_NOT_FOUND', 'CHAIN_BROKEN', 'OBJECT_MISMATCH', 'SPACE_CLOSED', 'SOURCE_NOT_FOUND',
  ],
  'posts.read': ['SPACE_NOT_FOUND', 'READ_DENIED', 'CURSOR_AHEAD', 'HISTORY_ROLLBACK'],
  'posts.standing': ['SPACE_NOT_FOUND', 'READ_DENIED'],
  'posts.batch': [],
  'posts.get': ['POST_NOT_FOUND'],
  'posts.hide': ['POST_NOT_FOUND', 'CONTROL_DENIED', 'SPACE_CLOSED'],
  'posts.unhide': ['POST_NOT_FOUND', 'CONTROL_DENIED', 'SPACE_CLOSED'],
  'posts.proof': ['SPACE_NOT_FOUND', 'READ_DENIED', 'POST_NOT_FOUND', 'CHECKPOINT_INVALID'],
  'checkpoints.list': ['SPACE_NOT_FOUND', 'READ_DENIED'],
  seek: ['INVALID_CATEGORY', 'SPACE_NOT_FOUND', 'READ_DENIED'],
  // Oracle spaces.
  'oracle.document': ['SPACE_NOT_FOUND', 'READ_DENIED', 'NOT_AN_ORACLE', 'POST_NOT_FOUND'],
  'oracle.versions': ['SPACE_NOT_FOUND', 'READ_DENIED', 'NOT_AN_ORACLE'],
  'oracle.fork': ['NAME_RESERVED', 'KEY_TOO_NEW', 'SPACE_NOT_FOUND', 'NOT_AN_ORACLE', 'INVALID_CATEGORY', 'PEER_NOT_REGISTERED', 'SPACE_LIMIT', 'SPACE_NAME_TAKEN'],
  'links.list': ['SPACE_NOT_FOUND', 'READ_DENIED'],
  'watches.set': ['SPACE_NOT_FOUND', 'NOT_AN_ORACLE', 'WATCH_LIMIT', 'SPACE_CLOSED'],
  'watches.remove': ['SPACE_NOT_FOUND', 'NOT_AN_ORACLE'],
  'watches.list': [],
  // Tasks.
  'tasks.list': ['SPACE_NOT_FOUND', 'READ_DENIED', 'ORACLE_HAS_NO_TASKS'],
  'tasks.add': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_AFTER_INVALID', 'TASK_LIMIT'],
  'tasks.next': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_OPEN', 'TASK_WAITING'],
  'tasks.done': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_OPEN', 'TASK_NOT_CLAIMANT', 'TASK_POST_NOT_FOUND', 'TASK_WAITING', 'TASK_CHANGED', 'TASK_LIMIT', 'TASK_ALREADY_CHECKED', 'TASK_NOT_DONE'],
  'tasks.release': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_OPEN', 'TASK_NOT_CLAIMANT'],
  'tasks.confirm': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_DONE', 'TASK_SELF_CHECK', 'TASK_ALREADY_CHECKED', 'TASK_POST_NOT_FOUND', 'TASK_WAITING'],
  'tasks.reject': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_DONE', 'TASK_SELF_CHECK', 'TASK_ALREADY_CHECKED', 'TASK_POST_NOT_FOUND', 'TASK_WAITING'],
  // Tasks: reading one, changing and retiring (after API 0.1, as the public service's 0.4 has them).
  'tasks.get': ['SPACE_NOT_FOUND', 'READ_DENIED', 'ORACLE_HAS_NO_TASKS', 'TASK_NOT_FOUND'],
  'tasks.change': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_OPEN', 'TASK_CHANGED', 'TASK_AFTER_INVALID'],
  'tasks.retire': ['SPACE_NOT_FOUND', 'ORACLE_HAS_NO_TASKS', 'TASK_DENIED', 'WRITE_BLOCKED', 'SPACE_CLOSED', 'TASK_NOT_FOUND', 'TASK_NOT_OPEN'],
  // Findings (after API 0.1, as the public service's findings read has it).
  'findings.list': ['SPACE_NOT_FOUND', 'READ_DENIED'],
  'findings.get': ['POST_NOT_FOUND'],
  // Mailbox, messages, blocks.
  mailbox: [],
  'conversations.start': [
    'SEALED_HEADER_MISMATCH', 'MESSAGE_REQUEST_LIMIT', 'IDEMPOTENCY_CONFLICT', 'RECIPIENT_NOT_REGISTERED', 'SPACE_NOT_FOUND', 'MESSAGES_NOT_ACCEPTED',
    'BLOCKED_BY_YOU', 'ENCRYPTION_KEY_MISSING', 'SEALED_NEEDS_ACQUAINTANCE', 'SEALED_CONVERSATION_EXISTS', 'MESSAGE_REQUEST_WAITING',
  ],
  'conversations.list': [],
  'conversations.get': ['CONVERSATION_NOT_FOUND'],
  'messages.read': ['CONVERSATION_NOT_FOUND', 'CURSOR_AHEAD'],
  'messages.send': [
    'SEALED_HEADER_MISMATCH', 'CONVERSATION_NOT_FOUND', 'SPACE_NOT_FOUND', 'CONVERSATION_LEFT', 'IDEMPOTENCY_CONFLICT', 'CONVERSATION_SEALED',
    'CONVERSATION_NOT_SEALED', 'MESSAGE_NOT_FOUND', 'MESSAGES_NOT_ACCEPTED', 'BLOCKED_BY_YOU', 'MESSAGE_REQUEST_WAITING', 'RECIPIENT_NOT_REGISTERED',
  ],
  'conversations.accept': ['CONVERSATION_NOT_FOUND', 'CONVERSATION_LEFT'],
  'conversations.decline': ['CONVERSATION_NOT_FOUND', 'NOT_A_REQUEST'],
  'conversations.leave': ['CONVERSATION_NOT_FOUND', 'PAIR_CANNOT_BE_LEFT'],
  'conversations.clear': ['CONVERSATION_NOT_FOUND'],
  'conversations.mark_read': ['CONVERSATION_NOT_FOUND'],
  'blocks.list': [],
  'blocks.set': ['PEER_NOT_FOUND', 'BLOCK_LIMIT'],
  'blocks.remove': ['PEER_NOT_FOUND'],
  'messages.set_retention': [],
};

/**
 * Every code an operation can meet, without repeats: the common ones, the token ones where a
 * token is read, the write ones for a write, then the spec's list and any the route adds.
 */
export function refusalsOf(op: { name: string; method: string; auth: AuthMode; refusals?: readonly ErrorCode[] | undefined }): ErrorCode[] {
  const codes = [...COMMON_REFUSALS];
  if (op.auth === 'req') codes.push('TOKEN_MISSING');
  if (op.auth !== 'none') codes.push(...TOKEN_REFUSALS);
  if (op.method !== 'GET' && op.method !== 'HEAD') codes.push(...WRITE_REFUSALS.filter((c) => op.auth !== 'none' || c !== 'INSUFFICIENT_SCOPE'));
  codes.push(...(OPERATION_REFUSALS[op.name] ?? []), ...(op.refusals ?? []));
  return [...new Set(codes)];
}
