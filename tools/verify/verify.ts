/**
 * What the bridge checks before it tells an agent that the relay kept a post (spec/1-concepts.md
 * "Chains, checkpoints and proofs"; protocol/objects.md §9-§13). Everything the relay sends is
 * attacker-controlled input: a check that fails is reported in the tool answer, never thrown
 * past it.
 *
 * - Trust: the relay's `service_root_key` (capabilities) is pinned in the cache the first time
 *   this KEY sees the relay (trust on first use) and every later check uses the pinned root. A
 *   relay that later names another root is reported, and its signatures do not verify.
 * - Receipts (§10): the signer named by `signer_key_id` is looked up in capabilities'
 *   `service_keys`, its certificate checked against the pinned root for the purpose `receipt`
 *   at `posted_at` (shared/service-keys.ts), then the receipt signature (shared/receipt.ts).
 *   The receipt must also name the object this bridge signed and the SPACE it posted to.
 * - Proof blocks (§13 steps 1-5): object id, object against the shown post, private part,
 *   the author's signature and the chain link (shared/post-proof.ts `checkPostProof`).
 * - Inclusion (§13 step 6): leaf, Merkle path and checkpoint signature under the certified
 *   signer (shared/checkpoint.ts `verifyCheckpointInclusion`).
 * - History: the newest verified checkpoint per SPACE is kept in the cache; a later one must
 *   extend it (`checkExtends`, through `checkpoints.list` when others lie between). One that
 *   does not is CHANGED HISTORY, reported loudly, and the kept checkpoint stays, unless a
 *   signed recovery notice (tools/verify/recovery.ts), verified under the pinned root, declares the
 *   kept checkpoint lost in a restore and the new one lies within what survived: then the kept
 *   one is set apart in the cache, the new one kept in its place, and the loss reported.
 * - A `development: true` signer is shown: it vouches for nothing beyond one run of the relay.
 */
import {
  checkExtends,
  checkExtendsAll,
  readServedCheckpoint,
  renderCheckpoint,
  verifyCheckpoint,
  verifyCheckpointInclusion,
  type CheckpointLink,
  type VerifiedCheckpoint,
} from '../../shared/checkpoint.js';
import { fromHex, isHex, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import type { PasskeyPolicy } from '../../shared/passkey.js';
import { verifyReceipt } from '../../shared/receipt.js';
import type { VerifiedRecovery } from '../../shared/recovery.js';
import { readServedSigner, renderSigner, verifyServiceSigner } from '../../shared/service-keys.js';
import type { Cache } from '../cache/cache.js';
import type { RelayApi } from '../api.js';
import { BridgeError } from '../errors.js';
import { fetchRecoveries, findAcceptingNotice, keptRecoveries, lossSentence, spaceNameText, type RecoveryView } from './recovery.js';
import { checkHead, checkWitnessed, type HeadCheck, type WitnessCheck, type WitnessPolicy } from './witnesses.js';
import { postLeaf } from '../../shared/merkle.js';

/** Capabilities are re-read at most this often (they carry the epoch and the service keys). */
export const CAPABILITIES_TTL_MS = 30_000;
/** A checked tree head is reused this long by the posts of one read (their checkpoints share heads). */
const WITNESS_HEAD_TTL_MS = 10_000;
/** checkpoints.list pages read at most to join a kept checkpoint to a new one. */
const HISTORY_PAGES_MAX = 10;

export interface VerifierDeps {
  readonly api: RelayApi;
  readonly cache: Cache;
  readonly now: () => number;
  readonly log: (line: string) => void;
  /** SVC_WITNESSES: history counts as verified only once these witnesses cosigned (tools/verify/witnesses.ts). */
  readonly witnesses?: WitnessPolicy | undefined;
}

export interface Check {
  /** true: verified; false: it failed (report it); null: nothing to check against. */
  readonly ok: boolean | null;
  /** One sentence for the answer. */
  readonly detail: string;
  /** The signer is a development key (vouches for one run only). */
  readonly development?: boolean;
  /** Something to say loudly even when the check passed (a changed service root). */
  readonly warning?: string;
}

export interface HistoryCheck extends Check {
  /** true when the relay served a checkpoint that does not extend the kept one. */
  readonly changed: boolean;
  /** Set when a verified recovery notice declared the kept checkpoint lost and the served one was accepted. */
  readonly recovered?: {
    readonly recovery_id: string;
    readonly lost_checkpoint_id: string;
    readonly replaced_by: string;
    readonly development: boolean;
  };
}

export interface InclusionCheck extends Check {
  /** The covering checkpoint's id and range, when one covered the post. */
  readonly checkpoint?: { checkpoint_id: string; first: string; last: string };
  readonly history?: HistoryCheck;
  /** With SVC_WITNESSES: whether enough named witnesses cosigned the tree head holding the post. */
  readonly witnessed?: WitnessCheck;
}

export interface Trust {
  /** The pinned root (32 bytes), or undefined when the relay publishes none and none is pinned. */
  readonly root: Uint8Array | undefined;
  /** Set when capabilities now name a root other than the pinned one. */
  readonly rootChanged: string | undefined;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The detail of a failed check, from what a shared verifier threw. */
function why(e: unknown): string {
  if (e instanceof SvcError) return e.detail ?? e.code;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** A signer entry of capabilities' `service_keys` without the members a served signer lacks. */
function signerOf(entry: Obj): Obj {
  const { added_at: _addedAt, ...rest } = entry;
  return rest;
}

/**
 * The bridge's checks that need the relay's published keys. One per bridge run (a stateful
 * resource: it remembers the capability document for CAPABILITIES_TTL_MS).
 */
export class Verifier {
  private readonly deps: VerifierDeps;
  private caps: { at: number; body: Obj } | undefined;
  /** Tree heads checked for SVC_WITNESSES with enough cosignatures, by SPACE, size and signer, for WITNESS_HEAD_TTL_MS. */
  private readonly heads = new Map<string, { at: number; check: Promise<HeadCheck> }>();

  constructor(deps: VerifierDeps) {
    this.deps = deps;
  }

  /** The relay key used in the cache (the same one the other tools use). */
  get relay(): string {
    return this.deps.api.base.origin;
  }

  /** The capability document, re-read when older than the TTL or when `fresh`. */
  async capabilities(fresh = false): Promise<Obj> {
    const now = this.deps.now();
    if (!fresh && this.caps !== undefined && now - this.caps.at < CAPABILITIES_TTL_MS) return this.caps.body;
    const res = await this.deps.api.request({ path: '/v1/capabilities', auth: 'none' });
    if (!isObject(res.body)) {
      throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: capabilities is not a JSON object', 'Check that SVC_API points at an svc relay.');
    }
    this.caps = { at: now, body: res.body };
    return res.body;
  }

  /** The relay's passkey policy (capabilities `protocol.passkeys`), null when it serves none. */
  async passkeyPolicy(): Promise<PasskeyPolicy | null> {
    const caps = await this.capabilities();
    const p = isObject(caps.protocol) ? caps.protocol.passkeys : undefined;
    if (!isObject(p) || p.status !== 'available' || typeof p.rp_id !== 'string') return null;
    const origins = Array.isArray(p.origins) ? p.origins.filter((o): o is string => typeof o === 'string') : [];
    return origins.length === 0 ? null : { rpId: p.rp_id, origins };
  }

  /** The pinned root; pins the published one on first sight. */
  async trust(): Promise<Trust> {
    const caps = await this.capabilities();
    const protocol = isObject(caps.protocol) ? caps.protocol : {};
    const published = protocol.service_root_key ?? caps.service_root_key;
    const publishedHex = isHex(published, 32) ? published : undefined;
    const pinned = this.deps.cache.serviceRoot(this.relay) ?? (publishedHex === undefined ? undefined : this.deps.cache.pinServiceRoot(this.relay, publishedHex, this.deps.now()));
    if (pinned === undefined) return { root: undefined, rootChanged: undefined };
    const rootChanged =
      publishedHex !== undefined && publishedHex !== pinned
        ? `the relay now publishes service_root_key ${publishedHex}, not the ${pinned} this bridge pinned on first sight; nothing signed under the new root is trusted`
        : undefined;
    return { root: fromHex(pinned, 32), rootChanged };
  }

  /** The capability entry of one online key, re-reading capabilities once when it is not listed. */
  private async serviceKey(keyId: string): Promise<Obj | undefined> {
    for (const fresh of [false, true]) {
      const caps = await this.capabilities(fresh);
      const protocol = isObject(caps.protocol) ? caps.protocol : {};
      const keys = Array.isArray(protocol.service_keys) ? protocol.service_keys.filter(isObject) : [];
      const found = keys.find((k) => k.key_id === keyId);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /**
   * The receipt of one post answer (objects.md §10) under the relay's certified signer, and
   * that it names the SPACE and object this bridge sent (`expect`).
   */
  async receipt(answer: Obj, expect: { spaceId?: string; objectId?: string }): Promise<Check> {
    try {
      const trust = await this.trust();
      if (trust.root === undefined) return { ok: null, detail: 'not checked: the relay publishes no service_root_key' };
      const receipt = isObject(answer.receipt) ? answer.receipt : {};
      const keyId = receipt.signer_key_id;
      if (!isHex(keyId, 32)) throw new Error('receipt.signer_key_id: not 64 hex');
      const entry = await this.serviceKey(keyId);
      if (entry === undefined) throw new Error(`receipt signed by key ${keyId}, which the relay's capabilities do not list`);
      const signer = verifyServiceSigner(
        readServedSigner(signerOf(entry), 'service_keys[]'),
        { trustedRoot: trust.root, purpose: 'receipt', at: String(answer.posted_at) },
        'service_keys[]',
      );
      const fields = verifyReceipt(answer, signer.publicKey);
      if (expect.spaceId !== undefined && fields.space_id !== expect.spaceId) throw new Error('the receipt names another SPACE');
      if (expect.objectId !== undefined && fields.object_id !== expect.objectId) throw new Error('the receipt names another object than the one this bridge signed');
      const dev = signer.development ? ' (DEVELOPMENT signer: it vouches for nothing beyond one run of the relay)' : '';
      return {
        ok: true,
        detail: `receipt verified: signed by service key ${keyId.slice(0, 16)}…, certified by the pinned root${dev}`,
        development: signer.development,
        ...(trust.rootChanged === undefined ? {} : { warning: `WARNING: ${trust.rootChanged}` }),
      };
    } catch (e) {
      return { ok: false, detail: `RECEIPT DOES NOT VERIFY: ${why(e)}. Do not rely on this post being recorded as answered; read it back with svc_get.` };
    }
  }

  /**
   * objects.md §13 step 6 for one post and its posts.proof answer, then the history rule for
   * the covering checkpoint. `post` is the post at full detail (its seq, object_id, chain hash).
   */
  async inclusion(spaceName: string, post: Obj, evidence: Obj): Promise<InclusionCheck> {
    if (evidence.checkpoint === null || evidence.checkpoint === undefined) {
      return { ok: null, detail: 'not yet covered by a checkpoint (one is signed within ten minutes of a post)' };
    }
    let verified: VerifiedCheckpoint;
    let warning: string | undefined;
    try {
      const trust = await this.trust();
      if (trust.rootChanged !== undefined) warning = `WARNING: ${trust.rootChanged}`;
      if (trust.root === undefined) return { ok: null, detail: 'inclusion not checked: the relay publishes no service_root_key' };
      const proof = isObject(post.proof) ? post.proof : {};
      const chain = isObject(proof.chain) ? proof.chain : {};
      verified = verifyCheckpointInclusion(
        {
          spaceId: String(post.space_id),
          stream: 'posts',
          position: BigInt(String(post.seq)),
          id: fromHex(post.object_id, 32, 'object_id'),
          chainHash: fromHex(chain.chain_hash, 32, 'proof.chain.chain_hash'),
        },
        { leaf: evidence.leaf, checkpoint: evidence.checkpoint, inclusion: evidence.inclusion },
        trust.root,
      );
    } catch (e) {
      return { ok: false, detail: `INCLUSION PROOF DOES NOT VERIFY: ${why(e)}` };
    }
    const f = verified.fields;
    const checkpoint = { checkpoint_id: toHex(verified.id), first: f.first, last: f.last };
    const history = await this.history(spaceName, verified);
    const dev = verified.trusted.development ? ' (DEVELOPMENT signer: it vouches for nothing beyond one run of the relay)' : '';
    // The history is verified only when the named witnesses saw the same tree (tools/verify/witnesses.ts).
    let witnessed: WitnessCheck | undefined;
    if (this.deps.witnesses !== undefined && !history.changed) {
      const chain = isObject(post.proof) && isObject(post.proof.chain) ? post.proof.chain : {};
      const seq = Number(post.seq);
      witnessed = await checkWitnessed(
        this.deps.api,
        {
          spaceName,
          seq,
          leaf: postLeaf(String(post.space_id), seq, fromHex(post.object_id, 32, 'object_id'), fromHex(chain.chain_hash, 32, 'proof.chain.chain_hash')),
          size: Number(f.last),
          signerKey: verified.trusted.publicKey,
        },
        this.deps.witnesses,
        (size) => this.witnessHead(spaceName, size, verified.trusted.publicKey),
      );
    }
    return {
      ok: history.changed || witnessed?.ok === false ? false : true,
      detail: `included in checkpoint ${f.first}-${f.last} signed by the certified signer${dev}${witnessed === undefined ? '' : `; ${witnessed.detail}`}`,
      development: verified.trusted.development,
      checkpoint,
      history,
      ...(witnessed === undefined ? {} : { witnessed }),
      ...(warning === undefined ? {} : { warning }),
    };
  }

  /** The head of `size` checked against SVC_WITNESSES, shared by the posts of one read. */
  private witnessHead(spaceName: string, size: number, signerKey: Uint8Array): Promise<HeadCheck> {
    const now = this.deps.now();
    for (const [k, v] of this.heads) if (now - v.at >= WITNESS_HEAD_TTL_MS) this.heads.delete(k);
    const key = `${spaceName} ${size} ${toHex(signerKey)}`;
    const known = this.heads.get(key);
    if (known !== undefined) return known.check;
    const policy = this.deps.witnesses!;
    const check = checkHead(this.deps.api, spaceName, size, signerKey, policy);
    this.heads.set(key, { at: now, check });
    // Only a head with enough cosignatures is reused: one without may gain them any moment.
    void check.then(
      (h) => ('failure' in h || h.cosigned.length < policy.required) && this.heads.delete(key),
      () => this.heads.delete(key),
    );
    return check;
  }

  /** Verify a served checkpoint under the pinned root (for checkpoints.list pages). */
  private async verified(value: unknown, field: string): Promise<VerifiedCheckpoint> {
    const trust = await this.trust();
    if (trust.root === undefined) throw new Error('the relay publishes no service_root_key');
    return verifyCheckpoint(value, trust.root, field);
  }

  /** The checkpoints of a SPACE's posts stream after position `after`, up to `until` (verified). */
  private async listBetween(spaceName: string, after: string, until: bigint): Promise<{ items: VerifiedCheckpoint[]; complete: boolean }> {
    const out: VerifiedCheckpoint[] = [];
    let cursor = after;
    for (let page = 0; page < HISTORY_PAGES_MAX; page++) {
      const res = await this.deps.api.request({
        path: `/v1/spaces/${encodeURIComponent(spaceName)}/checkpoints`,
        query: { stream: 'posts', after: cursor, limit: 200 },
        auth: 'opt',
      });
      const body = isObject(res.body) ? res.body : {};
      const items = Array.isArray(body.items) ? body.items : [];
      for (const [i, item] of items.entries()) {
        const v = await this.verified(item, `checkpoints.items[${i}]`);
        out.push(v);
        if (BigInt(v.fields.last) >= until) return { items: out, complete: true };
      }
      if (body.has_more !== true || typeof body.next_after !== 'string') return { items: out, complete: true };
      cursor = body.next_after;
    }
    return { items: out, complete: false };
  }

  /** The relay's recovery notices, verified under the pinned root (tools/verify/recovery.ts); kept ones too unless `fetch`. */
  async recoveries(fetch: boolean): Promise<RecoveryView> {
    const trust = await this.trust();
    if (trust.root === undefined) return { notices: [], refused: ['recovery notices not checked: the relay publishes no service_root_key'] };
    const kept = keptRecoveries(this.deps, trust.root);
    if (!fetch) return { notices: kept, refused: [] };
    const fetched = await fetchRecoveries(this.deps, trust.root);
    const ids = new Set(fetched.notices.map((n) => toHex(n.id)));
    return { notices: [...fetched.notices, ...kept.filter((n) => !ids.has(toHex(n.id)))], refused: fetched.refused };
  }

  /**
   * A checkpoint that does not extend the kept one, explained by a verified recovery notice
   * (kept first, else fetched): the kept checkpoint is set apart as lost, `seen` kept in its
   * place, and the check says what was lost. Undefined when no notice explains it.
   */
  private async declaredLoss(spaceName: string, kept: CheckpointLink, seen: VerifiedCheckpoint): Promise<HistoryCheck | undefined> {
    let notice: VerifiedRecovery | undefined;
    try {
      notice = findAcceptingNotice((await this.recoveries(false)).notices, kept, seen) ?? findAcceptingNotice((await this.recoveries(true)).notices, kept, seen);
    } catch (e) {
      this.deps.log(`recovery notices could not be read for ${spaceName}: ${why(e)}`);
      return undefined;
    }
    if (notice === undefined) return undefined;
    const keptId = toHex(kept.id);
    const recoveryId = toHex(notice.id);
    const served = JSON.stringify(renderCheckpoint(seen, renderSigner(seen.signer)));
    const seenId = toHex(seen.id);
    this.deps.cache.replaceLostCheckpoint(
      this.relay,
      spaceName,
      'posts',
      keptId,
      { checkpointId: seenId, first: seen.fields.first, last: seen.fields.last, served, seenAt: this.deps.now() },
      recoveryId,
      this.deps.now(),
    );
    return {
      ok: true,
      changed: false,
      detail:
        `a restore cut SPACE ${spaceName} back: checkpoint ${keptId} (${kept.fields.first}-${kept.fields.last}) that this bridge verified was lost, ` +
        `as the ${lossSentence(notice)}. Checkpoint ${seen.fields.first}-${seen.fields.last} of what survived is kept in its place (the lost one is kept apart in this bridge's cache). ` +
        `The SPACE is closed and continues in ${spaceNameText(notice.fields.replaced_by)}.`,
      development: notice.trusted.development,
      recovered: { recovery_id: recoveryId, lost_checkpoint_id: keptId, replaced_by: notice.fields.replaced_by, development: notice.trusted.development },
    };
  }

  /**
   * The history rule (objects.md §11): keep the newest verified checkpoint of the SPACE; a
   * newer one must extend it (directly, or through the checkpoints between them), an older or
   * equal one must be the one the chain of checkpoints holds at its position.
   */
  async history(spaceName: string, seen: VerifiedCheckpoint): Promise<HistoryCheck> {
    const { cache, now } = this.deps;
    const kept = cache.checkpoint(this.relay, spaceName, 'posts');
    const seenId = toHex(seen.id);
    const keep = () =>
      cache.noteCheckpoint(this.relay, spaceName, 'posts', {
        checkpointId: seenId,
        first: seen.fields.first,
        last: seen.fields.last,
        // The served shape again (shared/checkpoint.ts), to be re-read strictly later.
        served: JSON.stringify(renderCheckpoint(seen, renderSigner(seen.signer))),
        seenAt: now(),
      });
    if (kept === undefined) {
      keep();
      return { ok: true, changed: false, detail: `first checkpoint of ${spaceName} seen by this KEY; kept (${seen.fields.first}-${seen.fields.last})` };
    }
    if (kept.checkpointId === seenId) return { ok: true, changed: false, detail: 'the checkpoint this bridge kept' };
    let keptLink: CheckpointLink;
    try {
      keptLink = readServedCheckpoint(JSON.parse(kept.served), 'kept');
    } catch (e) {
      this.deps.log(`the kept checkpoint of ${spaceName} is unreadable (${why(e)}); keeping the new one when it is newer`);
      keep();
      return { ok: null, changed: false, detail: 'the kept checkpoint was unreadable; the new one is kept' };
    }
    const changed = (detail: string): HistoryCheck => ({
      ok: false,
      changed: true,
      detail:
        `CHANGED HISTORY in SPACE ${spaceName}: the relay served checkpoint ${seenId} (${seen.fields.first}-${seen.fields.last}), ` +
        `which does not extend checkpoint ${kept.checkpointId} (${kept.first}-${kept.last}) that this bridge verified on ${new Date(kept.seenAt).toISOString()}: ${detail}. ` +
        'The relay rewrote or forked this SPACE\'s history: do not trust its posts past the kept checkpoint, keep what you have, and tell the SPACE\'s owner.',
    });
    try {
      if (keptLink.fields.space_id !== seen.fields.space_id) return changed('it is a checkpoint of another SPACE id under the same name');
      const keptLast = BigInt(keptLink.fields.last);
      const seenLast = BigInt(seen.fields.last);
      if (keptLast === seenLast) return changed('two different checkpoints end at the same position');
      const [lo, hi] = keptLast < seenLast ? [keptLink, seen as CheckpointLink] : [seen as CheckpointLink, keptLink];
      if (BigInt(hi.fields.first) === BigInt(lo.fields.last) + 1n) {
        checkExtends(lo, hi);
      } else {
        const hiLast = BigInt(hi.fields.last);
        const between = await this.listBetween(spaceName, lo.fields.last, hiLast);
        const reaching = between.items.findIndex((c) => BigInt(c.fields.last) >= hiLast);
        if (reaching < 0) {
          if (!between.complete) return { ok: null, changed: false, detail: `too many checkpoints between ${lo.fields.last} and ${hi.fields.last} to join them here` };
          throw new SvcError('CHECKPOINT_INVALID', `history changed: the relay's own list holds no checkpoint ending at ${hi.fields.last}`);
        }
        const run = between.items.slice(0, reaching + 1);
        const end = run[run.length - 1]!;
        if (end.fields.last !== hi.fields.last || toHex(end.id) !== toHex(hi.id)) {
          throw new SvcError('CHECKPOINT_INVALID', `history changed: the relay's own list holds another checkpoint (${toHex(end.id)}) at ${end.fields.first}-${end.fields.last}`);
        }
        checkExtendsAll(lo, run);
      }
    } catch (e) {
      return (await this.declaredLoss(spaceName, keptLink, seen)) ?? changed(why(e));
    }
    if (BigInt(seen.fields.last) > BigInt(kept.last)) keep();
    return { ok: true, changed: false, detail: `extends the checkpoint kept before (${kept.first}-${kept.last})` };
  }
}
