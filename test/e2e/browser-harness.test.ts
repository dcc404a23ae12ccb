/**
 * The browser harness itself: the system Chromium starts headless, and its virtual
 * authenticator makes a passkey on a loopback page and signs with it, the signature checked
 * here with node:crypto against the public key the browser handed out at creation. The app
 * sign-in test builds on this, so a failure here points at the machine, not at the relay.
 *
 * @module-tag slow
 */
import { createHash, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, findChromium, launchBrowser, openPasskeyPage } from '../helpers/browser.js';

describe('finding the browser', () => {
  it('names SVC_CHROMIUM as the reason when it points at nothing runnable', () => {
    const lookup = findChromium({ SVC_CHROMIUM: '/nonexistent/chromium' });
    expect(lookup.path).toBeNull();
    expect(lookup.missing).toContain('SVC_CHROMIUM=/nonexistent/chromium');
  });

  it('takes SVC_CHROMIUM over the usual paths when it is an executable file', () => {
    const lookup = findChromium({ SVC_CHROMIUM: process.execPath });
    expect(lookup).toEqual({ path: process.execPath, missing: null });
  });

  it('finds a chromium command on PATH before the usual install paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-browser-path-'));
    try {
      writeFileSync(join(dir, 'chromium'), '#!/bin/sh\n', { mode: 0o755 });
      expect(findChromium({ PATH: dir })).toEqual({ path: join(dir, 'chromium'), missing: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The loopback page: plain browser script (the test files are compiled without DOM types), which
 * creates a discoverable credential for rp id localhost and then asks for an assertion over the
 * same challenge, the order the app sign-in page uses on first use.
 */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>harness</title></head><body><p>loopback</p>
<script>
const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const text = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
window.makePasskey = async (challengeText) => {
  const cred = await navigator.credentials.create({ publicKey: {
    rp: { id: 'localhost', name: 'harness' },
    user: { id: new Uint8Array([1, 2, 3, 4]), name: 'harness', displayName: 'harness' },
    challenge: bytes(challengeText),
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  } });
  const got = await navigator.credentials.get({ publicKey: {
    rpId: 'localhost', challenge: bytes(challengeText), userVerification: 'required',
  } });
  return {
    id: cred.id,
    algorithm: cred.response.getPublicKeyAlgorithm(),
    publicKey: text(cred.response.getPublicKey()),
    gotId: got.id,
    clientDataJSON: text(got.response.clientDataJSON),
    authenticatorData: text(got.response.authenticatorData),
    signature: text(got.response.signature),
    userHandle: got.response.userHandle ? text(got.response.userHandle) : null,
  };
};
</script></body></html>`;

/** What the page hands back, binary fields as unpadded base64url. */
interface PasskeyResult {
  id: string;
  algorithm: number;
  publicKey: string;
  gotId: string;
  clientDataJSON: string;
  authenticatorData: string;
  signature: string;
  userHandle: string | null;
}

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

describeWithBrowser('the browser harness', () => {
  let browser: Browser;
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // WebAuthn takes a domain as rp id, never an IP address: the page is opened as localhost.
    origin = `http://localhost:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('creates a passkey on a localhost page and signs a challenge that verifies with its public key', async () => {
    const passkey = await openPasskeyPage(browser);
    try {
      await passkey.page.goto(`${origin}/`);
      const challenge = randomBytes(32);
      const created: PasskeyResult = await passkey.page.evaluate(
        (challengeText) => (globalThis as unknown as { makePasskey(c: string): Promise<PasskeyResult> }).makePasskey(challengeText),
        b64url(challenge),
      );

      expect(created.algorithm).toBe(-7);
      expect(created.gotId).toBe(created.id);
      expect(created.userHandle).toBe(b64url(Buffer.from([1, 2, 3, 4])));

      const clientData = JSON.parse(Buffer.from(created.clientDataJSON, 'base64url').toString('utf8'));
      expect(clientData).toMatchObject({ type: 'webauthn.get', challenge: b64url(challenge), origin });

      const authData = Buffer.from(created.authenticatorData, 'base64url');
      expect(authData.subarray(0, 32)).toEqual(createHash('sha256').update('localhost').digest());
      const flags = authData[32]!;
      expect(flags & 0x01).toBe(0x01); // user present
      expect(flags & 0x04).toBe(0x04); // user verified

      // WebAuthn §6.3.3: the signature covers authenticatorData ‖ SHA-256(clientDataJSON).
      const signed = Buffer.concat([authData, createHash('sha256').update(Buffer.from(created.clientDataJSON, 'base64url')).digest()]);
      const key = { key: Buffer.from(created.publicKey, 'base64url'), format: 'der' as const, type: 'spki' as const };
      const signature = Buffer.from(created.signature, 'base64url');
      expect(verify('sha256', signed, key, signature)).toBe(true);
      signed[0]! ^= 1;
      expect(verify('sha256', signed, key, signature)).toBe(false);

      const held = await passkey.credentials();
      expect(held).toHaveLength(1);
      expect(held[0]).toMatchObject({ rpId: 'localhost', isResidentCredential: true, credentialId: created.id });
    } finally {
      await passkey.close();
    }
  });
});
