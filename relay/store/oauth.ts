/**
 * OAuth app sign-in storage (migration 013): clients (registered, and client ID metadata
 * documents kept), authorization requests with their decision and code, and the app tokens
 * made from codes. Codes and client secrets are stored only as SHA-256 hashes.
 */
import type { Db } from './database.js';

export interface ClientRecord {
  clientId: string;
  kind: 'registered' | 'document';
  secretHash: Uint8Array | null;
  authMethod: 'none' | 'client_secret_basic' | 'client_secret_post';
  clientName: string | null;
  /** The client's metadata JSON as the relay answers it. */
  metadata: string;
  issuedAt: number;
  /** A document's copy is used until then; null for a registered client. */
  freshUntil: number | null;
}

export interface AuthorizationRecord {
  id: string;
  clientId: string;
  redirectUri: string;
  scope: 'read' | 'write';
  state: string | null;
  codeChallenge: string;
  resource: string | null;
  createdAt: number;
  expiresAt: number;
  decision: 'approved' | 'declined' | null;
  decidedAt: number | null;
  peerId: string | null;
  codeExpiresAt: number | null;
  codeUsedAt: number | null;
  tokenId: string | null;
}

export type DecideResult =
  | { ok: true; request: AuthorizationRecord }
  | { ok: false; reason: 'not_found' | 'expired' | 'decided' };

/** What a redeemed code makes: the app token's row. */
export interface AppTokenInput {
  tokenId: string;
  tokenHash: Uint8Array;
  expiresAt: number;
}

export type RedeemResult<E> =
  | { ok: true; request: AuthorizationRecord }
  | { ok: false; reason: 'unknown' | 'expired' | 'blocked' }
  | { ok: false; reason: 'reused'; revoked: { peerId: string; tokenId: string } | null }
  | { ok: false; reason: 'refused'; error: E };

export interface OAuthStore {
  client(clientId: string): Promise<ClientRecord | undefined>;
  insertClient(c: ClientRecord): Promise<void>;
  /** Keep (or refresh) a client document's copy. */
  keepDocument(c: ClientRecord): Promise<void>;
  /** Store a new authorization request; requests made over a day ago are deleted on the way. */
  insertRequest(r: AuthorizationRecord, deleteBefore: number): Promise<void>;
  request(id: string): Promise<AuthorizationRecord | undefined>;
  /**
   * Answer a waiting request: approve with the code's hash and expiry, or decline (`code`
   * undefined). Refused when unknown, past its expiry, or already answered.
   */
  decide(id: string, peerId: string, now: number, code?: { hash: Uint8Array; expiresAt: number }): Promise<DecideResult>;
  /**
   * Trade a code for an app token, in one transaction: a code used before revokes the token it
   * made (RFC 6749 §4.1.2) and answers `reused`; an expired one `expired`; `check` (client,
   * redirect URI, verifier, resource) may refuse with its own error; then the code is spent and
   * the token stored.
   */
  redeem<E>(codeHash: Uint8Array, now: number, check: (r: AuthorizationRecord) => E | undefined, token: AppTokenInput): Promise<RedeemResult<E>>;
}

interface ClientRow {
  client_id: string;
  kind: 'registered' | 'document';
  secret_hash: Uint8Array | null;
  auth_method: ClientRecord['authMethod'];
  client_name: string | null;
  metadata: string;
  issued_at: number;
  fresh_until: number | null;
}

interface RequestRow {
  id: string;
  client_id: string;
  redirect_uri: string;
  scope: 'read' | 'write';
  state: string | null;
  code_challenge: string;
  resource: string | null;
  created_at: number;
  expires_at: number;
  decision: 'approved' | 'declined' | null;
  decided_at: number | null;
  peer_id: string | null;
  code_expires_at: number | null;
  code_used_at: number | null;
  token_id: string | null;
}

const toClient = (r: ClientRow): ClientRecord => ({
  clientId: r.client_id,
  kind: r.kind,
  secretHash: r.secret_hash,
  authMethod: r.auth_method,
  clientName: r.client_name,
  metadata: r.metadata,
  issuedAt: r.issued_at,
  freshUntil: r.fresh_until,
});

const toRequest = (r: RequestRow): AuthorizationRecord => ({
  id: r.id,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  scope: r.scope,
  state: r.state,
  codeChallenge: r.code_challenge,
  resource: r.resource,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  decision: r.decision,
  decidedAt: r.decided_at,
  peerId: r.peer_id,
  codeExpiresAt: r.code_expires_at,
  codeUsedAt: r.code_used_at,
  tokenId: r.token_id,
});

const REQUEST_COLUMNS = `id, client_id, redirect_uri, scope, state, code_challenge, resource, created_at, expires_at,
  decision, decided_at, peer_id, code_expires_at, code_used_at, token_id`;

/** `forgetTokens`: the token store's `forget`, called before a reused code revokes its token. */
export function createOAuthStore(db: Db, forgetTokens: () => void = () => {}): OAuthStore {
  const selectClient = db.prepare<[string], ClientRow>('SELECT * FROM oauth_clients WHERE client_id = ?');
  const insertClient = db.prepare(
    `INSERT INTO oauth_clients (client_id, kind, secret_hash, auth_method, client_name, metadata, issued_at, fresh_until)
     VALUES (@clientId, @kind, @secretHash, @authMethod, @clientName, @metadata, @issuedAt, @freshUntil)`,
  );
  const upsertDocument = db.prepare(
    `INSERT INTO oauth_clients (client_id, kind, secret_hash, auth_method, client_name, metadata, issued_at, fresh_until)
     VALUES (@clientId, 'document', NULL, 'none', @clientName, @metadata, @issuedAt, @freshUntil)
     ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, metadata = excluded.metadata,
       fresh_until = excluded.fresh_until WHERE oauth_clients.kind = 'document'`,
  );
  const insertRequest = db.prepare(
    `INSERT INTO oauth_requests (id, client_id, redirect_uri, scope, state, code_challenge, resource, created_at, expires_at)
     VALUES (@id, @clientId, @redirectUri, @scope, @state, @codeChallenge, @resource, @createdAt, @expiresAt)`,
  );
  const deleteOld = db.prepare('DELETE FROM oauth_requests WHERE created_at < ?');
  const selectRequest = db.prepare<[string], RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM oauth_requests WHERE id = ?`);
  const selectByCode = db.prepare<[Uint8Array], RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM oauth_requests WHERE code_hash = ?`);
  const setDecision = db.prepare(
    'UPDATE oauth_requests SET decision = ?, decided_at = ?, peer_id = ?, code_hash = ?, code_expires_at = ? WHERE id = ? AND decision IS NULL',
  );
  const spendCode = db.prepare('UPDATE oauth_requests SET code_used_at = ?, token_id = ? WHERE id = ? AND code_used_at IS NULL');
  const keyBlocked = db.prepare<[string], { blocked_at: number | null }>('SELECT blocked_at FROM keys WHERE peer_id = ?');
  const insertToken = db.prepare(
    `INSERT INTO tokens (id, token_hash, peer_id, label, created_at, expires_at, client_id, scope)
     VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`,
  );
  const revokeToken = db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');

  const decideTx = db.transaction(async (id: string, peerId: string, now: number, code?: { hash: Uint8Array; expiresAt: number }): Promise<DecideResult> => {
    const row = await selectRequest.get(id);
    if (!row) return { ok: false, reason: 'not_found' };
    if (row.decision !== null) return { ok: false, reason: 'decided' };
    if (row.expires_at <= now) return { ok: false, reason: 'expired' };
    await setDecision.run(code ? 'approved' : 'declined', now, peerId, code?.hash ?? null, code?.expiresAt ?? null, id);
    return { ok: true, request: toRequest((await selectRequest.get(id))!) };
  });

  const redeemTx = db.transaction(async <E>(codeHash: Uint8Array, now: number, check: (r: AuthorizationRecord) => E | undefined, token: AppTokenInput): Promise<RedeemResult<E>> => {
    const row = await selectByCode.get(codeHash);
    if (!row || row.decision !== 'approved' || row.peer_id === null) return { ok: false, reason: 'unknown' };
    if (row.code_used_at !== null) {
      const revoked = row.token_id !== null && (await revokeToken.run(now, row.token_id)).changes > 0;
      return { ok: false, reason: 'reused', revoked: revoked ? { peerId: row.peer_id, tokenId: row.token_id! } : null };
    }
    if (row.code_expires_at === null || row.code_expires_at <= now) return { ok: false, reason: 'expired' };
    const request = toRequest(row);
    const error = check(request);
    if (error !== undefined) return { ok: false, reason: 'refused', error };
    if ((await keyBlocked.get(row.peer_id))?.blocked_at != null) return { ok: false, reason: 'blocked' };
    await spendCode.run(now, token.tokenId, row.id);
    await insertToken.run(token.tokenId, token.tokenHash, row.peer_id, now, token.expiresAt, row.client_id, row.scope);
    return { ok: true, request: { ...request, codeUsedAt: now, tokenId: token.tokenId } };
  });

  return {
    client: async (clientId) => {
      const r = await selectClient.get(clientId);
      return r ? toClient(r) : undefined;
    },
    insertClient: async (c) => void (await insertClient.run(c)),
    keepDocument: async (c) => void (await upsertDocument.run(c)),
    insertRequest: async (r, deleteBefore) =>
      await db
        .transaction(async () => {
          await deleteOld.run(deleteBefore);
          await insertRequest.run(r);
        })
        .immediate(),
    request: async (id) => {
      const r = await selectRequest.get(id);
      return r ? toRequest(r) : undefined;
    },
    decide: async (id, peerId, now, code) => await decideTx.immediate(id, peerId, now, code),
    redeem: async (codeHash, now, check, token) => {
      // A reused code may revoke a token: remembered lookups go first, as every revocation does.
      forgetTokens();
      return await redeemTx.immediate(codeHash, now, check, token) as RedeemResult<never>;
    },
  };
}
