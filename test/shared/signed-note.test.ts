/**
 * C2SP signed notes and cosignatures (shared/signed-note.ts) and the tree proofs over subtree
 * hashes (shared/tlog-checkpoint.ts): the published example of Go's sumdb/note, the formats as
 * the texts give them, bent inputs refused, and proofs equal to shared/merkle.ts's over leaves.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { signerFromSeed } from '../../shared/identity.js';
import { consistencyProof, inclusionProof, merkleRoot, nodeHash, verifyConsistency } from '../../shared/merkle.js';
import { sha256 } from '../../shared/hash.js';
import { toHex, utf8 } from '../../shared/encoding.js';
import {
  cosignNote,
  formatNote,
  noteKeyId,
  readCosignerList,
  readNote,
  readVerifierKey,
  signNote,
  verifierKey,
  verifyCosignature,
  verifyNote,
  NOTE_KEY_COSIGNATURE_V1,
  NOTE_KEY_ED25519,
} from '../../shared/signed-note.js';
import { checkpointBody, readCheckpointBody, treeConsistencyProof, treeInclusionProof, treeRoot, EMPTY_TREE_ROOT } from '../../shared/tlog-checkpoint.js';

const seed = (n: number) => new Uint8Array(32).fill(n);

describe('signed notes', () => {
  it("verifies the example of Go's golang.org/x/mod/sumdb/note documentation", () => {
    // The verifier key and signed note printed in the package documentation.
    const key = readVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
    const note = readNote(
      'If you think cryptography is the answer to your problem,\n' +
        "then you don't know what your problem is.\n" +
        '\n' +
        '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n',
    );
    expect(key.name).toBe('PeterNeumann');
    verifyNote(note, key.name, key.publicKey);
    const bent = readNote(note.text.replace('answer', 'Answer') + '\n' + note.signatures.map((s) => `${s.line}\n`).join(''));
    expect(() => verifyNote(bent, key.name, key.publicKey)).toThrow(/does not verify/);
  });

  it('the key id is the first four bytes of SHA-256(name ‖ 0x0A ‖ type ‖ key), and the verifier key carries it', () => {
    const signer = signerFromSeed(seed(7));
    const id = noteKeyId('relay.example', NOTE_KEY_ED25519, signer.publicKey);
    expect(toHex(id)).toBe(toHex(sha256(new Uint8Array([...utf8('relay.example\n'), 0x01, ...signer.publicKey])).subarray(0, 4)));
    expect(toHex(noteKeyId('relay.example', NOTE_KEY_COSIGNATURE_V1, signer.publicKey))).not.toBe(toHex(id));
    const vkey = verifierKey('relay.example', signer.publicKey);
    expect(vkey.startsWith(`relay.example+${toHex(id)}+`)).toBe(true);
    expect(readVerifierKey(vkey).publicKey).toEqual(signer.publicKey);
    expect(() => readVerifierKey(vkey.replace(toHex(id), '00000000'))).toThrow(/key id/);
  });

  it('a signed note reads back; its text, signature lines and key name are checked', () => {
    const signer = signerFromSeed(seed(1));
    const text = checkpointBody({ origin: 'relay.example/spaces/notes', size: 3, root: sha256(utf8('x')) });
    const note = formatNote(text, [signNote(text, 'relay.example', signer)]);
    verifyNote(readNote(note), 'relay.example', signer.publicKey);
    expect(() => verifyNote(readNote(note), 'other.example', signer.publicKey)).toThrow(/no signature/);
    for (const bad of [text, note.slice(0, -1), note.replace('\n\n', '\n'), `${note}\n`, note.replace('— ', '- '), note.replace('notes\n', 'notes\t\n')]) {
      expect(() => readNote(bad), JSON.stringify(bad.slice(-30))).toThrow();
    }
    expect(() => signNote(text, 'has space', signer)).toThrow();
    expect(() => signNote(text, 'a+b', signer)).toThrow();
  });

  it('a cosignature is time ‖ Ed25519 over "cosignature/v1\\ntime T\\n" ‖ text; a forged one throws, a missing one is undefined', () => {
    const log = signerFromSeed(seed(2));
    const witness = signerFromSeed(seed(3));
    const text = checkpointBody({ origin: 'relay.example/spaces/notes', size: 9, root: sha256(utf8('y')) });
    const line = cosignNote(text, 'witness.example', witness, 1_700_000_000);
    const note = readNote(formatNote(text, [signNote(text, 'relay.example', log), line]));
    expect(verifyCosignature(note, { name: 'witness.example', publicKey: witness.publicKey })).toBe(1_700_000_000);
    expect(verifyCosignature(note, { name: 'other.example', publicKey: witness.publicKey })).toBeUndefined();
    // The same line over another head: its key id matches, its signature does not.
    const other = checkpointBody({ origin: 'relay.example/spaces/notes', size: 10, root: sha256(utf8('y')) });
    const moved = readNote(formatNote(other, [line]));
    expect(() => verifyCosignature(moved, { name: 'witness.example', publicKey: witness.publicKey })).toThrow(/does not verify/);
    // A plain note signature by the witness key is not a cosignature.
    const plain = readNote(formatNote(text, [signNote(text, 'witness.example', witness)]));
    expect(verifyCosignature(plain, { name: 'witness.example', publicKey: witness.publicKey })).toBeUndefined();
  });

  it('reads witness lists as name=base64key or verifier keys, naming the entry that does not read', () => {
    const w = signerFromSeed(seed(4));
    const b64 = Buffer.from(w.publicKey).toString('base64');
    expect(readCosignerList(`a.example=${b64}, ${verifierKey('b.example', w.publicKey)}`, 'SVC_WITNESSES').map((c) => c.name)).toEqual(['a.example', 'b.example']);
    expect(() => readCosignerList('a.example', 'SVC_WITNESSES')).toThrow(/SVC_WITNESSES/);
    expect(() => readCosignerList(`a.example=${b64.slice(4)}`, 'SVC_WITNESSES')).toThrow(/SVC_WITNESSES/);
    expect(() => readCosignerList(`a.example=${b64},a.example=${b64}`, 'SVC_WITNESSES')).toThrow(/twice/);
  });

  it('checkpoint bodies: origin, decimal size, base64 root; extension lines kept; bent ones refused', () => {
    const root = sha256(utf8('z'));
    const body = checkpointBody({ origin: 'r.example/spaces/a', size: 12, root });
    expect(readCheckpointBody(body)).toMatchObject({ origin: 'r.example/spaces/a', size: 12, extensions: [] });
    expect(readCheckpointBody(`${body}ext line\n`).extensions).toEqual(['ext line']);
    for (const bad of [body.replace('12', '012'), body.replace('12', '-1'), body.replace('12', '1e3'), body.slice(0, -1), 'r.example\n1\n', body.replace('=', '')]) {
      expect(() => readCheckpointBody(bad), bad).toThrow();
    }
    expect(toHex(EMPTY_TREE_ROOT)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('tree proofs over subtree hashes', () => {
  const leaves = Array.from({ length: 70 }, (_, i) => sha256(utf8(`leaf ${i}`)));
  const rangeRoot = (start: number, end: number) => merkleRoot(leaves.slice(start, end));

  it('equal the proofs over the leaves themselves, for every size and index', () => {
    for (let n = 1; n <= leaves.length; n++) {
      expect(treeRoot(n, rangeRoot)).toEqual(merkleRoot(leaves.slice(0, n)));
      for (let m = 1; m <= n; m++) expect(treeConsistencyProof(m, n, rangeRoot)).toEqual(consistencyProof(leaves.slice(0, n), m));
      for (let i = 0; i < n; i += 7) expect(treeInclusionProof(i, n, rangeRoot)).toEqual(inclusionProof(leaves.slice(0, n), i));
    }
    expect(treeRoot(0, rangeRoot)).toEqual(EMPTY_TREE_ROOT);
  });

  it('a consistency proof with any hash changed, any hash left out or added, or other sizes does not verify', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 69 }), fc.integer({ min: 1, max: 70 }), fc.nat(), (m, n, pick) => {
        fc.pre(m < n);
        const proof = treeConsistencyProof(m, n, rangeRoot);
        const [a, b] = [rangeRoot(0, m), rangeRoot(0, n)];
        verifyConsistency(m, n, a, b, proof);
        const i = pick % proof.length;
        const flipped = proof.map((h, j) => (j === i ? nodeHash(h, h) : h));
        expect(() => verifyConsistency(m, n, a, b, flipped)).toThrow();
        expect(() => verifyConsistency(m, n, a, b, proof.filter((_, j) => j !== i))).toThrow();
        expect(() => verifyConsistency(m, n, a, b, [...proof, a])).toThrow();
        if (m + 1 < n) expect(() => verifyConsistency(m + 1, n, a, b, proof)).toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
