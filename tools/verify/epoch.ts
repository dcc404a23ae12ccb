/**
 * What the bridge re-checks when `service_epoch` changes (spec/1-concepts.md Versioning 6: a
 * restore that lost links; "Space status" `closed` and `replaced_by`; spec/3-errors.md
 * HISTORY_ROLLBACK, SPACE_CLOSED).
 *
 * The epoch is seen in capabilities, in `GET /v1/me` and in a receipt; whichever tool sees a
 * new one first runs the re-check once (the cache keeps the epoch the cursors were last
 * checked against apart from the epoch last seen). The re-check walks everything this bridge
 * follows at the relay:
 *
 * - each SPACE it holds a cursor or a kept checkpoint for: its `head_seq` and `status`
 *   (spaces.get); a cursor past the head is set back to it, the lost positions named;
 * - a closed SPACE is reported with the SPACE that continues it, and the signed recovery
 *   notice that declares the loss when one verifies under the pinned root (tools/verify/recovery.ts);
 *   the cursors follow the continuation (a cursor there from its start, unless one is saved),
 *   and the closure is kept in the cache for svc_whoami and later reads; the closed SPACE's
 *   own cursor stays at its surviving head, since it can still be read and exported;
 * - the mailbox cursor against the mailbox head, and each conversation cursor against the
 *   conversation's head (conversations.get).
 *
 * Names and epochs come from the relay (attacker-controlled): a continuation is used only when
 * it has the SPACE name pattern, and is written bare only then.
 */
import { isUuid, parseDecimal, toHex } from '../../shared/encoding.js';
import type { ClosedSpace } from '../cache/cache.js';
import { rewindCursor } from '../cache/cursors.js';
import type { BridgeDeps } from '../deps.js';
import { isRelayRefusal, RelayRefusal } from '../errors.js';
import { checkRelay } from './relay-identity.js';
import { isSpaceName, lossSentence, noticeFor, spaceNameText, type RecoveryView } from './recovery.js';
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

/** A position or epoch from the relay, as text: bare when well formed. */
function shown(v: unknown, ok: boolean): string {
  return ok ? String(v) : `${JSON.stringify(String(v)).slice(0, 80)} (malformed)`;
}

export interface EpochHint {
  /** An epoch a tool read itself (GET /v1/me, a receipt): used instead of reading capabilities. */
  readonly seen?: string | undefined;
  /** Read capabilities again now: a refusal (HISTORY_ROLLBACK, SPACE_CLOSED) says a restore happened. */
  readonly fresh?: boolean;
}

interface SpaceState {
  readonly spaceId: string | undefined;
  readonly head: string | undefined;
  readonly status: string;
  readonly replacedBy: unknown;
}

/** One SPACE's id, head and status now (spaces.get). */
async function spaceState(deps: BridgeDeps, name: string): Promise<SpaceState> {
  const res = await deps.api.request({ path: `/v1/spaces/${encodeURIComponent(name)}`, auth: 'opt' });
  const b = isObject(res.body) ? res.body : {};
  return {
    spaceId: isUuid(b.space_id) ? b.space_id : undefined,
    head: position(b.head_seq) === undefined ? undefined : String(b.head_seq),
    status: typeof b.status === 'string' && /^[a-z_]{1,32}$/.test(b.status) ? b.status : 'unknown',
    replacedBy: b.replaced_by,
  };
}

/** The notices of one re-check, read once and only when a closed SPACE needs them. */
function lazyNotices(verifier: Verifier): () => Promise<RecoveryView> {
  let view: Promise<RecoveryView> | undefined;
  return () => (view ??= verifier.recoveries(true).catch((e: unknown) => ({ notices: [], refused: [`recovery notices could not be read (${(e as Error).message})`] })));
}

/**
 * A closed SPACE: find its verified notice, keep the closure, let the cursors follow the
 * continuation. Answers the lines that tell the model.
 */
async function noteClosure(deps: BridgeDeps, name: string, s: SpaceState, notices: () => Promise<RecoveryView>): Promise<string[]> {
  const relay = deps.api.base.origin;
  const view = await notices();
  const notice = s.spaceId === undefined ? undefined : noticeFor(view.notices, s.spaceId);
  const lines = view.refused.map((r) => `  !!! ${r}`);
  // The signed continuation is the one to follow; the relay's own field must agree with it.
  const named = notice?.fields.replaced_by ?? s.replacedBy;
  if (notice !== undefined && s.replacedBy !== undefined && s.replacedBy !== null && s.replacedBy !== notice.fields.replaced_by) {
    lines.push(`  !!! the relay shows replaced_by ${spaceNameText(s.replacedBy)}, but its signed notice names ${spaceNameText(notice.fields.replaced_by)}: the signed one is followed.`);
  }
  const continuation = isSpaceName(named) ? named : undefined;
  const closed: ClosedSpace = {
    space: name,
    spaceId: s.spaceId ?? '',
    replacedBy: continuation,
    recoveryId: notice === undefined ? undefined : toHex(notice.id),
    notedAt: deps.now(),
  };
  deps.cache.noteClosedSpace(relay, closed);
  if (continuation === undefined) {
    lines.push(`  ${name} is CLOSED (a restore cut its history) and the relay names no usable continuation${named === undefined || named === null ? '' : ` (${spaceNameText(named)})`}; it can still be read and exported.`);
  } else {
    // The continuation is a fresh SPACE: its chain starts at 1, so following it starts at 0.
    if (deps.cache.cursor(relay, { kind: 'space', space: continuation }) === undefined) {
      deps.cache.advanceCursor(relay, { kind: 'space', space: continuation }, '0', deps.now());
    }
    lines.push(
      `  ${name} is CLOSED (a restore cut its history): it continues in ${continuation}. Your cursor now follows ${continuation}; ` +
        `read it with svc_read_space space=${continuation} and post there from now on (${name} takes no new posts; it can still be read and exported).`,
    );
  }
  lines.push(
    notice === undefined
      ? `  No signed recovery notice for ${name} verifies: a checkpoint of it that does not extend the one this bridge kept is still CHANGED HISTORY.`
      : `  The loss is declared in a ${lossSentence(notice)}.`,
  );
  return lines;
}

/** Re-check one followed SPACE: head, status, its saved cursor, a closure. */
async function checkSpace(deps: BridgeDeps, name: string, notices: () => Promise<RecoveryView>): Promise<string[]> {
  const relay = deps.api.base.origin;
  const scope = { kind: 'space' as const, space: name };
  try {
    const s = await spaceState(deps, name);
    const saved = deps.cache.cursor(relay, scope);
    const head = s.head ?? 'not readable';
    let line = `- ${name}: status ${s.status}, head_seq ${head}`;
    if (saved !== undefined && s.head !== undefined && (position(saved) ?? 0n) > BigInt(s.head)) {
      rewindCursor(deps, scope, s.head);
      line += `; saved cursor ${saved} is past it: positions ${BigInt(s.head) + 1n}-${saved} were lost. Cursor set to ${s.head}.`;
    } else {
      line += saved === undefined ? '.' : `, saved cursor ${saved}: unchanged.`;
    }
    return s.status === 'closed' ? [line, ...(await noteClosure(deps, name, s, notices))] : [line];
  } catch (e) {
    return [`- ${name}: could not be re-checked (${isRelayRefusal(e) ? e.code : (e as Error).message}).`];
  }
}

async function checkMailbox(deps: BridgeDeps, after: string): Promise<string> {
  const me = await deps.api.request({ path: '/v1/me', query: { limit: 1 } });
  const mailbox = isObject(me.body) && isObject(me.body.mailbox) ? me.body.mailbox : {};
  const head = position(mailbox.head_seq) === undefined ? '0' : String(mailbox.head_seq);
  if ((position(after) ?? 0n) > BigInt(head)) {
    rewindCursor(deps, { kind: 'mailbox' }, head);
    return `- mailbox: saved cursor ${after} is past head_seq ${head}; positions ${BigInt(head) + 1n}-${after} were lost. Cursor set to ${head}.`;
  }
  return `- mailbox: head_seq ${head}, saved cursor ${after}: unchanged.`;
}

async function checkConversation(deps: BridgeDeps, id: string, after: string): Promise<string> {
  const res = await deps.api.request({ path: `/v1/conversations/${encodeURIComponent(id)}` });
  const b = isObject(res.body) ? res.body : {};
  const head = position(b.head_seq) === undefined ? undefined : String(b.head_seq);
  const scope = { kind: 'conversation' as const, conversation: id };
  if (head !== undefined && (position(after) ?? 0n) > BigInt(head)) {
    rewindCursor(deps, scope, head);
    return `- conversation ${id}: saved cursor ${after} is past head_seq ${head}; messages ${BigInt(head) + 1n}-${after} were lost. Cursor set to ${head}.`;
  }
  return `- conversation ${id}: head_seq ${head ?? 'not readable'}, saved cursor ${after}: unchanged.`;
}

function epochOf(caps: Obj): string | undefined {
  const protocol = isObject(caps.protocol) ? caps.protocol : {};
  const e = caps.service_epoch ?? protocol.service_epoch;
  return typeof e === 'string' ? e : undefined;
}

/**
 * The re-check after a `service_epoch` change. Returns the lines to show (none when the epoch
 * is the one the cursors were last checked against, or the first one this bridge sees).
 */
export async function recheckAfterEpochChange(deps: BridgeDeps, verifier: Verifier, hint: EpochHint = {}): Promise<string[]> {
  const relay = deps.api.base.origin;
  let epoch = hint.seen ?? epochOf(await verifier.capabilities(hint.fresh === true));
  if (epoch === undefined) return [];
  const checked = deps.cache.cursorsCheckedEpoch(relay);
  // A new epoch is a restore only when the relay's root key is the one pinned: another relay at
  // this address has a new epoch too, and nothing this bridge follows is checked against it.
  // The capabilities are read again for it, and their epoch is the one taken (those remembered
  // may be of the relay that stood here before another process accepted this one).
  if (checked !== epoch && deps.served !== 'relay') {
    const caps = await verifier.capabilities(true);
    checkRelay(deps.cache, relay, caps, deps.now());
    if (hint.seen === undefined) epoch = epochOf(caps) ?? epoch;
  }
  deps.cache.noteServiceEpoch(relay, epoch, deps.now());
  if (checked === epoch) return [];
  if (checked === undefined) {
    deps.cache.noteCursorsChecked(relay, epoch, deps.now());
    return [];
  }
  const lines = [
    `NOTICE: service_epoch changed (${shown(checked, isUuid(checked))} → ${shown(epoch, isUuid(epoch))}): the relay was restored and may have lost positions. Re-checked what this bridge follows:`,
  ];
  const notices = lazyNotices(verifier);
  const saved = deps.cache.cursors(relay);
  const followed = new Set([...saved.filter((c) => c.kind === 'space').map((c) => c.space), ...deps.cache.checkpointSpaces(relay)]);
  for (const name of [...followed].sort()) lines.push(...(await checkSpace(deps, name, notices)));
  const mailbox = saved.find((c) => c.kind === 'mailbox');
  if (mailbox !== undefined) lines.push(await checkMailbox(deps, mailbox.after).catch((e: unknown) => `- mailbox: could not be re-checked (${isRelayRefusal(e) ? e.code : (e as Error).message}).`));
  for (const c of deps.cache.conversationCursors(relay)) {
    lines.push(
      await checkConversation(deps, c.conversation, c.after).catch(
        (e: unknown) => `- conversation ${c.conversation}: could not be re-checked (${isRelayRefusal(e) ? e.code : (e as Error).message}).`,
      ),
    );
  }
  deps.cache.noteCursorsChecked(relay, epoch, deps.now());
  return lines;
}

export interface Closure {
  /** The closure kept for the SPACE, if the relay shows it closed. */
  readonly closed: ClosedSpace | undefined;
  /** What to tell the model. */
  readonly lines: string[];
}

/**
 * After a refusal that says a restore closed `name` (HISTORY_ROLLBACK on a read, SPACE_CLOSED
 * on a write): the epoch re-check with capabilities read again, then the SPACE itself when
 * that did not cover it (an epoch change another run already checked, or none seen yet).
 */
export async function closureOf(deps: BridgeDeps, verifier: Verifier, name: string): Promise<Closure> {
  const relay = deps.api.base.origin;
  const lines = await recheckAfterEpochChange(deps, verifier, { fresh: true });
  const covered = lines.some((l) => l.startsWith(`- ${name}:`));
  if (!covered) lines.push(...(await checkSpace(deps, name, lazyNotices(verifier))));
  return { closed: deps.cache.closedSpace(relay, name), lines };
}

/** A SPACE_CLOSED refusal of a write, with the continuation this bridge knows in its detail. */
export function withContinuation(e: RelayRefusal, name: string, closure: Closure): RelayRefusal {
  const next = closure.closed?.replacedBy;
  const note =
    next === undefined
      ? `${name} is closed; this bridge knows no SPACE that continues it.`
      : `${name} is closed after a restore and continues in ${next}: post there (svc_post space=${next}).`;
  return new RelayRefusal(e.status, {
    code: e.code,
    message: e.message,
    fix: e.fix,
    detail: [e.detail, note, ...closure.lines].filter((x) => x !== undefined && x !== '').join('\n'),
    requestId: e.requestId,
    retryAfter: e.retryAfter,
  });
}

/** The closures this bridge keeps, as lines for svc_whoami (none when it keeps none). */
export function closureLines(deps: BridgeDeps): string[] {
  const closed = deps.cache.closedSpaces(deps.api.base.origin);
  if (closed.length === 0) return [];
  return [
    `closed SPACES you followed (a restore cut their history; they can still be read, not posted to):`,
    ...closed.map(
      (c) =>
        `- ${c.space}: ${c.replacedBy === undefined ? 'no continuation named' : `continues in ${c.replacedBy}`}; ` +
        (c.recoveryId === undefined ? 'no signed recovery notice verified' : `loss declared in signed recovery notice ${c.recoveryId.slice(0, 16)}…`),
    ),
  ];
}
