/**
 * The key directory (DESIGN.md "Keys"; keys.example/README.md):
 *
 *   $SVC_HOME (default ~/.svc)          0700
 *     keys/<name>.pem                   0600  Ed25519 private key, PKCS#8 PEM (RFC 8410)
 *     keys/<name>.keychain              0600  marker of a KEY whose seed is in the OS keychain
 *     tokens/<name>@<relay host>.json   0600  current token of one KEY at one relay, replaced whole
 *     cache/<name>.sqlite                     local cache of one KEY (bridge/cache/cache-file.ts)
 *     cache/compile/                          the one-file bridge's compiled code (bridge/code-cache.ts)
 *
 * A KEY file is made ONCE: written to a temporary file, then link(2)ed to its name, which fails
 * when the name exists. Two bridges starting at once therefore make exactly one KEY and both
 * read it. Callers get a `Signer` (shared/identity.ts); the seed never leaves this module.
 * Besides the signer, a KEY gives narrow derived functions: `privateSalt` (below) and its
 * sealed-SPACE material, `sealedKeys` (the encryption key pair of protocol/sealed.md §2 and a
 * local box for secrets at rest), which bridge/sealed/encryption.ts wraps so tools never see key bytes.
 */
import { createHmac, createPrivateKey, createSecretKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromBase64url, fromHex, isHex, toHex } from '../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed, type Signer } from '../../shared/identity.js';
import { deriveEncryptionKey } from '../../shared/sealed/encryption-key.js';
import type { X25519KeyPair } from '../../shared/sealed/hpke.js';
import { BridgeError } from '../../tools/errors.js';
import { checkPrivateFile, createOnce, privateDirectory } from './files.js';
import type { SeedVault } from './keychain.js';
import { aeadBox, type LocalBox } from './local-box.js';
import { searchKeysOf, type SearchKeys } from './search-keys.js';

/** A KEY name: a file-name-safe word (no dot, slash or `@`, which the token file name uses). */
export const KEY_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The KEY made when the directory holds none and SVC_KEY names none. */
export const DEFAULT_KEY_NAME = 'default';

export interface KeyDirectory {
  readonly home: string;
  readonly keysDir: string;
  readonly tokensDir: string;
  readonly cacheDir: string;
}

export interface KeyInfo {
  readonly name: string;
  /** 64 lowercase hex. */
  readonly peerId: string;
  /** Raw Ed25519 public key, 64 lowercase hex. */
  readonly publicKey: string;
  readonly storage: 'file' | 'keychain';
}

/**
 * The salt of a signed post's private part (protocol/objects.md §3: the writer's choice; the
 * reference bridge makes it deterministic so a retried post has the same bytes):
 *
 *   salt = HMAC-SHA256(KEY seed, "svc bridge private salt\n" + space_id + "\n" + idempotency_key)
 *
 * Same SPACE and idempotency key, same salt, so a retry sends the same object and the relay
 * answers the first post (a replay), and nobody without the seed can guess the salt. The
 * string is bridge-local: no relay recomputes it.
 */
export type PrivateSalt = (spaceId: string, idempotencyKey: string) => Uint8Array;

/**
 * Sealed-SPACE material of a KEY, made from its seed with the rest of what the KEY gives (the
 * seed itself is then zeroed):
 *
 * - `encryptionKey()`: the KEY's X25519 encryption key pair, protocol/sealed.md §2
 *   (shared/sealed/encryption-key.ts `deriveEncryptionKey`: HKDF of the seed and the peer id,
 *   then RFC 9180 DeriveKeyPair). Only bridge/sealed/encryption.ts calls it.
 * - `box`: AES-256-GCM for generation secrets kept in the local cache (bridge/sealed/sealed-cache.ts),
 *   under key = HMAC-SHA256(seed, "svc bridge sealed cache key"), a fresh 12-byte random nonce
 *   per value, the caller's associated data binding where the value belongs. Bridge-local: no
 *   relay ever sees it. A cache file copied off the machine without the KEY opens nothing.
 */
export interface SealedKeyMaterial {
  encryptionKey(): X25519KeyPair;
  readonly box: LocalBox;
  /** The keys of the local search index of sealed SPACES (bridge/keys/search-keys.ts). */
  readonly search: SearchKeys;
}

export interface LoadedKey extends KeyInfo {
  readonly signer: Signer;
  readonly privateSalt: PrivateSalt;
  readonly sealedKeys: SealedKeyMaterial;
}

/** The salt function of one seed; the seed is held in a KeyObject, like the signer's. */
function privateSaltOf(seed: Uint8Array): PrivateSalt {
  const key: KeyObject = createSecretKey(Buffer.from(seed));
  return (spaceId, idempotencyKey) =>
    new Uint8Array(createHmac('sha256', key).update(`svc bridge private salt\n${spaceId}\n${idempotencyKey}`, 'utf8').digest());
}

function localBoxOf(seed: Uint8Array): LocalBox {
  return aeadBox(createSecretKey(createHmac('sha256', Buffer.from(seed)).update('svc bridge sealed cache key', 'utf8').digest()));
}

/**
 * The sealed-SPACE material of one seed, derived when first used: a start that meets no sealed
 * SPACE derives none of it (an X25519 pair and two HKDF key sets, a millisecond of every
 * start). Until then the seed is held in a KeyObject, as the signer's and the private salt's
 * are; the copy taken out to derive is zeroed at once.
 */
function sealedKeysOf(seed: Uint8Array, peerId: string): SealedKeyMaterial {
  const held: KeyObject = createSecretKey(Buffer.from(seed));
  let derived: { pair: X25519KeyPair; box: LocalBox; search: SearchKeys } | undefined;
  const keys = () => {
    if (derived === undefined) {
      const s = new Uint8Array(held.export());
      try {
        derived = { pair: deriveEncryptionKey(s, peerId), box: localBoxOf(s), search: searchKeysOf(s) };
      } finally {
        s.fill(0);
      }
    }
    return derived;
  };
  return Object.freeze({
    encryptionKey: () => {
      const { pair } = keys();
      return { privateKey: new Uint8Array(pair.privateKey), publicKey: new Uint8Array(pair.publicKey) };
    },
    get box() {
      return keys().box;
    },
    get search() {
      return keys().search;
    },
  });
}

export { envSetting, keyHome } from './home.js';

/** Open (and make, mode 0700) the key directory and its sub-directories. */
export function openKeyDirectory(home: string): KeyDirectory {
  const dir: KeyDirectory = {
    home,
    keysDir: join(home, 'keys'),
    tokensDir: join(home, 'tokens'),
    cacheDir: join(home, 'cache'),
  };
  privateDirectory(dir.home);
  privateDirectory(dir.keysDir);
  privateDirectory(dir.tokensDir);
  privateDirectory(dir.cacheDir);
  return dir;
}

export function checkKeyName(name: string, what = 'KEY name'): string {
  if (!KEY_NAME_RE.test(name)) {
    throw new BridgeError(
      'CONFIG',
      `${what} ${JSON.stringify(name)} is not usable`,
      'Use 1 to 64 letters, digits, "-" or "_", starting with a letter or digit.',
    );
  }
  return name;
}

function pemPath(dir: KeyDirectory, name: string): string {
  return join(dir.keysDir, `${name}.pem`);
}

function markerPath(dir: KeyDirectory, name: string): string {
  return join(dir.keysDir, `${name}.keychain`);
}

function keyFileError(path: string, problem: string, cause?: unknown): BridgeError {
  return new BridgeError(
    'KEY_FILE',
    `${path}: ${problem}`,
    'Restore the file from a backup, or make a new KEY with `svc-bridge keys new <name>` (a new KEY is a new identity).',
    undefined,
    { cause },
  );
}

/** The 32-byte seed inside an Ed25519 PKCS#8 PEM (RFC 8410 §7), read by OpenSSL. */
function seedFromPem(path: string, pem: string): Uint8Array {
  let key;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (e) {
    throw keyFileError(path, 'not a PKCS#8 PEM private key', e);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw keyFileError(path, `holds a ${key.asymmetricKeyType} key, not Ed25519`);
  const jwk = key.export({ format: 'jwk' });
  const seed = fromBase64url(jwk.d, 'd');
  if (seed.length !== 32) throw keyFileError(path, 'the Ed25519 seed is not 32 bytes');
  return seed;
}

/**
 * The DER of an Ed25519 private key in the form RFC 8410 §7 gives, the form `createKey` writes
 * (and OpenSSL's): OneAsymmetricKey version 0, the algorithm 1.3.101.112, the seed as an OCTET
 * STRING inside the privateKey OCTET STRING, no attributes. 48 bytes, these 16 then the seed.
 */
const PLAIN_ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const PLAIN_PEM_RE = /^-----BEGIN PRIVATE KEY-----\r?\n([A-Za-z0-9+/]{64}\r?\n)*[A-Za-z0-9+/]{1,64}={0,2}\r?\n-----END PRIVATE KEY-----\r?\n?$/;

/**
 * The seed of a PEM in exactly that form, read without node:crypto; undefined for any other
 * text, which `seedFromPem` reads (or refuses) as before. Every 32 bytes are an Ed25519 seed, so
 * a key file read this way can fail no later check: what is derived from it (the public key,
 * the peer id, the salts) is derived when first used (`deferredInfo`), and a start that answers
 * its client's opening requests before any tool needs the KEY loads no crypto module for them.
 */
function plainSeed(pem: string): Uint8Array | undefined {
  if (!PLAIN_PEM_RE.test(pem)) return undefined;
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  try {
    if (der.length !== PLAIN_ED25519_PKCS8.length + 32 || !der.subarray(0, PLAIN_ED25519_PKCS8.length).equals(PLAIN_ED25519_PKCS8)) return undefined;
    return new Uint8Array(der.subarray(PLAIN_ED25519_PKCS8.length));
  } finally {
    der.fill(0);
  }
}

function info(name: string, seed: Uint8Array, storage: KeyInfo['storage']): LoadedKey {
  const signer = signerFromSeed(seed);
  const peerId = peerIdHexOf(signer.publicKey);
  return Object.freeze({
    name,
    peerId,
    publicKey: toHex(signer.publicKey),
    storage,
    signer,
    privateSalt: privateSaltOf(seed),
    sealedKeys: sealedKeysOf(seed, peerId),
  });
}

/**
 * A KEY whose public half and derived functions are made from `seed` when any of them is first
 * read, as `info` makes them; the seed is kept (this closure's copy, zeroed then) until that
 * moment, which for a bridge serving MCP is its first tool call or background duty.
 */
function deferredInfo(name: string, seed: Uint8Array, storage: KeyInfo['storage']): LoadedKey {
  let made: LoadedKey | undefined;
  const key = () => {
    if (made === undefined) {
      made = info(name, seed, storage);
      seed.fill(0);
    }
    return made;
  };
  return Object.freeze({
    name,
    storage,
    get peerId() {
      return key().peerId;
    },
    get publicKey() {
      return key().publicKey;
    },
    get signer() {
      return key().signer;
    },
    get privateSalt() {
      return key().privateSalt;
    },
    get sealedKeys() {
      return key().sealedKeys;
    },
  });
}

interface KeychainMarker {
  public_key: string;
  account: string;
  note: string;
}

function readMarker(path: string): KeychainMarker {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw keyFileError(path, 'not a readable keychain marker', e);
  }
  const m = value as Partial<KeychainMarker> | null;
  if (!m || !isHex(m.public_key, 32) || typeof m.account !== 'string') throw keyFileError(path, 'not a keychain marker');
  return m as KeychainMarker;
}

function loadFromVault(path: string, name: string, vault: SeedVault | undefined): LoadedKey {
  const marker = readMarker(path);
  if (vault === undefined) {
    throw new BridgeError(
      'KEYCHAIN',
      `KEY "${name}" keeps its seed in the OS keychain, which is not open`,
      'Set SVC_KEYCHAIN=1 and install @napi-rs/keyring, or choose another KEY with SVC_KEY.',
    );
  }
  const secret = vault.get(marker.account);
  if (secret === undefined || !isHex(secret, 32)) {
    throw new BridgeError('KEYCHAIN', `the OS keychain holds no seed for KEY "${name}"`, 'Restore the keychain entry, or make a new KEY.');
  }
  const seed = fromHex(secret, 32, 'seed');
  const loaded = info(name, seed, 'keychain');
  seed.fill(0);
  if (loaded.publicKey !== marker.public_key) {
    throw new BridgeError('KEYCHAIN', `the keychain seed of KEY "${name}" does not match its marker`, 'Restore the keychain entry.');
  }
  return loaded;
}

/** Load one KEY by name; KEY_NOT_FOUND when the directory holds no such KEY. */
export function loadKey(dir: KeyDirectory, name: string, vault?: SeedVault): LoadedKey {
  checkKeyName(name);
  const pem = pemPath(dir, name);
  if (existsSync(pem)) {
    checkPrivateFile(pem);
    const text = readFileSync(pem, 'utf8');
    const plain = plainSeed(text);
    if (plain !== undefined) return deferredInfo(name, plain, 'file');
    const seed = seedFromPem(pem, text);
    const loaded = info(name, seed, 'file');
    seed.fill(0);
    return loaded;
  }
  const marker = markerPath(dir, name);
  if (existsSync(marker)) return loadFromVault(marker, name, vault);
  throw new BridgeError(
    'KEY_NOT_FOUND',
    `the key directory ${dir.home} holds no KEY named "${name}"`,
    `Make it with \`svc-bridge keys new ${name}\`, or set SVC_KEY to one of \`svc-bridge keys\`.`,
  );
}

/** Names of the KEYS in the directory, sorted. */
export function keyNames(dir: KeyDirectory): string[] {
  const names = new Set<string>();
  for (const file of readdirSync(dir.keysDir)) {
    const m = /^(.+)\.(pem|keychain)$/.exec(file);
    if (m && KEY_NAME_RE.test(m[1]!)) names.add(m[1]!);
  }
  return [...names].sort();
}

/** Every KEY with its peer id (public halves only; a keychain KEY is read from its marker). */
export function listKeys(dir: KeyDirectory): KeyInfo[] {
  return keyNames(dir).map((name) => {
    const pem = pemPath(dir, name);
    if (existsSync(pem)) {
      const { name: n, peerId, publicKey, storage } = loadKey(dir, name);
      return { name: n, peerId, publicKey, storage };
    }
    const marker = readMarker(markerPath(dir, name));
    const publicKey = fromHex(marker.public_key, 32, 'public_key');
    return { name, peerId: peerIdHexOf(publicKey), publicKey: marker.public_key, storage: 'keychain' as const };
  });
}

export interface CreatedKey {
  readonly key: LoadedKey;
  /** False when the name was already taken (by a racing bridge too): `key` is the one there. */
  readonly created: boolean;
}

/**
 * Make KEY `name` unless it exists, atomically. With a vault the seed goes to the keychain
 * first, under an account naming its public key, and the marker file is then linked into
 * place; the loser of a race removes its own keychain entry and reads the winner's.
 */
export function createKey(dir: KeyDirectory, name: string, opts: { vault?: SeedVault } = {}): CreatedKey {
  checkKeyName(name);
  const vault = opts.vault;
  if (vault === undefined) {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    if (existsSync(markerPath(dir, name))) return { key: loadKey(dir, name), created: false };
    const created = createOnce(pemPath(dir, name), pem);
    return { key: loadKey(dir, name), created };
  }
  if (existsSync(pemPath(dir, name))) return { key: loadKey(dir, name, vault), created: false };
  const seed = new Uint8Array(randomBytes(32));
  const signer = signerFromSeed(seed);
  const publicKey = toHex(signer.publicKey);
  const account = `${name}:${publicKey}`;
  vault.set(account, toHex(seed));
  seed.fill(0);
  const marker: KeychainMarker = {
    public_key: publicKey,
    account,
    note: `The seed of this KEY is in the OS keychain (${vault.name}), service "svc", account "${account}".`,
  };
  const created = createOnce(markerPath(dir, name), `${JSON.stringify(marker, null, 2)}\n`);
  if (!created) vault.remove(account);
  return { key: loadKey(dir, name, vault), created };
}

/**
 * The KEY this bridge acts as:
 * - `wanted` (SVC_KEY) given: that KEY; when the directory holds no KEY at all it is made.
 * - none given: the only KEY; `default` among several; none yet: `default` is made.
 * Several KEYS, none called `default`, and no SVC_KEY: KEY_AMBIGUOUS.
 */
export function chooseKey(dir: KeyDirectory, wanted: string | undefined, vault?: SeedVault): LoadedKey {
  const names = keyNames(dir);
  const opts = vault === undefined ? {} : { vault };
  if (wanted !== undefined && wanted !== '') {
    checkKeyName(wanted, 'SVC_KEY');
    if (names.includes(wanted)) return loadKey(dir, wanted, vault);
    if (names.length === 0) return createKey(dir, wanted, opts).key;
    return loadKey(dir, wanted, vault); // KEY_NOT_FOUND naming the fix
  }
  if (names.length === 0) return createKey(dir, DEFAULT_KEY_NAME, opts).key;
  if (names.length === 1) return loadKey(dir, names[0]!, vault);
  if (names.includes(DEFAULT_KEY_NAME)) return loadKey(dir, DEFAULT_KEY_NAME, vault);
  throw new BridgeError(
    'KEY_AMBIGUOUS',
    `the key directory ${dir.home} holds several KEYS (${names.join(', ')}) and SVC_KEY names none`,
    'Set SVC_KEY to the name of the KEY this bridge should use.',
  );
}
