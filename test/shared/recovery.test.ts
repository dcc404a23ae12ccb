import { describe, expect, it } from 'vitest';
import { canonicalBytes, readCanonicalObject } from '../../shared/canonical.js';
import { objectGenesis } from '../../shared/chain.js';
import type { CheckpointFields } from '../../shared/checkpoint.js';
import { concatBytes, fromHex, toBase64url, toHex, utf8 } from '../../shared/encoding.js';
import { sha256 } from '../../shared/hash.js';
import { signerFromSeed, verifyEd25519 } from '../../shared/identity.js';
import { label } from '../../shared/labels.js';
import {
  readServedRecovery,
  recoveryExplains,
  recoveryId,
  renderRecovery,
  signRecovery,
  signWithheldRecovery,
  verifyRecovery,
  type RecoveryFields,
  type ServedRecovery,
} from '../../shared/recovery.js';
import { createServiceSigner, renderSigner } from '../../shared/service-keys.js';
import { expectEvidenceRefused, flipHex } from '../helpers/refusals.js';

const SPACE = '0190aaaa-0000-7000-8000-000000000001';
const NEXT = '0190aaaa-0000-7000-8000-000000000002';
const OLD_EPOCH = '0190bbbb-0000-7000-8000-000000000001';
const NEW_EPOCH = '0190bbbb-0000-7000-8000-000000000002';
const root = signerFromSeed(new Uint8Array(32).fill(1));
const online = signerFromSeed(new Uint8Array(32).fill(2));
const signer = createServiceSigner({ root, online, notBefore: '2026-01-01T00:00:00.000Z' });
const otherRoot = signerFromSeed(new Uint8Array(32).fill(3));
const link = (n: number) => toHex(sha256(utf8(`link ${n}`)));
const signedId = toHex(sha256(utf8('checkpoint 6-10')));

const input: Omit<RecoveryFields, 'signer_key_id'> = {
  space_id: SPACE,
  name: 'field-notes',
  replaced_by: 'field-notes-2',
  replaced_by_space_id: NEXT,
  previous_epoch: OLD_EPOCH,
  service_epoch: NEW_EPOCH,
  chains: [
    {
      stream: 'posts',
      signed_last: '10',
      signed_checkpoint_id: signedId,
      signed_ending_hash: link(10),
      survived_last: '7',
      survived_hash: link(7),
    },
  ],
  created_at: '2026-09-10T12:00:00.000Z',
};

const notice = signRecovery(signer, input);
const served = (): ServedRecovery => renderRecovery(notice, renderSigner(signer));

function kept(first: number, last: number): CheckpointFields {
  return {
    space_id: SPACE,
    stream: 'posts',
    first: String(first),
    last: String(last),
    predecessor_hash: link(first - 1),
    ending_hash: link(last),
    merkle_root: link(100 + last),
    previous_checkpoint_id: first === 1 ? null : link(200),
    service_epoch: OLD_EPOCH,
    signer_key_id: signer.keyId,
    created_at: '2026-09-10T11:00:00.000Z',
  };
}

describe('recovery notices', () => {
  it('the id is H(L("recovery") ‖ canonical) and the online key signs L("recovery-signature") ‖ id', () => {
    const expected = canonicalBytes({ ...input, signer_key_id: signer.keyId, v: 1 });
    expect(toHex(notice.canonical)).toBe(toHex(expected));
    expect(toHex(recoveryId(notice.canonical))).toBe(toHex(sha256(label('recovery'), expected)));
    const message = concatBytes(label('recovery-signature'), notice.id);
    expect(verifyEd25519(signer.publicKey, message, notice.signature)).toBe(true);
  });

  it('a served notice verifies under the trusted root and names its signer', () => {
    const v = verifyRecovery(served(), root.publicKey);
    expect(v.fields).toEqual({ ...input, signer_key_id: signer.keyId });
    expect(v.trusted.keyId).toBe(signer.keyId);
  });

  it('a notice under another root, with a changed member or a changed signature is refused', () => {
    expectEvidenceRefused(() => verifyRecovery(served(), otherRoot.publicKey), /trusted root/);
    expectEvidenceRefused(() => verifyRecovery({ ...served(), replaced_by: 'elsewhere' }, root.publicKey), /replaced_by/);
    const chains = [{ ...input.chains[0]!, survived_last: '8' }];
    expectEvidenceRefused(() => verifyRecovery({ ...served(), chains }, root.publicKey), /chains/);
    expectEvidenceRefused(() => verifyRecovery({ ...served(), signature: flipHex(served().signature) }, root.publicKey), /signature/);
    const forged = { ...served(), canonical: toBase64url(canonicalBytes({ ...input, name: 'forged-name', signer_key_id: signer.keyId, v: 1 })) };
    expectEvidenceRefused(() => verifyRecovery(forged, root.publicKey), /recovery_id/);
  });

  it('an unexpected member, a notice that lost nothing or keeps its epoch is refused', () => {
    expectEvidenceRefused(() => readServedRecovery({ ...served(), extra: 1 }), /extra: unexpected/);
    const signed = (f: Record<string, unknown>) => {
      const canonical = canonicalBytes({ ...readCanonicalObject(notice.canonical), ...f });
      return { ...served(), ...f, canonical: toBase64url(canonical), recovery_id: toHex(recoveryId(canonical)) };
    };
    const noLoss = [{ ...input.chains[0]!, survived_last: '10' }];
    expectEvidenceRefused(() => readServedRecovery(signed({ chains: noLoss })), /survived_last/);
    expectEvidenceRefused(() => readServedRecovery(signed({ service_epoch: OLD_EPOCH })), /new epoch/);
    expectEvidenceRefused(() => readServedRecovery(signed({ chains: [] })), /chains/);
    const fromNothing = [{ ...input.chains[0]!, survived_last: '0' }];
    expectEvidenceRefused(() => readServedRecovery(signed({ chains: fromNothing })), /genesis/);
    const genesis = [{ ...input.chains[0]!, survived_last: '0', survived_hash: toHex(objectGenesis(SPACE)) }];
    expect(readServedRecovery(signed({ chains: genesis })).fields.chains[0]!.survived_last).toBe('0');
  });

  it('explains a kept checkpoint past the surviving head, never one that survived or another SPACE', () => {
    expect(recoveryExplains(notice.fields, kept(6, 10), fromHex(signedId))).toBe(true);
    expect(recoveryExplains(notice.fields, kept(6, 8), fromHex(link(1)))).toBe(true);
    expect(recoveryExplains(notice.fields, kept(6, 10), fromHex(link(1)))).toBe(false);
    expect(recoveryExplains(notice.fields, kept(1, 7), fromHex(link(1)))).toBe(false);
    expect(recoveryExplains(notice.fields, kept(11, 12), fromHex(link(1)))).toBe(false);
    expect(recoveryExplains(notice.fields, { ...kept(6, 10), space_id: NEXT }, fromHex(signedId))).toBe(false);
    expect(recoveryExplains(notice.fields, { ...kept(6, 10), stream: 'events' }, fromHex(signedId))).toBe(false);
  });

  describe('the withheld form', () => {
    const both = signRecovery(signer, {
      ...input,
      chains: [
        input.chains[0]!,
        { stream: 'events', signed_last: '4', signed_checkpoint_id: link(40), signed_ending_hash: link(4), survived_last: '2', survived_hash: link(2) },
      ],
    });
    const withheld = signWithheldRecovery(signer, both, (stream) => stream === 'events', '2026-09-10T12:00:01.000Z')!;
    const servedWithheld = () => renderRecovery(withheld, renderSigner(signer));
    const hidden = { signed_last: null, signed_checkpoint_id: null, signed_ending_hash: null, survived_last: null, survived_hash: null, unavailable: true };

    it('keeps the readable chains, withholds the others with the unavailable marker, names the whole notice, and verifies', () => {
      const v = verifyRecovery(servedWithheld(), root.publicKey);
      expect(v.fields).toEqual({
        ...input,
        chains: [input.chains[0], { stream: 'events', ...hidden }],
        created_at: '2026-09-10T12:00:01.000Z',
        signer_key_id: signer.keyId,
        full_recovery_id: toHex(both.id),
      });
      expect(servedWithheld().full_recovery_id).toBe(toHex(both.id));
      expect(JSON.stringify(servedWithheld())).not.toContain(link(40));
      // The signed bytes are the canonical JSON of its members, under the notice's own labels.
      const expected = canonicalBytes({ ...v.fields, v: 1 } as never);
      expect(toHex(withheld.canonical)).toBe(toHex(expected));
      expect(verifyEd25519(signer.publicKey, concatBytes(label('recovery-signature'), recoveryId(expected)), withheld.signature)).toBe(true);
    });

    it('is not made when nothing is withheld, and a withheld stream explains no kept checkpoint', () => {
      expect(signWithheldRecovery(signer, both, () => false, '2026-09-10T12:00:01.000Z')).toBeUndefined();
      expect(recoveryExplains(withheld.fields, kept(6, 10), fromHex(signedId))).toBe(true);
      const eventsKept = { ...kept(3, 4), stream: 'events' as const, ending_hash: link(4) };
      expect(recoveryExplains(both.fields, eventsKept, fromHex(link(40)))).toBe(true);
      expect(recoveryExplains(withheld.fields, eventsKept, fromHex(link(40)))).toBe(false);
    });

    it('never passes for a whole notice, nor a whole notice for a withheld form, and a withheld stream names nothing', () => {
      const { full_recovery_id: _, ...asWhole } = servedWithheld();
      expectEvidenceRefused(() => readServedRecovery(asWhole), /full_recovery_id/);
      expectEvidenceRefused(() => readServedRecovery({ ...served(), full_recovery_id: toHex(both.id) }), /full_recovery_id/);
      expectEvidenceRefused(() => readServedRecovery({ ...servedWithheld(), full_recovery_id: link(1) }), /full_recovery_id/);
      const resigned = (change: (o: Record<string, any>) => void) => {
        const o = readCanonicalObject(withheld.canonical) as Record<string, any>;
        change(o);
        const canonical = canonicalBytes(o);
        return { ...servedWithheld(), chains: o.chains, canonical: toBase64url(canonical), recovery_id: toHex(recoveryId(canonical)) };
      };
      expectEvidenceRefused(() => readServedRecovery(resigned((o) => { o.chains[1].signed_last = '4'; })), /chains\[1\]\.signed_last/);
      expectEvidenceRefused(() => readServedRecovery(resigned((o) => { o.chains[1].unavailable = false; })), /unavailable/);
      expectEvidenceRefused(() => readServedRecovery(resigned((o) => { o.chains = [o.chains[0]]; })), /withholds at least one/);
      // A whole notice's chain never carries the marker.
      const marked = canonicalBytes({ ...readCanonicalObject(notice.canonical), chains: [{ stream: 'posts', ...hidden }] } as never);
      expectEvidenceRefused(() => readServedRecovery({ ...served(), chains: [{ stream: 'posts', ...hidden }], canonical: toBase64url(marked), recovery_id: toHex(recoveryId(marked)) }), /unavailable/);
    });
  });
});
