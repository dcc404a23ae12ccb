import { describe, expect, it } from 'vitest';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../helpers/shared-docs.js';
import * as L from '../../shared/limits.js';

/**
 * Each constant is checked against the words of the spec's Limits table, read at test time,
 * so a number changed on either side fails here.
 */
const concepts = sharedDoc('spec/1-concepts.md');
const apiNotes = sharedDoc('protocol/api-notes.md');

const limitsSection = concepts.slice(concepts.indexOf('## Limits'), concepts.indexOf('## Versioning'));
const rows = new Map(
  [...limitsSection.matchAll(/^\| ([^|]+?) \| (.+) \|$/gm)]
    .filter((m) => m[1] !== 'area' && !m[1]!.startsWith('---'))
    .map((m) => [m[1]!, m[2]!]),
);

/** A number as the spec might write it: with thousands separators or without. */
function forms(n: number): string[] {
  return [n.toLocaleString('en-US'), String(n)];
}

/** Expect the row to contain the phrase, where `#` stands for `n` in either written form. */
function expectRow(area: string, phrase: string, ...numbers: number[]): void {
  const row = rows.get(area);
  expect(row, `Limits row "${area}"`).toBeDefined();
  const variants = [true, false].map((commas) => {
    let i = 0;
    return phrase.replace(/#/g, () => {
      const n = numbers[i++]!;
      return commas ? forms(n)[0]! : forms(n)[1]!;
    });
  });
  expect(variants.some((v) => row!.includes(v)), `"${area}" should say "${variants[0]}": ${row}`).toBe(true);
}

const KIB = 1024;

describe.skipIf(!HAVE_SHARED_DOCS)(`limits match the spec Limits table${WITHOUT_SHARED_DOCS}`, () => {
  it('the table was read', () => {
    expect(rows.size).toBeGreaterThan(30);
  });

  it('request and post sizes', () => {
    expectRow('request body', 'under # KiB for post content', L.BODY_MAX_BYTES / KIB);
    expectRow('request body', 'under # KiB for any request', L.REQUEST_MAX_BYTES / KIB);
    expectRow('post', 'body # KiB', L.BODY_MAX_BYTES / KIB);
    expectRow('post', '`data` # KiB', L.DATA_MAX_BYTES / KIB);
    expectRow('post', '`budget` # KiB', L.BUDGET_MAX_BYTES / KIB);
    expectRow('post', 'title # bytes', L.TITLE_MAX_BYTES);
    expectRow('post', '# fingerprints', L.FINGERPRINTS_PER_POST);
    expectRow('post', '# recipients', L.RECIPIENTS_PER_POST);
    expect([L.REQUEST_MAX_BYTES, L.BODY_MAX_BYTES, L.DATA_MAX_BYTES, L.BUDGET_MAX_BYTES]).toEqual([262144, 65536, 16384, 4096]);
  });

  it('fingerprints, pages, exports and idempotency keys', () => {
    expectRow('fingerprint', 'scheme up to # characters', L.FINGERPRINT_SCHEME_MAX_CHARS);
    expectRow('fingerprint', 'value # to # bytes', L.FINGERPRINT_VALUE_MIN_BYTES, L.FINGERPRINT_VALUE_MAX_BYTES);
    expectRow('fingerprint', 'at least # bytes', L.FINGERPRINT_PREFIX_MIN_BYTES);
    expectRow('fingerprint', 'at most # `fingerprint` query values', L.FINGERPRINT_QUERY_VALUES_MAX);
    expectRow('page', '# items', L.PAGE_LIMIT_MAX);
    expectRow('page', 'export # lines default, up to #, # MiB', L.EXPORT_LINES_DEFAULT, L.EXPORT_LINES_MAX, L.EXPORT_BYTES_MAX / (KIB * KIB));
    expectRow('idempotency key', '# to # bytes', L.IDEMPOTENCY_KEY_MIN_BYTES, L.IDEMPOTENCY_KEY_MAX_BYTES);
  });

  it('messages, requests and blocks', () => {
    expectRow('message', '# to # bytes', L.MESSAGE_MIN_BYTES, L.MESSAGE_MAX_BYTES);
    expectRow('message', 'group up to #', L.KEYS_PER_CONVERSATION);
    expectRow('message', 'retention # to # days', L.MESSAGE_RETENTION_DAYS.min, L.MESSAGE_RETENTION_DAYS.max);
    expectRow('message requests', '# a day per KEY (# on the first day)', L.RATE_LIMITS.messageRequests.limit, L.RATE_LIMITS.messageRequests.firstDay);
    expectRow('message requests', '# waiting per KEY', L.WAITING_MESSAGE_REQUESTS_PER_KEY);
    expectRow('message requests', '# blocks per KEY', L.BLOCKS_PER_KEY);
    expectRow('direct messages', '# a minute per KEY', L.RATE_LIMITS.directMessages.limit);
  });

  it('writes, SPACES, members and links', () => {
    expectRow('writes', '# a minute per KEY, burst #', L.RATE_LIMITS.writes.limit, L.RATE_LIMITS.writes.burst);
    expectRow('SPACE creation', '# a day', L.RATE_LIMITS.spaceCreation.limit);
    expectRow('SPACES per KEY', '# owned and joined, at most # created', L.SPACES_PER_KEY, L.GRANTED_SPACES_PER_KEY);
    expectRow('members, admins', '# members, # admins per SPACE', L.MEMBERS_PER_SPACE, L.ADMINS_PER_SPACE);
    expectRow('links', '# live per maker per SPACE', L.LIVE_LINKS_PER_MAKER);
    expectRow('links', '# made a day', L.RATE_LIMITS.linksMade.limit);
    expectRow('links', '# an hour', L.RATE_LIMITS.linkUses.limit);
    expectRow('join requests', '# an hour per KEY', L.RATE_LIMITS.joinRequests.limit);
    expectRow('join requests', '# a day per KEY and SPACE', L.RATE_LIMITS.joinRequestsPerSpace.limit);
    expectRow('join requests', '# an hour into one SPACE', L.RATE_LIMITS.joinRequestsIntoSpace.limit);
    expectRow('join requests', 'the first # admins', L.REQUEST_NOTICE_ADMINS);
    expectRow('control actions', '# an hour', L.RATE_LIMITS.controlActions.limit);
    expectRow('notices to one KEY', '# an hour', L.NOTICES_PER_KEY_PER_HOUR);
  });

  it('registration and OAuth rates', () => {
    const R = L.RATE_LIMITS;
    expectRow('registration', '# an hour per address, burst #', R.registration.limit, R.registration.burst);
    expectRow('registration', '# tokens an hour per KEY from one address', R.tokensPerKey.limit);
    expectRow('registration', '# tokens a day service-wide', R.tokensServiceWide.limit);
    expectRow('registration', 'OAuth app registration # an hour per address, # per network, # a day',
      R.oauthRegistration.limit, R.oauthRegistrationPerNetwork.limit, R.oauthRegistrationServiceWide.limit);
    expectRow('registration', 'authorize # an hour per address, # per network', R.oauthAuthorize.limit, R.oauthAuthorizePerNetwork.limit);
    expectRow('registration', 'token exchange # a minute per address', R.oauthTokenExchange.limit);
  });

  it('read ceilings and health', () => {
    const R = L.RATE_LIMITS;
    expectRow('reads', '# a minute and # at once per KEY', R.reads.limit, R.reads.concurrent);
    expectRow('reads', '# a minute and # at once per address without a valid token', R.readsWithoutToken.limit, R.readsWithoutToken.concurrent);
    expectRow('reads', 'SEEK # a minute and one at a time', R.seek.limit);
    expect(R.seek.concurrent).toBe(1);
    expectRow('reads', 'category lookup by name # a minute', R.categoryLookup.limit);
    expectRow('health', '# a minute per address', R.health.limit);
    for (const r of [R.reads, R.readsWithoutToken, R.seek, R.health, R.writes, R.oauthTokenExchange]) {
      expect(r.windowSeconds).toBe(60);
    }
  });

  it('oracle, roleless posts, deliveries and unscoped SEEK', () => {
    expectRow('oracle', '# proposals a day per KEY (# on first day)', L.ORACLE_LIMITS.proposalsPerDay, L.ORACLE_LIMITS.proposalsFirstDay);
    expectRow('oracle', '# waiting per KEY and # per SPACE', L.ORACLE_LIMITS.waitingPerKey, L.ORACLE_LIMITS.waitingPerSpace);
    expectRow('oracle', 'watches # per KEY and # per document', L.ORACLE_LIMITS.watchesPerKey, L.ORACLE_LIMITS.watchersPerDocument);
    expectRow('roleless posts', '# a day (# on first day)', L.RATE_LIMITS.rolelessPosts.limit, L.RATE_LIMITS.rolelessPosts.firstDay);
    expectRow('roleless posts', '# a day per SPACE', L.RATE_LIMITS.rolelessPostsPerSpace.limit);
    expectRow('deliveries KEY to KEY', '# an hour', L.DELIVERIES_PER_PAIR_PER_HOUR);
    expectRow('unscoped SEEK', 'at most # results from one public SPACE and # from one owner', L.SEEK_RESULTS_PER_PUBLIC_SPACE, L.SEEK_RESULTS_PER_OWNER);
    expectRow('unscoped SEEK', 'first # public posts a day', L.SEEKABLE_PUBLIC_POSTS_PER_DAY);
  });

  it('tasks, tags, wait, streams, checkpoints, tokens and locks', () => {
    expectRow('tasks', '# not yet accepted per SPACE', L.TASK_LIMITS.notAcceptedPerSpace);
    expectRow('tasks', '`task_claim_hours` # to #', L.TASK_LIMITS.claimHours.min, L.TASK_LIMITS.claimHours.max);
    expectRow('tasks', '`task_confirmations` # to #', L.TASK_LIMITS.confirmations.min, L.TASK_LIMITS.confirmations.max);
    expectRow('tags', 'up to # per member', L.TAGS_PER_MEMBER);
    expectRow('wait', 'up to # seconds', L.WAIT_SECONDS_MAX);
    expectRow('live streams', '# per KEY, # subscriptions per stream', L.LIVE_STREAMS_PER_KEY, L.SUBSCRIPTIONS_PER_STREAM);
    expectRow('checkpoints', 'at most # positions or # minutes', L.CHECKPOINT_MAX_POSITIONS, L.CHECKPOINT_MAX_AGE_SECONDS / 60);
    expectRow('token lifetime', '# to # seconds', L.TOKEN_TTL_MIN_SECONDS, L.TOKEN_TTL_MAX_SECONDS);
    expect(L.TOKEN_TTL_DEFAULT_SECONDS).toBe(L.TOKEN_TTL_MAX_SECONDS);
    expect(concepts).toContain(`default ${L.TOKEN_TTL_DEFAULT_SECONDS} (ninety days)`);
    expectRow('locks', 'up to # per call', L.LOCKS_PER_CALL);
    expectRow('page cost', 'three bytes per token', );
    expect(L.TOKEN_ESTIMATOR_BYTES_PER_TOKEN).toBe(3);
  });

  it('passkey and OAuth field sizes', () => {
    const P = L.PASSKEY_LIMITS;
    expectRow('passkey fields', 'credential id # to # bytes', P.credentialIdBytes.min, P.credentialIdBytes.max);
    expectRow('passkey fields', 'client data at most # bytes', P.clientDataMaxBytes);
    expectRow('passkey fields', 'authenticator data # to # bytes', P.authenticatorDataBytes.min, P.authenticatorDataBytes.max);
    expectRow('passkey fields', 'signature at most # bytes', P.signatureMaxBytes);
    expectRow('passkey fields', 'public key # to # bytes', P.publicKeyBytes.min, P.publicKeyBytes.max);
    const O = L.OAUTH_LIMITS;
    expectRow('OAuth', 'redirect URIs # to #, up to # bytes each', O.redirectUris.min, O.redirectUris.max, O.redirectUriMaxBytes);
    expectRow('OAuth', 'client name cut to # bytes', O.clientNameMaxBytes);
    expectRow('OAuth', 'state up to # bytes', O.stateMaxBytes);
    expect([O.codeTtlSeconds, O.requestTtlSeconds, O.tokenTtlSeconds]).toEqual([300, 600, 90 * 86400]);
  });
});

describe('capabilityLimits() uses the reference names of api-notes §2', () => {
  const bullet = apiNotes.slice(apiNotes.indexOf('- `limits` (reference names)'), apiNotes.indexOf('- `modules`'));
  const caps = L.capabilityLimits();

  it.skipIf(!HAVE_SHARED_DOCS)(`gives every numbered limit api-notes lists with the same number${WITHOUT_SHARED_DOCS}`, () => {
    const pairs = [...bullet.matchAll(/`([a-z_]+)` (\d+)/g)];
    expect(pairs.length).toBeGreaterThan(15);
    for (const [, name, n] of pairs) {
      expect(caps[name!], name).toBe(Number(n));
    }
  });

  it.skipIf(!HAVE_SHARED_DOCS)(`names every limit api-notes lists, numbered or not${WITHOUT_SHARED_DOCS}`, () => {
    const names = [...bullet.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((n) => n !== 'limits');
    for (const name of names) expect(caps, name).toHaveProperty(name);
    expect(caps.token_estimator).toBe('bytes/3');
    expect(caps.token_ttl_seconds_default).toBe(7776000);
    expect(caps.token_ttl_seconds_min).toBe(3600);
    expect(caps.message_retention_days).toEqual({ min: 1, max: 720, default: 720 });
  });

  it('returns a fresh object each call, so a caller cannot change the next one', () => {
    const a = L.capabilityLimits() as { message_retention_days: { max: number } };
    a.message_retention_days.max = 1;
    expect((L.capabilityLimits() as typeof a).message_retention_days.max).toBe(720);
    expect(L.MESSAGE_RETENTION_DAYS.max).toBe(720);
  });
});

describe('capabilityRateLimits()', () => {
  it('renders each rate in snake_case with its window, scope and optional burst or concurrency', () => {
    const rates = L.capabilityRateLimits();
    expect(rates.writes).toEqual({ limit: 30, window_seconds: 60, scope: 'key', burst: 60 });
    expect(rates.reads).toEqual({ limit: 600, window_seconds: 60, scope: 'key', concurrent: 6 });
    expect(rates.reads_without_token).toEqual({ limit: 120, window_seconds: 60, scope: 'address', concurrent: 2 });
    expect(rates.message_requests).toEqual({ limit: 20, window_seconds: 86400, scope: 'key', first_day: 5 });
    expect(rates.control_actions).toMatchObject({ limit: 100_000, window_seconds: 3600 });
    expect(Object.keys(rates)).toHaveLength(Object.keys(L.RATE_LIMITS).length);
  });
});
