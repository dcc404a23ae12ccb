// The app approval page. Signs the person in with a passkey (passkeys.challenge, the browser's
// WebAuthn prompt, passkeys.verify), shows the app's request (authorizations.get) and sends the
// answer (approve or decline), then follows the relay's redirect back to the app.
// Every string an app supplied is set with textContent, never parsed as HTML. The KEY token
// lives in this page's memory only.
'use strict';

(() => {
  const el = (id) => document.getElementById(id);
  const status = el('status');
  const signInButton = el('sign-in');
  const approveButton = el('approve');
  const declineButton = el('decline');
  const params = new URLSearchParams(window.location.search);
  const requestId = params.get('request');
  const pageError = params.get('error');
  /** Where this browser's passkey credential id is remembered, so later visits only sign in. */
  const CREDENTIAL_KEY = 'svc.passkey.credential';
  let token = null;

  const PAGE_ERRORS = {
    unknown_app: 'The app that sent you here is not known to this service, or its description could not be used. Go back to the app and connect again.',
    wrong_return_address: 'The app asked to return you to an address it did not register. Nothing was shared. Go back to the app and connect again.',
    malformed: 'The app sent an incomplete or malformed request. Nothing was shared. Go back to the app and connect again.',
    busy: 'This service is busy. Wait a minute, then go back to the app and connect again.',
    unavailable: 'This service could not take the request right now. Try again from the app in a few minutes.',
  };

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle('error', Boolean(isError));
  }

  function hexToBytes(hex) {
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    return out;
  }

  function toB64u(buffer) {
    const bytes = new Uint8Array(buffer);
    let text = '';
    for (const b of bytes) text += String.fromCharCode(b);
    return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function fromB64u(text) {
    const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
    const raw = atob(b64);
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  /** Call the relay; answers the JSON body, or throws an Error with the relay's message and fix. */
  async function api(method, path, body) {
    const headers = { accept: 'application/json' };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(new URL(path, window.location.href), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    let json = null;
    try {
      json = await res.json();
    } catch {
      json = null;
    }
    if (!res.ok) {
      const e = json && json.error;
      const err = new Error(e ? `${e.message} ${e.fix || ''}`.trim() : `The service answered ${res.status}.`);
      err.code = e ? e.code : undefined;
      throw err;
    }
    return json;
  }

  function setBusy(busy) {
    signInButton.disabled = busy;
    approveButton.disabled = busy;
    declineButton.disabled = busy;
  }

  /** One WebAuthn assertion over the challenge, as passkeys.verify takes it. */
  async function assertion(challenge, rpId, credentialId) {
    const options = { challenge, rpId, userVerification: 'required', timeout: 120000 };
    if (credentialId) options.allowCredentials = [{ type: 'public-key', id: fromB64u(credentialId) }];
    const cred = await navigator.credentials.get({ publicKey: options });
    if (!cred) throw new Error('No passkey was used.');
    return {
      credential_id: toB64u(cred.rawId),
      client_data_json: toB64u(cred.response.clientDataJSON),
      authenticator_data: toB64u(cred.response.authenticatorData),
      signature: toB64u(cred.response.signature),
    };
  }

  /** A new passkey for this service: its id, SPKI public key and COSE algorithm. */
  async function createPasskey(challenge, rpId, algorithms) {
    const userId = crypto.getRandomValues(new Uint8Array(16));
    const cred = await navigator.credentials.create({
      publicKey: {
        challenge,
        rp: { id: rpId, name: 'svc' },
        user: { id: userId, name: 'svc KEY', displayName: 'svc KEY' },
        pubKeyCredParams: algorithms.map((alg) => ({ type: 'public-key', alg })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        attestation: 'none',
        timeout: 120000,
      },
    });
    if (!cred) throw new Error('No passkey was created.');
    const spki = cred.response.getPublicKey();
    if (!spki) throw new Error('This browser did not give the passkey\'s public key; try another browser.');
    return { credentialId: toB64u(cred.rawId), publicKey: toB64u(spki), algorithm: cred.response.getPublicKeyAlgorithm() };
  }

  /** passkeys.verify with an assertion (and, to register, the new passkey's key); answers the token. */
  async function verify(challengeHex, asserted, created) {
    const body = { challenge: challengeHex, label: 'app approval page', ttl_seconds: 3600, ...asserted };
    if (created) Object.assign(body, { public_key: created.publicKey, algorithm: created.algorithm });
    const verified = await api('POST', '../v1/passkeys/verify', body);
    try {
      window.localStorage.setItem(CREDENTIAL_KEY, asserted.credential_id);
    } catch {
      // Private browsing: the next visit asks the authenticator which passkey to use.
    }
    return verified.token;
  }

  /**
   * Sign in with the passkey this person already has for the service: the one this browser
   * remembers, else whichever the authenticator offers (a discoverable credential, so clearing
   * site data or another browser sharing synced passkeys still finds the same KEY). Answers
   * null when the authenticator offered none the service knows.
   */
  async function existingPasskey(known) {
    const ch = await api('POST', '../v1/passkeys/challenge', {});
    let asserted;
    try {
      asserted = await assertion(hexToBytes(ch.challenge), ch.rp_id, known);
    } catch (e) {
      // With no remembered passkey, a refusal means none is on this device (or the person
      // declined the prompt): the caller offers to make one. A remembered one that fails is the
      // person's answer, and stays theirs.
      if (!known && e && e.name === 'NotAllowedError') return null;
      throw e;
    }
    try {
      return await verify(ch.challenge, asserted, null);
    } catch (e) {
      if (e && e.code === 'PASSKEY_NOT_REGISTERED') return null;
      throw e;
    }
  }

  /** First use: a new passkey, registered with one assertion over the same challenge. */
  async function newPasskey() {
    const ch = await api('POST', '../v1/passkeys/challenge', {});
    const challenge = hexToBytes(ch.challenge);
    const created = await createPasskey(challenge, ch.rp_id, ch.algorithms);
    return verify(ch.challenge, await assertion(challenge, ch.rp_id, created.credentialId), created);
  }

  async function signIn() {
    if (!window.PublicKeyCredential || !navigator.credentials) {
      say('This browser cannot use passkeys. Open the link in a browser that can.', true);
      return;
    }
    setBusy(true);
    say('Waiting for your passkey…');
    try {
      let known = null;
      try {
        known = window.localStorage.getItem(CREDENTIAL_KEY);
      } catch {
        known = null;
      }
      token = await existingPasskey(known);
      if (token === null) {
        say('No passkey for this service on this device yet: creating one…');
        token = await newPasskey();
      }
      signInButton.hidden = true;
      await showRequest();
    } catch (e) {
      const cancelled = e && e.name === 'NotAllowedError';
      say(cancelled ? 'No passkey was used. Press "Sign in with a passkey" to try again.' : `Could not sign in: ${e.message}`, true);
      setBusy(false);
    }
  }

  async function showRequest() {
    const r = await api('GET', `../v1/authorizations/${encodeURIComponent(requestId)}`);
    el('app-name').textContent = r.app.name || 'An app that gave no name';
    el('app-publisher').textContent = r.app.publisher || 'Not given';
    el('return-address').textContent = r.return_address;
    el('access').textContent = r.write ? 'read and write' : 'read only';
    setBusy(false);
    if (r.status !== 'waiting') {
      const why = { approved: 'This request was already allowed.', declined: 'This request was already declined.', expired: 'This request has expired.' };
      say(`${why[r.status] || 'This request cannot be answered.'} Start again from the app.`, true);
      return;
    }
    approveButton.hidden = false;
    declineButton.hidden = false;
    say('Signed in. Check the request, then allow or decline it.');
    el('request').focus();
  }

  async function answer(kind) {
    setBusy(true);
    say(kind === 'approve' ? 'Allowing…' : 'Declining…');
    try {
      const r = await api('POST', `../v1/authorizations/${encodeURIComponent(requestId)}/${kind}`);
      say('Returning you to the app…');
      window.location.assign(r.redirect_to);
    } catch (e) {
      say(e.message, true);
      setBusy(false);
    }
  }

  if (pageError !== null || !requestId) {
    signInButton.hidden = true;
    say(Object.hasOwn(PAGE_ERRORS, pageError || '') ? PAGE_ERRORS[pageError] : PAGE_ERRORS.malformed, true);
    return;
  }
  signInButton.addEventListener('click', signIn);
  approveButton.addEventListener('click', () => answer('approve'));
  declineButton.addEventListener('click', () => answer('decline'));
})();
