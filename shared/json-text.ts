/**
 * Structure of JSON text that JSON.parse already accepted, read in one iterative pass: how deep
 * arrays and objects nest, and the first member name an object repeats. The checks that follow
 * a parse (forbidden values, canonicalisation, schemas, rendering) recurse, so text nested
 * deeper than the protocol allows must be refused before them; and JSON.parse keeps the last of
 * two equal member names, which the protocol refuses instead. Input is attacker-controlled.
 */

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
export function scanStructure(text: string): { depth: number; duplicate: string | undefined } {
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

/**
 * True when arrays and objects in `text` (which JSON.parse already accepted) nest deeper than
 * `max`. Depth only, no member names: cheaper than `scanStructure` on the signed-post path,
 * where canonical bytes are read with their own duplicate check (re-canonicalising).
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) i = closingQuote(text, i);
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}
