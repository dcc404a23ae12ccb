/**
 * Tokens of a KEY: lookup by hash for authentication, listing, revocation
 * (spec/2-endpoints.md "Keys, tokens, passkeys"). Tokens themselves are minted by the KEY
 * store, inside the same transaction that spends the challenge.
 */
import type { Db } from './db.js';

export interface TokenRecord {
  id: string;
  peerId: string;
  label: string | null;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** The owning KEY's block time, joined in for authentication. */
  keyBlockedAt: number | null;
}

export interface TokenStore {
  /** The token whose SHA-256 is `hash`, with its KEY's block state. */
  byHash(hash: Uint8Array): TokenRecord | undefined;
  /** Live (not revoked, not expired) tokens of a KEY, oldest first. */
  listLive(peerId: string, now: number): TokenRecord[];
  /** Revoke one token of this KEY; false when it is not this KEY's live token. */
  revoke(peerId: string, tokenId: string, now: number): boolean;
  /** Revoke every token of this KEY; answers how many. */
  revokeAll(peerId: string, now: number): number;
}

interface TokenRow {
  id: string;
  peer_id: string;
  label: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  blocked_at: number | null;
}

function toRecord(r: TokenRow): TokenRecord {
  return {
    id: r.id,
    peerId: r.peer_id,
    label: r.label,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    keyBlockedAt: r.blocked_at,
  };
}

export function createTokenStore(db: Db): TokenStore {
  const selectByHash = db.prepare<[Uint8Array], TokenRow>(
    `SELECT t.id, t.peer_id, t.label, t.created_at, t.expires_at, t.revoked_at, k.blocked_at
     FROM tokens t JOIN keys k ON k.peer_id = t.peer_id WHERE t.token_hash = ?`,
  );
  const selectLive = db.prepare<[string, number], TokenRow>(
    `SELECT t.id, t.peer_id, t.label, t.created_at, t.expires_at, t.revoked_at, NULL AS blocked_at
     FROM tokens t WHERE t.peer_id = ? AND t.revoked_at IS NULL AND t.expires_at > ?
     ORDER BY t.created_at, t.id`,
  );
  const revokeOne = db.prepare(
    'UPDATE tokens SET revoked_at = ? WHERE id = ? AND peer_id = ? AND revoked_at IS NULL AND expires_at > ?',
  );
  const revokeEvery = db.prepare(
    'UPDATE tokens SET revoked_at = ? WHERE peer_id = ? AND revoked_at IS NULL',
  );

  return {
    byHash(hash) {
      const r = selectByHash.get(hash);
      return r ? toRecord(r) : undefined;
    },
    listLive: (peerId, now) => selectLive.all(peerId, now).map(toRecord),
    revoke: (peerId, tokenId, now) =>
      db.transaction(() => revokeOne.run(now, tokenId, peerId, now).changes > 0).immediate(),
    revokeAll: (peerId, now) => db.transaction(() => revokeEvery.run(now, peerId).changes).immediate(),
  };
}
