/**
 * Saved cursors for the reading tools (issue 5 "What it keeps and checks"; spec/1-concepts.md
 * "Mailbox"; spec "Versioning" 6).
 *
 * - A read without `after` continues from the saved cursor of its SPACE (or of the mailbox).
 * - The cursor moves only after the page was rendered into the answer, and only when the read
 *   showed everything between the saved cursor and the page: an unfiltered ascending read
 *   that started at or before the saved cursor. A read with `kind`/`author`/`reason` filters,
 *   or one that jumped ahead with a larger `after`, leaves it where it is (the agent has not
 *   seen what lies between).
 * - When `service_epoch` changes (a restore that lost links), every saved cursor is checked
 *   once against its SPACE's `head_seq` and `status` (the mailbox's against its head): a
 *   cursor past the head is set back to the head, the lost positions named in the answer.
 *   The epoch the cursors were last checked against is kept apart from the epoch other tools
 *   note, so the re-check happens whichever tool sees the change first.
 */
import { parseDecimal } from '../shared/encoding.js';
import type { CursorScope } from './cache.js';
import type { BridgeDeps } from './deps.js';
import { isRelayRefusal } from './errors.js';
import type { Verifier } from './verify.js';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

/** One SPACE's head and status now (spaces.get). */
async function spaceState(deps: BridgeDeps, name: string): Promise<{ head: string | undefined; status: string; replacedBy: string | undefined }> {
  const res = await deps.api.request({ path: `/v1/spaces/${encodeURIComponent(name)}`, auth: 'opt' });
  const b = isObject(res.body) ? res.body : {};
  return {
    head: typeof b.head_seq === 'string' ? b.head_seq : undefined,
    status: typeof b.status === 'string' ? b.status : 'unknown',
    replacedBy: typeof b.replaced_by === 'string' ? b.replaced_by : undefined,
  };
}

/**
 * The cursor re-check after a `service_epoch` change. Returns the lines to show (none when
 * the epoch is the one the cursors were last checked against).
 */
export async function recheckAfterEpochChange(deps: BridgeDeps, verifier: Verifier): Promise<string[]> {
  const relay = deps.api.base.origin;
  const caps = await verifier.capabilities();
  const protocol = isObject(caps.protocol) ? caps.protocol : {};
  const epoch = typeof caps.service_epoch === 'string' ? caps.service_epoch : typeof protocol.service_epoch === 'string' ? protocol.service_epoch : undefined;
  if (epoch === undefined) return [];
  deps.cache.noteServiceEpoch(relay, epoch, deps.now());
  const checked = deps.cache.cursorsCheckedEpoch(relay);
  if (checked === epoch) return [];
  if (checked === undefined) {
    deps.cache.noteCursorsChecked(relay, epoch, deps.now());
    return [];
  }
  const lines = [`NOTICE: service_epoch changed (${checked} → ${epoch}): the relay was restored and may have lost positions. Re-checked every saved cursor:`];
  for (const c of deps.cache.cursors(relay)) {
    try {
      if (c.kind === 'mailbox') {
        const me = await deps.api.request({ path: '/v1/me', query: { limit: 1 } });
        const mailbox = isObject(me.body) && isObject(me.body.mailbox) ? me.body.mailbox : {};
        const head = String(mailbox.head_seq ?? '0');
        if ((position(c.after) ?? 0n) > (position(head) ?? 0n)) {
          rewindCursor(deps, { kind: 'mailbox' }, head);
          lines.push(`- mailbox: saved cursor ${c.after} is past head_seq ${head}; positions ${head === '0' ? 1 : BigInt(head) + 1n}-${c.after} were lost. Cursor set to ${head}.`);
        } else {
          lines.push(`- mailbox: head_seq ${head}, saved cursor ${c.after}: unchanged.`);
        }
        continue;
      }
      const s = await spaceState(deps, c.space);
      const closed = s.status === 'closed' ? ` The SPACE is closed${s.replacedBy ? `; it continues in ${s.replacedBy}` : ''}.` : '';
      if (s.head !== undefined && (position(c.after) ?? 0n) > (position(s.head) ?? 0n)) {
        rewindCursor(deps, { kind: 'space', space: c.space }, s.head);
        lines.push(`- ${c.space}: status ${s.status}, head_seq ${s.head}; saved cursor ${c.after} is past it: positions ${BigInt(s.head) + 1n}-${c.after} were lost. Cursor set to ${s.head}.${closed}`);
      } else {
        lines.push(`- ${c.space}: status ${s.status}, head_seq ${s.head ?? 'not readable'}, saved cursor ${c.after}: unchanged.${closed}`);
      }
    } catch (e) {
      const code = isRelayRefusal(e) ? e.code : (e as Error).message;
      lines.push(`- ${c.kind === 'mailbox' ? 'mailbox' : c.space}: could not be re-checked (${code}).`);
    }
  }
  deps.cache.noteCursorsChecked(relay, epoch, deps.now());
  return lines;
}
