/**
 * Checking what shared code refuses: the catalogue code a call throws, and refusals of served
 * evidence (receipts, checkpoints, Merkle proofs, service signers), every one of which is
 * SvcError('CHECKPOINT_INVALID') with a detail naming the field or the rule
 * (shared/service-keys.ts `evidenceError`).
 */
import { expect } from 'vitest';
import { fromHex, toHex } from '../../shared/encoding.js';
import { isSvcError } from '../../shared/errors.js';

/** What `run` threw, or undefined when it returned. */
export function refusal(run: () => unknown): unknown {
  try {
    run();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** The catalogue code `f` throws, or undefined when it returns; any other error is rethrown. */
export function svcCode(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (isSvcError(e)) return e.code;
    throw e;
  }
  return undefined;
}

/** `run` throws CHECKPOINT_INVALID, with a message matching `detail` when one is given. */
export function expectEvidenceRefused(run: () => unknown, detail?: RegExp): void {
  const err = refusal(run);
  expect(isSvcError(err, 'CHECKPOINT_INVALID'), String(err)).toBe(true);
  if (detail) expect((err as Error).message).toMatch(detail);
}

/** `hex` with the lowest bit of byte `at` flipped. */
export function flipHex(hex: string, at = 0): string {
  const b = fromHex(hex);
  b[at]! ^= 1;
  return toHex(b);
}
