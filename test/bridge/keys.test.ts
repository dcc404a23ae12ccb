/**
 * The bridge's key directory: modes, atomic KEY creation (real concurrent processes), KEY
 * choice, token files replaced whole, the keychain fallback.
 */
import { spawn } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../tools/errors.js';
import { openKeychain, type SeedVault } from '../../bridge/keys/keychain.js';
import { chooseKey, createKey, keyHome, listKeys, loadKey, openKeyDirectory, type KeyDirectory } from '../../bridge/keys/keys.js';
import { readTokenFile, tokenFileName, tokenFilePath, writeTokenFile, type StoredToken } from '../../bridge/keys/token-file.js';
import { fromBase64url, toHex, utf8 } from '../../shared/encoding.js';
import { deriveEncryptionKey } from '../../shared/sealed/encryption-key.js';
import { createSealer } from '../../bridge/sealed/encryption.js';
import { REJECTED_PUBLIC_KEYS, peerIdHexOf, verifyEd25519 } from '../../shared/identity.js';
import { runBridge, tempHome } from '../helpers/bridge.js';
import { REPO_ROOT } from '../helpers/relay.js';

const mode = (path: string) => statSync(path).mode & 0o777;

function freshDir(): KeyDirectory {
  return openKeyDirectory(tempHome());
}

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof BridgeError) return e.code;
    throw e;
  }
  return undefined;
}

describe('key directory', () => {
  it('is made with mode 0700, and so are its keys, tokens and cache folders', () => {
    const dir = freshDir();
    for (const d of [dir.home, dir.keysDir, dir.tokensDir, dir.cacheDir]) expect(mode(d)).toBe(0o700);
  });

  it('tightens an existing key directory that others could enter', () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o755 });
    chmodSync(home, 0o755);
    openKeyDirectory(home);
    expect(mode(home)).toBe(0o700);
  });

  it('defaults to ~/.svc and follows SVC_HOME', () => {
    expect(keyHome({ HOME: '/home/x' } as NodeJS.ProcessEnv)).toMatch(/\.svc$/);
    expect(keyHome({ SVC_HOME: '/tmp/elsewhere' } as NodeJS.ProcessEnv)).toBe('/tmp/elsewhere');
  });
});

describe('KEY files', () => {
  it('a new KEY is an Ed25519 PKCS#8 PEM with mode 0600 whose signer signs for its peer id', () => {
    const dir = freshDir();
    const { key, created } = createKey(dir, 'alice');
    expect(created).toBe(true);
    const path = join(dir.keysDir, 'alice.pem');
    expect(mode(path)).toBe(0o600);
    const pem = readFileSync(path, 'utf8');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
    const message = utf8('hello');
    expect(verifyEd25519(key.signer.publicKey, message, key.signer.sign(message))).toBe(true);
    expect(key.peerId).toBe(peerIdHexOf(key.signer.publicKey));
    expect(loadKey(dir, 'alice').peerId).toBe(key.peerId);
  });

  it('making a KEY under a taken name keeps the first one', () => {
    const dir = freshDir();
    const first = createKey(dir, 'k');
    const second = createKey(dir, 'k');
    expect(second.created).toBe(false);
    expect(second.key.peerId).toBe(first.key.peerId);
    expect(readdirSync(dir.keysDir)).toEqual(['k.pem']);
  });

  it('a KEY file others can read is refused', () => {
    const dir = freshDir();
    createKey(dir, 'loose');
    chmodSync(join(dir.keysDir, 'loose.pem'), 0o644);
    expect(codeOf(() => loadKey(dir, 'loose'))).toBe('KEY_FILE');
  });

  it('a KEY file in the plain RFC 8410 form, read without OpenSSL, is the KEY OpenSSL reads from the same seed in another layout', () => {
    const dir = freshDir();
    const plain = createKey(dir, 'plain').key;
    const pem = readFileSync(join(dir.keysDir, 'plain.pem'), 'utf8');
    // The same DER, its base64 on lines of 16: not the layout read without OpenSSL.
    const body = pem.replace(/-----[A-Z ]+-----|\s/g, '');
    const relaid = `-----BEGIN PRIVATE KEY-----\n${body.match(/.{1,16}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
    expect(createPrivateKey(relaid).export({ format: 'jwk' }).d).toBe(createPrivateKey(pem).export({ format: 'jwk' }).d);
    writeFileSync(join(dir.keysDir, 'relaid.pem'), relaid, { mode: 0o600 });
    const a = loadKey(dir, 'plain');
    const b = loadKey(dir, 'relaid');
    expect([a.peerId, a.publicKey]).toEqual([plain.peerId, plain.publicKey]);
    expect([b.peerId, b.publicKey]).toEqual([plain.peerId, plain.publicKey]);
    const message = utf8('the same KEY');
    expect(toHex(a.signer.sign(message))).toBe(toHex(b.signer.sign(message)));
    expect(toHex(a.privateSalt('space', 'idem'))).toBe(toHex(b.privateSalt('space', 'idem')));
    expect(toHex(a.sealedKeys.encryptionKey().publicKey)).toBe(toHex(b.sealedKeys.encryptionKey().publicKey));
  });

  it('a KEY file with the plain form of another curve (X25519) is refused with KEY_FILE, naming the key type', () => {
    const dir = freshDir();
    const x = generateKeyPairSync('x25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    writeFileSync(join(dir.keysDir, 'x.pem'), x, { mode: 0o600 });
    let thrown: unknown;
    try {
      loadKey(dir, 'x');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(BridgeError);
    expect((thrown as BridgeError).code).toBe('KEY_FILE');
    expect((thrown as BridgeError).message).toContain('holds a x25519 key, not Ed25519');
  });

  it('a KEY file that is not an Ed25519 PEM is refused with KEY_FILE', () => {
    const dir = freshDir();
    writeFileSync(join(dir.keysDir, 'junk.pem'), 'not a key\n', { mode: 0o600 });
    expect(codeOf(() => loadKey(dir, 'junk'))).toBe('KEY_FILE');
  });

  it('names that could escape the directory or clash with token file names are refused', () => {
    const dir = freshDir();
    for (const bad of ['../x', 'a/b', '.hidden', 'a@b', 'a.b', '', 'x'.repeat(65)]) {
      expect(codeOf(() => createKey(dir, bad))).toBe('CONFIG');
    }
  });

  it('the example directory holds the published test KEY, which relays refuse', () => {
    const dir = freshDir();
    const target = join(dir.keysDir, 'default.pem');
    copyFileSync(join(REPO_ROOT, 'keys.example/keys/default.pem'), target);
    chmodSync(target, 0o600);
    const key = loadKey(dir, 'default');
    expect(toHex(key.signer.publicKey)).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    expect(REJECTED_PUBLIC_KEYS.has(key.publicKey)).toBe(true);
  });
});

describe("a KEY's sealed-SPACE material", () => {
  it('is derived from the seed when first used, the same pair, box and search keys however often and however loaded', () => {
    const dir = freshDir();
    const { key } = createKey(dir, 'carol');
    const pem = readFileSync(join(dir.keysDir, 'carol.pem'), 'utf8');
    const seed = fromBase64url(createPrivateKey(pem).export({ format: 'jwk' }).d!, 'd');
    const again = loadKey(dir, 'carol');
    const expected = deriveEncryptionKey(seed, key.peerId);
    for (const m of [key.sealedKeys, again.sealedKeys]) {
      expect(m.encryptionKey()).toEqual({ privateKey: new Uint8Array(expected.privateKey), publicKey: new Uint8Array(expected.publicKey) });
      expect(m.encryptionKey()).toEqual(m.encryptionKey());
      expect(m.box).toBe(m.box);
      expect(m.search).toBe(m.search);
    }
    // The box of one load opens what the other sealed; the search keys agree.
    const sealed = key.sealedKeys.box.seal(utf8('kept at rest'), utf8('aad'));
    expect(again.sealedKeys.box.open(sealed, utf8('aad'))).toEqual(utf8('kept at rest'));
    const sealer = createSealer({ peerId: key.peerId, sealedKeys: again.sealedKeys });
    expect(sealer.publicKey).toEqual(new Uint8Array(expected.publicKey));
    expect(sealer.fingerprint).toBe(sealer.fingerprint);
  });
});

describe('choosing the KEY', () => {
  it('an empty directory gets one KEY named default', () => {
    const dir = freshDir();
    const key = chooseKey(dir, undefined);
    expect(key.name).toBe('default');
    expect(chooseKey(dir, undefined).peerId).toBe(key.peerId);
  });

  it('SVC_KEY picks among several; default is taken when SVC_KEY is unset', () => {
    const dir = freshDir();
    const a = createKey(dir, 'default').key;
    const b = createKey(dir, 'bob').key;
    expect(chooseKey(dir, 'bob').peerId).toBe(b.peerId);
    expect(chooseKey(dir, undefined).peerId).toBe(a.peerId);
  });

  it('several KEYS, none called default, and no SVC_KEY is KEY_AMBIGUOUS', () => {
    const dir = freshDir();
    createKey(dir, 'a');
    createKey(dir, 'b');
    expect(codeOf(() => chooseKey(dir, undefined))).toBe('KEY_AMBIGUOUS');
  });

  it('SVC_KEY naming a missing KEY is made in an empty directory and refused beside other KEYS', () => {
    const empty = freshDir();
    expect(chooseKey(empty, 'work').name).toBe('work');
    expect(codeOf(() => chooseKey(empty, 'typo'))).toBe('KEY_NOT_FOUND');
    expect(listKeys(empty).map((k) => k.name)).toEqual(['work']);
  });
});

describe('atomic creation across processes', () => {
  /** A child that waits for a shared start instant, then chooses (and so makes) the KEY. */
  function racer(script: string, home: string, startAt: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, home, String(startAt)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`racer exited ${code}: ${err}`))));
    });
  }

  it('bridges starting at once on an empty directory make exactly one KEY and all read it', async () => {
    const scriptDir = mkdtempSync(join(tmpdir(), 'svc-racer-'));
    const script = join(scriptDir, 'racer.mts');
    const keysModule = pathToFileURL(join(REPO_ROOT, 'bridge/keys/keys.ts')).href;
    writeFileSync(
      script,
      `import { chooseKey, openKeyDirectory } from ${JSON.stringify(keysModule)};
const [home, at] = process.argv.slice(2);
while (Date.now() < Number(at)) {} // spin to the shared instant
const key = chooseKey(openKeyDirectory(home), undefined);
process.stdout.write(key.peerId);
`,
    );
    for (let round = 0; round < 3; round++) {
      const home = tempHome();
      const startAt = Date.now() + 2500;
      const ids = await Promise.all([0, 1, 2, 3].map(() => racer(script, home, startAt)));
      expect(new Set(ids).size).toBe(1);
      expect(ids[0]).toMatch(/^[0-9a-f]{64}$/);
      // One KEY file and no temporary leftovers.
      expect(readdirSync(join(home, 'keys'))).toEqual(['default.pem']);
    }
  }, 60_000);

  it('two `svc-bridge id` processes on one new directory print the same peer id', async () => {
    const home = tempHome();
    const [a, b] = await Promise.all([runBridge(['id'], { home }), runBridge(['id'], { home })]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(readdirSync(join(home, 'keys'))).toEqual(['default.pem']);
  }, 60_000);
});

describe('token files', () => {
  const api = new URL('http://127.0.0.1:8787');
  const record = (token: string, peerId: string): StoredToken => ({
    token,
    expiresAt: Date.parse('2030-01-01T00:00:00.000Z'),
    relay: api.origin,
    peerId,
    mintedAt: Date.parse('2029-10-03T00:00:00.000Z'),
  });

  it('are named per KEY and relay host, port included', () => {
    expect(tokenFileName('default', api)).toBe('default@127.0.0.1_8787.json');
    expect(tokenFileName('w', new URL('https://relay.example'))).toBe('w@relay.example.json');
  });

  it('are written with mode 0600 and read back', () => {
    const dir = freshDir();
    const key = createKey(dir, 'default').key;
    writeTokenFile(dir, 'default', api, record(`svc_${'a'.repeat(64)}`, key.peerId));
    expect(mode(tokenFilePath(dir, 'default', api))).toBe(0o600);
    expect(readTokenFile(dir, 'default', api, key.peerId)?.token).toBe(`svc_${'a'.repeat(64)}`);
  });

  it('are replaced whole: a reader holding the old file still reads the whole old token', () => {
    const dir = freshDir();
    const key = createKey(dir, 'default').key;
    const path = tokenFilePath(dir, 'default', api);
    writeTokenFile(dir, 'default', api, record(`svc_${'a'.repeat(64)}`, key.peerId));
    const before = statSync(path).ino;
    const fd = openSync(path, 'r');
    writeTokenFile(dir, 'default', api, record(`svc_${'b'.repeat(64)}`, key.peerId));
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    closeSync(fd);
    const old = JSON.parse(buf.subarray(0, n).toString('utf8')) as { token: string };
    expect(old.token).toBe(`svc_${'a'.repeat(64)}`);
    expect(statSync(path).ino).not.toBe(before);
    expect(readTokenFile(dir, 'default', api, key.peerId)?.token).toBe(`svc_${'b'.repeat(64)}`);
    expect(readdirSync(dir.tokensDir)).toEqual(['default@127.0.0.1_8787.json']);
  });

  it('a damaged token file, or one of another KEY or relay, is ignored', () => {
    const dir = freshDir();
    const key = createKey(dir, 'default').key;
    const path = tokenFilePath(dir, 'default', api);
    writeFileSync(path, '{"token": "svc_', { mode: 0o600 });
    expect(readTokenFile(dir, 'default', api, key.peerId)).toBeUndefined();
    writeTokenFile(dir, 'default', api, record(`svc_${'c'.repeat(64)}`, 'f'.repeat(64)));
    expect(readTokenFile(dir, 'default', api, key.peerId)).toBeUndefined();
  });
});

describe('OS keychain', () => {
  it('asked for without its native module, says so in one line and keeps the directory', async () => {
    const choice = await openKeychain(true, '/tmp/h');
    expect(choice?.vault).toBeUndefined();
    const message = choice && 'message' in choice ? choice.message : '';
    expect(message).toContain('SVC_KEYCHAIN=1');
    expect(message).toContain('/tmp/h/keys');
    expect(message.includes('\n')).toBe(false);
    expect(await openKeychain(false, '/tmp/h')).toBeUndefined();
  });

  it('the CLI with SVC_KEYCHAIN=1 prints that line on stderr and makes the KEY as a file', async () => {
    const home = tempHome();
    const r = await runBridge(['id'], { home, env: { SVC_KEYCHAIN: '1' } });
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('no OS keychain module');
    expect(existsSync(join(home, 'keys', 'default.pem'))).toBe(true);
  }, 30_000);

  it('with a vault, the seed goes to the vault and the directory holds only a marker', () => {
    const entries = new Map<string, string>();
    const vault: SeedVault = {
      name: 'memory',
      get: (a) => entries.get(a),
      set: (a, s) => void entries.set(a, s),
      remove: (a) => void entries.delete(a),
    };
    const dir = freshDir();
    const made = createKey(dir, 'kc', { vault });
    expect(made.created).toBe(true);
    expect(made.key.storage).toBe('keychain');
    expect(readdirSync(dir.keysDir)).toEqual(['kc.keychain']);
    const marker = readFileSync(join(dir.keysDir, 'kc.keychain'), 'utf8');
    const [seed] = [...entries.values()];
    expect(marker.includes(seed!)).toBe(false);
    expect(loadKey(dir, 'kc', vault).peerId).toBe(made.key.peerId);
    expect(listKeys(dir)).toEqual([{ name: 'kc', peerId: made.key.peerId, publicKey: made.key.publicKey, storage: 'keychain' }]);
    // A second maker loses the race: its own keychain entry is removed, the first KEY stays.
    const again = createKey(dir, 'kc', { vault });
    expect(again.created).toBe(false);
    expect(again.key.peerId).toBe(made.key.peerId);
    expect(entries.size).toBe(1);
    // Without the vault the KEY cannot be opened, and the error says why.
    expect(codeOf(() => loadKey(dir, 'kc'))).toBe('KEYCHAIN');
  });
});
