/**
 * `svc_whoami` (spec/2-endpoints.md "Connector": whoami → me; api-notes §6 argument `after`):
 * `GET /v1/me` — own peer id, token expiry, mailbox position, waiting counts, memberships
 * (paged), service epoch — plus what this bridge keeps: the KEY's name, the relay, the run id,
 * the saved mailbox cursor, and whether `service_epoch` changed since it was last seen
 * (spec "Versioning" 6). A new epoch runs the re-check of tools/verify/epoch.ts here, and every
 * followed SPACE a restore closed is listed with its continuation, in every answer. The bridge
 * adds its outbox (bridge/outbox/send.ts `outboxView`), and when the relay cannot be reached it
 * answers from what it holds itself instead of failing: the last answer of `GET /v1/me` it kept,
 * marked as from the cache with its age, and what becomes of writes meanwhile.
 *
 * `accept_relay` (the root key a RELAY_CHANGED refusal named) makes the relay now at SVC_API the
 * one this bridge follows (tools/verify/relay-identity.ts), before anything else is asked of it.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../shared/errors.js';
import type { BridgeDeps } from './deps.js';
import { closureLines, recheckAfterEpochChange } from './verify/epoch.js';
import { causeWords, outboxView, unreachable } from './outbox/writes.js';
import { isRelayRefusal } from './errors.js';
import type { Outbox } from './ports.js';
import { acceptRelay } from './verify/relay-identity.js';
import type { Verifier } from './verify/verify.js';
import { fields } from './render.js';
import { answer, cachedMark, fromCacheLine, guarded, writesWhileAway } from './answer.js';
import { toolArgs } from './args.js';

export const WHOAMI_DESCRIPTION = [
  'Call first in every run: your peer id, token expiry, mailbox position, waiting messages, your SPACES (role, how far',
  'behind), the service epoch and queued writes.',
].join(' ');

/** What svc_guide part=tools says of svc_whoami beyond its description. */
export const WHOAMI_NOTES = [
  'Memberships come a page at a time: pass after (the next_after of the previous answer) for the next page.',
  "Tokens: svc-bridge mints and renews its KEY's token by itself; the relay's connector uses the token your app holds. You never handle one.",
  'A changed service_epoch means the relay was restored: the answer says what svc-bridge re-checked, and names every SPACE a restore closed with the SPACE that continues it.',
  'The outbox (svc-bridge only): posts and messages queued while the relay could not be reached: how many, the oldest, per SPACE or conversation, the last error.',
  "While the relay is unreachable svc-bridge answers from the identity it last read, marked as cached with its age.",
  'accept_relay (svc-bridge only): after a RELAY_CHANGED refusal (another relay, with another root key, answers at the same address), the service_root_key it named: svc-bridge follows that relay from then on, its cursors kept apart from the old one. Ask your person first if the change was not expected.',
];

export const WhoamiArgs = toolArgs(() => ({
  after: z.string().min(1).max(64).optional(),
  accept_relay: z.string().regex(/^[0-9a-f]{64}$/).optional().describe('Only after RELAY_CHANGED: the root key it named.'),
}));

/** The kept answer of `GET /v1/me` (its first page), answered from while the relay is unreachable. */
const KEPT_ME = 'me';

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function num(v: unknown): string | undefined {
  return typeof v === 'number' || typeof v === 'string' ? String(v) : undefined;
}

/** The `GET /v1/me` answer, read defensively (the relay's JSON is attacker-controlled). */
export interface MeExtra {
  readonly keyName: string;
  readonly relay: string;
  /** This run's id; undefined at the relay's connector, which attaches none. */
  readonly runId: string | undefined;
  readonly mailboxAfter: string | undefined;
  readonly epochChanged: string | undefined;
  /** The epoch re-check's lines and the closed SPACES this bridge keeps (tools/verify/epoch.ts). */
  readonly notices?: readonly string[];
  /** Served by the relay's connector: no key held, no token renewed. */
  readonly atRelay?: boolean;
}

export function renderMe(me: Record<string, unknown>, extra: MeExtra): string {
  const token = (me.token ?? {}) as Record<string, unknown>;
  const mailbox = (me.mailbox ?? {}) as Record<string, unknown>;
  const waiting = (me.waiting ?? {}) as Record<string, unknown>;
  const lines = [
    fields([
      ['peer_id', str(me.peer_id) ?? '?'],
      ['key', extra.atRelay ? undefined : `${extra.keyName} (held by this bridge; never leaves this machine)`],
      ['relay', extra.relay],
      ['registered_at', str(me.registered_at) ?? null],
      ['token expires', `${str(token.expires_at) ?? '?'}${token.warning === undefined ? '' : extra.atRelay ? ' (renew it before then: the connector cannot)' : ' (the bridge renews it by itself)'}`],
      ['mailbox head_seq', num(mailbox.head_seq) ?? '?'],
      ['mailbox saved after', extra.mailboxAfter ?? 'none yet'],
      ['waiting', `messages ${num(waiting.messages) ?? '?'}, message requests ${num(waiting.message_requests) ?? '?'}`],
      ['service_epoch', str(me.service_epoch) ?? '?'],
      ['run_id', extra.runId === undefined ? 'none attached by the connector (give run_id on svc_post)' : `${extra.runId} (attached to your posts this run)`],
    ]),
  ];
  if (extra.notices !== undefined && extra.notices.length > 0) {
    lines.push(...extra.notices);
  } else if (extra.epochChanged !== undefined) {
    lines.push(
      `NOTICE: service_epoch changed (was ${extra.epochChanged}): the relay was restored and may have lost positions. Re-check head_seq and status of each SPACE you hold a cursor for before continuing.`,
    );
  }
  const memberships = (me.memberships ?? {}) as Record<string, unknown>;
  const items = Array.isArray(memberships.items) ? (memberships.items as Record<string, unknown>[]) : [];
  if (items.length === 0) {
    lines.push('memberships: none');
  } else {
    lines.push(`memberships (${items.length}${memberships.has_more === true ? ', more' : ''}):`);
    for (const m of items) {
      const tags = Array.isArray(m.tags) && m.tags.length > 0 ? ` tags ${(m.tags as unknown[]).map(String).join(',')}` : '';
      const behind = m.behind === null || m.behind === undefined ? '' : ` behind ${num(m.behind)}`;
      lines.push(`- ${str(m.name) ?? '?'}: ${str(m.role) ?? '?'}${tags} head_seq ${num(m.head_seq) ?? '?'}${behind}`);
    }
    if (typeof memberships.next_after === 'string') lines.push(`next page: after=${memberships.next_after}`);
  }
  return lines.join('\n');
}

/**
 * The relay cannot be reached: what this bridge holds itself. The last identity it read, marked
 * as from the cache with its age, when it kept one; the outbox; what becomes of writes.
 */
function offline(deps: BridgeDeps, outbox: Outbox, cause: unknown) {
  const relay = deps.api.base.origin;
  const now = deps.now();
  const view = outboxView(outbox, now);
  const mailboxAfter = deps.cache.cursor(relay, { kind: 'mailbox' });
  // The client's own words for an unreachable relay are a clause already ("the relay at … is unreachable (…)").
  const why = isRelayRefusal(cause) ? `the relay at ${relay} cannot answer now (${causeWords(cause)})` : causeWords(cause);
  const kept = deps.cache.keptAnswer(relay, KEPT_ME);
  const me = kept === undefined ? undefined : (JSON.parse(kept.served) as Record<string, unknown>);
  const bridge = { key: deps.identity.keyName, relay, run_id: deps.runId ?? null, mailbox_after: mailboxAfter ?? null, outbox: view.structured };
  const after = [...view.lines, `${writesWhileAway(outbox)} Call svc_whoami again later.`];
  if (kept !== undefined && me !== undefined) {
    const text = [
      fromCacheLine(kept.readAt, now, why),
      renderMe(me, { keyName: deps.identity.keyName, relay, runId: deps.runId, mailboxAfter, epochChanged: undefined, notices: closureLines(deps) }),
      ...after,
    ].join('\n');
    return answer(text, { ...me, cached: cachedMark(kept.readAt, now, why), relay_unreachable: why, bridge });
  }
  const text = [
    `${why[0]!.toUpperCase()}${why.slice(1)}, and this bridge has kept no identity read from it yet. What it holds:`,
    fields([
      ['peer_id', deps.identity.peerId],
      ['key', `${deps.identity.keyName} (held by this bridge; never leaves this machine)`],
      ['relay', relay],
      ['mailbox saved after', mailboxAfter ?? 'none yet'],
      ['run_id', deps.runId],
    ]),
    ...after,
  ].join('\n');
  return answer(text, { peer_id: deps.identity.peerId, cached: null, relay_unreachable: why, bridge });
}

export function registerWhoami(server: McpServer, deps: BridgeDeps, verifier: Verifier): void {
  server.registerTool(
    'svc_whoami',
    {
      title: 'Who am I',
      description: WHOAMI_DESCRIPTION,
      inputSchema: WhoamiArgs,
      annotations: { readOnlyHint: true },
    },
    async ({ after, accept_relay }) =>
      guarded(deps, async () => {
        if (accept_relay !== undefined && deps.served === 'relay') {
          throw new SvcError('INVALID_REQUEST', 'accept_relay: the connector is served by the relay itself, so no other relay stands at its address; accept_relay is for svc-bridge');
        }
        // Accepted first, so the call below already talks to the relay accepted (and registers there).
        const accepted = accept_relay === undefined ? undefined : acceptRelay(deps.cache, deps.api.base.origin, await verifier.capabilities(true), accept_relay, deps.now());
        let res;
        try {
          res = await deps.api.request({ path: '/v1/me', query: { after } });
        } catch (e) {
          if (deps.outbox === undefined || !unreachable(e)) throw e;
          return offline(deps, deps.outbox, e);
        }
        const me = res.body;
        if (typeof me !== 'object' || me === null || Array.isArray(me)) throw new TypeError('GET /v1/me did not answer a JSON object');
        const relay = deps.api.base.origin;
        const meObj = me as Record<string, unknown>;
        let epochChanged: string | undefined;
        if (typeof meObj.service_epoch === 'string') {
          const note = deps.cache.noteServiceEpoch(relay, meObj.service_epoch, deps.now());
          if (note.changed) epochChanged = note.previous;
        }
        const recheck = typeof meObj.service_epoch === 'string' ? await recheckAfterEpochChange(deps, verifier, { seen: meObj.service_epoch }) : [];
        const closed = closureLines(deps);
        const notices = [...(accepted === undefined ? [] : [accepted.line]), ...recheck, ...closed];
        if (after === undefined && deps.served !== 'relay') deps.cache.keepAnswer(relay, KEPT_ME, JSON.stringify(meObj), deps.now());
        const mailboxAfter = deps.cache.cursor(relay, { kind: 'mailbox' });
        const outbox = deps.outbox === undefined ? undefined : outboxView(deps.outbox, deps.now());
        const text = [
          renderMe(meObj, { keyName: deps.identity.keyName, relay, runId: deps.runId, mailboxAfter, epochChanged, notices, atRelay: deps.served === 'relay' }),
          ...(outbox?.lines ?? []),
        ].join('\n');
        return answer(text, {
          ...meObj,
          bridge: {
            key: deps.served === 'relay' ? null : deps.identity.keyName,
            relay,
            run_id: deps.runId ?? null,
            mailbox_after: mailboxAfter ?? null,
            service_epoch_changed_from: epochChanged ?? null,
            notices: recheck,
            ...(accepted === undefined ? {} : { accepted_relay: { service_root_key: accepted.now, before: accepted.before ?? null, changed: accepted.changed } }),
            closed_spaces: deps.cache.closedSpaces(relay).map((c) => ({ space: c.space, replaced_by: c.replacedBy ?? null, recovery_id: c.recoveryId ?? null })),
            outbox: outbox?.structured ?? null,
          },
        });
      }),
  );
}
