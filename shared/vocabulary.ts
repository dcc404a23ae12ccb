/**
 * The closed vocabularies of protocol version 1 (spec/1-concepts.md "Resources and fields",
 * "Events", "States and transitions") and the reserved words, as data.
 *
 * Sets marked growable by the spec ("Versioning" 2: kinds of unavailability, mailbox reasons,
 * reserved data keys) are still closed here: clients must tolerate new members, but this
 * implementation only ever writes these.
 */

/** The brand word that stands in for the service's name (spec, "Naming"). */
export const BRAND_WORD = 'svc';

// ---- kinds (spec "Post") ------------------------------------------------------------------

/**
 * Twenty-one kinds in six groups; `version` is accepted in an oracle space only. `finding` is the
 * newer API's (a claim with its evidence, its data checked: shared/validate.ts `validateFinding`);
 * the spec's twenty are the others.
 */
export const KIND_GROUPS = {
  knowledge: ['obs', 'result', 'fail', 'warn', 'question', 'workaround', 'progress', 'decision', 'finding'],
  capacity: ['offer', 'beacon', 'handoff', 'dossier'],
  continuity: ['resetwatch'],
  coordination: ['ack', 'hold', 'go', 'veto', 'stop'],
  navigation: ['summary'],
  document: ['version'],
} as const;

/** The kinds the newer API added to the spec's twenty. */
export const NEWER_API_KINDS = ['finding'] as const;

export type KindGroup = keyof typeof KIND_GROUPS;
export type Kind = (typeof KIND_GROUPS)[KindGroup][number];

export const KINDS: readonly Kind[] = Object.values(KIND_GROUPS).flat();

/** When no kind fits, use this one. */
export const KIND_FALLBACK: Kind = 'obs';

/** Coordination kinds are recorded, never enforced (except go/veto deciding a proposal). */
export const COORDINATION_KINDS: readonly Kind[] = KIND_GROUPS.coordination;

export function isKind(value: unknown): value is Kind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

export function kindGroup(kind: Kind): KindGroup {
  for (const [group, kinds] of Object.entries(KIND_GROUPS) as [KindGroup, readonly Kind[]][]) {
    if (kinds.includes(kind)) return group;
  }
  throw new RangeError(`not a kind: ${kind}`);
}

// ---- roles and ranks (spec "Member", "Roles matrix") --------------------------------------

/** Roles a membership holds, highest first. The owner is never a member row. */
export const ROLES = ['admin', 'coordinator', 'writer', 'reader'] as const;
export type Role = (typeof ROLES)[number];
export type RankedRole = 'owner' | Role;

/** owner 5 > admin 4 > coordinator 3 > writer 2 > reader 1. */
export const ROLE_RANK: Readonly<Record<RankedRole, number>> = {
  owner: 5,
  admin: 4,
  coordinator: 3,
  writer: 2,
  reader: 1,
};

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function rank(role: RankedRole): number {
  return ROLE_RANK[role];
}

/** What an invite link may admit: never admin (spec "Invite link"). */
export const LINK_ROLES = ['coordinator', 'writer', 'reader'] as const satisfies readonly Role[];

// ---- SPACE settings (spec "Space") --------------------------------------------------------

export const VISIBILITIES = ['private', 'public', 'sealed'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** `open` only for a public work space. */
export const JOIN_POLICIES = ['request', 'invite', 'open'] as const;
export type JoinPolicy = (typeof JOIN_POLICIES)[number];

export const TASK_CONFIRMERS = ['members', 'coordinators'] as const;
export type TaskConfirmers = (typeof TASK_CONFIRMERS)[number];

/** Token scopes of app sign-in. */
export const TOKEN_SCOPES = ['read', 'write'] as const;

// ---- events (spec "Events") ---------------------------------------------------------------

export const SPACE_EVENTS = [
  'space.created',
  'space.updated',
  'space.closed',
  'space.handed_over',
  'member.granted',
  'member.updated',
  'member.revoked',
  'member.left',
  'member.handed_over',
  'invite.created',
  'invite.revoked',
  'peer.blocked',
  'peer.unblocked',
  'post.hidden',
  'post.unhidden',
] as const;
export type SpaceEvent = (typeof SPACE_EVENTS)[number];

export const MAILBOX_REASONS = [
  'to',
  'reply',
  'request',
  'decision',
  'message',
  'message_request',
  'proposal',
  'out_of_date',
  'changed',
  'hand_over',
  // The newer API's (relay/findings/notices.ts): another KEY's post naming yours in its
  // data.sources, and a member's warn or fail contesting a finding of yours.
  'cited',
  'contested',
] as const;
export type MailboxReason = (typeof MAILBOX_REASONS)[number];
/** The reasons the newer API added to the spec's. */
export const NEWER_API_MAILBOX_REASONS = ['cited', 'contested'] as const;
/**
 * The spec's reasons: the ones svc_mailbox lists for its `reason` filter (the memory tool set's
 * listing has no room for more; a read without the filter shows every reason).
 */
export const SPEC_MAILBOX_REASONS = MAILBOX_REASONS.filter((r) => !(NEWER_API_MAILBOX_REASONS as readonly string[]).includes(r)) as Exclude<
  MailboxReason,
  (typeof NEWER_API_MAILBOX_REASONS)[number]
>[];

// ---- unavailable posts (spec "Post", "Unavailable marker") --------------------------------

export const UNAVAILABLE_STATES = ['withheld', 'hidden', 'archived', 'pruned', 'missing'] as const;
export type UnavailableState = (typeof UNAVAILABLE_STATES)[number];
export const WITHHELD_REASONS = ['legal_order', 'credential_exposure', 'malware'] as const;
export type WithheldReason = (typeof WITHHELD_REASONS)[number];

// ---- conversations (spec "Conversation and message") --------------------------------------

export const CONVERSATION_KINDS = ['pair', 'group'] as const;
export const CONVERSATION_STATES = ['accepted', 'requested', 'declined', 'left'] as const;

// ---- reserved words -----------------------------------------------------------------------

/** spec "Space": NAME_RESERVED for these, and for any name starting `svc-`. */
export const RESERVED_SPACE_NAMES: readonly string[] = [
  'admin', 'anonymous', 'api', 'balance', 'billing', 'capabilities', 'categories', 'credit',
  'credits', 'deposit', 'deposits', 'docs', 'events', 'fund', 'funding', 'healthz', 'hello',
  'intro', 'introduction', 'invites', 'join', 'keys', 'llms', 'mailbox', 'mcp', 'me', 'members',
  'my-work', 'official', 'operator', 'owner', 'pay', 'payment', 'payments', 'peers', 'posts',
  'readme', 'reference', 'requests', 'root', 'svc', 'security', 'seek', 'spaces', 'sponsor',
  'staff', 'start', 'support', 'system', 'tokens', 'treasury', 'usdc', 'v1', 'verified',
  'wallet', 'watching', 'welcome', 'welcomes', 'withheld',
];
export const RESERVED_SPACE_PREFIX = `${BRAND_WORD}-`;

export function isReservedSpaceName(name: string): boolean {
  return RESERVED_SPACE_NAMES.includes(name) || name.startsWith(RESERVED_SPACE_PREFIX);
}

/** spec "Member": role names, authority words and the brand word (TAG_RESERVED). */
export const RESERVED_TAGS: readonly string[] = [
  'owner', 'admin', 'coordinator', 'writer', 'reader', 'operator', 'verified', BRAND_WORD,
];

// ---- post data keys (spec "Post", reserved `data` keys) -----------------------------------

/**
 * A finding's status as its author sets it, and as the findings read shows it: `withdrawn` is
 * never sent, it is what a finding its author retracted reads as. The relay never sets one.
 */
export const FINDING_STATUSES = ['proposed', 'supported', 'disputed', 'withdrawn'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];
/** The statuses a finding is posted with. */
export const FINDING_SETTABLE_STATUSES = ['proposed', 'supported', 'disputed'] as const;
/** How sure a finding's author is, in its own words. */
export const FINDING_CONFIDENCES = ['low', 'medium', 'high'] as const;
/** What a finding's data carries beside the sources any post may name. */
export const FINDING_DATA_KEYS = ['claim', 'status', 'confidence'] as const;

/** Keys whose value shape is checked today (see shared/validate.ts `validateData`). */
export const SHAPE_CHECKED_DATA_KEYS = [
  'return_status',
  'subject_peer',
  'subject_run',
  'exact_dup_of',
  'attribution',
] as const;
/**
 * Reserved as names only: accepted as sent, meaning kept for a later version. `sources` has the
 * newer API's meaning now (the posts of the SPACE a post rests on): checked on kind `finding`
 * (shared/validate.ts `validateFinding`), accepted as sent on the spec's kinds, where the relay
 * records it only when it names posts of the SPACE as a finding's would (relay/findings/).
 */
export const RESERVED_DATA_KEY_NAMES = ['sources', 'expires_at', 'lane_id', 'dossier', 'have', 'need', 'offer'] as const;
/** Refused outright (INVALID_REQUEST), so no post carries one before its meaning exists. */
export const REFUSED_DATA_KEYS = ['expected_version', 'lease_until', 'fencing_token', 'lane_version'] as const;
/** Keys starting with this are never reserved. */
export const FREE_DATA_KEY_PREFIX = 'x_';
export const RETURN_STATUSES = ['unknown', 'no_return', 'revived'] as const;

// ---- fingerprint schemes (spec "Fingerprint") ---------------------------------------------

export const SUGGESTED_FINGERPRINT_SCHEMES = ['sha256.file', 'git.commit', 'package.version', 'task.reference'] as const;
/** A scheme starting with the brand word and a dot is SCHEME_RESERVED. */
export const RESERVED_SCHEME_PREFIX = `${BRAND_WORD}.`;

// ---- capability rendering -----------------------------------------------------------------

/**
 * The vocabulary members of `GET /v1/capabilities` (api-notes §2, in its order), as fresh
 * arrays on every call.
 */
export function capabilityVocabulary(): Record<string, unknown> {
  return {
    kinds: [...KINDS],
    kind_groups: Object.fromEntries(Object.entries(KIND_GROUPS).map(([g, ks]) => [g, [...ks]])),
    kind_fallback: KIND_FALLBACK,
    visibilities: [...VISIBILITIES],
    join_policies: [...JOIN_POLICIES],
    roles: [...ROLES],
    mailbox_reasons: [...MAILBOX_REASONS],
    conversation_kinds: [...CONVERSATION_KINDS],
    conversation_states: [...CONVERSATION_STATES],
    space_events: [...SPACE_EVENTS],
    fingerprint_schemes: { suggested: [...SUGGESTED_FINGERPRINT_SCHEMES], reserved_prefix: RESERVED_SCHEME_PREFIX },
    unavailable_states: [...UNAVAILABLE_STATES],
    withheld_reasons: [...WITHHELD_REASONS],
    data_keys: {
      shape_checked: [...SHAPE_CHECKED_DATA_KEYS],
      reserved: [...SHAPE_CHECKED_DATA_KEYS, ...RESERVED_DATA_KEY_NAMES],
      refused: [...REFUSED_DATA_KEYS],
      finding: {
        keys: [...FINDING_DATA_KEYS, 'sources'],
        statuses: [...FINDING_SETTABLE_STATUSES],
        confidences: [...FINDING_CONFIDENCES],
      },
      note:
        `Keys starting ${FREE_DATA_KEY_PREFIX} are never reserved. No key may claim sponsorship ` +
        'or that the service generated something.',
    },
    reserved_space_names: [...RESERVED_SPACE_NAMES],
    reserved_space_prefix: RESERVED_SPACE_PREFIX,
    reserved_tags: [...RESERVED_TAGS],
  };
}
