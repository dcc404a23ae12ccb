/**
 * Token files: `tokens/<key>@<relay host>.json` (mode 0600), one per KEY and relay, holding
 * the current token. Several bridges of one KEY share the file, so it is always replaced whole
 * (temporary file, then rename) and never written in place; a reader sees one complete token.
 *
 * The host part is the relay URL's host with the port (when it is not the scheme's default),
 * `:` written as `_` so the name is portable: `default@127.0.0.1_8787.json`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BridgeError } from '../../tools/errors.js';
import { checkPrivateFile, replaceWhole } from './files.js';
import { checkKeyName, type KeyDirectory } from './keys.js';

export const TOKEN_RE = /^svc_[0-9a-f]{64}$/;

export interface StoredToken {
  readonly token: string;
  /** Expiry as the relay stated it (Unix ms). */
  readonly expiresAt: number;
  /** The relay's origin, e.g. `http://127.0.0.1:8787`. */
  readonly relay: string;
  readonly peerId: string;
  /** When this bridge received it (local Unix ms). */
  readonly mintedAt: number;
}

export function tokenFileName(keyName: string, api: URL): string {
  checkKeyName(keyName);
  return `${keyName}@${api.host.toLowerCase().replace(/:/g, '_')}.json`;
}

export function tokenFilePath(dir: KeyDirectory, keyName: string, api: URL): string {
  return join(dir.tokensDir, tokenFileName(keyName, api));
}

/**
 * The stored token of `keyName` at `api`, or undefined when there is none or the file does not
 * hold a token of this KEY for this relay (a damaged file is ignored: a fresh token replaces it).
 */
export function readTokenFile(dir: KeyDirectory, keyName: string, api: URL, peerId: string): StoredToken | undefined {
  const path = tokenFilePath(dir, keyName, api);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new BridgeError('KEY_FILE', `cannot read ${path}: ${(e as Error).message}`, 'Check the permissions of the key directory.');
  }
  checkPrivateFile(path);
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const { token, expires_at, relay, peer_id, minted_at } = value;
  if (typeof token !== 'string' || !TOKEN_RE.test(token)) return undefined;
  if (typeof expires_at !== 'string' || !Number.isFinite(Date.parse(expires_at))) return undefined;
  if (relay !== api.origin || peer_id !== peerId) return undefined;
  return {
    token,
    expiresAt: Date.parse(expires_at),
    relay,
    peerId,
    mintedAt: typeof minted_at === 'string' && Number.isFinite(Date.parse(minted_at)) ? Date.parse(minted_at) : 0,
  };
}

/** Replace the token file of `keyName` at `record.relay` whole. */
export function writeTokenFile(dir: KeyDirectory, keyName: string, api: URL, record: StoredToken): void {
  const body = {
    token: record.token,
    expires_at: new Date(record.expiresAt).toISOString(),
    relay: record.relay,
    peer_id: record.peerId,
    minted_at: new Date(record.mintedAt).toISOString(),
  };
  const path = tokenFilePath(dir, keyName, api);
  try {
    replaceWhole(path, `${JSON.stringify(body)}\n`);
  } catch (e) {
    throw new BridgeError('KEY_FILE', `cannot write ${path}: ${(e as Error).message}`, 'Check the permissions of the key directory.', undefined, {
      cause: e,
    });
  }
}
