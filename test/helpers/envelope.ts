/**
 * The standard every refusal is held to: the catalogue status, exactly the envelope
 * {code, message, fix, doc, request_id, detail?, retry_after?}, `request_id` equal to the
 * X-Request-Id header, and nothing written (the digest of test/helpers/state.ts, plus tokens
 * and spent challenges, which sign-in refusals must leave alone too).
 */
import { expect } from 'vitest';
import { CATALOGUE, type ErrorCode } from '../../shared/errors.js';
import type { Answer, RunningRelay } from './relay.js';
import { stateProbe } from './state.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function expectEnvelope(r: Answer, code: ErrorCode): void {
  expect({ status: r.status, code: r.body?.error?.code }, r.text).toEqual({ status: CATALOGUE[code].status, code });
  expect(Object.keys(r.body)).toEqual(['error']);
  const e = r.body.error;
  expect(Object.keys(e).filter((k) => k !== 'detail' && k !== 'retry_after')).toEqual(['code', 'message', 'fix', 'doc', 'request_id']);
  expect(e.message).toBe(`${code}. ${CATALOGUE[code].message}`);
  expect(e.fix).toBe(CATALOGUE[code].fix);
  expect(e.request_id).toMatch(UUID_RE);
  expect(e.request_id).toBe(r.headers.get('x-request-id'));
}

/** A digest of every written table of `relay`, tokens and spent challenges included. */
export async function fullState(relay: RunningRelay): Promise<() => Promise<string>> {
  const tables = await stateProbe(relay);
  const tokens = relay.store.db.prepare('SELECT count(*) AS n, max(created_at) AS at FROM tokens');
  const spent = relay.store.db.prepare('SELECT count(*) AS n FROM spent_challenges');
  return async () => `${await tables()} ${JSON.stringify(await tokens.get())} ${JSON.stringify(await spent.get())}`;
}

/** Run `act`: refused with `code` (detail matching `detail`), the envelope, and nothing changed. */
export async function expectRefusedUnchanged(
  relay: RunningRelay,
  act: () => Promise<Answer>,
  code: ErrorCode,
  detail?: RegExp,
): Promise<Answer> {
  const state = await fullState(relay);
  const before = await state();
  const r = await act();
  expectEnvelope(r, code);
  if (detail !== undefined) expect(r.body.error.detail, r.text).toMatch(detail);
  expect(await state(), `${code}: something changed`).toBe(before);
  return r;
}
