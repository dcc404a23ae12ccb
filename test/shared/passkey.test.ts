/**
 * shared/passkey.ts as pure functions: the counter rule, the stored assertion record, the SPKI
 * rules per algorithm, and assertions carrying what real authenticators add (extension data,
 * `crossOrigin: false`), built with the software authenticator of test/helpers.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromBase64url } from '../../shared/encoding.js';
import {
  assertionRecord,
  checkAssertion,
  counterAdvances,
  counterOf,
  passkeyKeyOf,
  readAssertion,
  readAssertionRecord,
  type PasskeyPolicy,
} from '../../shared/passkey.js';
import { softAuthenticator, type WireAssertion } from '../helpers/passkey-authenticator.js';

const policy: PasskeyPolicy = { rpId: 'relay.example', origins: ['https://relay.example'] };

function bytesOf(w: WireAssertion) {
  return readAssertion(w as unknown as Record<string, unknown>);
}

describe('the signature counter', () => {
  it('must increase when either side counts; 0 after 0 is a passkey that does not count', () => {
    expect(counterAdvances(0, 0)).toBe(true);
    expect(counterAdvances(0, 1)).toBe(true);
    expect(counterAdvances(5, 6)).toBe(true);
    expect(counterAdvances(5, 5)).toBe(false);
    expect(counterAdvances(5, 4)).toBe(false);
    expect(counterAdvances(5, 0)).toBe(false);
  });

  it('is read from bytes 33 to 36 of the authenticator data, big-endian', () => {
    const data = new Uint8Array(37);
    data.set([0x01, 0x02, 0x03, 0x04], 33);
    expect(counterOf(data)).toBe(0x01020304);
  });
});

describe('assertions', () => {
  it('an assertion stored as its record reads back as the members sent', () => {
    const a = softAuthenticator(-8);
    const w = a.assert({ challenge: new Uint8Array(32), origin: policy.origins[0]!, rpId: policy.rpId });
    expect(readAssertionRecord(assertionRecord(bytesOf(w)))).toEqual({
      credential_id: w.credential_id,
      client_data_json: w.client_data_json,
      authenticator_data: w.authenticator_data,
      signature: w.signature,
    });
  });

  it('holds with crossOrigin false and with authenticator extension data after the counter', () => {
    const a = softAuthenticator(-7);
    const challenge = new Uint8Array(randomBytes(32));
    const key = passkeyKeyOf(a.spki, -7);
    if (!key.ok) throw new Error(key.check);
    const plain = a.assert({ challenge, origin: policy.origins[0]!, rpId: policy.rpId, crossOrigin: false });
    expect(checkAssertion(bytesOf(plain), key.value, challenge, policy)).toMatchObject({ ok: true });
    // ED flag (0x80) with a CBOR map {"credProtect": 2} after the counter; signed as sent.
    const w = a.assert({ challenge, origin: policy.origins[0]!, rpId: policy.rpId, flags: 0x85 });
    const withExt = bytesOf(w);
    const ext = Buffer.from('a16b6372656450726f7465637402', 'hex');
    const data = Buffer.concat([Buffer.from(withExt.authenticatorData), ext]);
    // Signed by the same authenticator over the longer data.
    const again = fromBase64url(a.signRaw(data, withExt.clientDataJson));
    const checked = checkAssertion({ ...withExt, authenticatorData: data, signature: again }, key.value, challenge, policy);
    expect(checked).toMatchObject({ ok: true });
    // Extension data announced but missing is malformed.
    expect(checkAssertion({ ...withExt, signature: again }, key.value, challenge, policy)).toMatchObject({ ok: false });
  });

  it('refuses an SPKI of the wrong algorithm and RSA keys under 2,048 bits', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const small = new Uint8Array(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' }));
    expect(passkeyKeyOf(small)).toMatchObject({ ok: false });
    const ed = softAuthenticator(-8);
    expect(passkeyKeyOf(ed.spki, -257)).toMatchObject({ ok: false });
    expect(passkeyKeyOf(ed.spki)).toMatchObject({ ok: true, value: { algorithm: -8 } });
  });
});

