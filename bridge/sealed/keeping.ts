/**
 * A keeper's work in a sealed SPACE (protocol/sealed.md §8, §9), shared by `svc-bridge keeper`
 * (bridge/commands/keeper.ts), the serving bridge's background keeper duty
 * (bridge/sealed/keeper-duty.ts) and the tools that admit a KEY (tools/spaces/space-control.ts).
 *
 * `keeperPass` runs as the owner or as a KEY the owner's keeper list names, and:
 *
 * 1. reads the key records through the bridge's trust rules (bridge/sealed/sealing.ts `status`): a
 *    relay showing an older list or generation, a forged list or an unbacked owner stops it;
 * 2. with `admit`, admits waiting join requests by the owner's rule: every request when
 *    admission is `open`, otherwise a requester holding a current stamp from the owner, a listed
 *    keeper or a listed stamper, whose signature this keeper checks itself against the issuer's
 *    KEY (the relay's `vouched` is never used); the others wait for a person;
 * 3. locks the key in use for every member it vouches for that holds no lock yet (each
 *    recipient's encryption key checked against its KEY first), in chunks of at most 1,000; a
 *    KEY the relay refuses a lock for (it left meanwhile, or nobody vouches for it there) is
 *    passed over by the peer id the refusal's detail names, and the others locked;
 * 4. changes the key when the relay says a change is due (a member left or was removed, a
 *    stamp ran out, a keeper was dropped) or with `changeNow`: a new secret kept here first,
 *    stage (commitment and back link), locks for every vouched member (its own first, so a
 *    stopped keeper resumes), activate; a change it staged but holds no secret for is
 *    abandoned, as is one nobody progressed for 15 minutes.
 *
 * `vouchAndLock` is what admitting one KEY by hand takes (§8: "when a keeper admits a KEY by
 * hand"): a stamp this keeper signs for it unless it is vouched for already, then its lock for
 * the generation in use. It never throws: the admission it follows already happened, so it
 * answers what it could do and why not.
 *
 * `endVouching` is what removing one takes: the stamps a keeper signs carry no end, so they
 * would vouch for the KEY after its removal, and a keeper admitting vouched requests on its own
 * would let it back in (and hand it the key) the moment it asks again. A newer stamp replaces
 * the older (§8), so this keeper puts one of its own for the KEY that ended a second ago. A
 * KEY may put a stamp naming itself again, so one without end it kept from before could come
 * back; this KEY remembers whose vouching it ended (bridge/sealed/sealed-cache.ts), and its passes
 * count no stamp of its own for such a KEY until it vouches for it anew (an admission by hand,
 * or `svc-bridge stamp`).
 */
import { randomBytes } from 'node:crypto';
import { fromBase64url, toHex } from '../../shared/encoding.js';
import type { Signer } from '../../shared/identity.js';
import { LOCKS_PER_CALL } from '../../shared/limits.js';
import { readEnvelope } from '../../shared/sealed/envelope.js';
import { commitmentHex, stageGeneration } from '../../shared/sealed/generations.js';
import { isKeeper, isVouched, vouching as vouchersOf, type SpaceAuthority } from '../../shared/sealed/keepers.js';
import { readStamp, stampCurrent, verifyStamp, type Stamp } from '../../shared/sealed/stamps.js';
import type { RelayApi } from '../../tools/api.js';
import { fetchPeerKey, readKeyView, type PeerKey } from './encryption.js';
import { BridgeError, failureWords, isRelayRefusal } from '../../tools/errors.js';
import { refusalText } from '../../tools/render.js';
import type { Ended, Handed } from '../../tools/ports.js';
import type { Sealing, SpaceKeys } from './sealing.js';
import { endedNotAfter, putStamp, signedStamp } from './stamping.js';

/** What a keeper works with: the relay, this KEY (signer and Sealing), a clock and stderr. */
export interface KeeperContext {
  readonly api: RelayApi;
  readonly peerId: string;
  readonly signer: Signer;
  readonly sealing: Sealing;
  readonly now: () => number;
  readonly log: (line: string) => void;
}

/** The keeper context of a bridge's Sealing (the tools and the background duty). */
export function keeperContext(sealing: Sealing): KeeperContext {
  const { api, signer, now, log } = sealing.deps;
  return { api, peerId: sealing.me, signer, sealing, now, log };
}

/** A change staged without progress this long is abandoned (sealed.md §9, upkeep.staged_progressed_at). */
export const STALE_STAGE_MS = 15 * 60_000;
const PAGE = 200;
const ACTIVATE_TRIES = 3;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface PassReport {
  readonly generation: number;
  readonly admitted: readonly string[];
  readonly waiting: readonly string[];
  readonly locked: number;
  /** The generation a key change put in use during this pass. */
  readonly changedTo: number | undefined;
  readonly notes: readonly string[];
}

/** Stamps and issuer keys checked during one pass. */
class Vouching {
  private readonly issuers = new Map<string, PeerKey | null>();

  constructor(
    private readonly ctx: KeeperContext,
    private readonly spaceId: string,
    private readonly authority: SpaceAuthority,
    private readonly nowSeconds: number,
    private readonly notes: string[],
  ) {}

  /** A served stamp view (attacker-controlled) checked against its issuer's own KEY, or none. */
  private async stamp(view: unknown, peer: string): Promise<Stamp[]> {
    if (!isObj(view)) return [];
    try {
      const bytes = fromBase64url(view.stamp, 'stamp');
      const envelope = readEnvelope(view.signature);
      const shape = readStamp(bytes);
      if (shape.peer_id !== peer) return [];
      let issuer = this.issuers.get(shape.issuer);
      if (issuer === undefined) {
        issuer = await fetchPeerKey(this.ctx.api, shape.issuer).catch(() => null);
        this.issuers.set(shape.issuer, issuer);
      }
      if (issuer === null) return [];
      const stamp = verifyStamp(bytes, envelope, issuer.signer);
      if (stamp.issuer === this.ctx.peerId && stampCurrent(stamp, this.nowSeconds) && this.ended(peer)) {
        this.notes.push(`a stamp this KEY signed for ${peer} is shown again after this KEY ended its vouching for it (removed): not counted until this KEY vouches for it anew`);
        return [];
      }
      return [stamp];
    } catch (e) {
      this.notes.push(`a stamp shown for ${peer} does not check (${failureWords(e)}): not counted`);
      return [];
    }
  }

  /** Whether this KEY ended its vouching for `peer` here and has not vouched for it anew. */
  private ended(peer: string): boolean {
    return this.ctx.sealing.cache.vouchingEnded(this.ctx.sealing.relay, this.spaceId, peer) !== undefined;
  }

  /** Whether `peer` is vouched for under the list in force (keepers.ts `isVouched`). */
  async vouched(peer: string, stampView: unknown): Promise<boolean> {
    return isVouched(peer, await this.stamp(stampView, peer), this.authority, this.nowSeconds);
  }
}

function path(name: string, rest = ''): string {
  return `/v1/spaces/${encodeURIComponent(name)}/sealed${rest}`;
}

/** Admit waiting join requests the owner's rule lets a keeper admit on its own. */
async function admit(ctx: KeeperContext, keys: SpaceKeys, vouching: Vouching): Promise<{ admitted: string[]; waiting: string[] }> {
  const admitted: string[] = [];
  const waiting: string[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await ctx.api.request({ path: path(keys.name, '/requests'), query: { after, limit: PAGE } });
    const b = isObj(res.body) ? res.body : {};
    for (const r of Array.isArray(b.items) ? b.items.filter(isObj) : []) {
      const requester = typeof r.requester === 'string' ? r.requester : '';
      const id = typeof r.request_id === 'string' ? r.request_id : '';
      if (!/^[0-9a-f]{64}$/.test(requester) || id === '' || id.length > 200) continue;
      if (!(await vouching.vouched(requester, r.stamp))) {
        waiting.push(requester);
        continue;
      }
      try {
        await ctx.api.request({ method: 'POST', path: `/v1/requests/${encodeURIComponent(id)}/approve`, body: {} });
        admitted.push(requester);
      } catch (e) {
        // Decided meanwhile (withdrawn, approved by someone else): the next pass sees it.
        if (!isRelayRefusal(e)) throw e;
        ctx.log(`request ${id} of ${requester}: ${refusalText(e)}`);
      }
    }
    if (b.has_more !== true || typeof b.next_after !== 'string') break;
    after = b.next_after;
  }
  return { admitted, waiting };
}

/** The members the relay lists without a lock for `generation` (sealed.unlocked), every page. */
async function unlocked(ctx: KeeperContext, name: string, generation: number): Promise<Obj[]> {
  const out: Obj[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await ctx.api.request({ path: path(name, '/unlocked'), query: { generation: String(generation), after, limit: PAGE } });
    const b = isObj(res.body) ? res.body : {};
    out.push(...(Array.isArray(b.items) ? b.items.filter(isObj) : []));
    if (b.has_more !== true || typeof b.next_after !== 'string') return out;
    after = b.next_after;
  }
}

/**
 * Lock generation `generation` (secret `secret`) for every member the relay lists without a
 * lock that this keeper vouches for (only `only`, when given). Returns the KEYS locked for.
 */
async function lockMembers(
  ctx: KeeperContext,
  keys: SpaceKeys,
  vouching: Vouching,
  generation: number,
  secret: Uint8Array,
  notes: string[],
  only?: string,
): Promise<string[]> {
  const sealer = ctx.sealing.deps.sealer;
  const commitment = commitmentHex(keys.container, generation, secret);
  const locks = new Map<string, string>();
  for (const item of await unlocked(ctx, keys.name, generation)) {
    if (only !== undefined && item.peer_id !== only) continue;
    let key: PeerKey;
    try {
      key = readKeyView(item, 'unlocked');
    } catch (e) {
      notes.push(`a member shown without a lock has a key that does not check (${failureWords(e)}): not locked`);
      continue;
    }
    if (key.encryption === null) continue;
    if (!(await vouching.vouched(key.peerId, item.stamp))) continue;
    locks.set(key.peerId, toHex(sealer.lock({ container: keys.container, generation, secret, recipient: { peerId: key.peerId, publicKey: key.encryption.publicKey } })));
  }
  // Its own lock first (sealed.md §9: a stopped keeper can resume from it).
  const order = [...locks.keys()].sort((a, b) => (a === ctx.peerId ? -1 : b === ctx.peerId ? 1 : 0));
  const refused = new Set<string>();
  for (let i = 0; i < order.length; i += LOCKS_PER_CALL) {
    const chunk = new Map(order.slice(i, i + LOCKS_PER_CALL).map((p) => [p, locks.get(p)!]));
    await sendLocks(ctx, keys.name, { generation, commitment }, chunk, refused, notes);
  }
  return order.filter((p) => !refused.has(p));
}

/**
 * One chunk of locks. A member that left, or that the relay counts as vouched for by nobody,
 * between the listing and this write refuses the whole chunk, naming that KEY alone in the
 * refusal's detail (its bare peer id): it is passed over, said in `notes`, and the rest sent
 * again, so one KEY never holds back every other member's key.
 */
async function sendLocks(
  ctx: KeeperContext,
  name: string,
  made: { generation: number; commitment: string },
  chunk: Map<string, string>,
  refused: Set<string>,
  notes: string[],
): Promise<void> {
  while (chunk.size > 0) {
    try {
      await ctx.api.request({ method: 'POST', path: path(name, '/locks'), body: { ...made, locks: Object.fromEntries(chunk) } });
      return;
    } catch (e) {
      if (!isRelayRefusal(e, 'LOCK_RECIPIENT_NOT_A_MEMBER', 'LOCK_RECIPIENT_NOT_VOUCHED') || e.detail === undefined || !chunk.has(e.detail)) throw e;
      chunk.delete(e.detail);
      refused.add(e.detail);
      notes.push(`${e.detail} was not locked for generation ${made.generation}: the relay refused it (${e.code})`);
    }
  }
}

/** Stage generation g+1, lock it for every vouched member (own lock first), activate. */
async function changeKey(ctx: KeeperContext, keys: SpaceKeys, vouching: Vouching, notes: string[]): Promise<number> {
  const { sealing } = ctx;
  const current = keys.secret!;
  let generation: number;
  let secret: Uint8Array;
  const staged = keys.status.staged;
  if (staged !== null && staged.createdBy === ctx.peerId) {
    const kept = sealing.cache.secret(sealing.relay, keys.spaceId, staged.generation, staged.commitment);
    if (kept === undefined) throw new Error('unreachable: a change staged here without its secret is abandoned first');
    generation = staged.generation;
    secret = kept.secret;
    notes.push(`resuming the key change to generation ${generation} staged earlier`);
  } else {
    generation = keys.generation + 1;
    secret = new Uint8Array(randomBytes(32));
    const stage = stageGeneration({ container: keys.container, generation, secret, previousSecret: current });
    // Kept before it is sent: a keeper stopped after staging resumes with it.
    sealing.cache.keepSecret(sealing.relay, keys.spaceId, { generation, commitment: stage.commitment, secret, source: 'staged' }, ctx.now());
    await ctx.api.request({ method: 'POST', path: path(keys.name, '/generations'), body: stage });
  }
  let locked = (await lockMembers(ctx, keys, vouching, generation, secret, notes)).length;
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.api.request({ method: 'POST', path: path(keys.name, `/generations/${generation}/activate`), body: {} });
      break;
    } catch (e) {
      if (!isRelayRefusal(e, 'LOCKS_MISSING') || attempt >= ACTIVATE_TRIES) {
        if (isRelayRefusal(e, 'LOCKS_MISSING')) {
          notes.push(`the relay counts ${e.detail ?? 'some'} vouched member(s) without a lock that this keeper does not vouch for; the change stays staged`);
        }
        throw e;
      }
      // Someone was admitted meanwhile: lock for them too, then activate again.
      locked += (await lockMembers(ctx, keys, vouching, generation, secret, notes)).length;
    }
  }
  notes.push(`changed the key: generation ${generation} is in use (${locked} lock${locked === 1 ? '' : 's'} made)`);
  return generation;
}

/** Abandon a staged change this keeper cannot finish (sealed.md §9). Returns whether it did. */
async function abandonStuck(ctx: KeeperContext, keys: SpaceKeys, notes: string[]): Promise<boolean> {
  const staged = keys.status.staged;
  if (staged === null) return false;
  const mine = staged.createdBy === ctx.peerId;
  const held = ctx.sealing.cache.secret(ctx.sealing.relay, keys.spaceId, staged.generation, staged.commitment) !== undefined;
  const progressed = Date.parse(String(keys.status.upkeep.staged_progressed_at ?? ''));
  const stale = Number.isFinite(progressed) && ctx.now() - progressed > STALE_STAGE_MS;
  if ((mine && !held) || (!mine && stale)) {
    await ctx.api.request({ method: 'DELETE', path: path(keys.name, `/generations/${staged.generation}`) });
    notes.push(`abandoned the change to generation ${staged.generation} (${mine ? 'staged here, but its secret is not held' : 'no progress for 15 minutes'})`);
    return true;
  }
  return false;
}

/** The refusal of a pass by a KEY that keeps nothing in the SPACE. */
export function keepsNothing(me: string, name: string): BridgeError {
  return new BridgeError(
    'CONFIG',
    `this KEY (${me}) keeps nothing in ${name}: it is neither the owner nor a keeper in the keeper list the owner signed`,
    'Run the keeper as the owner, or ask the owner to name this KEY with `svc-bridge keepers SPACE --keeper PEER`.',
  );
}

/**
 * One keeper pass over sealed SPACE `name`. `admit` (default true) also admits waiting join
 * requests by the keeper list's rule; `changeNow` changes the key even if no change is due.
 */
export async function keeperPass(ctx: KeeperContext, name: string, opts: { changeNow?: boolean; admit?: boolean } = {}): Promise<PassReport> {
  const notes: string[] = [];
  let keys = await ctx.sealing.status(name, ctx.log);
  const authority = keys.judged.authority;
  if (!isKeeper(ctx.peerId, authority)) throw keepsNothing(ctx.peerId, keys.name);
  if (await abandonStuck(ctx, keys, notes)) keys = await ctx.sealing.status(name, ctx.log);
  const secret = keys.secret;
  if (secret === undefined) {
    throw new BridgeError(
      'SEALED_NO_KEY',
      `this keeper holds no key for generation ${keys.generation} of ${keys.name}${keys.refused.length > 0 ? ` (${keys.refused.join('; ')})` : ''}`,
      'The owner (or another keeper) must lock the key for this KEY first.',
    );
  }
  const vouching = new Vouching(ctx, keys.spaceId, authority, Math.floor(ctx.now() / 1000), notes);
  const { admitted, waiting } = opts.admit === false ? { admitted: [], waiting: [] } : await admit(ctx, keys, vouching);
  for (const p of admitted) notes.push(`admitted ${p}: vouched for by the keeper list's rule`);
  if (waiting.length > 0) notes.push(`${waiting.length} join request(s) wait for a person: not vouched for (${waiting.join(', ')})`);
  const locked = (await lockMembers(ctx, keys, vouching, keys.generation, secret, notes)).length;
  if (locked > 0) notes.push(`locked generation ${keys.generation} for ${locked} member(s)`);
  const staged = keys.status.staged;
  const resumable = staged !== null && staged.createdBy === ctx.peerId;
  const due = keys.status.upkeep.change_due === true;
  let changedTo: number | undefined;
  if (resumable || ((due || opts.changeNow === true) && staged === null)) {
    if (due) notes.push(`a key change is due (${Array.isArray(keys.status.upkeep.reasons) ? keys.status.upkeep.reasons.join(', ') : 'the relay says so'})`);
    changedTo = await changeKey(ctx, keys, vouching, notes);
    keys = await ctx.sealing.status(name, ctx.log);
    if (keys.generation !== changedTo || keys.secret === undefined) {
      throw new BridgeError('SEALED_NO_KEY', `after the change the relay shows generation ${keys.generation}, and this keeper cannot open its own lock for ${changedTo}`, 'Run the keeper again; tell the SPACE owner if it persists.');
    }
  } else if (due && staged !== null) {
    notes.push(`a key change is due, and ${staged.createdBy} has one staged (generation ${staged.generation}); leaving it to that keeper`);
  }
  return { generation: keys.generation, admitted, waiting, locked, changedTo, notes };
}

// ---- admitting one KEY by hand -----------------------------------------------------------------

/**
 * Vouch for `peer` in sealed SPACE `name` (a stamp signed by this keeper, unless the list in
 * force or a stamp it checks vouches already) and lock the key in use for it.
 */
export function vouchAndLock(ctx: KeeperContext, name: string, peer: string): Promise<Handed> {
  return ctx.sealing.inTurn(async (): Promise<Handed> => {
    try {
      const keys = await ctx.sealing.status(name, ctx.log);
      // Admitting it by hand is vouching for it anew, even after this KEY ended that once.
      const ended = ctx.sealing.cache.vouchingEnded(ctx.sealing.relay, keys.spaceId, peer) !== undefined;
      ctx.sealing.cache.clearVouchingEnded(ctx.sealing.relay, peer, keys.spaceId);
      const authority = keys.judged.authority;
      if (!isKeeper(ctx.peerId, authority)) return { state: 'not_keeper' };
      const generation = keys.generation;
      if (keys.secret === undefined) return { state: 'no_key_here', generation, why: keys.refused.join('; ') || 'no lock for this KEY yet' };
      const notes: string[] = [];
      const vouching = new Vouching(ctx, keys.spaceId, authority, Math.floor(ctx.now() / 1000), notes);
      const row = (await unlocked(ctx, keys.name, generation)).find((r) => r.peer_id === peer);
      if (row === undefined) {
        // The relay shows no stamp of a member holding the key. The one this keeper ended on a
        // removal stands (its own stamps are replaced by the newer): without a fresh one, the
        // member's vouching lapsed and the next key change would leave it out.
        const v = vouchersOf(authority);
        const renew = ended && !v.open && !v.members.has(peer);
        const stamped = renew && (await putStamp(ctx.api, keys.name, signedStamp(ctx.signer, ctx.peerId, peer))).stored;
        return { state: 'held', generation, stamped };
      }
      let stamped = false;
      if (!(await vouching.vouched(peer, row.stamp))) {
        stamped = (await putStamp(ctx.api, keys.name, signedStamp(ctx.signer, ctx.peerId, peer))).stored;
      }
      const key = readKeyView(row, 'unlocked');
      if (key.encryption === null) return { state: 'no_encryption_key', generation, stamped };
      // Locked from the relay's fresh listing, so the stamp just put is checked like any other.
      const locked = await lockMembers(ctx, keys, vouching, generation, keys.secret, notes, peer);
      for (const n of notes) ctx.log(`sealed SPACE ${keys.name}: ${n}`);
      if (locked.includes(peer)) return { state: 'locked', generation, stamped };
      // Another keeper may have locked it meanwhile.
      const still = (await unlocked(ctx, keys.name, generation)).some((r) => r.peer_id === peer);
      return still ? { state: 'not_vouched', generation } : { state: 'locked', generation, stamped };
    } catch (e) {
      return { state: 'failed', why: failureWords(e) };
    }
  });
}

// ---- removing one KEY ----------------------------------------------------------------------------

/**
 * End this KEY's vouching for `peer`, just removed from sealed SPACE `name`: remember it (so
 * this KEY's passes no longer count a stamp of its own for `peer`), then put a stamp from this
 * KEY for `peer` that ended already, which replaces any earlier stamp of this KEY's at the relay
 * (§8), so other keepers stop counting it too. Never throws: the removal already happened.
 */
export function endVouching(ctx: KeeperContext, name: string, peer: string): Promise<Ended> {
  return ctx.sealing.inTurn(async (): Promise<Ended> => {
    let remembered = false;
    try {
      const keys = await ctx.sealing.status(name, ctx.log);
      const authority = keys.judged.authority;
      if (!isKeeper(ctx.peerId, authority)) return { state: 'not_keeper' };
      ctx.sealing.cache.noteVouchingEnded(ctx.sealing.relay, keys.spaceId, peer, ctx.now());
      remembered = true;
      const notAfter = endedNotAfter(ctx.now());
      const put = await putStamp(ctx.api, keys.name, signedStamp(ctx.signer, ctx.peerId, peer, notAfter));
      if (!put.stored) {
        return { state: 'other_issuer', issuer: typeof put.issuer === 'string' && /^[0-9a-f]{64}$/.test(put.issuer) ? put.issuer : 'unknown' };
      }
      const v = vouchersOf(authority);
      return { state: 'ended', notAfter, still: v.members.has(peer) ? 'listed' : v.open ? 'open' : undefined };
    } catch (e) {
      return { state: 'failed', why: failureWords(e), remembered };
    }
  });
}
