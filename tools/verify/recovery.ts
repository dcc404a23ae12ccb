/**
 * Recovery notices at the bridge (spec/1-concepts.md "Space status" `closed`, `replaced_by`,
 * Versioning 6; spec/2-endpoints.md recovery.list; shared/recovery.ts for the notice itself).
 *
 * A relay restored from a backup older than checkpoints it had signed has lost positions this
 * bridge may hold checkpoints for. It says so in one signed notice per SPACE it closed: how far
 * each stream was signed and how far it survived, and the SPACE that continues it. The history
 * rule (tools/verify/verify.ts) then accepts a checkpoint that does not extend the kept one only
 * when such a notice, verified under the pinned service root, declares the kept checkpoint
 * lost and the new one lies within what survived. Anything else stays CHANGED HISTORY.
 *
 * - `fetchRecoveries`: every page of `GET /v1/recovery`, each notice verified with
 *   shared/recovery.ts `verifyRecovery` under the pinned root; the verified ones are kept in the
 *   cache as served, a notice that does not verify is named and never used.
 * - `keptRecoveries`: the notices kept, verified again as they are read back (the cache file is
 *   the user's, but what it says is evidence only once its signature holds).
 * - `acceptsLoss`: the rule above, pure.
 *
 * Served notices are attacker-controlled input: every member is read by the shared strict
 * reader, and names reach the model through the callers' fences.
 */
import { type CheckpointLink } from '../../shared/checkpoint.js';
import { isWithheld, readableChain, recoveryExplains, verifyRecovery, type NoticeChain, type NoticeFields, type VerifiedRecovery } from '../../shared/recovery.js';
import { SvcError } from '../../shared/errors.js';
import { toHex } from '../../shared/encoding.js';
import { isSpaceNameText } from '../../shared/oracle-text.js';
import type { Cache } from '../cache/cache.js';
import type { RelayApi } from '../api.js';
import { isRelayRefusal } from '../errors.js';

/** recovery.list pages read at most in one fetch. */
const RECOVERY_PAGES_MAX = 10;

export interface RecoveryDeps {
  readonly api: RelayApi;
  readonly cache: Cache;
  readonly now: () => number;
  readonly log: (line: string) => void;
}

export interface RecoveryView {
  /** The notices that verified under the pinned root. */
  readonly notices: readonly VerifiedRecovery[];
  /** One sentence per served notice that did not verify, or why the list could not be read. */
  readonly refused: readonly string[];
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function why(e: unknown): string {
  if (e instanceof SvcError) return e.detail ?? e.code;
  return e instanceof Error ? e.message : String(e);
}

/** Read every page of recovery.list; verify each notice under `root`; keep the verified ones. */
export async function fetchRecoveries(deps: RecoveryDeps, root: Uint8Array): Promise<RecoveryView> {
  const relay = deps.api.base.origin;
  const notices: VerifiedRecovery[] = [];
  const refused: string[] = [];
  let after: string | undefined;
  for (let page = 0; page < RECOVERY_PAGES_MAX; page++) {
    let body: Obj;
    try {
      const res = await deps.api.request({ path: '/v1/recovery', query: { after }, auth: 'opt' });
      body = isObject(res.body) ? res.body : {};
    } catch (e) {
      refused.push(`the relay's recovery list could not be read (${isRelayRefusal(e) ? e.code : why(e)})`);
      break;
    }
    const items = Array.isArray(body.items) ? body.items : [];
    for (const [i, item] of items.entries()) {
      try {
        const v = verifyRecovery(item, root, `recovery.items[${i}]`);
        notices.push(v);
        deps.cache.keepRecovery(relay, { recoveryId: toHex(v.id), spaceId: v.fields.space_id, served: JSON.stringify(item), seenAt: deps.now() });
      } catch (e) {
        refused.push(`a recovery notice the relay serves does not verify (${why(e)}); it is not used`);
      }
    }
    if (body.has_more !== true || typeof body.next_after !== 'string' || body.next_after === after) break;
    after = body.next_after;
  }
  return { notices, refused };
}

/** The notices this bridge kept, each verified again under `root` (one that fails is left out and logged). */
export function keptRecoveries(deps: RecoveryDeps, root: Uint8Array): VerifiedRecovery[] {
  const out: VerifiedRecovery[] = [];
  for (const k of deps.cache.recoveries(deps.api.base.origin)) {
    try {
      out.push(verifyRecovery(JSON.parse(k.served), root, 'kept recovery'));
    } catch (e) {
      deps.log(`a kept recovery notice (${k.recoveryId}) no longer verifies under the pinned root: ${why(e)}`);
    }
  }
  return out;
}

/**
 * Whether `notice` lets a reader that kept checkpoint `kept` accept `seen`, which does not
 * extend it: the notice declares `kept` lost (same SPACE, same stream, past what survived and
 * within what was signed: shared/recovery.ts `recoveryExplains`), and `seen` is a checkpoint
 * of that SPACE and stream that ends within what survived, at the surviving link when it ends
 * exactly there. A notice never lets a history move on past what survived.
 */
export function acceptsLoss(notice: NoticeFields, kept: CheckpointLink, seen: CheckpointLink): boolean {
  if (!recoveryExplains(notice, kept.fields, kept.id)) return false;
  if (seen.fields.space_id !== notice.space_id || seen.fields.stream !== kept.fields.stream) return false;
  const chain = readableChain(notice, kept.fields.stream)!;
  const seenLast = BigInt(seen.fields.last);
  const survived = BigInt(chain.survived_last);
  if (seenLast > survived) return false;
  return seenLast < survived || seen.fields.ending_hash === chain.survived_hash;
}

/** The first notice of `notices` that accepts `seen` in place of `kept`. */
export function findAcceptingNotice(notices: readonly VerifiedRecovery[], kept: CheckpointLink, seen: CheckpointLink): VerifiedRecovery | undefined {
  return notices.find((n) => acceptsLoss(n.fields, kept, seen));
}

/**
 * The verified notice for a SPACE id, newest first by `created_at` (a second restore may close
 * it again); a withheld form is passed over when its whole notice is here too.
 */
export function noticeFor(notices: readonly VerifiedRecovery[], spaceId: string): VerifiedRecovery | undefined {
  const mine = notices.filter((n) => n.fields.space_id === spaceId);
  const whole = new Set(mine.filter((n) => n.fields.full_recovery_id === undefined).map((n) => toHex(n.id)));
  const shown = mine.filter((n) => n.fields.full_recovery_id === undefined || !whole.has(n.fields.full_recovery_id));
  return shown.sort((a, b) => (a.fields.created_at < b.fields.created_at ? 1 : -1))[0];
}

/** Whether a name the relay gave has the SPACE name pattern (spec "Space"), so it can name a SPACE to read or post to. */
export function isSpaceName(v: unknown): v is string {
  return typeof v === 'string' && isSpaceNameText(v);
}

/** A SPACE name the relay gave, as text for the model: bare when it has the pattern, else quoted and marked. */
export function spaceNameText(v: unknown): string {
  return isSpaceName(v) ? v : `${JSON.stringify(String(v)).slice(0, 80)} (not a valid SPACE name)`;
}

/** One sentence on what a notice declares lost (positions as decimal text, checked by the shared reader). */
export function lossSentence(n: VerifiedRecovery): string {
  const f = n.fields;
  const streams = (f.chains as readonly NoticeChain[])
    .map((c) =>
      isWithheld(c)
        ? `${c.stream}: positions withheld (this KEY may not read that chain)`
        : `${c.stream} signed up to ${c.signed_last}, survived up to ${c.survived_last} (positions ${BigInt(c.survived_last) + 1n}-${c.signed_last} are gone for good)`,
    )
    .join('; ');
  const dev = n.trusted.development ? ' (DEVELOPMENT signer: it vouches for nothing beyond one run of the relay)' : '';
  return `signed recovery notice ${toHex(n.id).slice(0, 16)}… verified under the pinned root${dev}: ${streams}`;
}
