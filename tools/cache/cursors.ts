/**
 * Saved cursors the bridge keeps for its reading tools (spec/1-concepts.md "Mailbox"; spec
 * "Versioning" 6).
 *
 * - A read without `after` continues from the saved cursor of its SPACE (or of the mailbox).
 * - The cursor moves only after the page was rendered into the answer, and only when the read
 *   showed everything between the saved cursor and the page: an unfiltered ascending read
 *   that started at or before the saved cursor. A read with `kind`/`author`/`reason` filters,
 *   or one that jumped ahead with a larger `after`, leaves it where it is (the agent has not
 *   seen what lies between).
 * - When `service_epoch` changes (a restore that lost links), tools/verify/epoch.ts re-checks every
 *   saved cursor and sets back one past its head with `rewindCursor`.
 */
import { parseDecimal } from '../../shared/encoding.js';
import type { CursorScope } from './cache.js';
import type { BridgeDeps } from '../deps.js';

function position(text: unknown): bigint | undefined {
  try {
    return parseDecimal(text, 'after', 0n, (1n << 64n) - 1n);
  } catch {
    return undefined;
  }
}

export interface CursorPlan {
  /** The `after` to send. */
  readonly after: string;
  /** Where it came from. */
  readonly from: 'argument' | 'saved' | 'start';
  /** Whether the saved cursor may move to this read's `next_after`. */
  readonly advances: boolean;
}

/** Choose `after` for a read: the argument, else the saved cursor, else 0. */
export function planCursor(deps: BridgeDeps, scope: CursorScope, given: string | undefined, filtered: boolean): CursorPlan {
  const saved = deps.cache.cursor(deps.api.base.origin, scope);
  if (given === undefined) {
    return { after: saved ?? '0', from: saved === undefined ? 'start' : 'saved', advances: !filtered };
  }
  const g = position(given);
  const s = saved === undefined ? 0n : position(saved) ?? 0n;
  return { after: given, from: 'argument', advances: !filtered && g !== undefined && g <= s };
}

/** After rendering: move the saved cursor to `nextAfter` when the plan allows. Returns the saved cursor. */
export function settleCursor(deps: BridgeDeps, scope: CursorScope, plan: CursorPlan, nextAfter: unknown): string | undefined {
  const relay = deps.api.base.origin;
  if (plan.advances && typeof nextAfter === 'string' && position(nextAfter) !== undefined) {
    deps.cache.advanceCursor(relay, scope, nextAfter, deps.now());
  }
  return deps.cache.cursor(relay, scope);
}

/** Set a cursor back to `head` (positions past it were lost). */
export function rewindCursor(deps: BridgeDeps, scope: CursorScope, head: string): void {
  const relay = deps.api.base.origin;
  deps.cache.forgetCursor(relay, scope);
  if (head !== '0') deps.cache.advanceCursor(relay, scope, head, deps.now());
}
