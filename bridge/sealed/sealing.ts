/**
 * Sealing and opening posts of sealed SPACES in the bridge (protocol/sealed.md §4-§7, §10).
 *
 * - `status(name)` reads `GET /v1/spaces/{name}/sealed`, applies the member-side trust rules
 *   (bridge/sealed/trust.ts), remembers what it accepted (bridge/sealed/sealed-cache.ts), and opens the
 *   locks it accepts (own locks only, from the owner or a keeper of the owner-signed list),
 *   keeping each secret under its commitment.
 * - `sealPost` seals a post under the generation in use: header and content built and checked
 *   with shared/sealed/items.ts, a salt for this content, and the signed sealed object
 *   (`signSealedItem`) or the unsigned transport. The salt is derived, not drawn: 16 bytes of
 *   HMAC-SHA256 keyed with the KEY's private salt of (SPACE, idempotency key) (bridge/keys/keys.ts)
 *   over the generation and the exact content bytes. Any other content gives another salt, so a
 *   header is never paired with two contents (§7's rule), and a retry with the same
 *   idempotency key and words sends the same bytes, which the relay answers as a replay.
 * - `openPosts` opens the sealed items of a page: the header is read strictly and compared with
 *   what the relay shows (SPACE, author, kind, routing, generation), the secret of its
 *   generation comes from an own lock or from back links walked down from a newer secret
 *   (`secretForGeneration` step by step, each secret kept), the ciphertext must authenticate and
 *   the content pass the post rules. An item that fails any step shows nothing of itself, only
 *   why it could not be opened. Everything the relay serves here is attacker-controlled.
 * - The bridge never sends words to a SPACE it has seen sealed (`target`: SEALED_DOWNGRADE when
 *   the relay now says the name is not sealed).
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readCanonicalObject, type JsonObject } from '../../shared/canonical.js';
import { concatBytes, fromBase64url, toHex, u64, utf8 } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import type { Signer } from '../../shared/identity.js';
import { BATCH_IDS_MAX, SNIPPET_CHARACTERS } from '../../shared/limits.js';
import { sealedDigests } from '../../shared/objects.js';
import { isSealedError } from '../../shared/sealed/errors.js';
import { openBackLink, readBackLink, readCommitment, readGeneration, spaceContainer } from '../../shared/sealed/generations.js';
import { checkPostHeader, readSealedHeader, type PostHeader } from '../../shared/sealed/headers.js';
import { buildPostContent, openPost, readSealedTransport, sealPost, sealedTransport, signSealedItem, type PostContent } from '../../shared/sealed/items.js';
import type { PostInput } from '../../shared/validate.js';
import type { RelayApi } from '../../tools/api.js';
import { encryptionPublicKey, ensurePublished, withPublishedKey, type Sealer } from './encryption.js';
import { BridgeError, RelayRefusal, failureWords } from '../../tools/errors.js';
import type { PrivateSalt } from '../keys/keys.js';
import type { SealedPostBody, Target } from '../../tools/ports.js';
import { openSealedCache, sealedCachePathBeside, type SealedCache } from './sealed-cache.js';
import { forgetHidden, indexedRecord, indexOpened, openSealedIndex, sealedIndexPathBeside, type OpenedPost, type SealedIndex } from './local-index.js';
import { notOpened, sealedSummary } from '../../tools/posts/sealed-posts.js';
import { judgeStatus, lockRefusal, readServedLock, readStatus, type Judged, type ServedStatus } from './trust.js';

type Obj = Record<string, unknown>;

export interface SealingDeps {
  readonly api: RelayApi;
  readonly identity: { readonly peerId: string };
  readonly signer: Signer;
  readonly sealer: Sealer;
  readonly privateSalt: PrivateSalt;
  readonly now: () => number;
  readonly log: (line: string) => void;
  /**
   * The key of the relay identity followed now at an address (tools/cache/cache.ts `relayScope`), so
   * what this bridge keeps of another relay that stood at the same address stays apart; the
   * address itself without it.
   */
  readonly relayScope?: ((relay: string) => string) | undefined;
}

/** A sealed SPACE as this bridge accepts it right now. */
export interface SpaceKeys {
  readonly name: string;
  readonly spaceId: string;
  readonly container: Uint8Array;
  readonly status: ServedStatus;
  readonly judged: Judged;
  /** The generation in use and its secret, when this KEY holds it. */
  readonly generation: number;
  readonly secret: Uint8Array | undefined;
  /** Why served locks were refused or did not open. */
  readonly refused: readonly string[];
}

/** Refusals of the relay's key records under the trust rules: said loudly, at the top of an answer. */
const TRUST_CODES: readonly string[] = ['SEALED_ROLLBACK', 'SEALED_LIST_FORGED', 'SEALED_OWNER_UNTRUSTED', 'ENCRYPTION_KEY_CONFLICT'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SALT_INFO = 'svc bridge sealed salt';

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function seg(name: string): string {
  if (name === '' || name === '.' || name === '..') throw new SvcError('INVALID_REQUEST', 'space: not a name');
  return encodeURIComponent(name);
}

function noKey(name: string, generation: number, refused: readonly string[]): BridgeError {
  return new BridgeError(
    'SEALED_NO_KEY',
    `this KEY holds no key for generation ${generation} of sealed SPACE ${name}${refused.length > 0 ? `; ${refused.join('; ')}` : ''}`,
    'A keeper (the owner, or a KEY its keeper list names) locks the key for every member it vouches for: ask the owner, or wait for its keeper to run.',
  );
}

export class Sealing {
  readonly deps: SealingDeps;
  /** What `target` learnt, by relay identity and SPACE name (another relay accepted at the same address has SPACES of its own). */
  private readonly targets = new Map<string, Target>();
  /** The keeper work in progress in this process (`inTurn`). */
  private keeping: Promise<unknown> = Promise.resolve();
  private sealedCache: SealedCache | (() => SealedCache);
  private sealedIndex: SealedIndex | undefined | (() => SealedIndex);

  /**
   * The sealed cache and the local index, or functions that open them: `createSealing` opens
   * them when first used, since a bridge serves many starts without a sealed SPACE, and opening
   * two SQLite files was a tenth of a start.
   */
  constructor(deps: SealingDeps, cache: SealedCache | (() => SealedCache), index?: SealedIndex | (() => SealedIndex)) {
    this.deps = deps;
    this.sealedCache = cache;
    this.sealedIndex = index;
  }

  /** The sealed cache (bridge/sealed/sealed-cache.ts), opened now if it was not yet. */
  get cache(): SealedCache {
    if (typeof this.sealedCache === 'function') this.sealedCache = this.sealedCache();
    return this.sealedCache;
  }

  /** The local search index of what this bridge opens (bridge/sealed/local-index.ts), opened now if it was not yet; none in some tests and tools. */
  get index(): SealedIndex | undefined {
    if (typeof this.sealedIndex === 'function') this.sealedIndex = this.sealedIndex();
    return this.sealedIndex;
  }

  /** Close the sealed cache and the local index, those that were opened. */
  close(): void {
    if (typeof this.sealedCache !== 'function') this.sealedCache.close();
    if (this.sealedIndex !== undefined && typeof this.sealedIndex !== 'function') this.sealedIndex.close();
  }

  /** The key of what the sealed cache and index keep of the relay followed now. */
  get relay(): string {
    const address = this.deps.api.base.origin;
    return this.deps.relayScope?.(address) ?? address;
  }

  get me(): string {
    return this.deps.identity.peerId;
  }

  /**
   * Run keeper work (bridge/sealed/keeping.ts) after the keeper work already queued in this process, so
   * a tool's lock and the background duty's pass never interleave their reads and writes.
   */
  inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.keeping.then(work, work);
    this.keeping = run.catch(() => undefined);
    return run;
  }

  /** Publish this KEY's encryption key unless done already in this process. */
  published(): Promise<boolean> {
    return ensurePublished(this.deps.api, this.deps.sealer, this.deps.signer);
  }

  /** Run `act`; refused with ENCRYPTION_KEY_MISSING for this KEY, publish the key and run it once more. */
  withKey<T>(act: () => Promise<T>): Promise<T> {
    return withPublishedKey(this.deps.api, this.deps.sealer, this.deps.signer, act);
  }

  /**
   * Whether a SPACE name is sealed (spaces.get), remembered for the process. A name this bridge
   * saw sealed that the relay now shows unsealed is refused: words are never sent there.
   */
  async target(name: string, fresh = false): Promise<Target> {
    const known = this.targets.get(`${this.relay}\u0000${name}`);
    if (known !== undefined && !fresh) return known;
    const res = await this.deps.api.request({ path: `/v1/spaces/${seg(name)}`, auth: 'opt' });
    const b = isObj(res.body) ? res.body : {};
    if (typeof b.space_id !== 'string' || !UUID_RE.test(b.space_id)) {
      throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: spaces.get has no space_id', 'Check that SVC_API points at an svc relay.');
    }
    const sealed = b.visibility === 'sealed';
    if (!sealed) {
      const seen = this.cache.spaceByName(this.relay, name) ?? this.cache.space(this.relay, b.space_id);
      if (seen !== undefined) {
        throw new BridgeError(
          'SEALED_DOWNGRADE',
          `this bridge saw ${name} as a sealed SPACE (id ${seen.spaceId}), and the relay now says it is not sealed: nothing is sent there in plain words`,
          'Tell the SPACE owner. If the sealed SPACE was really closed and its name reused, clear it with `svc-bridge sealed ' + name + ' --forget` first.',
        );
      }
    }
    const t = { sealed, spaceId: b.space_id };
    this.targets.set(`${this.relay}\u0000${name}`, t);
    return t;
  }

  /**
   * Read, judge and remember a sealed SPACE's key records; open the locks it accepts. What the
   * trust rules note and why a lock was refused go to `log` (the bridge's stderr unless the
   * caller says where: the background keeper duty sends them through its once-only rule).
   */
  async status(name: string, log: (line: string) => void = this.deps.log): Promise<SpaceKeys> {
    const { api, now, sealer } = this.deps;
    const res = await api.request({ path: `/v1/spaces/${seg(name)}/sealed` });
    const status = readStatus(res.body);
    const remembered = this.cache.space(this.relay, status.spaceId);
    const judged = judgeStatus({
      relay: this.relay,
      me: this.me,
      status,
      remembered,
      listsSignedBy: (signer) => this.cache.listsSignedBy(this.relay, status.spaceId, signer),
      now: now(),
    });
    this.cache.remember(judged.memory);
    if (judged.list !== undefined) this.cache.noteList(this.relay, status.spaceId, judged.list, now());
    if (judged.owner !== undefined) this.cache.noteOwner(this.relay, status.spaceId, judged.owner);
    for (const n of judged.notes) log(n);
    const container = spaceContainer(status.spaceId);
    const refused: string[] = [];
    status.locks.forEach((raw, i) => {
      let why: string | undefined;
      try {
        const lock = readServedLock(raw, i);
        why = lockRefusal(lock, judged, status, this.me);
        if (why === undefined) {
          const commitment = lock.generation === status.generation ? status.commitment : status.staged!.commitment;
          if (this.cache.secret(this.relay, status.spaceId, lock.generation, commitment) !== undefined) return;
          const secret = sealer.openLock({
            container,
            generation: lock.generation,
            lock: lock.lock,
            commitment,
            sender: { peerId: lock.sender.peerId, publicKey: encryptionPublicKey(lock.sender) },
          });
          this.cache.keepSecret(this.relay, status.spaceId, { generation: lock.generation, commitment, secret, source: 'lock' }, now());
        }
      } catch (e) {
        why = isSealedError(e) ? `a lock for this KEY does not open (${e.reason}: ${e.message})` : `a lock was refused: ${failureWords(e)}`;
      }
      if (why !== undefined) refused.push(why);
    });
    for (const r of refused) log(`sealed SPACE ${status.name}: ${r}`);
    const kept = this.cache.secret(this.relay, status.spaceId, status.generation, status.commitment);
    return { name: status.name, spaceId: status.spaceId, container, status, judged, generation: status.generation, secret: kept?.secret, refused };
  }

  /** The chain's links from `from` down to `target` (sealed.chain pages, newest first). */
  private async chainLinks(keys: SpaceKeys, from: number, target: number): Promise<Map<number, { commitment: string; back: Uint8Array | null }>> {
    const links = new Map<number, { commitment: string; back: Uint8Array | null }>();
    let before: number | undefined = from + 1;
    while (before !== undefined) {
      const res = await this.deps.api.request({ path: `/v1/spaces/${seg(keys.name)}/sealed/chain`, query: { before: String(before), limit: 200 } });
      const b = isObj(res.body) ? res.body : {};
      const items = Array.isArray(b.items) ? b.items : [];
      let lowest: number | undefined;
      for (const it of items) {
        if (!isObj(it)) continue;
        try {
          const g = readGeneration(it.generation);
          readCommitment(it.commitment);
          links.set(g, { commitment: it.commitment as string, back: it.back === null || it.back === undefined ? null : readBackLink(it.back) });
          lowest = lowest === undefined ? g : Math.min(lowest, g);
        } catch {
          // A malformed link is a gap: the walk below stops there and says so.
        }
      }
      before = b.has_more === true && lowest !== undefined && lowest > target ? lowest : undefined;
    }
    return links;
  }

  /**
   * Candidate secrets for `generation`: kept ones first, else walked down the back links from
   * the nearest newer secret held (§6), each step checked and kept. Throws SEALED_NO_KEY naming
   * why none is held.
   */
  async secretsFor(keys: SpaceKeys, generation: number): Promise<Uint8Array[]> {
    const { now } = this.deps;
    if (generation > keys.generation && keys.status.staged?.generation !== generation) {
      throw noKey(keys.name, generation, [`generation ${generation} is newer than the one in use (${keys.generation})`]);
    }
    const kept = this.cache.secretsFrom(this.relay, keys.spaceId, generation);
    const exact = kept.filter((k) => k.generation === generation).map((k) => k.secret);
    if (exact.length > 0) return exact;
    const newer = kept.filter((k) => k.generation > generation && k.generation <= keys.generation);
    if (newer.length === 0) throw noKey(keys.name, generation, keys.refused);
    const links = await this.chainLinks(keys, newer[newer.length - 1]!.generation, generation);
    // Start from the lowest newer secret whose commitment the chain shows.
    const start = newer.find((k) => links.get(k.generation)?.commitment === k.commitment);
    if (start === undefined) throw noKey(keys.name, generation, ['the relay shows other commitments than the secrets this KEY holds']);
    let secret = start.secret;
    for (let g = start.generation; g > generation; g--) {
      const link = links.get(g);
      const previous = links.get(g - 1);
      if (link?.back === null || link?.back === undefined || previous === undefined) {
        throw noKey(keys.name, generation, [`the relay shows no back link from generation ${g} to ${g - 1}`]);
      }
      try {
        secret = openBackLink(keys.container, g, secret, link.back, previous.commitment);
      } catch (e) {
        if (isSealedError(e)) throw noKey(keys.name, generation, [`the back link from generation ${g} does not open (${e.reason}): the relay changed it`]);
        throw e;
      }
      this.cache.keepSecret(this.relay, keys.spaceId, { generation: g - 1, commitment: previous.commitment, secret, source: 'chain' }, now());
    }
    return [secret];
  }

  // ---- creating ------------------------------------------------------------------------------

  /**
   * spaces.create with `visibility: sealed` (§9): publish the encryption key if needed, choose
   * the SPACE id, draw the first secret (kept here before it is sent, so nothing is lost if the
   * answer is), send commitment_1 and the own lock, and remember the SPACE as created here.
   */
  async createSpace(body: Obj): Promise<Obj> {
    const { api, sealer, now } = this.deps;
    await this.published();
    const spaceId = randomUUID();
    const secret = new Uint8Array(randomBytes(32));
    const sealed = sealer.creation(spaceId, secret);
    this.cache.keepSecret(this.relay, spaceId, { generation: 1, commitment: sealed.commitment, secret, source: 'created' }, now());
    let res;
    try {
      res = await api.request({ method: 'POST', path: '/v1/spaces', body: { ...body, visibility: 'sealed', sealed } });
    } catch (e) {
      this.cache.dropSecret(this.relay, spaceId, 1, sealed.commitment);
      throw e;
    }
    const b = isObj(res.body) ? res.body : {};
    const name = typeof b.name === 'string' ? b.name : String(body.name);
    const t = now();
    this.cache.remember({
      relay: this.relay,
      spaceId,
      name,
      owner: this.me,
      ownerWas: null,
      handOverGeneration: null,
      generation: 1,
      commitment: sealed.commitment,
      listRevision: null,
      list: null,
      listSignedBy: null,
      createdHere: true,
      firstSeenAt: t,
      updatedAt: t,
    });
    this.cache.noteOwner(this.relay, spaceId, { owner: this.me, ownerWas: null, generation: 1, seenAt: t });
    this.targets.set(`${this.relay}\u0000${name}`, { sealed: true, spaceId });
    return b;
  }

  // ---- sealing ---------------------------------------------------------------------------------

  /**
   * The body of a post to sealed SPACE `name`, sealed under the generation in use (signed
   * unless `unsigned`). `input` is validated and carries its idempotency key.
   */
  async sealPost(name: string, input: PostInput, unsigned: boolean): Promise<SealedPostBody> {
    const key = input.idempotency_key;
    if (key === undefined) throw new TypeError('sealPost: the input carries its idempotency key');
    await this.published();
    const keys = await this.status(name);
    if (keys.secret === undefined) throw noKey(keys.name, keys.generation, keys.refused);
    return this.sealWith({ spaceId: keys.spaceId, generation: keys.generation, secret: keys.secret }, input, unsigned);
  }

  /**
   * The body of a post to sealed SPACE `name` sealed with what this bridge remembers, asking the
   * relay nothing: the newest generation in use it accepted and that generation's secret. For a
   * post kept while the relay cannot be reached (tools/outbox/writes.ts); a relay that moved on
   * to a newer generation meanwhile refuses it with KEY_CHANGED when it is sent. Undefined when
   * this bridge remembers no such SPACE or holds no secret of its generation.
   */
  sealPostRemembered(name: string, input: PostInput, unsigned: boolean): SealedPostBody | undefined {
    const s = this.cache.spaceByName(this.relay, name);
    if (s === undefined) return undefined;
    const kept = this.cache.secret(this.relay, s.spaceId, s.generation, s.commitment);
    if (kept === undefined) return undefined;
    return this.sealWith({ spaceId: s.spaceId, generation: s.generation, secret: kept.secret }, input, unsigned);
  }

  /** Seal `input` under `keys` (the generation and its secret). */
  private sealWith(keys: { readonly spaceId: string; readonly generation: number; readonly secret: Uint8Array }, input: PostInput, unsigned: boolean): SealedPostBody {
    const key = input.idempotency_key;
    if (key === undefined) throw new TypeError('sealPost: the input carries its idempotency key');
    const content = {
      title: input.title,
      body: input.body,
      fingerprints: input.fingerprints,
      data: input.data,
      budget: input.budget,
      run_id: input.run_id,
    };
    const contentBytes = buildPostContent(content).bytes;
    const salt = new Uint8Array(
      createHmac('sha256', this.deps.privateSalt(keys.spaceId, key))
        .update(concatBytes(utf8(SALT_INFO), u64(keys.generation), contentBytes))
        .digest()
        .subarray(0, 16),
    );
    const item = sealPost({
      header: {
        author: this.me,
        generation: keys.generation,
        kind: input.kind,
        space_id: keys.spaceId,
        to: input.to,
        reply_to: input.reply_to,
        supersedes: input.supersedes,
        retracts: input.retracts,
      },
      content,
      secret: keys.secret,
      salt,
    });
    if (unsigned) {
      return {
        body: { sealed: { ...sealedTransport(item.headerBytes, item.ciphertext) }, idempotency_key: key },
        signed: false,
        objectId: undefined,
        spaceId: keys.spaceId,
        generation: keys.generation,
      };
    }
    const signed = signSealedItem({ headerBytes: item.headerBytes, ciphertext: item.ciphertext, idempotencyKey: key, signer: this.deps.signer });
    return {
      body: signed.submission as unknown as Obj,
      signed: true,
      objectId: toHex(signed.objectId),
      spaceId: keys.spaceId,
      generation: keys.generation,
    };
  }

  /**
   * Index a sealed post this KEY just posted (the relay's answer `a` to `input`): its author
   * holds the words already, so it finds its own post without reading it back first.
   */
  indexOwn(space: string, spaceId: string | undefined, a: Obj, input: PostInput, generation: number | undefined, signed: boolean): void {
    if (this.index === undefined || spaceId === undefined || typeof a.post_id !== 'string' || typeof a.posted_at !== 'string') return;
    const record: Obj = {
      post_id: a.post_id,
      space: typeof a.space === 'string' ? a.space : space,
      seq: a.seq,
      kind: input.kind,
      author: this.me,
      posted_at: a.posted_at,
      title: input.title ?? null,
      sealed: { generation, opened: true },
      to: input.to ?? null,
      reply_to: input.reply_to ?? null,
      fingerprints: input.fingerprints ?? [],
      fingerprint_count: input.fingerprints?.length ?? 0,
      signed,
      body: input.body ?? '',
      ...(input.data !== undefined ? { data: input.data } : {}),
      ...(input.budget !== undefined ? { budget: input.budget } : {}),
      run_id: input.run_id ?? null,
      supersedes: input.supersedes ?? null,
      retracts: input.retracts ?? null,
      space_id: spaceId,
      object_id: a.object_id ?? null,
    };
    const content = { title: input.title, body: input.body, fingerprints: input.fingerprints };
    indexOpened(this.index, [indexedRecord(this.relay, spaceId, record, record, content)], this.deps.now(), this.deps.log);
  }

  // ---- opening ---------------------------------------------------------------------------------

  /** The full renderings (header and ciphertext) of posts read at a lower detail. */
  private async fullPosts(ids: readonly string[]): Promise<Map<string, Obj>> {
    const out = new Map<string, Obj>();
    for (let i = 0; i < ids.length; i += BATCH_IDS_MAX) {
      const chunk = ids.slice(i, i + BATCH_IDS_MAX);
      const res = await this.deps.api.request({ path: '/v1/posts', query: { ids: chunk.join(','), detail: 'full', token_budget: 20_000 }, auth: 'opt' });
      const b = isObj(res.body) ? res.body : {};
      for (const p of Array.isArray(b.items) ? b.items : []) if (isObj(p) && typeof p.post_id === 'string') out.set(p.post_id, p);
    }
    // Large ciphertexts can exceed a batch's token budget: fetch those one by one.
    for (const id of ids) {
      if (out.has(id) || !UUID_RE.test(id)) continue;
      try {
        const res = await this.deps.api.request({ path: `/v1/posts/${id}`, query: { proof: 'false' }, auth: 'opt' });
        if (isObj(res.body) && res.body.post_id === id) out.set(id, res.body);
      } catch (e) {
        if (!(e instanceof RelayRefusal)) throw e;
      }
    }
    return out;
  }

  /**
   * Open every sealed item of `posts` (read renderings, attacker-controlled). Returns new post
   * objects: opened ones carry their words (title, body or snippet, fingerprints, data, budget,
   * run_id) and `sealed.opened: true`; the others `sealed.opened: false` and `sealed.not_opened`
   * saying why, and nothing of their words. Posts that are not sealed come back unchanged.
   */
  async openPosts(posts: readonly Obj[]): Promise<Obj[]> {
    // A post the SPACE hid leaves the local index too: no read shows its words any more.
    const hidden = posts.filter((p) => isObj(p.unavailable) && typeof p.post_id === 'string').map((p) => p.post_id as string);
    if (this.index !== undefined && hidden.length > 0) forgetHidden(this.index, this.relay, hidden, this.deps.log);
    // A hidden post keeps its position without its bytes: nothing to open, nothing to wait for.
    const sealed = posts.filter((p) => isObj(p.sealed) && !isObj(p.unavailable));
    if (sealed.length === 0) return [...posts];
    const missing = sealed.filter((p) => typeof (p.sealed as Obj).ciphertext !== 'string' && typeof p.post_id === 'string').map((p) => p.post_id as string);
    let full = new Map<string, Obj>();
    let fullFailure: string | undefined;
    if (missing.length > 0) {
      try {
        full = await this.fullPosts(missing);
      } catch (e) {
        fullFailure = failureWords(e);
      }
    }
    const spaces = new Map<string, SpaceKeys | { failure: string; alarm: boolean; fix: string | undefined }>();
    for (const p of sealed) {
      const name = typeof p.space === 'string' ? p.space : '';
      if (spaces.has(name)) continue;
      try {
        spaces.set(name, await this.status(name));
      } catch (e) {
        const trust = e instanceof BridgeError && TRUST_CODES.includes(e.code);
        spaces.set(name, { failure: failureWords(e), alarm: trust, fix: trust ? (e as BridgeError).fix : undefined });
      }
    }
    const out: Obj[] = [];
    const toIndex: OpenedPost[] = [];
    for (const p of posts) {
      if (!isObj(p.sealed)) {
        out.push(p);
        continue;
      }
      if (isObj(p.unavailable)) {
        out.push(notOpened(p, 'the post is unavailable (hidden): the relay serves no ciphertext for it'));
        continue;
      }
      const keys = spaces.get(typeof p.space === 'string' ? p.space : '')!;
      const served = typeof (p.sealed as Obj).ciphertext === 'string' ? p : full.get(p.post_id as string);
      if ('failure' in keys) {
        // The key records were refused (or unreachable): nothing of the SPACE opens now.
        out.push(notOpened(p, keys.failure, { retry: true, alarm: keys.alarm, fix: keys.fix }));
        continue;
      }
      try {
        if (served === undefined) throw new Error(`the relay did not serve its header and ciphertext${fullFailure ? ` (${fullFailure})` : ''}`);
        const content = await this.openOne(keys, p, served);
        out.push(opened(p, served, content));
        if (this.index !== undefined) toIndex.push(indexedRecord(this.relay, keys.spaceId, p, opened(served, served, content), content));
      } catch (e) {
        const words = e instanceof Error && !(e instanceof BridgeError) && !(e instanceof SvcError) ? e.message : failureWords(e);
        // No key yet (no lock, or a lock refused) may change: read it again later.
        out.push(notOpened(p, words, { retry: served === undefined || (e instanceof BridgeError && e.code === 'SEALED_NO_KEY'), alarm: false }));
      }
    }
    // Every sealed post any read opens is indexed here, the one place posts are opened.
    if (this.index !== undefined) indexOpened(this.index, toIndex, this.deps.now(), this.deps.log);
    return out;
  }

  /**
   * Open an item with the secrets this KEY kept alone, without asking the relay: what a member
   * removed from the SPACE still can (it had those keys), and nothing sealed under a generation
   * it never held (SEALED_NO_KEY). The header is read strictly; the caller compares it.
   */
  openKept(spaceId: string, headerBytes: Uint8Array, ciphertext: Uint8Array): { header: PostHeader; content: PostContent } {
    const header = readSealedHeader(headerBytes, 'header', 'post') as PostHeader;
    if (header.space_id !== spaceId) throw new SvcError('SEALED_HEADER_MISMATCH', 'space_id: names another SPACE');
    const kept = this.cache.secretsFrom(this.relay, spaceId, header.generation).filter((k) => k.generation === header.generation);
    if (kept.length === 0) {
      throw new BridgeError('SEALED_NO_KEY', `this KEY never held the key of generation ${header.generation}`, 'Only members the keeper locked that generation for can open it.');
    }
    for (const k of kept) {
      try {
        return openPost(headerBytes, ciphertext, k.secret);
      } catch (e) {
        if (!isSealedError(e, 'aead-open')) throw e;
      }
    }
    throw new BridgeError('SEALED_NO_KEY', `the item does not open under the key of generation ${header.generation} this KEY holds`, 'Its bytes were changed.');
  }

  /** Open one item against what the relay shows of it (§7 "Opening"). */
  private async openOne(keys: SpaceKeys, shown: Obj, served: Obj): Promise<PostContent> {
    const s = served.sealed as Obj;
    let transport: { header: Uint8Array; ciphertext: Uint8Array };
    let header: PostHeader;
    try {
      transport = readSealedTransport({ header: s.header, ciphertext: s.ciphertext }, 'post');
      header = readSealedHeader(transport.header, 'header', 'post') as PostHeader;
    } catch (e) {
      throw new Error(`its header or ciphertext is malformed (${failureWords(e)})`);
    }
    const generation = (shown.sealed as Obj).generation;
    try {
      checkPostHeader(header, {
        space_id: keys.spaceId,
        author: String(shown.author),
        kind: typeof shown.kind === 'string' ? shown.kind : '',
        to: Array.isArray(shown.to) ? (shown.to as string[]) : undefined,
        reply_to: typeof shown.reply_to === 'string' ? shown.reply_to : shown.reply_to === null ? null : undefined,
        supersedes: typeof served.supersedes === 'string' ? served.supersedes : served.supersedes === null ? null : undefined,
        retracts: typeof served.retracts === 'string' ? served.retracts : served.retracts === null ? null : undefined,
        generation: typeof generation === 'number' ? generation : -1,
      });
      if (typeof served.space_id === 'string' && served.space_id !== keys.spaceId) throw new SvcError('SEALED_HEADER_MISMATCH', 'space_id: names another SPACE');
    } catch (e) {
      throw new Error(`its header differs from what the relay shows (${failureWords(e)})`);
    }
    checkSignedDigests(served, transport.header, transport.ciphertext);
    const secrets = await this.secretsFor(keys, header.generation);
    for (const secret of secrets) {
      try {
        return openPost(transport.header, transport.ciphertext, secret).content;
      } catch (e) {
        if (isSealedError(e, 'aead-open')) continue;
        throw new Error(`its content breaks the rules of a post (${failureWords(e)})`);
      }
    }
    throw new Error(`its ciphertext does not authenticate under the key of generation ${header.generation} and its header: the bytes were changed or swapped`);
  }
}

/** A signed sealed post's object names the digests of the exact header and ciphertext (objects.md §7). */
function checkSignedDigests(served: Obj, header: Uint8Array, ciphertext: Uint8Array): void {
  const proof = served.proof;
  if (!isObj(proof) || typeof proof.canonical !== 'string') return;
  let object: JsonObject;
  try {
    object = readCanonicalObject(fromBase64url(proof.canonical, 'canonical'), 'canonical');
  } catch {
    throw new Error('its proof object is not canonical JSON');
  }
  const sealed = object.sealed;
  const want = sealedDigests(header, ciphertext);
  if (!isObj(sealed) || sealed.header !== want.header || sealed.ciphertext !== want.ciphertext) {
    throw new Error('the object its author signed names another header or ciphertext than the relay serves');
  }
}

function snippet(text: string): { snippet: string; truncated: boolean } {
  const chars = [...text];
  return chars.length > SNIPPET_CHARACTERS ? { snippet: chars.slice(0, SNIPPET_CHARACTERS).join(''), truncated: true } : { snippet: text, truncated: false };
}

function opened(p: Obj, served: Obj, c: PostContent): Obj {
  const out: Obj = { ...p, sealed: { ...sealedSummary(p), opened: true } };
  out.title = c.title ?? null;
  if ('body' in p || !('snippet' in p)) out.body = c.body ?? '';
  if ('snippet' in p) {
    const s = snippet(c.body ?? '');
    out.snippet = s.snippet;
    out.snippet_truncated = s.truncated;
  }
  if (c.fingerprints !== undefined) {
    out.fingerprints = c.fingerprints;
    out.fingerprint_count = c.fingerprints.length;
  }
  if (c.data !== undefined) out.data = c.data;
  if (c.budget !== undefined) out.budget = c.budget;
  if (c.run_id !== undefined) out.run_id = c.run_id;
  if (served !== p && typeof served.space_id === 'string' && out.space_id === undefined) out.space_id = served.space_id;
  return out;
}

// ---- the bridge's Sealing ---------------------------------------------------------------------

/** Make the Sealing of a bridge: its sealed cache and local index beside the local cache file (`cachePath`), opened when first used. */
export function createSealing(deps: SealingDeps, cachePath: string): Sealing {
  return new Sealing(
    deps,
    () => openSealedCache(sealedCachePathBeside(cachePath), deps.sealer.box),
    () => openSealedIndex(sealedIndexPathBeside(cachePath), deps.sealer.search),
  );
}
