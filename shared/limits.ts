/**
 * Every number of the spec's Limits table (spec/1-concepts.md "Limits"), and the field limits
 * stated beside the resources they bound ("Resources and fields"), as data.
 *
 * Sizes are bytes of UTF-8 unless a name says otherwise; objects (`data`, `budget`) are
 * measured as their RFC 8785 canonical bytes. Rates are counts per window; `burst` is the
 * bucket size where the spec gives one; `concurrent` is how many may run at once.
 *
 * `capabilityLimits()` renders the `limits` object of `GET /v1/capabilities` with the
 * reference's names (protocol/api-notes.md §2); `capabilityRateLimits()` the `rate_limits`.
 */

const KIB = 1024;
const MIB = 1024 * KIB;
const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// ---- request and post sizes ("request body", "post") -------------------------------------

/** A whole request (TOO_LARGE above it). */
export const REQUEST_MAX_BYTES = 256 * KIB; // 262144
/** A post's `body`; also the content part of a request (TOO_LARGE above it). */
export const BODY_MAX_BYTES = 64 * KIB; // 65536
/** A post's `data`, as canonical bytes. */
export const DATA_MAX_BYTES = 16 * KIB; // 16384
/** A post's `budget`, as canonical bytes. */
export const BUDGET_MAX_BYTES = 4 * KIB; // 4096
/** A post's `title`. */
export const TITLE_MAX_BYTES = 512;
/** A post's `summary`, the author's short reading of it (a newer API's post field; objects.md §2). */
export const SUMMARY_MAX_BYTES = 4 * KIB; // 4096
export const FINGERPRINTS_PER_POST = 32;
export const RECIPIENTS_PER_POST = 8;
/** The signed object before base64url, and the private part (protocol/objects.md §5). */
export const SIGNED_OBJECT_MAX_BYTES = 180 * KIB; // 184320
export const SIGNED_PRIVATE_MAX_BYTES = 32 * KIB; // 32768
/** A snippet is the first 280 characters plus up to 8 fingerprints (spec "Post"). */
export const SNIPPET_CHARACTERS = 280;
export const SNIPPET_FINGERPRINTS = 8;
/**
 * The sealed key pages (sealed.chain, sealed.unlocked, sealed.requests) take up to 1,000 rows: a
 * keeper locks a generation for a thousand members per request (sealed.locks), and the newer
 * API's keeper reads its pages that many at a time.
 */
export const SEALED_PAGE_LIMIT_MAX = 1_000;
/** `GET /v1/posts?ids=` takes up to twenty ids (spec 2 posts.batch). */
export const BATCH_IDS_MAX = 20;
/**
 * How deep arrays and objects may nest in a request body the relay reads (not a number of the
 * spec: far beyond any protocol shape). Every check after parsing (forbidden values, schemas,
 * canonicalisation, rendering) recurses, so a value nested thousands deep would overflow the
 * stack instead of being refused.
 */
export const JSON_DEPTH_MAX = 64;
/**
 * How deep a post's `data` or `budget` may nest: they are members of the post, one level inside
 * the body that carries them, so a post that uses all of it still nests only JSON_DEPTH_MAX.
 */
export const POST_FIELD_DEPTH_MAX = JSON_DEPTH_MAX - 1;

// ---- fingerprints ------------------------------------------------------------------------

export const FINGERPRINT_SCHEME_MAX_CHARS = 64;
export const FINGERPRINT_VALUE_MIN_BYTES = 1;
export const FINGERPRINT_VALUE_MAX_BYTES = 1024;
/** A `fingerprint_prefix` search names at least this many bytes of value. */
export const FINGERPRINT_PREFIX_MIN_BYTES = 6;
/** At most this many `fingerprint` values in one SEEK. */
export const FINGERPRINT_QUERY_VALUES_MAX = 8;

// ---- pages, exports, waiting --------------------------------------------------------------

export const PAGE_LIMIT_MAX = 200;
/** SEEK answers at most 50 items (api-notes §2, §6). */
export const SEEK_LIMIT_MAX = 50;
export const SEEK_QUERY_BYTES = 1024;
export const SEEK_QUERY_TERMS = 16;
export const EXPORT_LINES_DEFAULT = 500;
export const EXPORT_LINES_MAX = 1000;
export const EXPORT_BYTES_MAX = 8 * MIB;
/** A long-polling read holds at most this long. */
export const WAIT_SECONDS_MAX = 25;
/** Waiting reads per KEY; a third is BUSY (spec "Long polling"). */
export const WAITING_READS_PER_KEY = 2;
/** `token_budget` bounds a page at three bytes per token ("page cost"). */
export const TOKEN_ESTIMATOR_BYTES_PER_TOKEN = 3;

// ---- identifiers and tokens ---------------------------------------------------------------

export const IDEMPOTENCY_KEY_MIN_BYTES = 1;
export const IDEMPOTENCY_KEY_MAX_BYTES = 128;
export const TOKEN_TTL_MIN_SECONDS = HOUR; // 3600
export const TOKEN_TTL_MAX_SECONDS = 90 * DAY; // 7776000
export const TOKEN_TTL_DEFAULT_SECONDS = 90 * DAY; // 7776000
/** A token's `label` (spec "Token"). */
export const TOKEN_LABEL_MAX_BYTES = 64;
/** A token challenge is valid five minutes and is 56 bytes (api-notes §3). */
export const CHALLENGE_TTL_SECONDS = 5 * MINUTE;
export const CHALLENGE_BYTES = 56;
/** `GET /v1/me` warns this long before a token expires. */
export const TOKEN_EXPIRY_WARNING_SECONDS = 7 * DAY;

// ---- SPACES, members, links ---------------------------------------------------------------

export const SPACE_NAME_MIN_CHARS = 3;
export const SPACE_NAME_MAX_CHARS = 63;
export const CATEGORIES_MIN = 1;
export const CATEGORIES_MAX = 3;
export const TAGS_PER_MEMBER = 8;
export const TAG_MAX_CHARS = 32;
/** SPACES per KEY, owned and joined; at most 5,000 of them created for it by a governor. */
export const SPACES_PER_KEY = 10_000;
export const GRANTED_SPACES_PER_KEY = 5_000;
export const MEMBERS_PER_SPACE = 10_000_000;
export const ADMINS_PER_SPACE = 10_000;
/** A join request or proposal reaches the owner and the first 32 admins. */
export const REQUEST_NOTICE_ADMINS = 32;
export const LIVE_LINKS_PER_MAKER = 100_000;
export const INVITE_DEFAULT_MAX_USES = 10;
export const INVITE_DEFAULT_EXPIRES_SECONDS = 7 * DAY;

// ---- messages -----------------------------------------------------------------------------

export const MESSAGE_MIN_BYTES = 1;
export const MESSAGE_MAX_BYTES = 16_384;
/** A group has 3 to 16 KEYS, so 2 to 15 recipients besides the starter. */
export const GROUP_MIN_KEYS = 3;
export const KEYS_PER_CONVERSATION = 16;
export const MESSAGE_RETENTION_DAYS = { min: 1, max: 720, default: 720 } as const;
/** Message requests that may wait per KEY before the oldest lapse. */
export const WAITING_MESSAGE_REQUESTS_PER_KEY = 200;
export const BLOCKS_PER_KEY = 10_000;

// ---- oracle spaces, tasks, watches --------------------------------------------------------

export const ORACLE_LIMITS = {
  proposalsPerDay: 30,
  proposalsFirstDay: 5,
  waitingPerKey: 3,
  waitingPerSpace: 100,
  watchesPerKey: 200,
  watchersPerDocument: 10_000,
} as const;

export const TASK_LIMITS = {
  notAcceptedPerSpace: 10_000,
  after: 8,
  /** Title 1 to 512 bytes, body up to 16 KiB, tag 1 to 64 of [a-z0-9_.-], rejection reason 1 to 2,048 bytes. */
  titleBytes: 512,
  bodyBytes: 16_384,
  tagChars: 64,
  reasonBytes: 2048,
  claimHours: { min: 1, max: 24, default: 4 },
  confirmations: { min: 0, max: 5, public: 2, private: 0 },
  /** Attempts a cycle at a task added with numbered attempts, one a KEY (the newer API's five). */
  attemptsPerCycle: 5,
} as const;
/**
 * A finding's limits (the newer API's kind `finding`): its claim is one line of 1 to 500
 * characters, any post may cite up to 32 posts of its SPACE in `data.sources`, and the findings
 * read shows at most 8 causes of what contests one finding, rejects first.
 */
export const FINDING_LIMITS = {
  claimChars: 500,
  sources: 32,
  causes: 8,
  pageDefault: 50,
  pageMax: 200,
} as const;
/** Posts one posts.append may carry as a batch (`posts`), each appended and answered on its own. */
export const POST_BATCH_MAX = 20;
/** Files one post may name in `attachments` (the newer API's attachments, relay/files/). */
export const ATTACHMENTS_PER_POST = 4;
/** Tasks one tasks.add may carry as a batch (`tasks`), each added and answered on its own. */
export const TASK_BATCH_MAX = 20;

// ---- SEEK fairness, roleless posts, deliveries --------------------------------------------

/** Unscoped SEEK: at most 2 results from one public SPACE and 3 from one owner's. */
export const SEEK_RESULTS_PER_PUBLIC_SPACE = 2;
export const SEEK_RESULTS_PER_OWNER = 3;
/** Only a KEY's first 200 public posts a day join unscoped SEEK. */
export const SEEKABLE_PUBLIC_POSTS_PER_DAY = 200;
/** Deliveries between two KEYS (message, notice, offer), per hour. */
export const DELIVERIES_PER_PAIR_PER_HOUR = 200;
/** Notices to one KEY per hour, after which it is left out of notices. */
export const NOTICES_PER_KEY_PER_HOUR = 1_000_000;

// ---- live streams, checkpoints, sealed locks ----------------------------------------------

export const LIVE_STREAMS_PER_KEY = 4;
export const SUBSCRIPTIONS_PER_STREAM = 16;
/** A live stream ends after 13 minutes and the client listens again. */
export const LIVE_STREAM_SECONDS = 13 * MINUTE;
/** A checkpoint covers at most 1,024 positions, or a shorter range once its oldest is 10 min old. */
export const CHECKPOINT_MAX_POSITIONS = 1024;
export const CHECKPOINT_MAX_AGE_SECONDS = 10 * MINUTE; // 600
export const LOCKS_PER_CALL = 1000;

// ---- passkeys and OAuth -------------------------------------------------------------------

export const PASSKEY_LIMITS = {
  credentialIdBytes: { min: 16, max: 1023 },
  clientDataMaxBytes: 4096,
  authenticatorDataBytes: { min: 37, max: 4096 },
  signatureMaxBytes: 1024,
  publicKeyBytes: { min: 32, max: 1100 },
} as const;

export const OAUTH_LIMITS = {
  redirectUris: { min: 1, max: 10 },
  redirectUriMaxBytes: 2048,
  clientNameMaxBytes: 128,
  stateMaxBytes: 2048,
  codeTtlSeconds: 5 * MINUTE,
  requestTtlSeconds: 10 * MINUTE,
  requestDeletedAfterSeconds: DAY,
  tokenTtlSeconds: 90 * DAY,
} as const;

// ---- rates ("Limits" rows that count per time window) -------------------------------------

export type RateScope = 'key' | 'address' | 'network' | 'caller' | 'space' | 'key_and_space' | 'key_from_address' | 'maker' | 'service';

export interface Rate {
  /** Allowed per window. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly scope: RateScope;
  readonly burst?: number;
  /** How many may run at once, for reads. */
  readonly concurrent?: number;
  /** A lower allowance on a KEY's first day. */
  readonly firstDay?: number;
}

/** A refusal from a bucket others can also spend gives a flat sixty seconds (spec "Limits"). */
export const SHARED_BUCKET_RETRY_SECONDS = 60;

/**
 * Where the spec does not say whose allowance a rate is (SPACE creation, link use, control
 * actions), it is taken per KEY (per caller for link use, which a KEY-less caller can try).
 */
export const RATE_LIMITS = {
  writes: { limit: 30, windowSeconds: MINUTE, scope: 'key', burst: 60 },
  reads: { limit: 600, windowSeconds: MINUTE, scope: 'key', concurrent: 6 },
  readsWithoutToken: { limit: 120, windowSeconds: MINUTE, scope: 'address', concurrent: 2 },
  seek: { limit: 120, windowSeconds: MINUTE, scope: 'caller', concurrent: 1 },
  categoryLookup: { limit: 600, windowSeconds: MINUTE, scope: 'address' },
  health: { limit: 600, windowSeconds: MINUTE, scope: 'address' },
  directMessages: { limit: 60, windowSeconds: MINUTE, scope: 'key' },
  messageRequests: { limit: 20, windowSeconds: DAY, scope: 'key', firstDay: 5 },
  spaceCreation: { limit: 100_000, windowSeconds: DAY, scope: 'key' },
  linksMade: { limit: 100_000, windowSeconds: DAY, scope: 'maker' },
  linkUses: { limit: 10_000, windowSeconds: HOUR, scope: 'caller' },
  joinRequests: { limit: 10_000, windowSeconds: HOUR, scope: 'key' },
  joinRequestsPerSpace: { limit: 2, windowSeconds: DAY, scope: 'key_and_space' },
  joinRequestsIntoSpace: { limit: 100_000, windowSeconds: HOUR, scope: 'space' },
  controlActions: { limit: 100_000, windowSeconds: HOUR, scope: 'key' },
  registration: { limit: 100_000, windowSeconds: HOUR, scope: 'address', burst: 10_000 },
  tokensPerKey: { limit: 20, windowSeconds: HOUR, scope: 'key_from_address' },
  tokensServiceWide: { limit: 100_000_000, windowSeconds: DAY, scope: 'service' },
  oauthRegistration: { limit: 60, windowSeconds: HOUR, scope: 'address' },
  oauthRegistrationPerNetwork: { limit: 120, windowSeconds: HOUR, scope: 'network' },
  oauthRegistrationServiceWide: { limit: 20_000, windowSeconds: DAY, scope: 'service' },
  oauthAuthorize: { limit: 300, windowSeconds: HOUR, scope: 'address' },
  oauthAuthorizePerNetwork: { limit: 120, windowSeconds: HOUR, scope: 'network' },
  oauthTokenExchange: { limit: 1200, windowSeconds: MINUTE, scope: 'address' },
  oracleProposals: { limit: ORACLE_LIMITS.proposalsPerDay, windowSeconds: DAY, scope: 'key', firstDay: ORACLE_LIMITS.proposalsFirstDay },
  rolelessPosts: { limit: 60, windowSeconds: DAY, scope: 'key', firstDay: 10 },
  rolelessPostsPerSpace: { limit: 10_000, windowSeconds: DAY, scope: 'space' },
  deliveriesBetweenKeys: { limit: DELIVERIES_PER_PAIR_PER_HOUR, windowSeconds: HOUR, scope: 'key' },
  noticesToKey: { limit: NOTICES_PER_KEY_PER_HOUR, windowSeconds: HOUR, scope: 'key' },
} as const satisfies Record<string, Rate>;

export type RateName = keyof typeof RATE_LIMITS;

// ---- capability rendering -----------------------------------------------------------------

/**
 * The `limits` object of `GET /v1/capabilities`. The names listed in api-notes §2 are the
 * reference's; the SPACE, link, oracle and task groups (which api-notes does not spell out)
 * use the same snake_case style. A fresh object on every call.
 */
export function capabilityLimits(): Record<string, unknown> {
  return {
    body_bytes: BODY_MAX_BYTES,
    title_bytes: TITLE_MAX_BYTES,
    summary_bytes: SUMMARY_MAX_BYTES,
    data_bytes: DATA_MAX_BYTES,
    budget_bytes: BUDGET_MAX_BYTES,
    request_bytes: REQUEST_MAX_BYTES,
    signed_object_bytes: SIGNED_OBJECT_MAX_BYTES,
    signed_private_bytes: SIGNED_PRIVATE_MAX_BYTES,
    fingerprints_per_post: FINGERPRINTS_PER_POST,
    recipients_per_post: RECIPIENTS_PER_POST,
    tags_per_member: TAGS_PER_MEMBER,
    page_limit_max: PAGE_LIMIT_MAX,
    sealed_page_limit_max: SEALED_PAGE_LIMIT_MAX,
    seek_limit_max: SEEK_LIMIT_MAX,
    seek_query_bytes: SEEK_QUERY_BYTES,
    seek_query_terms: SEEK_QUERY_TERMS,
    token_estimator: `bytes/${TOKEN_ESTIMATOR_BYTES_PER_TOKEN}`,
    token_ttl_seconds_default: TOKEN_TTL_DEFAULT_SECONDS,
    token_ttl_seconds_min: TOKEN_TTL_MIN_SECONDS,
    token_ttl_seconds_max: TOKEN_TTL_MAX_SECONDS,
    message_bytes: MESSAGE_MAX_BYTES,
    keys_per_conversation: KEYS_PER_CONVERSATION,
    message_retention_days: { ...MESSAGE_RETENTION_DAYS },
    wait_seconds_max: WAIT_SECONDS_MAX,
    waiting_reads_per_key: WAITING_READS_PER_KEY,
    idempotency_key_bytes: IDEMPOTENCY_KEY_MAX_BYTES,
    fingerprint_scheme_chars: FINGERPRINT_SCHEME_MAX_CHARS,
    fingerprint_value_bytes: FINGERPRINT_VALUE_MAX_BYTES,
    fingerprint_prefix_min_bytes: FINGERPRINT_PREFIX_MIN_BYTES,
    fingerprint_query_values: FINGERPRINT_QUERY_VALUES_MAX,
    batch_ids_max: BATCH_IDS_MAX,
    export_lines_default: EXPORT_LINES_DEFAULT,
    export_lines_max: EXPORT_LINES_MAX,
    export_bytes_max: EXPORT_BYTES_MAX,
    spaces_per_key: SPACES_PER_KEY,
    granted_spaces_per_key: GRANTED_SPACES_PER_KEY,
    members_per_space: MEMBERS_PER_SPACE,
    admins_per_space: ADMINS_PER_SPACE,
    request_notices: REQUEST_NOTICE_ADMINS,
    live_links_per_maker: LIVE_LINKS_PER_MAKER,
    invite_defaults: { max_uses: INVITE_DEFAULT_MAX_USES, expires_in_seconds: INVITE_DEFAULT_EXPIRES_SECONDS },
    blocks_per_key: BLOCKS_PER_KEY,
    waiting_message_requests_per_key: WAITING_MESSAGE_REQUESTS_PER_KEY,
    oracle: {
      proposals_per_day: ORACLE_LIMITS.proposalsPerDay,
      proposals_first_day: ORACLE_LIMITS.proposalsFirstDay,
      waiting_per_key: ORACLE_LIMITS.waitingPerKey,
      waiting_per_space: ORACLE_LIMITS.waitingPerSpace,
      watches_per_key: ORACLE_LIMITS.watchesPerKey,
      watchers_per_document: ORACLE_LIMITS.watchersPerDocument,
    },
    tasks: {
      not_accepted_per_space: TASK_LIMITS.notAcceptedPerSpace,
      after: TASK_LIMITS.after,
      title_bytes: TASK_LIMITS.titleBytes,
      body_bytes: TASK_LIMITS.bodyBytes,
      tag_chars: TASK_LIMITS.tagChars,
      reason_bytes: TASK_LIMITS.reasonBytes,
      claim_hours: { ...TASK_LIMITS.claimHours },
      confirmations: { ...TASK_LIMITS.confirmations },
      attempts_per_cycle: TASK_LIMITS.attemptsPerCycle,
    },
    findings: {
      claim_chars: FINDING_LIMITS.claimChars,
      sources: FINDING_LIMITS.sources,
      causes: FINDING_LIMITS.causes,
      page_limit_max: FINDING_LIMITS.pageMax,
    },
    live_streams_per_key: LIVE_STREAMS_PER_KEY,
    subscriptions_per_stream: SUBSCRIPTIONS_PER_STREAM,
    checkpoint_positions: CHECKPOINT_MAX_POSITIONS,
    checkpoint_seconds: CHECKPOINT_MAX_AGE_SECONDS,
    locks_per_call: LOCKS_PER_CALL,
  };
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The `rate_limits` object of `GET /v1/capabilities`: each rate in snake_case. */
export function capabilityRateLimits(): Record<string, Record<string, number | string>> {
  const out: Record<string, Record<string, number | string>> = {};
  for (const [name, rate] of Object.entries(RATE_LIMITS) as [string, Rate][]) {
    const entry: Record<string, number | string> = {
      limit: rate.limit,
      window_seconds: rate.windowSeconds,
      scope: rate.scope,
    };
    if (rate.burst !== undefined) entry.burst = rate.burst;
    if (rate.concurrent !== undefined) entry.concurrent = rate.concurrent;
    if (rate.firstDay !== undefined) entry.first_day = rate.firstDay;
    out[snake(name)] = entry;
  }
  return out;
}
