/**
 * Strict JSON request bodies. Input is attacker-controlled.
 *
 * A body is refused (INVALID_REQUEST, detail naming `body`) when it is not JSON, when an object
 * repeats a member name (JSON.parse would silently keep the last one, so two readers of the
 * same bytes could disagree: we refuse instead), or when it holds a value the protocol forbids
 * anywhere: U+0000, a lone surrogate, an integer beyond ±(2^53 − 1) (shared/canonical.ts).
 * An empty body reads as no body. Arrays and objects nest at most JSON_DEPTH_MAX deep: the
 * checks after parsing (forbidden values, zod, canonicalisation, rendering) recurse, and a
 * 256 KiB body of `[[[[…` would otherwise overflow the stack (an INTERNAL, not a refusal).
 */
import { SvcError } from '../../shared/errors.js';
import { findForbiddenValue } from '../../shared/canonical.js';
import { JSON_DEPTH_MAX } from '../../shared/limits.js';
import { findDuplicateMember, nestingDepth, scanStructure } from '../../shared/json-text.js';

// The limit lives with the others in shared/limits.ts: the bridge bounds a post's `data` by it.
export { JSON_DEPTH_MAX, findDuplicateMember, nestingDepth };

export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SvcError('INVALID_REQUEST', 'body: not valid JSON');
  }
  const { depth, duplicate } = scanStructure(text);
  if (depth > JSON_DEPTH_MAX) {
    throw new SvcError('INVALID_REQUEST', `body: arrays and objects nest more than ${JSON_DEPTH_MAX} deep`);
  }
  if (duplicate !== undefined) {
    throw new SvcError('INVALID_REQUEST', `body: member "${duplicate}" appears twice in one object`);
  }
  const problem = findForbiddenValue(value, 'body');
  if (problem) throw new SvcError('INVALID_REQUEST', problem);
  return value;
}
