/**
 * me.encryption_key (spec/2-endpoints.md; spec/1-concepts.md "Encryption key";
 * protocol/sealed.md §2): `PUT /v1/me/encryption-key` publishes the KEY's encryption key once,
 * for life.
 *
 * Body `{"statement": b64u, "alg", "signature", …}` and nothing else (attacker-controlled).
 * Checks, in order (shared/sealed/encryption-key.ts): the statement is canonical with exactly
 * `kem`, `peer_id`, `public_key`, `v`; it names the caller; the caller's key hashes to its peer
 * id; the signature over L("encryption-key") || statement verifies — each failure
 * ENCRYPTION_KEY_INVALID naming the check (a passkey's assertion over H(L("encryption-key") ||
 * statement), checked as at sign-in; PASSKEYS_UNAVAILABLE when passkeys are off; a counter that
 * does not advance is ENCRYPTION_KEY_INVALID too, and stores nothing). Then: a different key already published by this KEY is
 * ENCRYPTION_KEY_EXISTS; the same key published by another KEY is ENCRYPTION_KEY_TAKEN. The same
 * statement sent again answers the key with `changed: false`.
 *
 * The published key is served exactly as signed (`statement` and `signature`), in `GET /v1/me`
 * and `GET /v1/peers/{peer}`, so every member checks it against the KEY it names itself.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { JsonObject } from '../../shared/canonical.js';
import { fromBase64url, fromHex, toBase64url } from '../../shared/encoding.js';
import { SvcError, type ErrorCode } from '../../shared/errors.js';
import { counterOf } from '../../shared/passkey.js';
import { readEncryptionKeyPut, verifyEncryptionKeyStatement } from '../../shared/sealed/encryption-key.js';
import type { SignatureEnvelope, SignerKey } from '../../shared/sealed/envelope.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { isoTime } from '../http/schemas.js';
import type { EncryptionKeyRow } from '../store/encryption-keys.js';
import type { KeyRecord } from '../store/keys.js';

/** `encryption_key` as served: `null | {public_key, fingerprint, statement, signature}` (sealed.md §2). */
export function encryptionKeyView(row: EncryptionKeyRow | undefined): JsonObject | null {
  if (row === undefined) return null;
  return {
    public_key: row.publicKey,
    fingerprint: row.fingerprint,
    statement: toBase64url(row.statement),
    signature: { ...row.envelope },
  };
}

/** A KEY as sealed answers show it: `{peer_id, public_key, key_type, encryption_key}`. */
export async function keyView(ctx: RelayContext, peer: string): Promise<JsonObject> {
  const key = await ctx.store.keys.get(peer);
  return {
    peer_id: peer,
    public_key: key?.publicKey ?? null,
    key_type: key?.keyType ?? null,
    encryption_key: encryptionKeyView(await ctx.store.encryptionKeys.get(peer)),
  };
}

/**
 * What a KEY's peer id is a hash of, for checking its signatures (envelope.ts `SignerKey`); a
 * passkey KEY with the relay's passkey policy (null when turned off) and its credential id.
 */
export async function signerKeyOf(ctx: RelayContext, key: KeyRecord): Promise<SignerKey> {
  if (key.keyType === 'ed25519') return { peerId: key.peerId, keyType: 'ed25519', publicKey: fromHex(key.publicKey, 32, 'public_key') };
  return {
    peerId: key.peerId,
    keyType: 'passkey',
    spki: fromHex(key.publicKey, undefined, 'public_key'),
    passkeys: ctx.passkeyPolicy(),
    credentialId: (await ctx.store.keys.passkeyOf(key.peerId))?.credentialId,
  };
}

/**
 * Store what `signer` signed with `envelope` by running `write` (one transaction); when the
 * envelope is a passkey's and `counts(result)` (something new was accepted), its signature
 * counter must advance, else `code` and nothing is stored (api-notes §3).
 */
export async function withSignatureCounter<T>(
  ctx: RelayContext,
  signer: KeyRecord,
  envelope: SignatureEnvelope,
  code: ErrorCode,
  write: () => Promise<T>,
  counts: (result: T) => boolean,
): Promise<T> {
  if (envelope.alg !== 'webauthn') return await write();
  const counter = counterOf(fromBase64url(envelope.authenticator_data, 'authenticator_data'));
  const r = await ctx.store.keys.withPasskeyCounter(signer.peerId, counter, write, counts);
  if (!r.ok) throw new SvcError(code, 'authenticator_data: the signature counter did not increase');
  return r.value;
}

export const encryptionKeyRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.put(
    '/v1/me/encryption-key',
    {
      config: {
        auth: 'req',
        limit: 'write',
        operation: 'me.encryption_key',
        describe: "Publish the KEY's encryption key once, for life: the signed statement naming it.",
      },
    },
    async (req) => {
      const me = identityOf(req);
      const key = await ctx.store.keys.get(me.peerId);
      if (!key) throw new SvcError('TOKEN_INVALID', 'the token names no registered KEY');
      const { statement, envelope } = readEncryptionKeyPut(req.body);
      const checked = verifyEncryptionKeyStatement(statement, envelope, await signerKeyOf(ctx, key));
      const publish = async () =>
        await ctx.store.encryptionKeys.publish({
          peerId: me.peerId,
          publicKey: checked.statement.public_key,
          fingerprint: checked.fingerprint,
          statement: checked.bytes,
          envelope: checked.envelope,
          now: ctx.clock(),
        });
      // The same statement sent again changes nothing and needs no newer counter.
      const r = await withSignatureCounter(ctx, key, envelope, 'ENCRYPTION_KEY_INVALID', publish, (p) => p.changed);
      return {
        peer_id: me.peerId,
        encryption_key: encryptionKeyView(r.key),
        published_at: isoTime(r.key.publishedAt),
        changed: r.changed,
      };
    },
  );
};
