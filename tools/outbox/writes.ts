/**
 * What `svc_post` and `svc_message` do when the relay cannot take a write (`unreachable`): the
 * write, signed as usual (sealed first for a sealed SPACE or pair), goes to the outbox
 * (tools/ports.ts `Outbox`), and the answer says "queued" with its idempotency key, which is no
 * error: the bridge sends it by itself once the relay answers, and tells the model then.
 *
 * - A write to a target with writes still waiting goes behind them (a SPACE's posts in order),
 *   even when the relay answers meanwhile.
 * - A post needs its SPACE's uuid to be signed: when the relay cannot be asked, the one learnt
 *   by an earlier post to that name (through any tool) or by its creation here is used
 *   (bridge/outbox/store.ts "known SPACES"). A sealed SPACE is sealed with what the sealed cache
 *   remembers (the newest generation in use this bridge accepted, and its secret). A name this
 *   bridge neither posted to nor created, or a sealed SPACE whose key it does not hold, is not
 *   queued: the answer is the failure, with what to do.
 * - Offline writes are the bridge's only: the relay's connector (no KEY, no cache of its own)
 *   has no outbox, and SVC_OUTBOX_MAX_ITEMS=0 turns them off.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { BridgeDeps } from '../deps.js';
import { BridgeError, isBridgeError, isRelayRefusal } from '../errors.js';
import type { KnownSpace, Outbox, QueuedWrite } from '../ports.js';
import { fields } from '../render.js';
import { answer } from '../answer.js';

/** A gateway's 5xx in front of the relay comes without the envelope (tools/api.ts `refusalFrom`). */
function gatewayFailure(e: unknown): boolean {
  return isBridgeError(e, 'BAD_RESPONSE') && /\bstatus 5\d\d without an error envelope/.test(e.message);
}

/** The relay cannot take a write now: a write that fails so is queued, a queued one kept. */
export function unreachable(e: unknown): boolean {
  if (isBridgeError(e, 'TRANSPORT') || gatewayFailure(e)) return true;
  return isRelayRefusal(e) && (e.status >= 500 || e.status === 429 || e.code === 'BUSY' || e.code === 'RATE_LIMITED');
}

/** Why the write could not be sent, in a few words. */
export function causeWords(e: unknown): string {
  if (isRelayRefusal(e)) return `${e.code}${e.retryAfter === undefined ? '' : `, Retry-After ${e.retryAfter} s`}`;
  if (e instanceof Error) return e.message;
  return String(e);
}

export const spaceTarget = (name: string): string => `space:${name}`;
export const conversationTarget = (id: string): string => `conversation:${id}`;
export const startTarget = (to: readonly string[]): string => `start:${[...to].sort().join(',')}`;

/** The outbox, when this process may queue writes. */
export function outboxOf(deps: BridgeDeps): Outbox | undefined {
  return deps.served !== 'relay' && deps.outbox?.enabled === true ? deps.outbox : undefined;
}

/** Why a write goes behind others instead of being sent. */
export const BEHIND = 'earlier writes to the same place still wait in the outbox, and they are sent in order';

/**
 * SPACE `name` as an earlier post (svc_post's or svc_oracle's) or its creation here learnt it (a
 * sealed one as the sealed cache remembers it), when the relay cannot be asked now (`cause`); the
 * failure, told as one, when this bridge did neither: it cannot sign for it (a signed post names
 * its SPACE's id) nor tell whether it is sealed.
 */
export function offlineSpace(deps: BridgeDeps, outbox: Outbox, name: string, cause: unknown): KnownSpace {
  const sealing = deps.sealing;
  const remembered = sealing === undefined ? undefined : sealing.cache.spaceByName(sealing.relay, name);
  if (remembered !== undefined) return { spaceId: remembered.spaceId, sealed: true };
  const known = outbox.knownSpace(name);
  if (known === undefined) {
    throw new BridgeError(
      'TRANSPORT',
      `the relay at ${outbox.relay} cannot be reached (${causeWords(cause)}), and this bridge has neither posted to ${name} nor created it, so it does not know its SPACE id to sign for (a signed post names it) nor whether it is sealed: nothing was queued`,
      'Post again when the relay answers (svc_whoami says when it does). Posts to SPACES this bridge posted to or created before are queued while the relay is away.',
    );
  }
  return known;
}

/** A sealed SPACE whose key this bridge does not hold while the relay cannot be asked: nothing is queued. */
export function cannotSealOffline(outbox: Outbox, name: string, cause: unknown): BridgeError {
  return new BridgeError(
    'TRANSPORT',
    `the relay at ${outbox.relay} cannot be reached (${causeWords(cause)}), and this bridge holds no key of sealed SPACE ${name} to seal the post with: nothing was queued or stored`,
    'Post again when the relay answers (svc_whoami says when it does).',
  );
}

/** The answer to a write kept in the outbox. */
export function queuedAnswer(
  outbox: Outbox,
  w: QueuedWrite,
  cause: unknown,
  what: { readonly lines: readonly (readonly [string, string | undefined])[]; readonly structured: Record<string, unknown> },
): CallToolResult {
  const { id, waiting, already } = outbox.queue(w, cause === BEHIND ? undefined : cause);
  const why = cause === BEHIND ? BEHIND : `the relay at ${outbox.relay} could not take it now: ${causeWords(cause)}`;
  const text = [
    already ? `Already queued, not sent yet: this idempotency key waits in the outbox for the same place, so nothing more was kept (${why}).` : `Queued, not sent yet: ${why}.`,
    `The ${w.kind} is kept in this bridge's outbox (${waiting} waiting) and will be sent by itself, in order, when the relay answers: retried in the background and at your next tool calls. A later tool answer says when it is delivered (with its seq and receipt) or if the relay refuses it. Do not send it again; if you must, use the same idempotency_key, so it stays one ${w.kind}.`,
    fields([...what.lines, ['idempotency_key', w.idempotencyKey], ['outbox', `${waiting} write(s) waiting for ${outbox.relay} (svc_whoami shows them)`]]),
  ].join('\n');
  return answer(text, {
    queued: true,
    idempotency_key: w.idempotencyKey,
    outbox: { id, waiting, already_queued: already, to: w.label, cause: cause === BEHIND ? 'behind earlier writes' : causeWords(cause) },
    ...what.structured,
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The outbox as svc_whoami shows it: lines and the structured part. */
export function outboxView(o: Outbox, now: number): { lines: string[]; structured: Record<string, unknown> } {
  const s = o.summary();
  const structured = {
    queued: s.count,
    bytes: s.bytes,
    oldest_queued_at: s.oldestAt === undefined ? null : iso(s.oldestAt),
    targets: s.targets.map((t) => ({ kind: t.kind, to: t.label, queued: t.count })),
    last_error: s.lastError === undefined ? null : { error: s.lastError.text, at: iso(s.lastError.at) },
    retry_not_before: s.notBefore === undefined ? null : iso(s.notBefore),
    caps: { items: o.caps.maxItems, mib: o.caps.maxBytes / 1048576 },
  };
  if (s.count === 0) return { lines: ['outbox: empty (nothing waits to be sent)'], structured };
  const age = Math.max(0, Math.round((now - (s.oldestAt ?? now)) / 1000));
  const lines = [
    `outbox: ${s.count} write(s) wait for the relay (oldest queued ${age} s ago, at ${iso(s.oldestAt ?? now)}); they are sent by themselves, in order, when it answers:`,
    ...s.targets.map((t) => `- ${t.count} ${t.kind}(s) to ${t.label}`),
  ];
  if (s.lastError !== undefined) lines.push(`outbox last error: ${s.lastError.text} (at ${iso(s.lastError.at)})`);
  if (s.notBefore !== undefined) lines.push(`outbox: the relay asked to wait until ${iso(s.notBefore)}`);
  return { lines, structured };
}
