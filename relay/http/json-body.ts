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

// The limit lives with the others in shared/limits.ts: the bridge bounds a post's `data` by it.
export { JSON_DEPTH_MAX };

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

/** The first member name repeated inside one object of text JSON.parse already accepted. */
export function findDuplicateMember(text: string): string | undefined {
  return scanStructure(text).duplicate;
}

/** The deepest nesting of arrays and objects in text JSON.parse already accepted. */
export function nestingDepth(text: string): number {
  return scanStructure(text).depth;
}

/**
 * One pass over text JSON.parse already accepted (so the grammar is known to be valid and only
 * strings need care): the deepest nesting of arrays and objects, and the first member name
 * repeated inside one object. Strings are skipped with indexOf, so a long string without
 * escapes (a signed post's base64url `canonical`) costs one native search, not a loop.
 */
function scanStructure(text: string): { depth: number; duplicate: string | undefined } {
  // One entry per open container: a Set of names for an object, null for an array.
  const stack: (Set<string> | null)[] = [];
  let deepest = 0;
  let duplicate: string | undefined;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      i = closingQuote(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const name = JSON.parse(text.slice(start, i + 1)) as string;
        if (top.has(name)) duplicate ??= name;
        top.add(name);
        expectKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push(c === 0x7b ? new Set() : null);
      if (stack.length > deepest) deepest = stack.length;
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] instanceof Set;
    }
  }
  return { depth: deepest, duplicate };
}

/** The index of the quote closing the string that opens at `open`: the first one not escaped. */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  for (;;) {
    if (quote < 0) return text.length; // unterminated: not JSON.parse's text, but never loop
    // Escaped when an odd run of backslashes stands right before it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c /* \ */) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
}
