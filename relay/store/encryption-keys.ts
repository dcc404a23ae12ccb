/**
 * Encryption keys (migration 006; spec/1-concepts.md "Encryption key"; protocol/sealed.md §2):
 * one per KEY for life, each public key held by one KEY only.
 *
 * The store keeps what the KEY published, exactly: the statement bytes and the signature
 * envelope, so every member can check the statement against the KEY it names. Checking the
 * statement is the caller's (shared/sealed/encryption-key.ts `verifyEncryptionKeyStatement`),
 * done before `publish` and outside the write lock.
 */
import { SvcError } from '../../shared/errors.js';
import type { SignatureEnvelope } from '../../shared/sealed/envelope.js';
import { plainBytes, type Db } from './database.js';

export interface EncryptionKeyRow {
  peerId: string;
  /** 64 lowercase hex (X25519). */
  publicKey: string;
  /** 32 lowercase hex. */
  fingerprint: string;
  statement: Uint8Array;
  envelope: SignatureEnvelope;
  publishedAt: number;
}

export interface PublishInput {
  peerId: string;
  publicKey: string;
  fingerprint: string;
  statement: Uint8Array;
  envelope: SignatureEnvelope;
  now: number;
}

export interface EncryptionKeyStore {
  get(peerId: string): Promise<EncryptionKeyRow | undefined>;
  /**
   * Publish a checked statement. The same statement again changes nothing (`changed` false);
   * a different key for this KEY is ENCRYPTION_KEY_EXISTS; this key held by another KEY is
   * ENCRYPTION_KEY_TAKEN.
   */
  publish(input: PublishInput): Promise<{ key: EncryptionKeyRow; changed: boolean }>;
}

interface Row {
  peer_id: string;
  public_key: string;
  fingerprint: string;
  statement: Uint8Array;
  envelope_json: string;
  published_at: number;
}

function toRow(r: Row): EncryptionKeyRow {
  return {
    peerId: r.peer_id,
    publicKey: r.public_key,
    fingerprint: r.fingerprint,
    statement: plainBytes(r.statement),
    envelope: JSON.parse(r.envelope_json) as SignatureEnvelope,
    publishedAt: r.published_at,
  };
}

export function createEncryptionKeyStore(db: Db): EncryptionKeyStore {
  const selectByPeer = db.prepare<[string], Row>('SELECT * FROM encryption_keys WHERE peer_id = ?');
  const selectByKey = db.prepare<[string], Row>('SELECT * FROM encryption_keys WHERE public_key = ?');
  const insert = db.prepare(
    `INSERT INTO encryption_keys (peer_id, public_key, fingerprint, statement, envelope_json, published_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );

  const publishTx = db.transaction(async (i: PublishInput) => {
    const mine = await selectByPeer.get(i.peerId);
    if (mine) {
      if (mine.public_key !== i.publicKey) {
        throw new SvcError('ENCRYPTION_KEY_EXISTS', `this KEY published ${mine.fingerprint} at ${new Date(mine.published_at).toISOString()}`);
      }
      return { key: toRow(mine), changed: false };
    }
    const theirs = await selectByKey.get(i.publicKey);
    if (theirs) throw new SvcError('ENCRYPTION_KEY_TAKEN', 'statement.public_key: another KEY published this encryption key');
    await insert.run(i.peerId, i.publicKey, i.fingerprint, i.statement, JSON.stringify(i.envelope), i.now);
    return { key: toRow((await selectByPeer.get(i.peerId))!), changed: true };
  });

  return {
    async get(peerId) {
      const r = await selectByPeer.get(peerId);
      return r ? toRow(r) : undefined;
    },
    publish: async (i) => await publishTx.under({ keys: [i.peerId] }, i),
  };
}
