// A passkey author's signature on a post (protocol/objects.md §4 and §13 step 4): a WebAuthn
// assertion whose challenge is H(L("object-signature") ‖ object_id), checked as the relay
// checks a sign-in (protocol/api-notes.md §3) under the rp id and origins the host publishes.
// The signature counter is the relay's to watch; a reader cannot.

import { concat, equal, fromB64u, fromUtf8, label, labelledHash, sha256, toB64u, toHex, utf8 } from './bytes.js';

const UP = 0x01;
const UV = 0x04;

/** A DER ECDSA signature (SEQUENCE of two INTEGERs) as the 64 bytes r ‖ s WebCrypto verifies. */
function rawEcdsa(der) {
  const fail = () => {
    throw new Error('signature.value: not a DER ECDSA signature');
  };
  if (der[0] !== 0x30 || der[1] !== der.length - 2) fail();
  const out = new Uint8Array(64);
  let at = 2;
  for (let part = 0; part < 2; part++) {
    if (der[at] !== 0x02) fail();
    let len = der[at + 1];
    let start = at + 2;
    at = start + len;
    if (at > der.length) fail();
    while (len > 32 && der[start] === 0) {
      start++;
      len--;
    }
    if (len > 32) fail();
    out.set(der.subarray(start, start + len), part * 32 + (32 - len));
  }
  if (at !== der.length) fail();
  return out;
}

async function verifyWith(keyAlgorithm, spki, signature, data) {
  if (keyAlgorithm === 'ES256') {
    const key = await crypto.subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    return crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, rawEcdsa(signature), data);
  }
  if (keyAlgorithm === 'EdDSA') {
    const key = await crypto.subtle.importKey('spki', spki, { name: 'Ed25519' }, false, ['verify']);
    return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, data);
  }
  if (keyAlgorithm === 'RS256') {
    const key = await crypto.subtle.importKey('spki', spki, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
    return crypto.subtle.verify({ name: 'RSASSA-PKCS1-v1_5' }, key, signature, data);
  }
  throw new Error(`signature.key_algorithm: ${String(keyAlgorithm)} is not ES256, EdDSA or RS256`);
}

/** Throws naming the check that failed; `passkeys` is `{rp_id, origins}` or null. */
export async function checkPasskeySignature(sig, author, objectId, passkeys) {
  if (!passkeys || typeof passkeys.rp_id !== 'string' || !Array.isArray(passkeys.origins)) {
    throw new Error('a passkey signature, and this host publishes no rp id and origins to check it under');
  }
  const spki = fromB64u(sig.public_key, 'signature.public_key');
  if (toHex(await labelledHash('passkey', spki)) !== author) throw new Error("the signing passkey is not the author's KEY");
  const clientBytes = fromB64u(sig.client_data_json, 'signature.client_data_json');
  let client;
  try {
    client = JSON.parse(fromUtf8(clientBytes, 'client_data_json'));
  } catch {
    throw new Error('client_data_json: not JSON');
  }
  if (!client || client.type !== 'webauthn.get') throw new Error('client_data_json.type: must be webauthn.get');
  const challenge = await sha256(label('object-signature'), objectId);
  if (client.challenge !== toB64u(challenge)) throw new Error('client_data_json.challenge: is not H(L("object-signature") ‖ object id)');
  if (!passkeys.origins.includes(client.origin)) throw new Error('client_data_json.origin: not an origin of this service');
  if (client.crossOrigin === true || client.topOrigin !== undefined) throw new Error('client_data_json: made inside another site');
  const data = fromB64u(sig.authenticator_data, 'signature.authenticator_data');
  if (data.length < 37) throw new Error('authenticator_data: under 37 bytes');
  if (!equal(data.subarray(0, 32), await sha256(utf8(passkeys.rp_id)))) throw new Error('authenticator_data: rp id hash is not this service');
  if ((data[32] & UP) === 0 || (data[32] & UV) === 0) throw new Error('authenticator_data: user presence or verification not set');
  const signed = concat(data, await sha256(clientBytes));
  if (!(await verifyWith(sig.key_algorithm, spki, fromB64u(sig.value, 'signature.value'), signed))) {
    throw new Error("the author's passkey signature does not verify");
  }
}
