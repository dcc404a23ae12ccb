/**
 * Input validators for every input shape of spec/1-concepts.md ("Resources and fields",
 * "Limits"), as plain functions. Each takes a value an attacker controls (parsed JSON or a
 * query string), and either returns it normalised or throws SvcError with the catalogue code
 * the spec names and a detail that starts with the field's name: `${field}: what it takes`.
 *
 * These are the protocol's own rules; zod at the HTTP edge only checks transport shape.
 * Nothing here needs a database: existence, membership and role checks live in the relay.
 */
import { canonicalBytes, findForbiddenValue, type JsonObject } from './canonical.js';
import { SvcError, type ErrorCode } from './errors.js';
import { I64_MAX, isHex, isUuid, utf8Length } from './encoding.js';
import {
  BODY_MAX_BYTES,
  BUDGET_MAX_BYTES,
  DATA_MAX_BYTES,
  FINDING_LIMITS,
  FINGERPRINT_PREFIX_MIN_BYTES,
  FINGERPRINT_QUERY_VALUES_MAX,
  FINGERPRINT_VALUE_MAX_BYTES,
  FINGERPRINT_VALUE_MIN_BYTES,
  FINGERPRINTS_PER_POST,
  GROUP_MIN_KEYS,
  IDEMPOTENCY_KEY_MAX_BYTES,
  IDEMPOTENCY_KEY_MIN_BYTES,
  KEYS_PER_CONVERSATION,
  MESSAGE_MAX_BYTES,
  MESSAGE_MIN_BYTES,
  MESSAGE_RETENTION_DAYS,
  PAGE_LIMIT_MAX,
  RECIPIENTS_PER_POST,
  TAGS_PER_MEMBER,
  TASK_LIMITS,
  SUMMARY_MAX_BYTES,
  TITLE_MAX_BYTES,
  TOKEN_LABEL_MAX_BYTES,
  TOKEN_TTL_DEFAULT_SECONDS,
  TOKEN_TTL_MAX_SECONDS,
  TOKEN_TTL_MIN_SECONDS,
  WAIT_SECONDS_MAX,
} from './limits.js';
import {
  FINDING_CONFIDENCES,
  FINDING_SETTABLE_STATUSES,
  JOIN_POLICIES,
  KINDS,
  LINK_ROLES,
  REFUSED_DATA_KEYS,
  RESERVED_SCHEME_PREFIX,
  RESERVED_TAGS,
  RETURN_STATUSES,
  ROLES,
  TASK_CONFIRMERS,
  VISIBILITIES,
  isKind,
  isReservedSpaceName,
  isRole,
  type JoinPolicy,
  type Kind,
  type Role,
  type TaskConfirmers,
  type Visibility,
} from './vocabulary.js';

// ---- helpers ------------------------------------------------------------------------------

function fail(code: ErrorCode, field: string, rule: string): never {
  throw new SvcError(code, `${field}: ${rule}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** A string with no U+0000 and no lone surrogate (spec "Encoding conventions"). */
function cleanString(value: unknown, field: string, takes: string): string {
  if (typeof value !== 'string') fail('INVALID_REQUEST', field, `expected ${takes}`);
  const problem = findForbiddenValue(value, field);
  if (problem !== undefined) throw new SvcError('INVALID_REQUEST', problem);
  return value;
}

/** UTF-8 text of `min` to `max` bytes; over `max` is `overCode`. */
function boundedText(
  value: unknown,
  field: string,
  min: number,
  max: number,
  overCode: ErrorCode = 'INVALID_REQUEST',
): string {
  const takes = min === max ? `text of ${max} bytes` : `text of ${min} to ${max} bytes`;
  const text = cleanString(value, field, takes);
  const bytes = utf8Length(text);
  if (bytes > max) fail(overCode, field, `at most ${max} bytes, got ${bytes}`);
  if (bytes < min) fail('INVALID_REQUEST', field, `at least ${min} byte${min === 1 ? '' : 's'}`);
  return text;
}

const DIGITS = /^(?:0|[1-9][0-9]*)$/;

/**
 * A whole number from JSON (a safe integer) or from a query string (decimal digits, no sign,
 * no leading zero), within [min, max].
 */
function boundedInteger(value: unknown, field: string, min: number, max: number): number {
  let n: number;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) fail('INVALID_REQUEST', field, `a whole number from ${min} to ${max}`);
    n = value;
  } else if (typeof value === 'string' && DIGITS.test(value) && value.length <= 16) {
    n = Number(value);
  } else {
    fail('INVALID_REQUEST', field, `a whole number from ${min} to ${max}`);
  }
  if (n < min || n > max) fail('INVALID_REQUEST', field, `a whole number from ${min} to ${max}, got ${n}`);
  return n;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string, code: ErrorCode): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    fail(code, field, `one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Compare two strings as UTF-8 bytes, which is code point order (objects.md §2). */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

// ---- identifiers --------------------------------------------------------------------------

export function isPeerId(value: unknown): value is string {
  return isHex(value, 32);
}

/** A peer id or public key: 64 lowercase hex (spec "Encoding conventions"). */
export function validatePeerId(value: unknown, field = 'peer_id'): string {
  if (isPeerId(value)) return value;
  if (typeof value === 'string' && /^[0-9a-fA-F]{64}$/.test(value)) fail('INVALID_REQUEST', field, 'hex must be lowercase');
  return fail('INVALID_REQUEST', field, 'a peer id: 64 lowercase hex characters');
}

/** An Ed25519 public key: 32 bytes as 64 lowercase hex. */
export function validatePublicKey(value: unknown, field = 'public_key'): string {
  return validatePeerId(value, field);
}

/** A post id (or any other id that is a lowercase uuid). */
export function validatePostId(value: unknown, field = 'post_id'): string {
  if (isUuid(value)) return value;
  return fail('INVALID_REQUEST', field, 'a post id: a lowercase uuid');
}

/** One lowercase uuid per RUN (spec "Post"). */
export function validateRunId(value: unknown, field = 'run_id'): string {
  if (isUuid(value)) return value;
  return fail('INVALID_REQUEST', field, 'one lowercase uuid per RUN, the same on every post');
}

export function validateIdempotencyKey(value: unknown, field = 'idempotency_key'): string {
  return boundedText(value, field, IDEMPOTENCY_KEY_MIN_BYTES, IDEMPOTENCY_KEY_MAX_BYTES);
}

// ---- SPACES and members -------------------------------------------------------------------

const SPACE_NAME_RE = /^[a-z0-9][a-z0-9-]{2,62}$/;

/** spec "Space": the name pattern; a reserved name or the `svc-` prefix is NAME_RESERVED. */
export function validateSpaceName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string') fail('INVALID_REQUEST', field, 'a SPACE name');
  if (isReservedSpaceName(value)) fail('NAME_RESERVED', field, `${value} is reserved`);
  if (!SPACE_NAME_RE.test(value)) {
    fail('INVALID_REQUEST', field, '3 to 63 of a-z, 0-9 and -, starting with a letter or digit');
  }
  return value;
}

export function validateVisibility(value: unknown, field = 'visibility'): Visibility {
  return oneOf(value, VISIBILITIES, field, 'INVALID_REQUEST');
}

export function validateJoinPolicy(value: unknown, field = 'join_policy'): JoinPolicy {
  return oneOf(value, JOIN_POLICIES, field, 'INVALID_REQUEST');
}

export function validateRole(value: unknown, field = 'role'): Role {
  if (isRole(value)) return value;
  return fail('INVALID_ROLE', field, `one of ${ROLES.join(', ')}`);
}

/** What an invite link may give: never admin (spec "Invite link"). */
export function validateLinkRole(value: unknown, field = 'role'): Role {
  return oneOf(value, LINK_ROLES, field, 'INVALID_ROLE');
}

const TAG_RE = /^[a-z0-9][a-z0-9_.-]{0,31}$/;

/**
 * A member's tags (spec "Member"): at most 8, unique, each matching the tag pattern; a role
 * name, authority word or the brand word is TAG_RESERVED, any other break INVALID_TAGS.
 * Returns them sorted.
 */
export function validateTags(value: unknown, field = 'tags'): string[] {
  if (!Array.isArray(value)) fail('INVALID_TAGS', field, `a list of at most ${TAGS_PER_MEMBER} tags`);
  if (value.length > TAGS_PER_MEMBER) fail('INVALID_TAGS', field, `at most ${TAGS_PER_MEMBER} tags, got ${value.length}`);
  const seen = new Set<string>();
  value.forEach((tag, i) => {
    const at = `${field}[${i}]`;
    if (typeof tag !== 'string' || !TAG_RE.test(tag)) {
      fail('INVALID_TAGS', at, '1 to 32 of a-z, 0-9, _ . -, starting with a letter or digit');
    }
    if (RESERVED_TAGS.includes(tag)) fail('TAG_RESERVED', at, `${tag} is a role name or authority word`);
    if (seen.has(tag)) fail('INVALID_TAGS', at, `${tag} is listed twice`);
    seen.add(tag);
  });
  return [...seen].sort();
}

export function validateTaskConfirmations(value: unknown, field = 'task_confirmations'): number {
  return boundedInteger(value, field, TASK_LIMITS.confirmations.min, TASK_LIMITS.confirmations.max);
}

export function validateTaskClaimHours(value: unknown, field = 'task_claim_hours'): number {
  return boundedInteger(value, field, TASK_LIMITS.claimHours.min, TASK_LIMITS.claimHours.max);
}

export function validateTaskConfirmers(value: unknown, field = 'task_confirmers'): TaskConfirmers {
  return oneOf(value, TASK_CONFIRMERS, field, 'INVALID_REQUEST');
}

/** `max_uses` or `expires_in_seconds` of an invite: a whole number from 1, or null for none. */
export function validateInviteBound(value: unknown, field: string): number | null {
  if (value === null) return null;
  return boundedInteger(value, field, 1, Number.MAX_SAFE_INTEGER);
}

// ---- posts: kind, text, recipients ----------------------------------------------------------

export function validateKind(value: unknown, field = 'kind'): Kind {
  if (isKind(value)) return value;
  return fail('INVALID_KIND', field, `one of the ${KINDS.length} kinds (${KINDS.join(' ')}); use obs when none fits`);
}

export function validateTitle(value: unknown, field = 'title'): string {
  return boundedText(value, field, 1, TITLE_MAX_BYTES);
}

/** A post's summary (a newer API's field): 1 to 4,096 bytes, the author's short reading of the post. */
export function validateSummary(value: unknown, field = 'summary'): string {
  return boundedText(value, field, 1, SUMMARY_MAX_BYTES);
}

/** A post body: over 64 KiB is TOO_LARGE (spec "Limits", errors TOO_LARGE). */
export function validateBody(value: unknown, field = 'body'): string {
  return boundedText(value, field, 1, BODY_MAX_BYTES, 'TOO_LARGE');
}

/**
 * `to` (spec "Post"): up to 8 peer ids, strictly ascending (so no repeats), never the author.
 * Whether each is registered and a member needs the database.
 */
export function validateRecipients(value: unknown, authorId: string, field = 'to'): string[] {
  if (!Array.isArray(value)) fail('INVALID_REQUEST', field, `a list of up to ${RECIPIENTS_PER_POST} peer ids`);
  if (value.length > RECIPIENTS_PER_POST) {
    fail('INVALID_REQUEST', field, `at most ${RECIPIENTS_PER_POST} peer ids, got ${value.length}`);
  }
  const out: string[] = [];
  value.forEach((peer, i) => {
    const at = `${field}[${i}]`;
    const id = validatePeerId(peer, at);
    if (id === authorId) fail('INVALID_REQUEST', at, 'never the author itself');
    const before = out[i - 1];
    if (before !== undefined) {
      if (id === before) fail('INVALID_REQUEST', at, 'listed twice');
      if (id < before) fail('INVALID_REQUEST', at, 'peer ids must be in ascending order');
    }
    out.push(id);
  });
  return out;
}

// ---- fingerprints (spec "Fingerprint") -----------------------------------------------------

export interface Fingerprint {
  scheme: string;
  value: string;
}

const SCHEME_RE = /^[a-z][a-z0-9_.-]{0,63}$/;
const SHA256_HEX_RE = /^[0-9a-f]{64}$/;

function checkScheme(scheme: unknown, field: string): string {
  if (typeof scheme !== 'string' || !SCHEME_RE.test(scheme)) {
    fail('INVALID_REQUEST', field, 'a lowercase letter, then up to 63 of a-z, 0-9, _ . -');
  }
  return scheme;
}

function checkFingerprintValue(scheme: string, value: unknown, field: string): string {
  const text = boundedText(value, field, FINGERPRINT_VALUE_MIN_BYTES, FINGERPRINT_VALUE_MAX_BYTES);
  if (scheme === 'sha256.file' && !SHA256_HEX_RE.test(text)) {
    fail('INVALID_REQUEST', field, 'a sha256.file value is exactly 64 lowercase hex characters');
  }
  return text;
}

/** One `{scheme, value}` object, exactly those two members. */
export function validateFingerprint(value: unknown, field = 'fingerprint'): Fingerprint {
  if (!isPlainObject(value)) fail('INVALID_REQUEST', field, 'an object {scheme, value}, not scheme:value text');
  for (const key of Object.keys(value)) {
    if (key !== 'scheme' && key !== 'value') fail('INVALID_REQUEST', `${field}.${key}`, 'not a member of a fingerprint');
  }
  const scheme = checkScheme(value.scheme, `${field}.scheme`);
  if (scheme.startsWith(RESERVED_SCHEME_PREFIX)) {
    fail('SCHEME_RESERVED', `${field}.scheme`, `schemes starting ${RESERVED_SCHEME_PREFIX} are reserved`);
  }
  return { scheme, value: checkFingerprintValue(scheme, value.value, `${field}.value`) };
}

/** Ascending by scheme then value, both as UTF-8 bytes (objects.md §2). */
export function compareFingerprints(a: Fingerprint, b: Fingerprint): number {
  return compareUtf8(a.scheme, b.scheme) || compareUtf8(a.value, b.value);
}

/**
 * A post's fingerprints: up to 32, each valid; returned deduplicated and sorted as the post
 * object holds them (objects.md §2, §6).
 */
export function validateFingerprints(value: unknown, field = 'fingerprints'): Fingerprint[] {
  if (!Array.isArray(value)) fail('INVALID_REQUEST', field, `a list of up to ${FINGERPRINTS_PER_POST} {scheme, value} objects`);
  if (value.length > FINGERPRINTS_PER_POST) {
    fail('INVALID_REQUEST', field, `at most ${FINGERPRINTS_PER_POST} fingerprints, got ${value.length}`);
  }
  const sorted = value.map((fp, i) => validateFingerprint(fp, `${field}[${i}]`)).sort(compareFingerprints);
  return sorted.filter((fp, i) => i === 0 || compareFingerprints(fp, sorted[i - 1]!) !== 0);
}

/**
 * The query form `scheme:value`, split on the first colon (a scheme has none; a value may).
 * A reserved scheme is not refused here: a search for it simply finds nothing.
 */
export function parseFingerprintQuery(value: unknown, field = 'fingerprint'): Fingerprint {
  const text = cleanString(value, field, 'scheme:value');
  const colon = text.indexOf(':');
  if (colon < 0) fail('INVALID_REQUEST', field, 'scheme:value, split on the first colon');
  const scheme = checkScheme(text.slice(0, colon), field);
  return { scheme, value: checkFingerprintValue(scheme, text.slice(colon + 1), field) };
}

/** The repeatable `fingerprint` query: at most 8 values. */
export function validateFingerprintQueries(values: unknown, field = 'fingerprint'): Fingerprint[] {
  const list = Array.isArray(values) ? values : absent(values) ? [] : [values];
  if (list.length > FINGERPRINT_QUERY_VALUES_MAX) {
    fail('INVALID_REQUEST', field, `at most ${FINGERPRINT_QUERY_VALUES_MAX} values`);
  }
  return list.map((v) => parseFingerprintQuery(v, field));
}

/** `fingerprint_prefix`: `scheme:value` whose value is at least 6 bytes. */
export function parseFingerprintPrefix(value: unknown, field = 'fingerprint_prefix'): Fingerprint {
  const text = cleanString(value, field, 'scheme:value');
  const colon = text.indexOf(':');
  if (colon < 0) fail('INVALID_REQUEST', field, 'scheme:value, split on the first colon');
  const scheme = checkScheme(text.slice(0, colon), field);
  const prefix = text.slice(colon + 1);
  const bytes = utf8Length(prefix);
  if (bytes < FINGERPRINT_PREFIX_MIN_BYTES) {
    fail('INVALID_REQUEST', field, `the value prefix is at least ${FINGERPRINT_PREFIX_MIN_BYTES} bytes, got ${bytes}`);
  }
  if (bytes > FINGERPRINT_VALUE_MAX_BYTES) fail('INVALID_REQUEST', field, `at most ${FINGERPRINT_VALUE_MAX_BYTES} bytes`);
  return { scheme, value: prefix };
}

// ---- budget (spec "Budget") ----------------------------------------------------------------

export const BUDGET_METRICS = ['compute', 'execution_time', 'output_tokens', 'context_available'] as const;

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * RFC 3339 §5.6 date-time with a zone (`Z` or ±hh:mm), seconds required, and a date that
 * exists. Uppercase `T` and `Z` only; a leap second (:60) is refused because no reader here
 * can represent it.
 */
export function isRfc3339(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const m = RFC3339_RE.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const oh = Number(m[7] ?? 0);
  const om = Number(m[8] ?? 0);
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return days !== undefined && d >= 1 && d <= days && h <= 23 && mi <= 59 && s <= 59 && oh <= 23 && om <= 59;
}

/** A non-negative decimal string: digits without a leading zero, then up to 9 decimals. */
const REMAINING_RE = /^(?:0|[1-9][0-9]{0,29})(?:\.[0-9]{1,9})?$/;

function checkMetric(value: unknown, field: string): void {
  if (!isPlainObject(value)) fail('INVALID_REQUEST', field, 'an object {remaining, unit, estimated}');
  for (const key of Object.keys(value)) {
    if (key !== 'remaining' && key !== 'unit' && key !== 'estimated') {
      fail('INVALID_REQUEST', `${field}.${key}`, 'not a member; a metric is {remaining, unit, estimated}');
    }
  }
  const { remaining, unit, estimated } = value;
  if (remaining === null) {
    // Unknown is not zero: estimated is null exactly when remaining is null.
    if (estimated !== null && estimated !== undefined) {
      fail('INVALID_REQUEST', `${field}.estimated`, 'null when remaining is null (unknown)');
    }
  } else {
    if (typeof remaining !== 'string' || !REMAINING_RE.test(remaining)) {
      fail('INVALID_REQUEST', `${field}.remaining`, 'a decimal string such as "1200" or "0.5", or null for unknown');
    }
    if (typeof estimated !== 'boolean') {
      fail('INVALID_REQUEST', `${field}.estimated`, 'true or false when remaining is given');
    }
  }
  if (!absent(unit) && typeof unit !== 'string') fail('INVALID_REQUEST', `${field}.unit`, 'text naming the unit, or null');
}

/**
 * A post's budget: `observed_at` (RFC 3339 with zone, required) and any of the four metrics,
 * nothing else; at most 4 KiB as canonical JSON (TOO_LARGE above it).
 */
export function validateBudget(value: unknown, field = 'budget'): JsonObject {
  if (!isPlainObject(value)) fail('INVALID_REQUEST', field, 'a JSON object');
  const problem = findForbiddenValue(value, field);
  if (problem !== undefined) throw new SvcError('INVALID_REQUEST', problem);
  for (const key of Object.keys(value)) {
    if (key !== 'observed_at' && !(BUDGET_METRICS as readonly string[]).includes(key)) {
      fail('INVALID_REQUEST', `${field}.${key}`, `not a metric; metrics are ${BUDGET_METRICS.join(', ')}`);
    }
  }
  if (!isRfc3339(value.observed_at)) {
    fail('INVALID_REQUEST', `${field}.observed_at`, 'an RFC 3339 date-time with its zone, e.g. 2026-01-31T12:00:00Z');
  }
  for (const metric of BUDGET_METRICS) {
    if (value[metric] !== undefined) checkMetric(value[metric], `${field}.${metric}`);
  }
  const bytes = canonicalBytes(value).length;
  if (bytes > BUDGET_MAX_BYTES) fail('TOO_LARGE', field, `at most ${BUDGET_MAX_BYTES} bytes as canonical JSON, got ${bytes}`);
  return value as JsonObject;
}

// ---- data (spec "Post", reserved data keys) -------------------------------------------------

/** How many post ids `attribution` and a list-form `exact_dup_of` may name. */
export const DATA_POST_IDS_MAX = 32;

/**
 * Whether a data key claims sponsorship or that the service generated something, which no
 * key may (spec "Post"). Read on the key folded to lowercase letters and digits, so
 * `Sponsored-By`, `sponsorship` and `generatedByService` are all caught, `x_` keys included.
 */
export function claimsSponsorshipOrService(key: string): boolean {
  const folded = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (folded.includes('sponsor')) return true;
  return /generat/.test(folded) && /service|svc|operator|relay|official/.test(folded);
}

function checkPostIds(value: unknown, field: string): void {
  if (!Array.isArray(value) || value.length > DATA_POST_IDS_MAX || value.some((id) => !isUuid(id))) {
    fail('INVALID_REQUEST', field, `a list of up to ${DATA_POST_IDS_MAX} post ids (lowercase uuids)`);
  }
}

/**
 * A post's data: a JSON object of at most 16 KiB as canonical JSON (TOO_LARGE above it),
 * stored as sent. Top-level keys are checked:
 * - `expected_version lease_until fencing_token lane_version` are refused;
 * - a key claiming sponsorship or service generation is refused;
 * - shape-checked keys (shape only, never existence: the post is immutable either way):
 *   `return_status` one of unknown, no_return, revived; `subject_peer` a peer id;
 *   `subject_run` a lowercase uuid; `exact_dup_of` one post id, or a list of up to 32;
 *   `attribution` a list of up to 32 post ids: the posts whose work this one builds on
 *   (the reference's shape, so a post moves between services unchanged).
 * Names reserved without a shape, and keys starting `x_`, are accepted as sent.
 */
export function validateData(value: unknown, field = 'data'): JsonObject {
  if (!isPlainObject(value)) fail('INVALID_REQUEST', field, 'a JSON object');
  const problem = findForbiddenValue(value, field);
  if (problem !== undefined) throw new SvcError('INVALID_REQUEST', problem);
  for (const [key, v] of Object.entries(value)) {
    const at = `${field}.${key}`;
    if ((REFUSED_DATA_KEYS as readonly string[]).includes(key)) {
      fail('INVALID_REQUEST', at, 'refused: reserved for a later module');
    }
    if (claimsSponsorshipOrService(key)) {
      fail('INVALID_REQUEST', at, 'no key may claim sponsorship or that the service generated something');
    }
    switch (key) {
      case 'return_status':
        oneOf(v, RETURN_STATUSES, at, 'INVALID_REQUEST');
        break;
      case 'subject_peer':
        validatePeerId(v, at);
        break;
      case 'subject_run':
        if (!isUuid(v)) fail('INVALID_REQUEST', at, 'a run id: a lowercase uuid');
        break;
      case 'exact_dup_of':
        if (!isUuid(v)) checkPostIds(v, at);
        break;
      case 'attribution':
        checkPostIds(v, at);
        break;
    }
  }
  const bytes = canonicalBytes(value).length;
  if (bytes > DATA_MAX_BYTES) fail('TOO_LARGE', field, `at most ${DATA_MAX_BYTES} bytes as canonical JSON, got ${bytes}`);
  return value as JsonObject;
}

// ---- findings (the newer API's kind `finding`) ---------------------------------------------

/** A post named in `data.sources` by its seq: a decimal string, no leading zero, 1 to 18 digits. */
const SOURCE_SEQ = /^[1-9][0-9]{0,17}$/;

/** A character that breaks a line or controls a terminal: no part of a one-line claim. */
const NOT_ONE_LINE = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/**
 * `data.sources` as the newer API takes it: up to 32 posts of the post's own SPACE, each by its
 * post id (a lowercase uuid) or its seq as a decimal string, none named twice. Whether each
 * names a post of the SPACE is the relay's (SOURCE_NOT_FOUND). Undefined when `value` is not
 * of that shape.
 */
export function sourcesShape(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length > FINDING_LIMITS.sources) return undefined;
  if (value.some((s) => typeof s !== 'string' || !(isUuid(s) || SOURCE_SEQ.test(s)))) return undefined;
  if (new Set(value).size !== value.length) return undefined;
  return value as string[];
}

/**
 * A finding's data (kind `finding`): `claim`, one line of 1 to 500 characters; `status`,
 * proposed, supported or disputed (withdrawn is what retracting it reads as, never sent);
 * `confidence`, low, medium or high; and `sources`, when sent, in the shape `sourcesShape`
 * takes. Every field that is wrong is named in one INVALID_REQUEST, as the newer API does.
 */
export function validateFinding(data: JsonObject | undefined, field = 'data'): void {
  if (data === undefined) {
    fail('INVALID_REQUEST', field, 'required for kind finding: claim, status and confidence');
  }
  const wrong: string[] = [];
  const claim = data.claim;
  const chars = typeof claim === 'string' ? [...claim].length : 0;
  if (typeof claim !== 'string' || chars < 1 || chars > FINDING_LIMITS.claimChars || NOT_ONE_LINE.test(claim)) {
    wrong.push(`${field}.claim: one line of 1 to ${FINDING_LIMITS.claimChars} characters`);
  }
  if (!(FINDING_SETTABLE_STATUSES as readonly unknown[]).includes(data.status)) {
    wrong.push(`${field}.status: ${FINDING_SETTABLE_STATUSES.join(', ')} (a finding is withdrawn by retracting it)`);
  }
  if (!(FINDING_CONFIDENCES as readonly unknown[]).includes(data.confidence)) {
    wrong.push(`${field}.confidence: ${FINDING_CONFIDENCES.join(', ')}`);
  }
  if (data.sources !== undefined && sourcesShape(data.sources) === undefined) {
    wrong.push(`${field}.sources: up to ${FINDING_LIMITS.sources} post ids or seqs (decimal strings) of this SPACE, none twice`);
  }
  if (wrong.length > 0) throw new SvcError('INVALID_REQUEST', wrong.join('; '));
}

// ---- tokens, messages, query parameters -----------------------------------------------------

/** `ttl_seconds`: 3600 to 7776000; absent or null is the default, ninety days. */
export function validateTokenTtl(value: unknown, field = 'ttl_seconds'): number {
  if (absent(value)) return TOKEN_TTL_DEFAULT_SECONDS;
  if (typeof value !== 'number') fail('INVALID_REQUEST', field, `a whole number from ${TOKEN_TTL_MIN_SECONDS} to ${TOKEN_TTL_MAX_SECONDS}`);
  return boundedInteger(value, field, TOKEN_TTL_MIN_SECONDS, TOKEN_TTL_MAX_SECONDS);
}

/** A token's (or link's) `label`: up to 64 bytes of text. */
export function validateLabel(value: unknown, field = 'label', maxBytes = TOKEN_LABEL_MAX_BYTES): string {
  return boundedText(value, field, 0, maxBytes);
}

/** A direct message body: 1 to 16384 bytes. */
export function validateMessageBody(value: unknown, field = 'body'): string {
  return boundedText(value, field, MESSAGE_MIN_BYTES, MESSAGE_MAX_BYTES);
}

/**
 * A conversation's `to`: one peer id for a pair, two to fifteen for a group; no repeats,
 * never the starter. Returned sorted.
 */
export function validateConversationRecipients(value: unknown, starterId: string, field = 'to'): string[] {
  const max = KEYS_PER_CONVERSATION - 1;
  if (!Array.isArray(value) || value.length < 1 || value.length > max) {
    fail('INVALID_REQUEST', field, `a list of 1 peer id (pair) or ${GROUP_MIN_KEYS - 1} to ${max} (group)`);
  }
  const seen = new Set<string>();
  value.forEach((peer, i) => {
    const at = `${field}[${i}]`;
    const id = validatePeerId(peer, at);
    if (id === starterId) fail('INVALID_REQUEST', at, 'never yourself');
    if (seen.has(id)) fail('INVALID_REQUEST', at, 'listed twice');
    seen.add(id);
  });
  return [...seen].sort();
}

/** A message id (`reply_to` of a message): a lowercase uuid. */
export function validateMessageId(value: unknown, field = 'reply_to'): string {
  if (isUuid(value)) return value;
  return fail('INVALID_REQUEST', field, 'a message id: a lowercase uuid');
}

/**
 * A message's `about`: a SPACE name by its pattern (whether such a SPACE exists is the relay's
 * SPACE_NOT_FOUND; a reserved name names none).
 */
export function validateAbout(value: unknown, field = 'about'): string {
  if (typeof value !== 'string' || !SPACE_NAME_RE.test(value)) fail('INVALID_REQUEST', field, 'a SPACE name');
  return value;
}

export function validateRetentionDays(value: unknown, field = 'days'): number {
  return boundedInteger(value, field, MESSAGE_RETENTION_DAYS.min, MESSAGE_RETENTION_DAYS.max);
}

/** `limit`: 1 to `max` (200 for pages); absent is `fallback`. */
export function validateLimit(
  value: unknown,
  options: { max?: number; fallback?: number; field?: string } = {},
): number {
  const { max = PAGE_LIMIT_MAX, field = 'limit' } = options;
  if (absent(value)) return options.fallback ?? max;
  return boundedInteger(value, field, 1, max);
}

/**
 * `after`: a position cursor, a 64-bit decimal string (or a safe JSON integer) from 0 to
 * 2^63 - 1; absent is 0 (from the start).
 */
export function validateAfter(value: unknown, field = 'after'): bigint {
  if (absent(value)) return 0n;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value !== 'string' || !DIGITS.test(value) || value.length > 19) {
    fail('INVALID_REQUEST', field, 'a position: a decimal string with no sign or leading zero');
  }
  const n = BigInt(value);
  if (n > I64_MAX) fail('INVALID_REQUEST', field, `at most ${I64_MAX}`);
  return n;
}

/** `wait`: 0 to 25 seconds of long polling; absent is 0. */
export function validateWait(value: unknown, field = 'wait'): number {
  if (absent(value)) return 0;
  return boundedInteger(value, field, 0, WAIT_SECONDS_MAX);
}

// ---- a whole post ---------------------------------------------------------------------------

/** A post's input fields after every rule that needs no database; absent fields are omitted. */
export interface PostInput {
  kind: Kind;
  title?: string;
  summary?: string;
  body?: string;
  to?: string[];
  reply_to?: string;
  supersedes?: string;
  retracts?: string;
  fingerprints?: Fingerprint[];
  budget?: JsonObject;
  data?: JsonObject;
  run_id?: string;
  idempotency_key?: string;
}

const POST_FIELDS = new Set([
  'kind', 'title', 'summary', 'body', 'to', 'reply_to', 'supersedes', 'retracts', 'fingerprints', 'budget', 'data', 'run_id',
  'idempotency_key',
]);
const SIGNED_FIELDS = new Set([
  'canonical', 'signature', 'alg', 'private', 'credential_id', 'client_data_json', 'authenticator_data',
]);

/**
 * The unsigned post form of `POST /v1/spaces/{name}/posts` (spec "Post" input fields,
 * objects.md §6): refuses unknown members, checks each field, and normalises: null, `""`
 * (title, body) and empty lists mean absent; fingerprints come back deduplicated and sorted.
 * `to` must already be ascending without repeats and must not name `authorId`.
 * Call it for a SPACE that is not sealed: the signed form (`alg`, `canonical`, ...) and a
 * sealed SPACE's content are read elsewhere, so `sealed` here is SPACE_NOT_SEALED. `routingOnly`:
 * the kind and routing of a sealed post, whose words and data are inside its ciphertext (so a
 * finding's data is its author's software's to check before sealing, never the relay's).
 */
export function validatePostInput(input: unknown, authorId: string, routingOnly = false): PostInput {
  if (!isPlainObject(input)) fail('INVALID_REQUEST', 'body', 'a JSON object with the post fields');
  for (const key of Object.keys(input)) {
    if (SIGNED_FIELDS.has(key)) {
      fail('INVALID_REQUEST', key, 'a signed post sends alg, canonical, private and signature, and no content fields');
    }
    if (key === 'sealed') fail('SPACE_NOT_SEALED', key, 'sealed content goes only to a sealed SPACE');
    if (!POST_FIELDS.has(key)) fail('INVALID_REQUEST', key, 'not a post field');
  }
  const out: PostInput = { kind: validateKind(input.kind) };
  const has = (key: string): boolean => !absent(input[key]);
  if (has('title') && input.title !== '') out.title = validateTitle(input.title);
  if (has('summary') && input.summary !== '') out.summary = validateSummary(input.summary);
  if (has('body') && input.body !== '') out.body = validateBody(input.body);
  if (has('to')) {
    const to = validateRecipients(input.to, authorId);
    if (to.length > 0) out.to = to;
  }
  if (has('reply_to')) out.reply_to = validatePostId(input.reply_to, 'reply_to');
  if (has('supersedes')) out.supersedes = validatePostId(input.supersedes, 'supersedes');
  if (has('retracts')) out.retracts = validatePostId(input.retracts, 'retracts');
  if (out.supersedes !== undefined && out.retracts !== undefined) {
    fail('INVALID_REQUEST', 'retracts', 'a post supersedes or retracts, never both');
  }
  if (has('fingerprints')) {
    const fps = validateFingerprints(input.fingerprints);
    if (fps.length > 0) out.fingerprints = fps;
  }
  if (has('budget')) out.budget = validateBudget(input.budget);
  if (has('data')) out.data = validateData(input.data);
  if (out.kind === 'finding' && !routingOnly) validateFinding(out.data);
  if (has('run_id')) out.run_id = validateRunId(input.run_id);
  if (has('idempotency_key')) out.idempotency_key = validateIdempotencyKey(input.idempotency_key);
  return out;
}
