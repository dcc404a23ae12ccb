import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical.js';
import { controlGenesis, objectGenesis } from '../../shared/chain.js';
import {
  checkExtends,
  checkExtendsAll,
  checkpointBytes,
  checkpointId,
  checkpointSignatureMessage,
  readServedCheckpoint,
  renderCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
  verifyCheckpointInclusion,
  type CheckpointFields,
  type ServedCheckpoint,
  type SignedCheckpoint,
} from '../../shared/checkpoint.js';
import { fromBase64url, fromHex, toBase64url, toHex, utf8 } from '../../shared/encoding.js';
import { sha256 } from '../../shared/hash.js';
import { signerFromSeed, verifyEd25519 } from '../../shared/identity.js';
import { eventLeaf, inclusionProof, merkleRoot, postLeaf } from '../../shared/merkle.js';
import { createServiceSigner, renderSigner } from '../../shared/service-keys.js';
import { loadOwnVector } from '../helpers/vectors.js';
import { expectEvidenceRefused, flipHex } from '../helpers/refusals.js';

const pin = loadOwnVector('service.json');
const SPACE: string = pin.inputs.space_id;
const EPOCH: string = pin.inputs.service_epoch;
const root = signerFromSeed(fromHex(pin.inputs.root_seed, 32));
const online = signerFromSeed(fromHex(pin.inputs.online_seed, 32));
const other = signerFromSeed(new Uint8Array(32).fill(5));
const signer = createServiceSigner({ root, online, notBefore: pin.inputs.not_before, notAfter: pin.inputs.not_after });
const served = renderSigner(signer);

const objectId = (seq: number) => sha256(utf8(`svc-vector object ${seq}`));
const chainHash = (seq: number) => sha256(utf8(`svc-vector chain ${seq}`));
const commandId = (rev: number) => sha256(utf8(`svc-vector command ${rev}`));
const controlChain = (rev: number) => sha256(utf8(`svc-vector control-chain ${rev}`));
const leavesOf = (first: number, last: number) =>
  Array.from({ length: last - first + 1 }, (_, i) => postLeaf(SPACE, first + i, objectId(first + i), chainHash(first + i)));

function postsRange(first: number, last: number, previous: string | null, createdAt: string): Omit<CheckpointFields, 'signer_key_id'> {
  return {
    space_id: SPACE,
    stream: 'posts',
    first: String(first),
    last: String(last),
    predecessor_hash: toHex(first === 1 ? objectGenesis(SPACE) : chainHash(first - 1)),
    ending_hash: toHex(chainHash(last)),
    merkle_root: toHex(merkleRoot(leavesOf(first, last))),
    previous_checkpoint_id: previous,
    service_epoch: EPOCH,
    created_at: createdAt,
  };
}

const cp1 = signCheckpoint(signer, postsRange(1, 5, null, '2026-09-10T12:10:00.000Z'));
const cp2 = signCheckpoint(signer, postsRange(6, 17, toHex(cp1.id), '2026-09-10T12:20:00.000Z'));
const events = [1, 2, 3].map((r) => eventLeaf(SPACE, r, commandId(r), controlChain(r)));
const ev1 = signCheckpoint(signer, {
  space_id: SPACE,
  stream: 'events',
  first: '1',
  last: '3',
  predecessor_hash: toHex(controlGenesis(SPACE)),
  ending_hash: toHex(controlChain(3)),
  merkle_root: toHex(merkleRoot(events)),
  previous_checkpoint_id: null,
  service_epoch: EPOCH,
  created_at: '2026-09-10T12:10:00.000Z',
});

/** Re-sign a served checkpoint after changing its signed members (a forger holding the key). */
function resign(fields: CheckpointFields, s = signer): ServedCheckpoint {
  const canonical = canonicalBytes(toSigned(fields));
  const id = checkpointId(canonical);
  return renderCheckpoint({ fields, canonical, id, signature: s.sign(checkpointSignatureMessage(id)) }, renderSigner(s));
}

function toSigned(f: CheckpointFields): Record<string, unknown> {
  const { previous_checkpoint_id, ...rest } = f;
  return previous_checkpoint_id === null ? { ...rest, v: 1 } : { ...rest, previous_checkpoint_id, v: 1 };
}

describe('checkpoints (pinned by the Python generator)', () => {
  const cases: [string, SignedCheckpoint][] = [
    ['posts_1', cp1],
    ['posts_2', cp2],
    ['events_1', ev1],
  ];
  for (const [name, cp] of cases) {
    it(`${name}: canonical bytes, id, signature and served shape equal the pin`, () => {
      const p = pin.checkpoints[name];
      expect(Buffer.from(cp.canonical).toString('utf8')).toBe(p.canonical_utf8);
      expect(toHex(cp.id)).toBe(p.checkpoint_id);
      expect(toHex(cp.signature)).toBe(p.signature);
      expect(renderCheckpoint(cp, served)).toEqual(p.served);
    });
  }

  it('the genesis predecessors match the pin', () => {
    expect(toHex(objectGenesis(SPACE))).toBe(pin.posts_genesis);
    expect(toHex(controlGenesis(SPACE))).toBe(pin.control_genesis);
  });

  it('the first checkpoint has no previous_checkpoint_id member and the second names the first', () => {
    expect(pin.checkpoints.posts_1.canonical_utf8).not.toContain('previous_checkpoint_id');
    expect(JSON.parse(pin.checkpoints.posts_2.canonical_utf8).previous_checkpoint_id).toBe(pin.checkpoints.posts_1.checkpoint_id);
    expect(pin.checkpoints.posts_1.served.previous_checkpoint_id).toBeNull();
  });

  it('the online key signs the checkpoint-signature label and the checkpoint id', () => {
    expect(verifyEd25519(online.publicKey, checkpointSignatureMessage(cp2.id), cp2.signature)).toBe(true);
  });
});

describe('reading and verifying a served checkpoint', () => {
  for (const name of ['posts_1', 'posts_2', 'events_1']) {
    it(`${name}: verifies against the trusted root and reads back the signed members`, () => {
      const v = verifyCheckpoint(pin.checkpoints[name].served, root.publicKey);
      expect(toHex(v.id)).toBe(pin.checkpoints[name].checkpoint_id);
      expect(v.trusted.development).toBe(false);
      expect(v.trusted.keyId).toBe(pin.key_id);
    });
  }

  const good: ServedCheckpoint = pin.checkpoints.posts_2.served;

  it('refuses a checkpoint whose signer root is not the trusted root', () => {
    expectEvidenceRefused(() => verifyCheckpoint(good, other.publicKey), /trusted root/);
  });

  it('refuses a checkpoint signature with one flipped byte', () => {
    for (const byte of [0, 40, 63]) {
      expectEvidenceRefused(() => verifyCheckpoint({ ...good, signature: flipHex(good.signature, byte) }, root.publicKey), /signature: does not verify/);
    }
  });

  for (const name of ['first', 'last', 'merkle_root', 'ending_hash', 'predecessor_hash', 'created_at', 'service_epoch', 'stream'] as const) {
    it(`refuses a served ${name} that differs from the signed member`, () => {
      const changed: Record<string, string> = {
        first: '7',
        last: '16',
        merkle_root: flipHex(good.merkle_root),
        ending_hash: flipHex(good.ending_hash),
        predecessor_hash: flipHex(good.predecessor_hash),
        created_at: '2026-09-10T12:20:00.001Z',
        service_epoch: '0199cccc-dddd-7eee-8fff-000000000002',
        stream: 'events',
      };
      expectEvidenceRefused(() => readServedCheckpoint({ ...good, [name]: changed[name] }), new RegExp(`${name}: differs`));
    });
  }

  it('refuses a served previous_checkpoint_id of null when the signed one names a checkpoint', () => {
    expectEvidenceRefused(() => readServedCheckpoint({ ...good, previous_checkpoint_id: null }), /previous_checkpoint_id: differs/);
  });

  it('refuses a checkpoint_id that is not the formula of the canonical bytes', () => {
    expectEvidenceRefused(() => readServedCheckpoint({ ...good, checkpoint_id: flipHex(good.checkpoint_id) }), /checkpoint_id/);
  });

  it('refuses signed bytes that are not canonical or carry a null previous_checkpoint_id', () => {
    const text = Buffer.from(fromBase64url(good.canonical)).toString('utf8');
    const spaced = utf8(JSON.stringify(JSON.parse(text), null, 1));
    expectEvidenceRefused(() => readServedCheckpoint({ ...good, canonical: toBase64url(spaced), checkpoint_id: toHex(checkpointId(spaced)) }), /canonical/);
    const withNull = canonicalBytes({ ...JSON.parse(pin.checkpoints.posts_1.canonical_utf8), previous_checkpoint_id: null });
    expectEvidenceRefused(() => readServedCheckpoint({ ...pin.checkpoints.posts_1.served, canonical: toBase64url(withNull), checkpoint_id: toHex(checkpointId(withNull)) }), /never null/);
  });

  it('refuses a served checkpoint with an extra or a missing member', () => {
    expectEvidenceRefused(() => readServedCheckpoint({ ...good, note: 'x' }), /note: unexpected member/);
    const { signer: _s, ...noSigner } = good;
    expectEvidenceRefused(() => readServedCheckpoint(noSigner), /signer: missing/);
  });

  it('refuses a signer that is not the one the checkpoint names', () => {
    const stranger = renderSigner(createServiceSigner({ root, online: other, notBefore: pin.inputs.not_before }));
    expectEvidenceRefused(() => readServedCheckpoint({ ...good, signer: stranger }), /is not signer_key_id/);
  });

  it('refuses a checkpoint created after its certificate expired', () => {
    const late = resign({ ...cp2.fields, created_at: pin.inputs.not_after });
    expectEvidenceRefused(() => verifyCheckpoint(late, root.publicKey), /expired/);
  });

  it('refuses a checkpoint created more than 60 s before its certificate starts', () => {
    const early = resign({ ...cp2.fields, created_at: '2026-09-10T11:58:59.999Z' });
    expectEvidenceRefused(() => verifyCheckpoint(early, root.publicKey), /not valid before/);
  });

  it('reports a checkpoint signed under a development certificate', () => {
    const dev = createServiceSigner({ root, online, notBefore: pin.inputs.not_before, development: true });
    const v = verifyCheckpoint(resign(cp2.fields, dev), root.publicKey);
    expect(v.trusted.development).toBe(true);
  });
});

describe('range rules (objects.md §11)', () => {
  it('signs 1,024 positions and refuses 1,025', () => {
    const big = postsRange(1, 1024, null, '2026-09-10T12:10:00.000Z');
    expect(() => signCheckpoint(signer, big)).not.toThrow();
    expectEvidenceRefused(() => signCheckpoint(signer, { ...big, last: '1025' }), /more than 1024/);
  });

  it('refuses an empty or reversed range', () => {
    expectEvidenceRefused(() => signCheckpoint(signer, { ...cp2.fields, last: '5' }), /empty range/);
    expectEvidenceRefused(() => signCheckpoint(signer, { ...cp2.fields, first: '0' }), /first/);
  });

  it('refuses a first checkpoint whose predecessor is not the genesis', () => {
    expectEvidenceRefused(() => signCheckpoint(signer, { ...cp1.fields, predecessor_hash: toHex(chainHash(0)) }), /genesis/);
    expectEvidenceRefused(() => signCheckpoint(signer, { ...ev1.fields, predecessor_hash: toHex(objectGenesis(SPACE)) }), /events genesis/);
  });

  it('refuses a first checkpoint that names a previous one, and a later one that names none', () => {
    expectEvidenceRefused(() => signCheckpoint(signer, { ...cp1.fields, previous_checkpoint_id: toHex(cp2.id) }), /names none/);
    expectEvidenceRefused(() => signCheckpoint(signer, { ...cp2.fields, previous_checkpoint_id: null }), /missing/);
  });

  it('a strict reader refuses a signed range that breaks the rules', () => {
    const forged = resign({ ...cp2.fields, first: '1' });
    expectEvidenceRefused(() => readServedCheckpoint(forged), /names none|genesis/);
    expect(() => checkpointBytes({ ...cp2.fields, first: '1' })).toThrow();
  });
});

describe('continuity (a later checkpoint extends the kept one)', () => {
  it('the second checkpoint extends the first', () => {
    const kept = verifyCheckpoint(pin.checkpoints.posts_1.served, root.publicKey);
    const next = verifyCheckpoint(pin.checkpoints.posts_2.served, root.publicKey);
    expect(() => checkExtends(kept, next)).not.toThrow();
    const cp3 = signCheckpoint(signer, postsRange(18, 20, toHex(cp2.id), '2026-09-10T12:30:00.000Z'));
    expect(toHex(checkExtendsAll(cp1, [cp2, cp3]).id)).toBe(toHex(cp3.id));
  });

  it('refuses a checkpoint that names another previous checkpoint (history rewritten)', () => {
    const rewritten = signCheckpoint(signer, { ...cp1.fields, created_at: '2026-09-10T12:11:00.000Z' });
    const fork = signCheckpoint(signer, postsRange(6, 17, toHex(rewritten.id), '2026-09-10T12:20:00.000Z'));
    expectEvidenceRefused(() => checkExtends(cp1, fork), /history changed: previous_checkpoint_id/);
  });

  it('refuses a checkpoint that leaves a gap after the kept one', () => {
    const gap = signCheckpoint(signer, { ...postsRange(7, 17, toHex(cp1.id), '2026-09-10T12:20:00.000Z') });
    expectEvidenceRefused(() => checkExtends(cp1, gap), /history changed: first is 7/);
  });

  it('refuses a checkpoint that does not start from the kept ending link', () => {
    const other = signCheckpoint(signer, { ...cp2.fields, predecessor_hash: toHex(chainHash(99)) });
    expectEvidenceRefused(() => checkExtends(cp1, other), /history changed: predecessor_hash/);
  });

  it('refuses a checkpoint of another stream', () => {
    expectEvidenceRefused(() => checkExtends(cp1, ev1), /history changed: .*stream/);
  });

  it('refuses the kept checkpoint itself and one along a broken run', () => {
    expectEvidenceRefused(() => checkExtends(cp1, cp1), /history changed/);
    expectEvidenceRefused(() => checkExtendsAll(cp1, [cp2, cp2]), /history changed/);
  });
});

describe('proof of a post against a checkpoint (objects.md §13 step 6)', () => {
  const good: ServedCheckpoint = pin.checkpoints.posts_2.served;
  const leaf = { spaceId: SPACE, stream: 'posts' as const, position: 9n, id: objectId(9), chainHash: chainHash(9) };
  const evidence = { leaf: pin.post_proof.leaf, checkpoint: good, inclusion: pin.post_proof.inclusion };

  it('the pinned proof of post 9 verifies and our path equals the pin', () => {
    expect(inclusionProof(leavesOf(6, 17), 3).map(toHex)).toEqual(pin.post_proof.inclusion.path);
    const v = verifyCheckpointInclusion(leaf, evidence, root.publicKey);
    expect(toHex(v.id)).toBe(pin.checkpoints.posts_2.checkpoint_id);
  });

  it('every post of the range verifies with the path our code builds', () => {
    const leaves = leavesOf(6, 17);
    for (let seq = 6; seq <= 17; seq++) {
      const inclusion = { leaf_index: seq - 6, tree_size: 12, path: inclusionProof(leaves, seq - 6).map(toHex) };
      const l = { ...leaf, position: BigInt(seq), id: objectId(seq), chainHash: chainHash(seq) };
      expect(() => verifyCheckpointInclusion(l, { checkpoint: good, inclusion }, root.publicKey)).not.toThrow();
    }
  });

  it('an event verifies against an events checkpoint', () => {
    const inclusion = { leaf_index: 1, tree_size: 3, path: inclusionProof(events, 1).map(toHex) };
    const l = { spaceId: SPACE, stream: 'events' as const, position: 2n, id: commandId(2), chainHash: controlChain(2) };
    expect(() => verifyCheckpointInclusion(l, { checkpoint: pin.checkpoints.events_1.served, inclusion }, root.publicKey)).not.toThrow();
    expectEvidenceRefused(() => verifyCheckpointInclusion({ ...l, stream: 'posts' }, { checkpoint: pin.checkpoints.events_1.served, inclusion }, root.publicKey));
  });

  it('refuses a served leaf that is not the formula of the post', () => {
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, leaf: flipHex(pin.post_proof.leaf) }, root.publicKey), /leaf/);
  });

  it('refuses a post whose object id was changed', () => {
    expectEvidenceRefused(() => verifyCheckpointInclusion({ ...leaf, id: objectId(10) }, { ...evidence, leaf: undefined }, root.publicKey), /merkle_root/);
  });

  it('refuses a path with one flipped byte', () => {
    const path = [...pin.post_proof.inclusion.path];
    path[1] = flipHex(path[1], 12);
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: { ...evidence.inclusion, path } }, root.publicKey), /merkle_root/);
  });

  it('refuses an index or size that differs from the signed range', () => {
    const inc = evidence.inclusion;
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: { ...inc, leaf_index: 4 } }, root.publicKey), /leaf_index/);
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: { ...inc, tree_size: 13 } }, root.publicKey), /tree_size/);
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: { ...inc, leaf_index: '3' } }, root.publicKey), /leaf_index/);
  });

  it('refuses a checkpoint that does not cover the post or is of another SPACE', () => {
    const l5 = { ...leaf, position: 5n, id: objectId(5), chainHash: chainHash(5) };
    expectEvidenceRefused(() => verifyCheckpointInclusion(l5, { checkpoint: good, inclusion: evidence.inclusion }, root.publicKey), /does not cover 5/);
    expectEvidenceRefused(
      () => verifyCheckpointInclusion({ ...leaf, spaceId: '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee' }, { ...evidence, leaf: undefined }, root.publicKey),
      /space_id/,
    );
  });

  it('refuses the proof when the checkpoint fails (wrong root, flipped signature)', () => {
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, evidence, other.publicKey), /trusted root/);
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, checkpoint: { ...good, signature: flipHex(good.signature, 9) } }, root.publicKey), /signature/);
  });

  it('refuses an overlong or malformed path', () => {
    const inc = evidence.inclusion;
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: { ...inc, path: Array(17).fill(inc.path[0]) } }, root.publicKey), /at most 16/);
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: { ...inc, path: [inc.path[0].toUpperCase()] } }, root.publicKey), /path\[0\]/);
    expectEvidenceRefused(() => verifyCheckpointInclusion(leaf, { ...evidence, inclusion: null }, root.publicKey), /inclusion/);
  });
});
