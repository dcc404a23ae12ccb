/**
 * Tokens of a KEY: lookup by hash for authentication, listing, revocation
 * (spec/2-endpoints.md "Keys, tokens, passkeys"). Tokens themselves are minted by the KEY
 * store, inside the same transaction that spends the challenge.
 */
import type { Db } from './database.js';

export interface TokenRecord {
  id: string;
  peerId: string;
  label: string | null;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** The owning KEY's block time, joined in for authentication. */
  keyBlockedAt: number | null;
  /** An app token's app (OAuth client_id); null for a KEY's own token. */
  clientId: string | null;
  /** An app token's scope: 'write' implies read. Null for a KEY's own token. */
  scope: 'read' | 'write' | null;
}

/** A live token as tokens.list shows it: an app token with its app's name. */
export interface ListedToken extends TokenRecord {
  appName: string | null;
}

export interface TokenStore {
  /** The token whose SHA-256 is `hash`, with its KEY's block state (remembered lookups first). */
  byHash(hash: Uint8Array): Promise<TokenRecord | undefined>;
  /** `byHash` read from the database itself, never from what is remembered (the long-poll recheck). */
  byHashFresh(hash: Uint8Array): Promise<TokenRecord | undefined>;
  /** Live (not revoked, not expired) tokens of a KEY, oldest first. */
  listLive(peerId: string, now: number): Promise<ListedToken[]>;
  /** Revoke one token of this KEY; false when it is not this KEY's live token. */
  revoke(peerId: string, tokenId: string, now: number): Promise<boolean>;
  /** Revoke every token of this KEY; answers how many. */
  revokeAll(peerId: string, now: number): Promise<number>;
  /** Drop every remembered lookup (the KEY store calls it when a KEY is blocked or unblocked). */
  forget(): void;
}

/** Lookups remembered at most (least recently used dropped first). */
export const TOKEN_CACHE_MAX = 4096;

interface TokenRow {
  id: string;
  peer_id: string;
  label: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  blocked_at: number | null;
  client_id: string | null;
  scope: 'read' | 'write' | null;
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
    clientId: r.client_id,
    scope: r.scope,
  };
}

export function createTokenStore(db: Db): TokenStore {
  const selectByHash = db.prepare<[Uint8Array], TokenRow>(
    `SELECT t.id, t.peer_id, t.label, t.created_at, t.expires_at, t.revoked_at, k.blocked_at, t.client_id, t.scope
     FROM tokens t JOIN keys k ON k.peer_id = t.peer_id WHERE t.token_hash = ?`,
  );
  const selectLive = db.prepare<[string, number], TokenRow & { app_name: string | null }>(
    `SELECT t.id, t.peer_id, t.label, t.created_at, t.expires_at, t.revoked_at, NULL AS blocked_at, t.client_id, t.scope,
            c.client_name AS app_name
     FROM tokens t LEFT JOIN oauth_clients c ON c.client_id = t.client_id
     WHERE t.peer_id = ? AND t.revoked_at IS NULL AND t.expires_at > ?
     ORDER BY t.created_at, t.id`,
  );
  const revokeOne = db.prepare(
    'UPDATE tokens SET revoked_at = ? WHERE id = ? AND peer_id = ? AND revoked_at IS NULL AND expires_at > ?',
  );
  const revokeEvery = db.prepare(
    'UPDATE tokens SET revoked_at = ? WHERE peer_id = ? AND revoked_at IS NULL',
  );

  // Authentication runs on every request: found records are remembered, keyed by token hash
  // (bounded, least recently used dropped first). A record changes only when its token is
  // revoked or its KEY blocked or unblocked; the relay does each through this store or the KEY
  // store, which forget everything first (rare events; forgetting all is simplest to get
  // right). A long poll's recheck reads the database itself (`byHashFresh`), so even a change
  // made around the stores is seen before anything more is sent. Expiry needs nothing:
  // `expiresAt` never changes and the caller compares it with its clock. A commit by another
  // connection (a tool on the same file) moves `PRAGMA data_version`, which also forgets
  // everything. Unknown tokens are not remembered (guesses would only push real entries out).
  //
  // PostgreSQL: several relay processes share the database and nothing tells one of another's
  // commits in time for a revocation, so every lookup reads the database (one indexed query).
  const cache = new Map<string, TokenRecord>();
  let seenVersion: number | undefined;
  const forget = (): void => cache.clear();
  const keyOf = (hash: Uint8Array): string => Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('hex');
  /** Read the record from the database and remember it (or forget it when it is gone). */
  async function lookUp(hash: Uint8Array, key: string): Promise<TokenRecord | undefined> {
    const r = await selectByHash.get(hash);
    cache.delete(key);
    if (!r) return undefined;
    const record = toRecord(r);
    cache.set(key, record);
    if (cache.size > TOKEN_CACHE_MAX) cache.delete(cache.keys().next().value!);
    return { ...record };
  }

  return {
    async byHash(hash) {
      const version = db.externalVersion();
      if (version === undefined) return await lookUp(hash, keyOf(hash));
      if (version !== seenVersion) {
        forget();
        seenVersion = version;
      }
      const key = keyOf(hash);
      const hit = cache.get(key);
      if (hit !== undefined) {
        cache.delete(key); // most recently used goes last
        cache.set(key, hit);
        return { ...hit };
      }
      return await lookUp(hash, key);
    },
    byHashFresh: async (hash) => await lookUp(hash, keyOf(hash)),
    listLive: async (peerId, now) => (await selectLive.all(peerId, now)).map((r) => ({ ...toRecord(r), appName: r.app_name })),
    revoke: async (peerId, tokenId, now) => {
      forget();
      return await db.transaction(async () => (await revokeOne.run(now, tokenId, peerId, now)).changes > 0).under({ keys: [peerId] });
    },
    revokeAll: async (peerId, now) => {
      forget();
      return await db.transaction(async () => (await revokeEvery.run(now, peerId)).changes).under({ keys: [peerId] });
    },
    forget,
  };
}
