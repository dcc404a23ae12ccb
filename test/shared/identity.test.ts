import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  REJECTED_PUBLIC_KEYS,
  passkeyPeerIdOf,
  peerIdHexOf,
  peerIdOf,
  publicKeyFromSeed,
  signerFromSeed,
  tokenChallengeMessage,
  verifyEd25519,
} from '../../shared/identity.js';
import { fromHex, toHex } from '../../shared/encoding.js';
import { isSvcError } from '../../shared/errors.js';
import { loadOwnVector, loadVector } from '../helpers/vectors.js';

const v1 = loadVector('protocol-v1-vectors.json');
const objects = loadVector('object-vectors.json');
const pins = loadOwnVector('identity-pins.json');

/** RFC 8032 §7.1 test vectors (secret key, public key, message, signature), from the RFC. */
const RFC8032 = [
  {
    name: 'TEST 1',
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'TEST 2',
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    name: 'TEST 3',
    secret: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    public: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature:
      '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
  {
    name: 'TEST 1024',
    secret: 'f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5',
    public: '278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e',
  },
  {
    name: 'TEST SHA(abc)',
    secret: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    public: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    message:
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    signature:
      'dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704',
  },
] as const;

describe('the published test KEY (protocol-v1-vectors.json)', () => {
  const seed = fromHex(v1.test_private_seed_hex);

  it('derives the published public key from the published seed', () => {
    expect(toHex(publicKeyFromSeed(seed))).toBe(v1.public_key_hex);
    expect(toHex(signerFromSeed(seed).publicKey)).toBe(v1.public_key_hex);
  });

  it('derives the published peer id H(L("agent") || pk32) from the public key', () => {
    expect(peerIdHexOf(fromHex(v1.public_key_hex))).toBe(v1.agent_id);
    expect(toHex(peerIdOf(fromHex(objects.public_key_hex)))).toBe(objects.author_id);
  });

  it('is on the list of rejected public keys', () => {
    expect(REJECTED_PUBLIC_KEYS.has(v1.public_key_hex)).toBe(true);
  });
});

describe('Ed25519 against RFC 8032 §7.1', () => {
  for (const t of RFC8032) {
    it(`${t.name}: the secret key gives the RFC's public key, which is rejected as public knowledge`, () => {
      const pk = toHex(publicKeyFromSeed(fromHex(t.secret)));
      expect(pk).toBe(t.public);
      expect(REJECTED_PUBLIC_KEYS.has(pk)).toBe(true);
    });
    if ('signature' in t) {
      it(`${t.name}: signing gives the RFC's signature and it verifies`, () => {
        const signer = signerFromSeed(fromHex(t.secret));
        const message = fromHex(t.message);
        expect(toHex(signer.sign(message))).toBe(t.signature);
        expect(verifyEd25519(fromHex(t.public), message, fromHex(t.signature))).toBe(true);
      });
    }
  }

  it('rejects exactly six keys: the test KEY and the five RFC keys', () => {
    expect(REJECTED_PUBLIC_KEYS.size).toBe(6);
    for (const k of REJECTED_PUBLIC_KEYS) expect(k).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('verifyEd25519 answers false, never throws, on bad input', () => {
  const signer = signerFromSeed(fromHex(RFC8032[1].secret));
  const message = new Uint8Array([1, 2, 3]);
  const signature = signer.sign(message);

  it('accepts the good signature', () => {
    expect(verifyEd25519(signer.publicKey, message, signature)).toBe(true);
  });

  it('refuses a signature with one bit flipped anywhere', () => {
    for (let i = 0; i < signature.length; i++) {
      const bad = signature.slice();
      bad[i]! ^= 0x01;
      expect(verifyEd25519(signer.publicKey, message, bad)).toBe(false);
    }
  });

  it('refuses the signature over another message or under another key', () => {
    expect(verifyEd25519(signer.publicKey, new Uint8Array([1, 2, 4]), signature)).toBe(false);
    expect(verifyEd25519(fromHex(RFC8032[0].public), message, signature)).toBe(false);
  });

  it('refuses wrong lengths and non-bytes', () => {
    expect(verifyEd25519(signer.publicKey.subarray(1), message, signature)).toBe(false);
    expect(verifyEd25519(signer.publicKey, message, signature.subarray(1))).toBe(false);
    expect(verifyEd25519(signer.publicKey, message, new Uint8Array(65))).toBe(false);
    expect(verifyEd25519('ab' as unknown as Uint8Array, message, signature)).toBe(false);
    expect(verifyEd25519(signer.publicKey, null as unknown as Uint8Array, signature)).toBe(false);
  });

  it('answers false for random keys and signatures (points off the curve included)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 64, maxLength: 64 }),
        (pk, sig) => verifyEd25519(pk, message, sig) === false,
      ),
      { numRuns: 200 },
    );
  });

  it('still answers correctly after more keys than the key cache holds', () => {
    const seeds = Array.from({ length: 1100 }, (_, i) => {
      const s = new Uint8Array(32);
      s[0] = i & 0xff;
      s[1] = i >> 8;
      return s;
    });
    for (const s of seeds) {
      const k = signerFromSeed(s);
      expect(verifyEd25519(k.publicKey, message, k.sign(message))).toBe(true);
    }
    expect(verifyEd25519(signer.publicKey, message, signature)).toBe(true);
  });
});

describe('the signer', () => {
  it('never exposes private key bytes and cannot be altered', () => {
    const signer = signerFromSeed(fromHex(RFC8032[0].secret));
    expect(Object.keys(signer).sort()).toEqual(['publicKey', 'sign']);
    expect(Object.isFrozen(signer)).toBe(true);
  });

  it('refuses a seed that is not 32 bytes', () => {
    expect(() => signerFromSeed(new Uint8Array(31))).toThrow(/seed/);
    expect(() => publicKeyFromSeed(new Uint8Array(33))).toThrow(/seed/);
  });

  it('signs what verifies, for any seed and message', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 300 }),
        (seed, message) => {
          const s = signerFromSeed(seed);
          return verifyEd25519(s.publicKey, message, s.sign(message));
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('peer ids', () => {
  it('refuses a public key that is not 32 bytes', () => {
    expect(() => peerIdOf(new Uint8Array(31))).toThrow(/publicKey/);
  });

  it('computes the passkey peer id H(L("passkey") || spki) pinned with Python (identity-pins.json)', () => {
    expect(toHex(passkeyPeerIdOf(fromHex(pins.passkey.spki_hex)))).toBe(pins.passkey.peer_id);
  });

  it('gives an Ed25519 key and a passkey with the same bytes different peer ids', () => {
    const pk = fromHex(v1.public_key_hex);
    expect(toHex(passkeyPeerIdOf(pk))).not.toBe(toHex(peerIdOf(pk)));
  });
});

describe('the token challenge message', () => {
  const t = pins.token_challenge;

  it('is L("token-challenge") || audience || 0x00 || challenge, as pinned with Python', () => {
    const message = tokenChallengeMessage(t.audience, fromHex(t.challenge_hex));
    expect(toHex(message)).toBe(t.message_hex);
    expect(toHex(signerFromSeed(fromHex(t.seed_hex)).sign(message))).toBe(t.signature_hex);
  });

  it('binds the audience: a signature for one host does not verify for another', () => {
    const signer = signerFromSeed(fromHex(t.seed_hex));
    const sig = signer.sign(tokenChallengeMessage(t.audience, fromHex(t.challenge_hex)));
    const other = tokenChallengeMessage('evil.example.org', fromHex(t.challenge_hex));
    expect(verifyEd25519(signer.publicKey, other, sig)).toBe(false);
  });

  it('refuses an audience holding U+0000 or empty', () => {
    for (const audience of ['a\u0000b', '']) {
      let err: unknown;
      try {
        tokenChallengeMessage(audience, new Uint8Array(56));
      } catch (e) {
        err = e;
      }
      expect(isSvcError(err, 'INVALID_REQUEST')).toBe(true);
    }
  });
});
