import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../helpers/shared-docs.js';
import { SvcError, type ErrorCode } from '../../shared/errors.js';
import * as V from '../../shared/validate.js';
import * as W from '../../shared/vocabulary.js';

const AUTHOR = 'a'.repeat(64);
const P1 = '1'.repeat(64);
const P2 = 'b'.repeat(64);
const P3 = 'c'.repeat(64);
const ID1 = '0190d5c4-2f3b-7cde-8f00-0123456789ab';
const ID2 = '0190d5c4-2f3b-7cde-8f00-0123456789ac';
const HASH = 'ab'.repeat(32);

function refusal(run: () => unknown): SvcError {
  try {
    run();
  } catch (e) {
    if (e instanceof SvcError) return e;
    throw e;
  }
  throw new Error('the input was accepted');
}

/** [what is refused, the call, the code, the field the detail must start with] */
type Refusal = [string, () => unknown, ErrorCode, string];

function refusals(table: Refusal[]): void {
  for (const [name, run, code, field] of table) {
    it(`refuses ${name} with ${code} naming ${field}`, () => {
      const e = refusal(run);
      expect(e.code).toBe(code);
      expect(e.detail?.startsWith(`${field}: `), `detail "${e.detail}"`).toBe(true);
    });
  }
}

const budget = (extra: Record<string, unknown> = {}) => ({ observed_at: '2026-01-31T12:00:00Z', ...extra });
const fp = (scheme: string, value: string) => ({ scheme, value });

describe('SPACE names', () => {
  refusals([
    ['a name two characters long', () => V.validateSpaceName('ab'), 'INVALID_REQUEST', 'name'],
    ['a name sixty-four characters long', () => V.validateSpaceName('a'.repeat(64)), 'INVALID_REQUEST', 'name'],
    ['uppercase letters', () => V.validateSpaceName('Abc'), 'INVALID_REQUEST', 'name'],
    ['a leading hyphen', () => V.validateSpaceName('-abc'), 'INVALID_REQUEST', 'name'],
    ['an underscore', () => V.validateSpaceName('abc_d'), 'INVALID_REQUEST', 'name'],
    ['a number', () => V.validateSpaceName(123), 'INVALID_REQUEST', 'name'],
    ['a reserved route noun', () => V.validateSpaceName('seek'), 'NAME_RESERVED', 'name'],
    ['a reserved funding word', () => V.validateSpaceName('treasury'), 'NAME_RESERVED', 'name'],
    ['the brand word', () => V.validateSpaceName('svc'), 'NAME_RESERVED', 'name'],
    ['a name starting svc-', () => V.validateSpaceName('svc-tools'), 'NAME_RESERVED', 'name'],
    ['a reserved name shorter than the pattern allows', () => V.validateSpaceName('me'), 'NAME_RESERVED', 'name'],
    ['a reserved name under another field name', () => V.validateSpaceName('my-work', 'about'), 'NAME_RESERVED', 'about'],
  ]);

  it('accepts names at both length bounds and names that only look like reserved ones', () => {
    for (const name of ['abc', 'a'.repeat(63), '0-x', 'svcx-tools', 'my-work2', 'seeker', 'svc2']) {
      expect(V.validateSpaceName(name)).toBe(name);
    }
  });
});

describe('member tags and roles', () => {
  refusals([
    ['tags that are not a list', () => V.validateTags('alpha'), 'INVALID_TAGS', 'tags'],
    ['nine tags', () => V.validateTags(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9']), 'INVALID_TAGS', 'tags'],
    ['an uppercase tag', () => V.validateTags(['ok', 'Bad']), 'INVALID_TAGS', 'tags[1]'],
    ['an empty tag', () => V.validateTags(['']), 'INVALID_TAGS', 'tags[0]'],
    ['a tag of 33 characters', () => V.validateTags(['a'.repeat(33)]), 'INVALID_TAGS', 'tags[0]'],
    ['a tag with a space', () => V.validateTags(['two words']), 'INVALID_TAGS', 'tags[0]'],
    ['a tag that is not a string', () => V.validateTags([7]), 'INVALID_TAGS', 'tags[0]'],
    ['a tag listed twice', () => V.validateTags(['x', 'x']), 'INVALID_TAGS', 'tags[1]'],
    ['a role name as a tag', () => V.validateTags(['ok', 'owner']), 'TAG_RESERVED', 'tags[1]'],
    ['an authority word as a tag', () => V.validateTags(['verified']), 'TAG_RESERVED', 'tags[0]'],
    ['the brand word as a tag', () => V.validateTags(['svc']), 'TAG_RESERVED', 'tags[0]'],
    ['owner as a role', () => V.validateRole('owner'), 'INVALID_ROLE', 'role'],
    ['a capitalised role', () => V.validateRole('Admin'), 'INVALID_ROLE', 'role'],
    ['a missing role', () => V.validateRole(undefined), 'INVALID_ROLE', 'role'],
    ['admin given by a link', () => V.validateLinkRole('admin'), 'INVALID_ROLE', 'role'],
  ]);

  it('returns tags sorted, and accepts eight, none, and words that merely contain a reserved one', () => {
    expect(V.validateTags(['zeta', 'alpha', 'b.c_d-e'])).toEqual(['alpha', 'b.c_d-e', 'zeta']);
    expect(V.validateTags([])).toEqual([]);
    const eight = ['h', 'g', 'f', 'e', 'd', 'c', 'b', 'a'];
    expect(V.validateTags(eight)).toEqual([...eight].sort());
    expect(V.validateTags(['owners', 'svc2', 'a'.repeat(32)])).toEqual(['a'.repeat(32), 'owners', 'svc2']);
  });

  it('any set of valid tags comes back sorted and otherwise unchanged', () => {
    const tag = fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,31}$/).filter((t) => !W.RESERVED_TAGS.includes(t));
    fc.assert(
      fc.property(fc.uniqueArray(tag, { maxLength: 8 }), (tags) => {
        expect(V.validateTags(tags)).toEqual([...tags].sort());
      }),
    );
  });

  it('accepts each of the four roles, and the three a link may give', () => {
    for (const role of ['admin', 'coordinator', 'writer', 'reader']) expect(V.validateRole(role)).toBe(role);
    for (const role of ['coordinator', 'writer', 'reader']) expect(V.validateLinkRole(role)).toBe(role);
  });
});

describe('SPACE settings', () => {
  refusals([
    ['an unknown visibility', () => V.validateVisibility('secret'), 'INVALID_REQUEST', 'visibility'],
    ['an unknown join policy', () => V.validateJoinPolicy('closed'), 'INVALID_REQUEST', 'join_policy'],
    ['six task confirmations', () => V.validateTaskConfirmations(6), 'INVALID_REQUEST', 'task_confirmations'],
    ['a claim of zero hours', () => V.validateTaskClaimHours(0), 'INVALID_REQUEST', 'task_claim_hours'],
    ['a claim of 25 hours', () => V.validateTaskClaimHours(25), 'INVALID_REQUEST', 'task_claim_hours'],
    ['unknown task confirmers', () => V.validateTaskConfirmers('all'), 'INVALID_REQUEST', 'task_confirmers'],
    ['an invite with zero uses', () => V.validateInviteBound(0, 'max_uses'), 'INVALID_REQUEST', 'max_uses'],
    ['an invite expiry of 1.5 seconds', () => V.validateInviteBound(1.5, 'expires_in_seconds'), 'INVALID_REQUEST', 'expires_in_seconds'],
  ]);

  it('accepts the bounds and null for an unlimited invite', () => {
    expect(V.validateVisibility('sealed')).toBe('sealed');
    expect(V.validateJoinPolicy('open')).toBe('open');
    expect([V.validateTaskConfirmations(0), V.validateTaskConfirmations(5)]).toEqual([0, 5]);
    expect([V.validateTaskClaimHours(1), V.validateTaskClaimHours(24)]).toEqual([1, 24]);
    expect(V.validateTaskConfirmers('coordinators')).toBe('coordinators');
    expect(V.validateInviteBound(null, 'max_uses')).toBeNull();
    expect(V.validateInviteBound(10, 'max_uses')).toBe(10);
  });
});

describe('post kind, title, body, ids and idempotency key', () => {
  refusals([
    ['the kind answer, which does not exist', () => V.validateKind('answer'), 'INVALID_KIND', 'kind'],
    ['an uppercase kind', () => V.validateKind('OBS'), 'INVALID_KIND', 'kind'],
    ['a missing kind', () => V.validateKind(undefined), 'INVALID_KIND', 'kind'],
    ['a title of 513 bytes', () => V.validateTitle('t'.repeat(513)), 'INVALID_REQUEST', 'title'],
    ['a title of 257 two-byte characters', () => V.validateTitle('é'.repeat(257)), 'INVALID_REQUEST', 'title'],
    ['a title with a lone surrogate', () => V.validateTitle('a\ud800b'), 'INVALID_REQUEST', 'title'],
    ['a title with U+0000', () => V.validateTitle('a\u0000b'), 'INVALID_REQUEST', 'title'],
    ['a title that is not text', () => V.validateTitle(12), 'INVALID_REQUEST', 'title'],
    ['a body one byte over 64 KiB', () => V.validateBody('b'.repeat(65537)), 'TOO_LARGE', 'body'],
    ['a run id in uppercase', () => V.validateRunId(ID1.toUpperCase()), 'INVALID_REQUEST', 'run_id'],
    ['a run id that is not a uuid', () => V.validateRunId('run-1'), 'INVALID_REQUEST', 'run_id'],
    ['a reply_to that is not a uuid', () => V.validatePostId('12', 'reply_to'), 'INVALID_REQUEST', 'reply_to'],
    ['an empty idempotency key', () => V.validateIdempotencyKey(''), 'INVALID_REQUEST', 'idempotency_key'],
    ['an idempotency key of 129 bytes', () => V.validateIdempotencyKey('k'.repeat(129)), 'INVALID_REQUEST', 'idempotency_key'],
    ['an idempotency key of 65 two-byte characters', () => V.validateIdempotencyKey('é'.repeat(65)), 'INVALID_REQUEST', 'idempotency_key'],
    ['a numeric idempotency key', () => V.validateIdempotencyKey(5), 'INVALID_REQUEST', 'idempotency_key'],
  ]);

  it('accepts all twenty-one kinds (the spec\'s twenty and the newer API\'s finding) and the size bounds exactly', () => {
    expect(W.KINDS).toHaveLength(21);
    for (const kind of W.KINDS) expect(V.validateKind(kind)).toBe(kind);
    expect(V.validateTitle('t'.repeat(512))).toHaveLength(512);
    expect(V.validateBody('b'.repeat(65536))).toHaveLength(65536);
    expect(V.validateIdempotencyKey('é'.repeat(64))).toHaveLength(64);
    expect(V.validateIdempotencyKey('k')).toBe('k');
    expect(V.validateRunId(ID1)).toBe(ID1);
  });
});

describe('recipients (to)', () => {
  refusals([
    ['to that is not a list', () => V.validateRecipients(P1, AUTHOR), 'INVALID_REQUEST', 'to'],
    ['nine recipients', () => V.validateRecipients(Array.from({ length: 9 }, (_, i) => String(i).repeat(64)), AUTHOR), 'INVALID_REQUEST', 'to'],
    ['an uppercase peer id', () => V.validateRecipients(['B'.repeat(64)], AUTHOR), 'INVALID_REQUEST', 'to[0]'],
    ['a peer id prefix', () => V.validateRecipients(['b'.repeat(63)], AUTHOR), 'INVALID_REQUEST', 'to[0]'],
    ['a descending list', () => V.validateRecipients([P2, P1], AUTHOR), 'INVALID_REQUEST', 'to[1]'],
    ['a repeated recipient', () => V.validateRecipients([P1, P1], AUTHOR), 'INVALID_REQUEST', 'to[1]'],
    ['the author itself', () => V.validateRecipients([AUTHOR], AUTHOR), 'INVALID_REQUEST', 'to[0]'],
    ['a peer id that is not hex', () => V.validatePeerId('z'.repeat(64)), 'INVALID_REQUEST', 'peer_id'],
  ]);

  it('accepts up to eight ascending peer ids', () => {
    expect(V.validateRecipients([P1, P2, P3], AUTHOR)).toEqual([P1, P2, P3]);
    const eight = Array.from({ length: 8 }, (_, i) => String(i + 1).repeat(64));
    expect(V.validateRecipients(eight, AUTHOR)).toEqual(eight);
    expect(V.isPeerId(P1)).toBe(true);
    expect(V.isPeerId(P1.toUpperCase().replace(/1/g, 'F'))).toBe(false);
  });
});

describe('fingerprints', () => {
  refusals([
    ['fingerprints that are not a list', () => V.validateFingerprints({}), 'INVALID_REQUEST', 'fingerprints'],
    ['33 fingerprints', () => V.validateFingerprints(Array.from({ length: 33 }, (_, i) => fp('x', String(i)))), 'INVALID_REQUEST', 'fingerprints'],
    ['the scheme:value text form in a body', () => V.validateFingerprints(['git.commit:abc']), 'INVALID_REQUEST', 'fingerprints[0]'],
    ['a member besides scheme and value', () => V.validateFingerprints([{ ...fp('x', 'y'), note: 1 }]), 'INVALID_REQUEST', 'fingerprints[0].note'],
    ['an uppercase scheme', () => V.validateFingerprints([fp('Git', 'y')]), 'INVALID_REQUEST', 'fingerprints[0].scheme'],
    ['a scheme starting with a digit', () => V.validateFingerprints([fp('1git', 'y')]), 'INVALID_REQUEST', 'fingerprints[0].scheme'],
    ['a scheme of 65 characters', () => V.validateFingerprints([fp('s'.repeat(65), 'y')]), 'INVALID_REQUEST', 'fingerprints[0].scheme'],
    ['a scheme with a colon', () => V.validateFingerprints([fp('a:b', 'y')]), 'INVALID_REQUEST', 'fingerprints[0].scheme'],
    ['the reserved svc. scheme prefix', () => V.validateFingerprints([fp('ok', 'y'), fp('svc.internal', 'y')]), 'SCHEME_RESERVED', 'fingerprints[1].scheme'],
    ['an empty value', () => V.validateFingerprints([fp('x', '')]), 'INVALID_REQUEST', 'fingerprints[0].value'],
    ['a value of 1025 bytes', () => V.validateFingerprints([fp('x', 'é'.repeat(512) + 'v')]), 'INVALID_REQUEST', 'fingerprints[0].value'],
    ['a value with U+0000', () => V.validateFingerprints([fp('x', 'a\u0000')]), 'INVALID_REQUEST', 'fingerprints[0].value'],
    ['a sha256.file value in uppercase', () => V.validateFingerprints([fp('sha256.file', HASH.toUpperCase())]), 'INVALID_REQUEST', 'fingerprints[0].value'],
    ['a sha256.file value of 63 characters', () => V.validateFingerprints([fp('sha256.file', HASH.slice(1))]), 'INVALID_REQUEST', 'fingerprints[0].value'],
    ['a query without a colon', () => V.parseFingerprintQuery('gitcommit'), 'INVALID_REQUEST', 'fingerprint'],
    ['a query with an empty scheme', () => V.parseFingerprintQuery(':abc'), 'INVALID_REQUEST', 'fingerprint'],
    ['a query with an empty value', () => V.parseFingerprintQuery('git.commit:'), 'INVALID_REQUEST', 'fingerprint'],
    ['nine query values', () => V.validateFingerprintQueries(Array.from({ length: 9 }, (_, i) => `x:${i}`)), 'INVALID_REQUEST', 'fingerprint'],
    ['a prefix of five bytes', () => V.parseFingerprintPrefix('git.commit:abcde'), 'INVALID_REQUEST', 'fingerprint_prefix'],
    ['a prefix without a scheme', () => V.parseFingerprintPrefix('abcdefgh'), 'INVALID_REQUEST', 'fingerprint_prefix'],
  ]);

  it('accepts a 1024-byte value, a scheme that only starts like the reserved one, and 32 fingerprints', () => {
    expect(V.validateFingerprints([fp('x', 'é'.repeat(512))])[0]!.value).toHaveLength(512);
    expect(V.validateFingerprints([fp('svcx.y', 'v'), fp('svc', 'v')])).toEqual([fp('svc', 'v'), fp('svcx.y', 'v')]);
    expect(V.validateFingerprints(Array.from({ length: 32 }, (_, i) => fp('n', String(i).padStart(2, '0'))))).toHaveLength(32);
    expect(V.validateFingerprints([fp('sha256.file', HASH)])).toEqual([fp('sha256.file', HASH)]);
  });

  it('sorts by scheme then value and drops exact repeats', () => {
    const out = V.validateFingerprints([fp('b', 'x'), fp('a', 'z'), fp('a', 'y'), fp('b', 'x')]);
    expect(out).toEqual([fp('a', 'y'), fp('a', 'z'), fp('b', 'x')]);
  });

  it('sorts values in UTF-8 byte order, not UTF-16 order', () => {
    // U+FFFD is EF BF BD in UTF-8 and sorts before U+1F600 (F0 ...); in UTF-16 it sorts after.
    const out = V.validateFingerprints([fp('x', '\u{1F600}'), fp('x', '\uFFFD')]);
    expect(out.map((f) => f.value)).toEqual(['\uFFFD', '\u{1F600}']);
  });

  it('validating again changes nothing, and the result is strictly ascending', () => {
    const scheme = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,8}$/).filter((s) => !s.startsWith('svc.') && s !== 'sha256.file');
    const value = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.record({ scheme, value }), { maxLength: 32 }), (list) => {
        const once = V.validateFingerprints(list);
        expect(V.validateFingerprints(once)).toEqual(once);
        for (let i = 1; i < once.length; i++) expect(V.compareFingerprints(once[i - 1]!, once[i]!)).toBeLessThan(0);
      }),
    );
  });

  it('splits the query form on the first colon, and measures a prefix in bytes', () => {
    expect(V.parseFingerprintQuery('git.commit:a:b')).toEqual(fp('git.commit', 'a:b'));
    expect(V.validateFingerprintQueries(['x:1', 'y:2'])).toEqual([fp('x', '1'), fp('y', '2')]);
    expect(V.validateFingerprintQueries('x:1')).toEqual([fp('x', '1')]);
    expect(V.validateFingerprintQueries(undefined)).toEqual([]);
    expect(V.parseFingerprintPrefix('git.commit:abcdef')).toEqual(fp('git.commit', 'abcdef'));
    expect(V.parseFingerprintPrefix('x:ééé')).toEqual(fp('x', 'ééé'));
  });
});

describe('budget', () => {
  const metric = (m: Record<string, unknown>) => budget({ compute: m });
  refusals([
    ['a budget that is not an object', () => V.validateBudget([]), 'INVALID_REQUEST', 'budget'],
    ['a budget without observed_at', () => V.validateBudget({}), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at without a zone', () => V.validateBudget({ observed_at: '2026-01-31T12:00:00' }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at without seconds', () => V.validateBudget({ observed_at: '2026-01-31T12:00Z' }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at with a space for T', () => V.validateBudget({ observed_at: '2026-01-31 12:00:00Z' }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at on 30 February', () => V.validateBudget({ observed_at: '2026-02-30T12:00:00Z' }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at on 29 February 2100', () => V.validateBudget({ observed_at: '2100-02-29T12:00:00Z' }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at at hour 24', () => V.validateBudget({ observed_at: '2026-01-31T24:00:00Z' }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['observed_at as a number', () => V.validateBudget({ observed_at: 1767225600 }), 'INVALID_REQUEST', 'budget.observed_at'],
    ['an unknown metric', () => V.validateBudget(budget({ gpu: {} })), 'INVALID_REQUEST', 'budget.gpu'],
    ['a metric that is not an object', () => V.validateBudget(budget({ compute: '5' })), 'INVALID_REQUEST', 'budget.compute'],
    ['a metric with another member', () => V.validateBudget(metric({ remaining: '1', estimated: true, max: '2' })), 'INVALID_REQUEST', 'budget.compute.max'],
    ['a metric without remaining', () => V.validateBudget(metric({ unit: 'usd', estimated: true })), 'INVALID_REQUEST', 'budget.compute.remaining'],
    ['remaining in exponent form', () => V.validateBudget(metric({ remaining: '1e3', estimated: true })), 'INVALID_REQUEST', 'budget.compute.remaining'],
    ['remaining with a leading zero', () => V.validateBudget(metric({ remaining: '01', estimated: true })), 'INVALID_REQUEST', 'budget.compute.remaining'],
    ['remaining as a JSON number', () => V.validateBudget(metric({ remaining: 5, estimated: true })), 'INVALID_REQUEST', 'budget.compute.remaining'],
    ['an estimate of an unknown remaining', () => V.validateBudget(metric({ remaining: null, estimated: true })), 'INVALID_REQUEST', 'budget.compute.estimated'],
    ['a known remaining with a null estimate', () => V.validateBudget(metric({ remaining: '5', estimated: null })), 'INVALID_REQUEST', 'budget.compute.estimated'],
    ['a known remaining with no estimate', () => V.validateBudget(metric({ remaining: '5' })), 'INVALID_REQUEST', 'budget.compute.estimated'],
    ['a unit that is not text', () => V.validateBudget(metric({ remaining: '5', unit: 5, estimated: true })), 'INVALID_REQUEST', 'budget.compute.unit'],
    ['a budget over 4 KiB as canonical JSON', () => V.validateBudget(metric({ remaining: '5', unit: 'u'.repeat(4096), estimated: true })), 'TOO_LARGE', 'budget'],
    ['a lone surrogate inside a budget', () => V.validateBudget(metric({ remaining: '5', unit: '\udc00', estimated: true })), 'INVALID_REQUEST', 'budget.compute.unit'],
  ]);

  it('accepts known, zero and unknown amounts, offsets, fractions and a leap day', () => {
    const b = {
      observed_at: '2024-02-29T23:59:59.123456789+05:30',
      compute: { remaining: '12.5', unit: 'usd', estimated: true },
      execution_time: { remaining: '0', unit: 'seconds', estimated: false },
      output_tokens: { remaining: null, unit: 'tokens', estimated: null },
      context_available: { remaining: null, unit: null },
    };
    expect(V.validateBudget(b)).toEqual(b);
    expect(V.validateBudget(budget())).toEqual(budget());
    expect(V.isRfc3339('2026-12-31T00:00:00-00:00')).toBe(true);
    expect(V.isRfc3339('2026-12-31t00:00:00z')).toBe(false);
    expect(V.isRfc3339('2026-06-31T00:00:00Z')).toBe(false);
  });
});

describe('data', () => {
  refusals([
    ['data that is a list', () => V.validateData([1]), 'INVALID_REQUEST', 'data'],
    ['data that is null', () => V.validateData(null), 'INVALID_REQUEST', 'data'],
    ...(['expected_version', 'lease_until', 'fencing_token', 'lane_version'].map((key) => [
      `the refused key ${key}`,
      () => V.validateData({ [key]: 1 }),
      'INVALID_REQUEST',
      `data.${key}`,
    ]) as Refusal[]),
    ...(['sponsored_by', 'Sponsorship', 'x_sponsor', 'generated_by_service', 'serviceGenerated', 'svc_generated'].map((key) => [
      `the claiming key ${key}`,
      () => V.validateData({ [key]: true }),
      'INVALID_REQUEST',
      `data.${key}`,
    ]) as Refusal[]),
    ['an unknown return_status', () => V.validateData({ return_status: 'maybe' }), 'INVALID_REQUEST', 'data.return_status'],
    ['a subject_peer in uppercase', () => V.validateData({ subject_peer: 'B'.repeat(64) }), 'INVALID_REQUEST', 'data.subject_peer'],
    ['a subject_run that is not a uuid', () => V.validateData({ subject_run: 'run-1' }), 'INVALID_REQUEST', 'data.subject_run'],
    ['an exact_dup_of that is not a post id', () => V.validateData({ exact_dup_of: 'abc' }), 'INVALID_REQUEST', 'data.exact_dup_of'],
    ['an exact_dup_of naming 33 posts', () => V.validateData({ exact_dup_of: Array(33).fill(ID1) }), 'INVALID_REQUEST', 'data.exact_dup_of'],
    ['an attribution given as one id', () => V.validateData({ attribution: ID1 }), 'INVALID_REQUEST', 'data.attribution'],
    ['an attribution naming something else', () => V.validateData({ attribution: [ID1, 'seq-4'] }), 'INVALID_REQUEST', 'data.attribution'],
    ['U+0000 inside data', () => V.validateData({ note: 'a\u0000' }), 'INVALID_REQUEST', 'data.note'],
    ['the integer 2^53 inside data', () => V.validateData({ n: 2 ** 53 }), 'INVALID_REQUEST', 'data.n'],
    ['a non-finite number inside data', () => V.validateData({ n: [Infinity] }), 'INVALID_REQUEST', 'data.n[0]'],
    ['data one byte over 16 KiB as canonical JSON', () => V.validateData({ a: 'x'.repeat(16377) }), 'TOO_LARGE', 'data'],
  ]);

  it('accepts data of exactly 16 KiB as canonical JSON', () => {
    // {"a":"…"} is eight bytes around the value.
    expect(V.validateData({ a: 'x'.repeat(16376) })).toBeDefined();
  });

  it('accepts the shape-checked keys in their shapes, reserved names and x_ keys as sent', () => {
    const data = {
      return_status: 'revived',
      subject_peer: P1,
      subject_run: ID1,
      exact_dup_of: ID2,
      attribution: [ID1, ID2],
      sources: ['anything', 3],
      dossier: { cursor: '12' },
      x_expected_version: 4,
      generation: 2,
      note: 'service notes',
    };
    expect(V.validateData(data)).toEqual(data);
    expect(V.validateData({ exact_dup_of: [ID1, ID2] })).toEqual({ exact_dup_of: [ID1, ID2] });
    expect(V.validateData({ attribution: [] })).toEqual({ attribution: [] });
    for (const status of W.RETURN_STATUSES) expect(V.validateData({ return_status: status })).toBeDefined();
  });

  it('tells a sponsorship or service-generation claim from an ordinary key', () => {
    expect(V.claimsSponsorshipOrService('Sponsored-By')).toBe(true);
    expect(V.claimsSponsorshipOrService('generatedByOperator')).toBe(true);
    expect(V.claimsSponsorshipOrService('generated_by')).toBe(false);
    expect(V.claimsSponsorshipOrService('service_name')).toBe(false);
  });
});

describe('a finding\'s data (the newer API\'s kind finding)', () => {
  const ok = { claim: 'The cache halves p50', status: 'proposed', confidence: 'low' };
  refusals([
    ['a finding without data', () => V.validatePostInput({ kind: 'finding' }, P1), 'INVALID_REQUEST', 'data'],
    ['a claim on two lines', () => V.validateFinding({ ...ok, claim: 'a\nb' }), 'INVALID_REQUEST', 'data.claim'],
    ['a claim of 501 characters', () => V.validateFinding({ ...ok, claim: 'é'.repeat(501) }), 'INVALID_REQUEST', 'data.claim'],
    ['status withdrawn, which only a retraction sets', () => V.validateFinding({ ...ok, status: 'withdrawn' }), 'INVALID_REQUEST', 'data.status'],
    ['a confidence outside low, medium, high', () => V.validateFinding({ ...ok, confidence: 'certain' }), 'INVALID_REQUEST', 'data.confidence'],
    ['sources naming one post twice', () => V.validateFinding({ ...ok, sources: [ID1, ID1] }), 'INVALID_REQUEST', 'data.sources'],
    ['a seq with a leading zero among sources', () => V.validateFinding({ ...ok, sources: ['07'] }), 'INVALID_REQUEST', 'data.sources'],
    ['33 sources', () => V.validateFinding({ ...ok, sources: Array.from({ length: 33 }, (_, i) => String(i + 1)) }), 'INVALID_REQUEST', 'data.sources'],
  ]);

  it('names every wrong field in one refusal, and takes a claim of 500 characters with up to 32 ids and seqs', () => {
    const e = refusal(() => V.validateFinding({ claim: '', status: 'open', confidence: 3 }));
    expect(e.detail).toMatch(/^data\.claim: .*; data\.status: .*; data\.confidence: /);
    expect(() => V.validateFinding({ ...ok, claim: 'é'.repeat(500), sources: [ID1, '12', ...Array.from({ length: 30 }, (_, i) => String(i + 100))] })).not.toThrow();
    expect(V.sourcesShape([ID1, '1'])).toEqual([ID1, '1']);
    expect(V.sourcesShape(['anything', 3])).toBeUndefined();
  });

  it('leaves claim, status and confidence free on every other kind', () => {
    expect(V.validatePostInput({ kind: 'obs', data: { claim: 'a\nb', status: 9 } }, P1).data).toEqual({ claim: 'a\nb', status: 9 });
  });
});

describe('tokens, messages and query parameters', () => {
  refusals([
    ['a token lifetime under an hour', () => V.validateTokenTtl(3599), 'INVALID_REQUEST', 'ttl_seconds'],
    ['a token lifetime over ninety days', () => V.validateTokenTtl(7776001), 'INVALID_REQUEST', 'ttl_seconds'],
    ['a token lifetime as a string', () => V.validateTokenTtl('3600'), 'INVALID_REQUEST', 'ttl_seconds'],
    ['a fractional token lifetime', () => V.validateTokenTtl(3600.5), 'INVALID_REQUEST', 'ttl_seconds'],
    ['a token label of 65 bytes', () => V.validateLabel('l'.repeat(65)), 'INVALID_REQUEST', 'label'],
    ['an empty message', () => V.validateMessageBody(''), 'INVALID_REQUEST', 'body'],
    ['a message of 16385 bytes', () => V.validateMessageBody('m'.repeat(16385)), 'INVALID_REQUEST', 'body'],
    ['a conversation with nobody', () => V.validateConversationRecipients([], AUTHOR), 'INVALID_REQUEST', 'to'],
    ['a group of seventeen', () => V.validateConversationRecipients(Array.from({ length: 16 }, (_, i) => i.toString(16).repeat(64)), AUTHOR), 'INVALID_REQUEST', 'to'],
    ['a conversation with yourself', () => V.validateConversationRecipients([AUTHOR], AUTHOR), 'INVALID_REQUEST', 'to[0]'],
    ['a group naming one KEY twice', () => V.validateConversationRecipients([P2, P2], AUTHOR), 'INVALID_REQUEST', 'to[1]'],
    ['a retention of 0 days', () => V.validateRetentionDays(0), 'INVALID_REQUEST', 'days'],
    ['a retention of 721 days', () => V.validateRetentionDays(721), 'INVALID_REQUEST', 'days'],
    ['a limit of 0', () => V.validateLimit('0'), 'INVALID_REQUEST', 'limit'],
    ['a limit of 201', () => V.validateLimit('201'), 'INVALID_REQUEST', 'limit'],
    ['a limit with a leading zero', () => V.validateLimit('01'), 'INVALID_REQUEST', 'limit'],
    ['a negative limit', () => V.validateLimit('-1'), 'INVALID_REQUEST', 'limit'],
    ['a limit over a smaller maximum', () => V.validateLimit(51, { max: 50 }), 'INVALID_REQUEST', 'limit'],
    ['a negative cursor', () => V.validateAfter('-1'), 'INVALID_REQUEST', 'after'],
    ['a cursor with a leading zero', () => V.validateAfter('01'), 'INVALID_REQUEST', 'after'],
    ['a cursor of 2^63', () => V.validateAfter('9223372036854775808'), 'INVALID_REQUEST', 'after'],
    ['a cursor in exponent form', () => V.validateAfter('1e3'), 'INVALID_REQUEST', 'after'],
    ['a wait of 26 seconds', () => V.validateWait('26'), 'INVALID_REQUEST', 'wait'],
    ['a fractional wait', () => V.validateWait(1.5), 'INVALID_REQUEST', 'wait'],
  ]);

  it('applies defaults when absent and accepts the bounds', () => {
    expect(V.validateTokenTtl(undefined)).toBe(7776000);
    expect([V.validateTokenTtl(3600), V.validateTokenTtl(7776000)]).toEqual([3600, 7776000]);
    expect(V.validateLabel('')).toBe('');
    expect(V.validateMessageBody('m'.repeat(16384))).toHaveLength(16384);
    expect(V.validateConversationRecipients([P3, P1], AUTHOR)).toEqual([P1, P3]);
    expect([V.validateRetentionDays(1), V.validateRetentionDays('720')]).toEqual([1, 720]);
    expect([V.validateLimit(undefined), V.validateLimit(undefined, { fallback: 20 }), V.validateLimit('200'), V.validateLimit(1)]).toEqual([200, 20, 200, 1]);
    expect(V.validateAfter(undefined)).toBe(0n);
    expect(V.validateAfter('0')).toBe(0n);
    expect(V.validateAfter('9223372036854775807')).toBe(9223372036854775807n);
    expect(V.validateAfter(42)).toBe(42n);
    expect([V.validateWait(undefined), V.validateWait('0'), V.validateWait(25)]).toEqual([0, 0, 25]);
  });
});

describe('validatePostInput', () => {
  refusals([
    ['a post that is not an object', () => V.validatePostInput('obs', AUTHOR), 'INVALID_REQUEST', 'body'],
    ['an unknown field', () => V.validatePostInput({ kind: 'obs', foo: 1 }, AUTHOR), 'INVALID_REQUEST', 'foo'],
    ['a signed-form field beside content', () => V.validatePostInput({ kind: 'obs', canonical: 'e30' }, AUTHOR), 'INVALID_REQUEST', 'canonical'],
    ['sealed content in a SPACE that is not sealed', () => V.validatePostInput({ sealed: {} }, AUTHOR), 'SPACE_NOT_SEALED', 'sealed'],
    ['a post without a kind', () => V.validatePostInput({ body: 'x' }, AUTHOR), 'INVALID_KIND', 'kind'],
    ['a post that supersedes and retracts', () => V.validatePostInput({ kind: 'obs', supersedes: ID1, retracts: ID2 }, AUTHOR), 'INVALID_REQUEST', 'retracts'],
    ['a reply_to that is not a post id', () => V.validatePostInput({ kind: 'obs', reply_to: 'x' }, AUTHOR), 'INVALID_REQUEST', 'reply_to'],
    ['a body over 64 KiB', () => V.validatePostInput({ kind: 'obs', body: 'b'.repeat(65537) }, AUTHOR), 'TOO_LARGE', 'body'],
    ['the author among the recipients', () => V.validatePostInput({ kind: 'obs', to: [AUTHOR] }, AUTHOR), 'INVALID_REQUEST', 'to[0]'],
    ['a reserved fingerprint scheme', () => V.validatePostInput({ kind: 'obs', fingerprints: [fp('svc.x', 'y')] }, AUTHOR), 'SCHEME_RESERVED', 'fingerprints[0].scheme'],
    ['a refused data key', () => V.validatePostInput({ kind: 'obs', data: { lease_until: 'x' } }, AUTHOR), 'INVALID_REQUEST', 'data.lease_until'],
    ['a bad budget', () => V.validatePostInput({ kind: 'beacon', budget: {} }, AUTHOR), 'INVALID_REQUEST', 'budget.observed_at'],
    ['a bad run id', () => V.validatePostInput({ kind: 'obs', run_id: 'r' }, AUTHOR), 'INVALID_REQUEST', 'run_id'],
    ['a bad idempotency key', () => V.validatePostInput({ kind: 'obs', idempotency_key: '' }, AUTHOR), 'INVALID_REQUEST', 'idempotency_key'],
  ]);

  it('returns every field normalised, fingerprints sorted', () => {
    const input = {
      kind: 'handoff',
      title: 'Parser fixed',
      body: 'Details',
      to: [P1, P2],
      reply_to: ID1,
      supersedes: ID2,
      fingerprints: [fp('git.commit', 'abc123'), fp('a.b', 'z')],
      budget: budget({ compute: { remaining: '3', unit: 'usd', estimated: true } }),
      data: { return_status: 'unknown' },
      run_id: ID1,
      idempotency_key: 'post-1',
    };
    expect(V.validatePostInput(input, AUTHOR)).toEqual({
      ...input,
      fingerprints: [fp('a.b', 'z'), fp('git.commit', 'abc123')],
    });
  });

  it('treats null, empty text and empty lists as absent and leaves them out', () => {
    const out = V.validatePostInput(
      { kind: 'obs', title: '', body: '', to: [], fingerprints: [], reply_to: null, data: null, budget: null, run_id: null },
      AUTHOR,
    );
    expect(out).toEqual({ kind: 'obs' });
    expect(Object.keys(out)).toEqual(['kind']);
  });

  it('does not change the object it was given', () => {
    const input = Object.freeze({
      kind: 'obs',
      fingerprints: Object.freeze([Object.freeze(fp('b', '2')), Object.freeze(fp('a', '1'))]),
      to: Object.freeze([P1]),
    });
    const copy = structuredClone(input);
    V.validatePostInput(input, AUTHOR);
    expect(input).toEqual(copy);
  });
});

describe.skipIf(!HAVE_SHARED_DOCS)(`vocabulary matches spec/1-concepts.md${WITHOUT_SHARED_DOCS}`, () => {
  const spec = sharedDoc('spec/1-concepts.md');
  const words = (text: string) => text.trim().split(/\s+/);
  const after = (marker: string) => {
    const at = spec.indexOf(marker);
    expect(at, marker).toBeGreaterThanOrEqual(0);
    return spec.slice(at + marker.length);
  };
  const firstCode = (marker: string) => words(/`([^`]+)`/.exec(after(marker))![1]!);

  it('kinds and their groups', () => {
    const line = after('Kinds (closed, lowercase): ').split('When none fits')[0]!;
    const groups = Object.fromEntries([...line.matchAll(/(\w+) `([a-z ]+)`/g)].map((m) => [m[1], words(m[2]!)]));
    const newer: readonly string[] = W.NEWER_API_KINDS;
    expect(groups).toEqual(Object.fromEntries(Object.entries(W.KIND_GROUPS).map(([g, k]) => [g, k.filter((kind) => !newer.includes(kind))])));
    expect(W.kindGroup('finding')).toBe('knowledge');
    expect(W.KIND_FALLBACK).toBe('obs');
    expect(W.kindGroup('resetwatch')).toBe('continuity');
  });

  it('reserved SPACE names, the svc- prefix and reserved tags', () => {
    expect(new Set(firstCode('Reserved space names (NAME_RESERVED): '))).toEqual(new Set(W.RESERVED_SPACE_NAMES));
    expect(W.RESERVED_SPACE_NAMES).toHaveLength(firstCode('Reserved space names (NAME_RESERVED): ').length);
    expect(after('and any name starting `')).toMatch(new RegExp(`^${W.RESERVED_SPACE_PREFIX}\``));
    expect(firstCode('Tags refused: ')).toEqual(W.RESERVED_TAGS.filter((t) => t !== W.BRAND_WORD));
    expect(W.RESERVED_TAGS).toContain('svc');
  });

  it('roles, ranks, visibilities and join policies', () => {
    expect(W.ROLES).toEqual(['admin', 'coordinator', 'writer', 'reader']);
    expect(spec).toContain('| role | `admin`, `coordinator`, `writer`, `reader` |');
    expect(spec).toContain('| visibility | `private`, `public`, `sealed`;');
    expect(spec).toContain('| join_policy | `request`, `invite`, `open`;');
    const ranked = (['owner', ...W.ROLES] as const).map(W.rank);
    expect(ranked).toEqual([5, 4, 3, 2, 1]);
  });

  it('events, mailbox reasons, unavailable states and withheld reasons', () => {
    expect(firstCode('### Audit log events')).toEqual([...W.SPACE_EVENTS]);
    const reasons = after('One gap-free stream per KEY').split('Filters')[0]!;
    expect([...reasons.matchAll(/`([a-z_]+)`/g)].map((m) => m[1])).toEqual([...W.SPEC_MAILBOX_REASONS]);
    expect(W.MAILBOX_REASONS).toEqual([...W.SPEC_MAILBOX_REASONS, ...W.NEWER_API_MAILBOX_REASONS]);
    expect(firstCode('States (growable set): ')).toEqual([...W.UNAVAILABLE_STATES]);
    expect(firstCode('Reasons an intervention may carry: ')).toEqual([...W.WITHHELD_REASONS]);
  });

  it('conversations, data keys and fingerprint schemes', () => {
    expect(spec).toContain('Conversation kinds `pair`, `group`; per-member states `accepted requested declined left`');
    expect([...W.CONVERSATION_KINDS, ...W.CONVERSATION_STATES]).toEqual(['pair', 'group', 'accepted', 'requested', 'declined', 'left']);
    expect(firstCode('shape-checked now ')).toEqual([...W.SHAPE_CHECKED_DATA_KEYS]);
    expect(firstCode('reserved as names only ')).toEqual([...W.RESERVED_DATA_KEY_NAMES]);
    expect(spec).toContain(`\`${W.REFUSED_DATA_KEYS.join(' ')}\` are refused`);
    expect(spec).toContain(`keys starting \`${W.FREE_DATA_KEY_PREFIX}\` are never reserved`);
    expect(spec).toContain('`return_status` values: `unknown`, `no_return`, `revived`');
    expect(spec).toContain('Suggested schemes `sha256.file` (value exactly 64 lowercase hex), `git.commit`, `package.version`, `task.reference`');
    expect(W.SUGGESTED_FINGERPRINT_SCHEMES).toEqual(['sha256.file', 'git.commit', 'package.version', 'task.reference']);
    expect(W.RESERVED_SCHEME_PREFIX).toBe('svc.');
  });

  it('capabilityVocabulary() gives the api-notes members in a fresh copy each call', () => {
    const v = W.capabilityVocabulary();
    for (const key of ['kinds', 'kind_groups', 'kind_fallback', 'visibilities', 'join_policies', 'roles', 'mailbox_reasons',
      'conversation_kinds', 'conversation_states', 'space_events', 'fingerprint_schemes', 'unavailable_states',
      'withheld_reasons', 'data_keys', 'reserved_space_names', 'reserved_tags']) {
      expect(v, key).toHaveProperty(key);
    }
    expect(v.fingerprint_schemes).toEqual({ suggested: [...W.SUGGESTED_FINGERPRINT_SCHEMES], reserved_prefix: 'svc.' });
    (v.kinds as string[]).push('bogus');
    expect(W.capabilityVocabulary().kinds).toHaveLength(21);
  });
});
