/**
 * The KEY aggregate: registered KEYS and minting a token for one (spec/1-concepts.md
 * "Minting with an Ed25519 KEY"). Minting spends the challenge nonce, registers the KEY on its
 * first success and stores the token's hash, all in one immediate transaction, so a nonce
 * yields at most one token even under concurrent verifies. A passkey KEY (spec "Passkeys") is
 * a KEY like any other plus its credential (migration 012), whose signature counter advances
 * in the transaction that accepts what the passkey signed.
 */
import { counterAdvances } from '../../shared/passkey.js';
import type { Db } from './database.js';

export interface KeyRecord {
  peerId: string;
  keyType: 'ed25519' | 'passkey';
  publicKey: string;
  registeredAt: number;
  blockedAt: number | null;
}

export interface MintInput {
  peerId: string;
  keyType: 'ed25519' | 'passkey';
  publicKey: string;
  /** The challenge nonce (16 bytes); each yields one token. */
  nonce: Uint8Array;
  /** When the challenge expires (ms); a spent nonce is kept until then. */
  nonceExpiresAt: number;
  tokenId: string;
  tokenHash: Uint8Array;
  label: string | null;
  now: number;
  expiresAt: number;
  /**
   * For a passkey KEY: its credential and the counter of this sign-in's assertion. Registering
   * (`register`) is refused as `taken` when the credential or the KEY exists; signing in as
   * `counter` when the counter does not advance past the stored one (checked here, inside the
   * transaction, so two sign-ins with one assertion cannot both pass).
   */
  passkey?: { credentialId: string; algorithm: number; counter: number; register: boolean };
}

/** A passkey KEY's credential (migration 012). */
export interface PasskeyRecord {
  /** b64u, as the browser names it. */
  credentialId: string;
  peerId: string;
  /** The COSE algorithm given at registration. */
  algorithm: number;
  /** The highest signature counter accepted so far. */
  signCount: number;
  /** The SPKI, hex (the KEY's public key). */
  publicKey: string;
}

export type MintRefusal = 'nonce_spent' | 'blocked' | 'taken' | 'counter';

export type MintResult = { ok: true; registered: boolean; key: KeyRecord } | { ok: false; reason: MintRefusal };

export interface KeyStore {
  get(peerId: string): Promise<KeyRecord | undefined>;
  mint(input: MintInput): Promise<MintResult>;
  /** The passkey with this credential id (b64u), if registered. */
  passkey(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** The passkey of a passkey KEY. */
  passkeyOf(peerId: string): Promise<PasskeyRecord | undefined>;
  /**
   * Run `work` in one immediate transaction; when `counts(result)` (the work accepted something
   * new signed by the passkey KEY `peerId`), its signature counter must advance to `counter`,
   * else everything rolls back and the answer is `counter`. A retry that changes nothing needs
   * no newer counter.
   */
  withPasskeyCounter<T>(peerId: string, counter: number, work: () => Promise<T>, counts: (result: T) => boolean): Promise<{ ok: true; value: T } | { ok: false }>;
  /**
   * Advance the passkey's counter to `counter` inside the caller's transaction; false (nothing
   * written) when it does not advance or the KEY has no passkey.
   */
  advancePasskeyCounter(peerId: string, counter: number): Promise<boolean>;
  /**
   * Register a KEY the service itself acts as (the oracle reviewer), if it is not yet; no token
   * is minted. Runs inside the caller's write transaction when there is one.
   */
  ensure(peerId: string, publicKey: string, now: number): Promise<KeyRecord>;
  /** Block or unblock a KEY (operator action). */
  setBlocked(peerId: string, blockedAt: number | null): Promise<boolean>;
  /**
   * Hear a KEY blocked, once the block has committed (a blocked KEY's tokens authenticate
   * nothing: what it holds open on them must end); answers the function that stops listening.
   */
  onBlocked(listener: (peerId: string) => void): () => void;
  /** Forget spent nonces whose challenge has expired anyway (mint also does this). */
  pruneSpentChallenges(now: number): Promise<number>;
}

interface PasskeyRow {
  credential_id: string;
  peer_id: string;
  algorithm: number;
  sign_count: number;
  public_key: string;
}

/** A refusal thrown inside a transaction so that everything it wrote rolls back. */
class Refused extends Error {
  constructor(readonly reason: MintRefusal) {
    super(reason);
  }
}

interface KeyRow {
  peer_id: string;
  key_type: 'ed25519' | 'passkey';
  public_key: string;
  registered_at: number;
  blocked_at: number | null;
}

function toRecord(r: KeyRow): KeyRecord {
  return {
    peerId: r.peer_id,
    keyType: r.key_type,
    publicKey: r.public_key,
    registeredAt: r.registered_at,
    blockedAt: r.blocked_at,
  };
}

/** `onBlockChange`: called before a KEY's block state changes (the token store forgets its lookups). */
export function createKeyStore(db: Db, onBlockChange: () => void = () => {}): KeyStore {
  const selectKey = db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE peer_id = ?');
  const insertKey = db.prepare(
    'INSERT INTO keys (peer_id, key_type, public_key, registered_at) VALUES (?, ?, ?, ?)',
  );
  const spendNonce = db.prepare(
    'INSERT INTO spent_challenges (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING',
  );
  const insertToken = db.prepare(
    `INSERT INTO tokens (id, token_hash, peer_id, label, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const insertIfMissing = db.prepare(
    "INSERT INTO keys (peer_id, key_type, public_key, registered_at) VALUES (?, 'ed25519', ?, ?) ON CONFLICT (peer_id) DO NOTHING",
  );
  const selectPasskey = db.prepare<[string], PasskeyRow>(
    'SELECT p.*, k.public_key FROM passkeys p JOIN keys k ON k.peer_id = p.peer_id WHERE p.credential_id = ?',
  );
  const selectPasskeyOf = db.prepare<[string], PasskeyRow>(
    'SELECT p.*, k.public_key FROM passkeys p JOIN keys k ON k.peer_id = p.peer_id WHERE p.peer_id = ?',
  );
  const insertPasskey = db.prepare('INSERT INTO passkeys (credential_id, peer_id, algorithm, sign_count) VALUES (?, ?, ?, ?)');
  const updateCount = db.prepare('UPDATE passkeys SET sign_count = ? WHERE peer_id = ?');
  const updateBlocked = db.prepare('UPDATE keys SET blocked_at = ? WHERE peer_id = ?');
  const deleteSpent = db.prepare('DELETE FROM spent_challenges WHERE expires_at < ?');
  const blockedListeners = new Set<(peerId: string) => void>();

  const advance = async (peerId: string, counter: number): Promise<boolean> => {
    const known = await selectPasskeyOf.get(peerId);
    if (known === undefined || !counterAdvances(known.sign_count, counter)) return false;
    await updateCount.run(counter, peerId);
    return true;
  };

  // A refusal throws inside the transaction so it rolls back whole: a refused sign-in leaves
  // its challenge unspent and registers nothing.
  const mintTx = db.transaction(async (i: MintInput): Promise<MintResult> => {
    if ((await spendNonce.run(i.nonce, i.nonceExpiresAt)).changes === 0) throw new Refused('nonce_spent');
    // A spent nonce only matters until its challenge expires (expiry is checked first).
    await deleteSpent.run(i.now);
    let row = await selectKey.get(i.peerId);
    let registered = false;
    const pk = i.passkey;
    if (pk !== undefined && pk.register && (row !== undefined || await selectPasskey.get(pk.credentialId) !== undefined)) {
      throw new Refused('taken');
    }
    if (row?.blocked_at != null) throw new Refused('blocked');
    if (!row) {
      await insertKey.run(i.peerId, i.keyType, i.publicKey, i.now);
      row = (await selectKey.get(i.peerId))!;
      registered = true;
      if (pk !== undefined) await insertPasskey.run(pk.credentialId, i.peerId, pk.algorithm, pk.counter);
    } else if (pk !== undefined && !await advance(i.peerId, pk.counter)) {
      throw new Refused('counter');
    }
    await insertToken.run(i.tokenId, i.tokenHash, i.peerId, i.label, i.now, i.expiresAt);
    return { ok: true, registered, key: toRecord(row) };
  });

  const toPasskey = (r: PasskeyRow): PasskeyRecord => ({
    credentialId: r.credential_id,
    peerId: r.peer_id,
    algorithm: r.algorithm,
    signCount: r.sign_count,
    publicKey: r.public_key,
  });

  return {
    async get(peerId) {
      const r = await selectKey.get(peerId);
      return r ? toRecord(r) : undefined;
    },
    async mint(input) {
      try {
        return await mintTx.immediate(input);
      } catch (e) {
        if (e instanceof Refused) return { ok: false, reason: e.reason };
        throw e;
      }
    },
    async passkey(credentialId) {
      const r = await selectPasskey.get(credentialId);
      return r ? toPasskey(r) : undefined;
    },
    async passkeyOf(peerId) {
      const r = await selectPasskeyOf.get(peerId);
      return r ? toPasskey(r) : undefined;
    },
    async withPasskeyCounter(peerId, counter, work, counts) {
      const tx = db.transaction(async () => {
        const value = await work();
        if (counts(value) && !await advance(peerId, counter)) throw new Refused('counter');
        return value;
      });
      try {
        return { ok: true, value: await tx.immediate() };
      } catch (e) {
        if (e instanceof Refused) return { ok: false };
        throw e;
      }
    },
    advancePasskeyCounter: advance,
    async ensure(peerId, publicKey, now) {
      await insertIfMissing.run(peerId, publicKey, now);
      return toRecord((await selectKey.get(peerId))!);
    },
    setBlocked: async (peerId, blockedAt) => {
      onBlockChange();
      return await db.transaction(async () => {
        const changed = (await updateBlocked.run(blockedAt, peerId)).changes > 0;
        if (changed && blockedAt !== null) {
          db.afterCommit(() => {
            for (const l of [...blockedListeners]) l(peerId);
          });
        }
        return changed;
      }).immediate();
    },
    onBlocked(listener) {
      const entry = (peerId: string): void => listener(peerId);
      blockedListeners.add(entry);
      return () => void blockedListeners.delete(entry);
    },
    pruneSpentChallenges: async (now) => await db.transaction(async () => (await deleteSpent.run(now)).changes).immediate(),
  };
}
