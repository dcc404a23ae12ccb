/**
 * Sealed pairs in the bridge (protocol/sealed.md §3, §4, §7, §9; spec/1-concepts.md
 * "Conversation and message", "Sealed SPACES and pairs").
 *
 * - `startBody`: the body of `POST /v1/conversations` for a sealed pair. This KEY starts it, so
 *   it makes the pair's one secret (generation 1) and locks it for both KEYS (§4): for itself
 *   and for the peer, whose encryption key comes only from the peer's own statement, checked
 *   against its signing key (bridge/sealed/encryption.ts `fetchPeerKey`). The container is the pair's
 *   (`pairContainer`), the first message is sealed under the secret with a fresh header (type
 *   message, generation 1, the pair, this KEY as author, `about` if given; it replies to
 *   nothing). The secret is kept in the sealed cache (sealed at rest) once the relay names the
 *   conversation (`keepStarted`); until then the own lock in the relay's record gives it back.
 * - `sealInto`: a message into a sealed conversation the relay shows (`GET
 *   /v1/conversations/{id}`), under the pair's secret.
 * - `secretOf`: the secret of a sealed conversation record: the kept one (the relay must still
 *   show the commitment and the two KEYS it was kept under: SEALED_PAIR_CHANGED otherwise), else
 *   the reader's own lock opened, accepted only from the KEY that started the conversation (§4:
 *   the starter locks for both), its key from its own checked statement; the commitment must
 *   hold for what the lock gives (shared/sealed/locks.ts `openLock`).
 * - `openMessages`: every sealed message of a page opened: transport and header read strictly,
 *   the header compared with what the relay shows (pair, author, reply_to, about), the ciphertext
 *   authenticated and the content checked. A message that fails any step shows none of its
 *   words, only why (`sealed.opened: false`, `not_opened`), and `retry` when it may open later
 *   (no lock yet, the relay unreachable).
 *
 * Salts: 16 bytes of HMAC keyed with the KEY's private salt of (conversation or pair, idempotency
 * key) over the exact content bytes, as bridge/sealed/sealing.ts does for posts: a retry with the same
 * idempotency key and words sends the same header and ciphertext (the relay answers a replay),
 * and other words give another salt, so a header is never paired with two contents (§7).
 *
 * Everything the relay serves here (records, locks, headers, ciphertexts) is attacker-controlled.
 * Tools never see key bytes: locks are made and opened by the Sealer (bridge/sealed/encryption.ts).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { concatBytes, fromHex, isHex, toHex, utf8 } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { isSealedError } from '../../shared/sealed/errors.js';
import { commitmentHex, pairContainer } from '../../shared/sealed/generations.js';
import { checkMessageHeader, readSealedHeader, type MessageHeader } from '../../shared/sealed/headers.js';
import { buildMessageContent, openMessage, readSealedTransport, sealMessage, sealedTransport, type SealedTransport } from '../../shared/sealed/items.js';
import { SNIPPET_CHARACTERS } from '../../shared/limits.js';
import { ensurePublished, fetchPeerKey, readKeyView, type PeerKey } from './encryption.js';
import { BridgeError, RelayRefusal, isRelayRefusal } from '../../tools/errors.js';
import type { Cache } from '../../tools/cache/cache.js';
import type { SealedPairs as SealedPairsPort, StartedPair } from '../../tools/ports.js';
import { shut } from '../../tools/messages/sealed-messages.js';
import type { SealingDeps } from './sealing.js';

type Obj = Record<string, unknown>;

const SALT_INFO = 'svc bridge sealed message salt';

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function badRecord(rule: string): BridgeError {
  return new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: ${rule}`, 'Check that SVC_API points at an svc relay.');
}

/** Plain words for why something failed. */
function why(e: unknown): string {
  if (e instanceof BridgeError || e instanceof RelayRefusal) return `${e.code}: ${e.message}${e.detail ? ` (${e.detail})` : ''}`;
  if (e instanceof SvcError) return `${e.code}${e.detail ? `: ${e.detail}` : ''}`;
  return (e as Error)?.message ?? String(e);
}

/** A sealed pair conversation as the relay shows it, read strictly. */
export interface SealedPairRecord {
  readonly conversationId: string;
  /** The two peer ids, ascending. */
  readonly pair: readonly [string, string];
  readonly startedBy: string;
  readonly commitment: string;
  /** The reader's own lock and who sent it, when the relay shows one. */
  readonly lock: { readonly lock: Uint8Array; readonly sender: unknown } | undefined;
}

/** Read a conversation record (conversations.get or a list item) as a sealed pair of `me`. */
export function readSealedPair(conv: unknown, me: string): SealedPairRecord {
  if (!isObj(conv)) throw badRecord('a conversation is not a JSON object');
  const id = conv.conversation_id;
  if (typeof id !== 'string' || id === '' || id.length > 200) throw badRecord('conversation_id');
  if (conv.kind !== 'pair' || conv.sealed !== true) throw badRecord(`conversation ${id} is not a sealed pair`);
  const members = Array.isArray(conv.members) ? conv.members.filter(isObj).map((m) => m.peer_id) : [];
  if (members.length !== 2 || !members.every((m): m is string => isHex(m, 32)) || members[0] === members[1]) {
    throw badRecord(`sealed pair ${id} does not show two members`);
  }
  if (!members.includes(me)) throw badRecord(`sealed pair ${id} does not name this KEY as a member`);
  const [a, b] = members as [string, string];
  const pair: [string, string] = a < b ? [a, b] : [b, a];
  if (!isHex(conv.started_by, 32) || !pair.includes(conv.started_by)) throw badRecord(`sealed pair ${id}: started_by is not one of the pair`);
  if (!isHex(conv.commitment, 32)) throw badRecord(`sealed pair ${id}: commitment is not 64 lowercase hex`);
  let lock: SealedPairRecord['lock'];
  if (isObj(conv.lock)) {
    if (!isHex(conv.lock.lock, 80)) throw badRecord(`sealed pair ${id}: lock is not 160 lowercase hex`);
    lock = { lock: fromHex(conv.lock.lock, 80), sender: conv.lock.sender };
  }
  return { conversationId: id, pair, startedBy: conv.started_by, commitment: conv.commitment, lock };
}

/** The other KEY of a pair. */
function other(pair: readonly [string, string], me: string): string {
  return pair[0] === me ? pair[1] : pair[0];
}

/** A message with its sealed words opened: the body (or snippet) filled in, `sealed.opened: true`. */
function opened(m: Obj, body: string): Obj {
  const s = isObj(m.sealed) ? m.sealed : {};
  const out: Obj = { ...m, sealed: { bytes: s.bytes, opened: true } };
  if ('snippet' in m && !('body' in m && m.body !== null)) {
    const chars = [...body];
    out.snippet = chars.length > SNIPPET_CHARACTERS ? chars.slice(0, SNIPPET_CHARACTERS).join('') : body;
    out.snippet_truncated = chars.length > SNIPPET_CHARACTERS;
  } else {
    out.body = body;
  }
  return out;
}

/** A sealed pair's secret as kept. */
export interface KeptPair {
  readonly conversationId: string;
  /** The two peer ids, ascending. */
  readonly pair: readonly [string, string];
  readonly commitment: string;
  readonly secret: Uint8Array;
}

function pairAad(relay: string, k: { conversationId: string; pair: string; commitment: string }): Uint8Array {
  return utf8(`svc bridge sealed pair secret\n${relay}\n${k.conversationId}\n${k.pair}\n${k.commitment}`);
}

export class SealedPairs implements SealedPairsPort {
  readonly deps: SealingDeps;
  readonly cache: Cache;
  /** Peer keys checked in this call, by peer id. */
  private readonly keys = new Map<string, PeerKey>();

  constructor(deps: SealingDeps, cache: Cache) {
    this.deps = deps;
    this.cache = cache;
  }

  /**
   * Keep a pair's secret in the local cache, sealed at rest with the KEY's local box (associated
   * data naming relay, conversation, pair and commitment, so moved bytes do not open). The first
   * kept for a conversation stays.
   */
  keep(k: KeptPair, source: 'created' | 'lock'): void {
    const pair = `${k.pair[0]}:${k.pair[1]}`;
    const sealed = this.deps.sealer.box.seal(k.secret, pairAad(this.relay, { conversationId: k.conversationId, pair, commitment: k.commitment }));
    this.cache.keepSealedPair(this.relay, { conversationId: k.conversationId, pair, commitment: k.commitment, sealed, source }, this.deps.now());
  }

  /** The kept secret of a sealed pair conversation (none, or none that opens under this KEY). */
  kept(conversationId: string): KeptPair | undefined {
    const r = this.cache.sealedPair(this.relay, conversationId);
    return r === undefined ? undefined : this.openKept(r);
  }

  /** The sealed pair conversations kept with `peer`. */
  keptWith(peer: string): KeptPair[] {
    const pair = this.me < peer ? `${this.me}:${peer}` : `${peer}:${this.me}`;
    return this.cache.sealedPairsOf(this.relay, pair).flatMap((r) => this.openKept(r) ?? []);
  }

  private openKept(r: { conversationId: string; pair: string; commitment: string; sealed: Uint8Array }): KeptPair | undefined {
    const secret = this.deps.sealer.box.open(r.sealed, pairAad(this.relay, r));
    if (secret === undefined || secret.length !== 32) return undefined;
    const [lo, hi] = r.pair.split(':') as [string, string];
    return { conversationId: r.conversationId, pair: [lo, hi], commitment: r.commitment, secret };
  }

  get relay(): string {
    return this.deps.api.base.origin;
  }

  get me(): string {
    return this.deps.identity.peerId;
  }

  /** A peer's checked key (its statement signed by its own signing key), once per call. */
  async peerKey(peer: string): Promise<PeerKey> {
    const known = this.keys.get(peer);
    if (known !== undefined) return known;
    const key = await fetchPeerKey(this.deps.api, peer);
    this.keys.set(peer, key);
    return key;
  }

  /** The X25519 key of a lock's sender, from its own checked statement (this KEY's own: the Sealer's). */
  private async senderKey(sender: unknown): Promise<{ peerId: string; publicKey: Uint8Array }> {
    if (sender === this.me) return { peerId: this.me, publicKey: this.deps.sealer.publicKey };
    const key = isObj(sender) ? readKeyView(sender, 'lock.sender') : isHex(sender, 32) ? await this.peerKey(sender) : undefined;
    if (key === undefined) throw badRecord('lock.sender is neither a peer id nor a KEY');
    if (key.peerId === this.me) return { peerId: this.me, publicKey: this.deps.sealer.publicKey };
    if (key.encryption === null) throw new Error(`the KEY that sent the lock (${key.peerId}) shows no encryption key`);
    return { peerId: key.peerId, publicKey: key.encryption.publicKey };
  }

  /** A salt for `content` under this (scope, idempotency key): the same words again, the same salt. */
  private salt(scope: string, idempotencyKey: string, content: Uint8Array): Uint8Array {
    return new Uint8Array(
      createHmac('sha256', this.deps.privateSalt(scope, idempotencyKey)).update(concatBytes(utf8(SALT_INFO), content)).digest().subarray(0, 16),
    );
  }

  // ---- starting and sending ------------------------------------------------------------------

  /**
   * The `sealed` member of conversations.start with `peer`, and the secret it locks. Publishes
   * this KEY's encryption key first if this process has not; the peer must have published its
   * own (SEALED_NO_KEY otherwise, saying how it gets one).
   */
  async startBody(peer: string, body: string, opts: { about?: string | undefined; idempotencyKey: string }): Promise<StartedPair> {
    if (!isHex(peer, 32) || peer === this.me) throw new SvcError('INVALID_REQUEST', 'to: a sealed pair is this KEY and one other peer id');
    await ensurePublished(this.deps.api, this.deps.sealer, this.deps.signer);
    const key = await this.peerKey(peer);
    if (key.encryption === null) {
      throw new BridgeError(
        'SEALED_NO_KEY',
        `KEY ${peer} has published no encryption key, so nothing can be sealed for it`,
        'Its bridge publishes the key on first need (svc_message with sealed=true, or joining a sealed SPACE); until then send an ordinary message (without sealed).',
        peer,
      );
    }
    const container = pairContainer(this.me, peer);
    const secret = new Uint8Array(randomBytes(32));
    const commitment = commitmentHex(container, 1, secret);
    const locks: Obj = {
      [this.me]: toHex(this.deps.sealer.lock({ container, generation: 1, secret, recipient: { peerId: this.me, publicKey: this.deps.sealer.publicKey } })),
      [peer]: toHex(this.deps.sealer.lock({ container, generation: 1, secret, recipient: { peerId: peer, publicKey: key.encryption.publicKey } })),
    };
    const pair: [string, string] = this.me < peer ? [this.me, peer] : [peer, this.me];
    const content = buildMessageContent(body).bytes;
    const item = sealMessage({
      header: { author: this.me, peer, about: opts.about },
      body,
      secret,
      salt: this.salt(`pair:${pair.join(':')}`, opts.idempotencyKey, content),
    });
    return { sealed: { ...sealedTransport(item.headerBytes, item.ciphertext), commitment, locks }, secret, commitment, pair };
  }

  /** Keep the secret of a sealed pair this KEY started, once the relay named the conversation. */
  keepStarted(conversationId: string, started: Pick<StartedPair, 'secret' | 'commitment' | 'pair'>): void {
    this.keep({ conversationId, pair: started.pair, commitment: started.commitment, secret: started.secret }, 'created');
  }

  /** The `sealed` member of messages.send into the sealed conversation `conv` (its record as the relay shows it). */
  async sealInto(conv: Obj, body: string, opts: { reply_to?: string | undefined; about?: string | undefined; idempotencyKey: string }): Promise<SealedTransport> {
    const record = readSealedPair(conv, this.me);
    const secret = await this.secretOf(record);
    const content = buildMessageContent(body).bytes;
    const item = sealMessage({
      header: { author: this.me, peer: other(record.pair, this.me), about: opts.about, reply_to: opts.reply_to },
      body,
      secret,
      salt: this.salt(`conversation:${record.conversationId}`, opts.idempotencyKey, content),
    });
    return sealedTransport(item.headerBytes, item.ciphertext);
  }

  // ---- the pair's secret ---------------------------------------------------------------------

  /** The secret of a sealed pair: kept, else from the reader's own lock (see the file header). */
  async secretOf(record: SealedPairRecord): Promise<Uint8Array> {
    const kept = this.kept(record.conversationId);
    if (kept !== undefined) {
      if (kept.commitment !== record.commitment || kept.pair[0] !== record.pair[0] || kept.pair[1] !== record.pair[1]) {
        throw new BridgeError(
          'SEALED_PAIR_CHANGED',
          `the relay shows sealed conversation ${record.conversationId} with another ${kept.commitment !== record.commitment ? 'commitment' : 'pair of KEYS'} than this bridge kept`,
          'Nothing is sealed into it or opened from it under what the relay shows now. Compare with the other KEY outside the service; a relay that changes a sealed pair is not to be trusted with it.',
          record.conversationId,
        );
      }
      return kept.secret;
    }
    if (record.lock === undefined) {
      throw new BridgeError('SEALED_NO_KEY', `the relay shows no lock for this KEY in sealed conversation ${record.conversationId}`, 'The KEY that started it locks the key for both; without a lock nothing in it opens here.');
    }
    const senderId = isObj(record.lock.sender) ? record.lock.sender.peer_id : record.lock.sender;
    // sealed.md §4: in a pair, the KEY that starts it makes the secret and locks it for both.
    if (senderId !== record.startedBy) {
      throw new BridgeError(
        'SEALED_NO_KEY',
        `the lock for this KEY in sealed conversation ${record.conversationId} comes from ${isHex(senderId, 32) ? senderId : 'an unnamed KEY'}, not from the KEY that started it (${record.startedBy})`,
        'Only the starter of a sealed pair locks its key; this lock is refused.',
      );
    }
    const sender = await this.senderKey(record.lock.sender);
    let secret: Uint8Array;
    try {
      secret = this.deps.sealer.openLock({ container: pairContainer(record.pair[0], record.pair[1]), generation: 1, lock: record.lock.lock, commitment: record.commitment, sender });
    } catch (e) {
      if (isSealedError(e)) throw new BridgeError('SEALED_NO_KEY', `the lock for this KEY in sealed conversation ${record.conversationId} does not open (${e.reason}: ${e.message})`, 'The lock or the commitment was changed; nothing in it opens here.');
      throw e;
    }
    this.keep({ conversationId: record.conversationId, pair: record.pair, commitment: record.commitment, secret }, 'lock');
    return secret;
  }

  // ---- opening -------------------------------------------------------------------------------

  /** A message's header and ciphertext at full detail, when a lower detail left them out. */
  private async fullMessage(conversationId: string, m: Obj): Promise<Obj | undefined> {
    if (typeof m.seq !== 'string' || !/^[1-9][0-9]{0,19}$/.test(m.seq)) return undefined;
    const res = await this.deps.api.request({
      path: `/v1/conversations/${encodeURIComponent(conversationId)}/messages`,
      query: { after: (BigInt(m.seq) - 1n).toString(), limit: 1, detail: 'full' },
    });
    const page = isObj(res.body) ? res.body : {};
    const found = (Array.isArray(page.items) ? page.items : []).find((x) => isObj(x) && x.message_id === m.message_id);
    return isObj(found) ? found : undefined;
  }

  /**
   * Open the sealed messages of `messages`, all of conversation `conv` (its record as the relay
   * shows it). Messages that are not sealed come back unchanged.
   */
  async openMessages(conv: unknown, messages: readonly Obj[]): Promise<Obj[]> {
    if (!messages.some((m) => isObj(m.sealed))) return [...messages];
    let record: SealedPairRecord;
    let secret: Uint8Array;
    try {
      record = readSealedPair(conv, this.me);
      secret = await this.secretOf(record);
    } catch (e) {
      const retry = !(e instanceof BridgeError && e.code === 'SEALED_PAIR_CHANGED');
      return messages.map((m) => (isObj(m.sealed) ? shut(m, why(e), retry) : m));
    }
    const out: Obj[] = [];
    for (const m of messages) {
      if (!isObj(m.sealed)) {
        out.push(m);
        continue;
      }
      try {
        const served = typeof m.sealed.ciphertext === 'string' ? m : await this.fullMessage(record.conversationId, m);
        if (served === undefined || !isObj(served.sealed)) throw new Error('the relay did not serve its header and ciphertext');
        out.push(opened(m, this.openOne(record, m, served.sealed, secret)));
      } catch (e) {
        out.push(shut(m, e instanceof Error && !(e instanceof BridgeError) && !(e instanceof SvcError) && !(e instanceof RelayRefusal) ? e.message : why(e), isRelayRefusal(e) || (e instanceof BridgeError && e.code === 'TRANSPORT')));
      }
    }
    return out;
  }

  /** Open one message against what the relay shows of it (§7 "Opening"); the body, or a throw saying why not. */
  openOne(record: SealedPairRecord, shown: Obj, sealed: Obj, secret: Uint8Array): string {
    let transport: { header: Uint8Array; ciphertext: Uint8Array };
    let header: MessageHeader;
    try {
      transport = readSealedTransport({ header: sealed.header, ciphertext: sealed.ciphertext }, 'message');
      header = readSealedHeader(transport.header, 'header', 'message') as MessageHeader;
    } catch (e) {
      throw new Error(`its header or ciphertext is malformed (${why(e)})`);
    }
    try {
      checkMessageHeader(header, {
        pair: record.pair,
        author: typeof shown.author === 'string' ? shown.author : '',
        reply_to: typeof shown.reply_to === 'string' ? shown.reply_to : null,
        about: typeof shown.about === 'string' ? shown.about : null,
      });
    } catch (e) {
      throw new Error(`its header differs from what the relay shows (${why(e)})`);
    }
    try {
      return openMessage(transport.header, transport.ciphertext, secret).content.body;
    } catch (e) {
      if (isSealedError(e, 'aead-open')) throw new Error('its ciphertext does not authenticate under the pair\'s key and its header: the bytes were changed or swapped');
      throw new Error(`its content breaks the rules of a message (${why(e)})`);
    }
  }
}
