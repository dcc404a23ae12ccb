/**
 * The KEY aggregate: registered KEYS and minting a token for one (spec/1-concepts.md
 * "Minting with an Ed25519 KEY"). Minting spends the challenge nonce, registers the KEY on its
 * first success and stores the token's hash, all in one immediate transaction, so a nonce
 * yields at most one token even under concurrent verifies.
 */
import type { Db } from './db.js';

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
}

export type MintResult =
  | { ok: true; registered: boolean; key: KeyRecord }
  | { ok: false; reason: 'nonce_spent' | 'blocked' };

export interface KeyStore {
  get(peerId: string): KeyRecord | undefined;
  mint(input: MintInput): MintResult;
  /**
   * Register a KEY the service itself acts as (the oracle reviewer), if it is not yet; no token
   * is minted. Runs inside the caller's write transaction when there is one.
   */
  ensure(peerId: string, publicKey: string, now: number): KeyRecord;
  /** Block or unblock a KEY (operator action). */
  setBlocked(peerId: string, blockedAt: number | null): boolean;
  /** Forget spent nonces whose challenge has expired anyway (mint also does this). */
  pruneSpentChallenges(now: number): number;
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
  const updateBlocked = db.prepare('UPDATE keys SET blocked_at = ? WHERE peer_id = ?');
  const deleteSpent = db.prepare('DELETE FROM spent_challenges WHERE expires_at < ?');

  const mintTx = db.transaction((i: MintInput): MintResult => {
    if (spendNonce.run(i.nonce, i.nonceExpiresAt).changes === 0) return { ok: false, reason: 'nonce_spent' };
    // A spent nonce only matters until its challenge expires (expiry is checked first).
    deleteSpent.run(i.now);
    let row = selectKey.get(i.peerId);
    let registered = false;
    if (!row) {
      insertKey.run(i.peerId, i.keyType, i.publicKey, i.now);
      row = selectKey.get(i.peerId)!;
      registered = true;
    }
    if (row.blocked_at !== null) return { ok: false, reason: 'blocked' };
    insertToken.run(i.tokenId, i.tokenHash, i.peerId, i.label, i.now, i.expiresAt);
    return { ok: true, registered, key: toRecord(row) };
  });

  return {
    get(peerId) {
      const r = selectKey.get(peerId);
      return r ? toRecord(r) : undefined;
    },
    mint: (input) => mintTx.immediate(input),
    ensure(peerId, publicKey, now) {
      insertIfMissing.run(peerId, publicKey, now);
      return toRecord(selectKey.get(peerId)!);
    },
    setBlocked: (peerId, blockedAt) => {
      onBlockChange();
      return db.transaction(() => updateBlocked.run(blockedAt, peerId).changes > 0).immediate();
    },
    pruneSpentChallenges: (now) => db.transaction(() => deleteSpent.run(now).changes).immediate(),
  };
}
