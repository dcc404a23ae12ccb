import { describe, expect, it } from 'vitest';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../helpers/shared-docs.js';
import { AFTER_SPEC_CODES } from '../../shared/errors-catalogue.js';
import { CATALOGUE, DETAIL_MAX, SvcError, errorEnvelope, isSvcError, type ErrorCode } from '../../shared/errors.js';

/** The error tables of spec/3-errors.md, read at test time so the catalogue cannot drift. */
const specText = sharedDoc('spec/3-errors.md');
const specRows = [...specText.matchAll(/^\| ([A-Z][A-Z0-9_]*) \| (\d{3}) \| (.*) \|$/gm)].map((m) => ({
  code: m[1]!,
  status: Number(m[2]),
  fix: m[3]!,
}));

const codes = Object.keys(CATALOGUE) as ErrorCode[];

function humanised(code: string): string {
  const words = code.toLowerCase().split('_').join(' ');
  return `${words[0]!.toUpperCase()}${words.slice(1)}.`;
}

describe.skipIf(!HAVE_SHARED_DOCS)(`the catalogue equals spec/3-errors.md${WITHOUT_SHARED_DOCS}`, () => {
  it('the spec tables were found and hold well over a hundred codes', () => {
    expect(specRows.length).toBeGreaterThan(100);
    expect(new Set(specRows.map((r) => r.code)).size).toBe(specRows.length);
  });

  it('every code of the spec is in the catalogue with its status and its text as fix', () => {
    for (const row of specRows) {
      const entry = CATALOGUE[row.code as ErrorCode];
      expect(entry, row.code).toBeDefined();
      expect(entry.status, row.code).toBe(row.status);
      expect(entry.fix, row.code).toBe(row.fix);
    }
  });

  it('the catalogue holds no code the spec does not list', () => {
    const specCodes = new Set(specRows.map((r) => r.code));
    expect(codes.filter((c) => !specCodes.has(c))).toEqual([...AFTER_SPEC_CODES]);
    expect(codes.length).toBe(specRows.length + AFTER_SPEC_CODES.length);
  });

  it('every status is one the status overview names', () => {
    const overview = specText.slice(specText.indexOf('### Status overview'));
    for (const code of codes) {
      expect(overview, code).toContain(String(CATALOGUE[code].status));
    }
  });
});

describe('catalogue messages', () => {
  it('each message is one sentence that starts with a capital and ends with a full stop', () => {
    for (const code of codes) {
      const { message } = CATALOGUE[code];
      expect(message, code).toMatch(/^[A-Z][^]*\.$/);
      // One sentence: no full stop followed by another sentence inside it.
      expect(message.slice(0, -1), code).not.toMatch(/\.\s/);
    }
  });

  it('no message is only the code name humanised or repeats the code itself', () => {
    for (const code of codes) {
      const { message } = CATALOGUE[code];
      expect(message, code).not.toBe(humanised(code));
      expect(message, code).not.toContain(code);
    }
  });

  it('no two codes share a message', () => {
    const messages = codes.map((c) => CATALOGUE[c].message);
    expect(new Set(messages).size).toBe(messages.length);
  });

  it('SPACE_NOT_FOUND says that no SPACE has the name', () => {
    expect(CATALOGUE.SPACE_NOT_FOUND.message).toBe('No SPACE has that name.');
  });
});

describe('the error envelope (api-notes §1)', () => {
  it('carries code, a message that starts with the code and a full stop, fix, doc and request id', () => {
    const env = errorEnvelope('SPACE_NOT_FOUND', 'req-1');
    expect(env).toEqual({
      error: {
        code: 'SPACE_NOT_FOUND',
        message: `SPACE_NOT_FOUND. ${CATALOGUE.SPACE_NOT_FOUND.message}`,
        fix: CATALOGUE.SPACE_NOT_FOUND.fix,
        doc: '/reference#errors',
        request_id: 'req-1',
      },
    });
  });

  it('every code gives a message of the form "CODE. sentence"', () => {
    for (const code of codes) {
      const { message } = errorEnvelope(code, 'r').error;
      expect(message.startsWith(`${code}. `), code).toBe(true);
      expect(message.slice(code.length + 2)).toBe(CATALOGUE[code].message);
    }
  });

  it('leaves detail and retry_after out when there is none', () => {
    const { error } = errorEnvelope('INVALID_REQUEST', 'r', '');
    expect('detail' in error).toBe(false);
    expect('retry_after' in error).toBe(false);
  });

  it('keeps a detail of exactly 200 characters whole and clips a longer one to 200', () => {
    const exact = 'd'.repeat(DETAIL_MAX);
    expect(errorEnvelope('INVALID_REQUEST', 'r', exact).error.detail).toBe(exact);
    const long = 'x'.repeat(DETAIL_MAX + 57);
    expect(errorEnvelope('INVALID_REQUEST', 'r', long).error.detail).toBe('x'.repeat(DETAIL_MAX));
    expect(DETAIL_MAX).toBe(200);
  });

  it('never cuts a detail between the two halves of a surrogate pair', () => {
    // 199 ASCII characters then an emoji: the pair would straddle position 200.
    const detail = `${'a'.repeat(DETAIL_MAX - 1)}\u{1F600}tail`;
    const clipped = errorEnvelope('INVALID_REQUEST', 'r', detail).error.detail!;
    expect(clipped).toBe('a'.repeat(DETAIL_MAX - 1));
    expect(clipped.isWellFormed()).toBe(true);
  });

  it('gives retry_after as whole seconds, rounded up, and at least one', () => {
    expect(errorEnvelope('RATE_LIMITED', 'r', undefined, 30).error.retry_after).toBe(30);
    expect(errorEnvelope('RATE_LIMITED', 'r', undefined, 2.1).error.retry_after).toBe(3);
    expect(errorEnvelope('BUSY', 'r', undefined, 0).error.retry_after).toBe(1);
  });
});

describe('SvcError', () => {
  it('carries its code, detail, wait and the catalogue status', () => {
    const e = new SvcError('TOO_LARGE', 'body', 5);
    expect(e.code).toBe('TOO_LARGE');
    expect(e.detail).toBe('body');
    expect(e.retryAfter).toBe(5);
    expect(e.status).toBe(413);
    expect(e.message).toBe('TOO_LARGE: body');
    expect(e).toBeInstanceOf(Error);
  });

  it('isSvcError tells a coded refusal from any other error, by code when asked', () => {
    const e = new SvcError('INVALID_KIND', 'kind');
    expect(isSvcError(e)).toBe(true);
    expect(isSvcError(e, 'INVALID_KIND')).toBe(true);
    expect(isSvcError(e, 'INVALID_ROLE')).toBe(false);
    expect(isSvcError(new Error('INVALID_KIND'))).toBe(false);
  });
});
