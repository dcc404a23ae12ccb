/**
 * A real browser for tests: the system Chromium, headless, driven by playwright-core over the
 * DevTools protocol, with a WebAuthn virtual authenticator standing in for the person's
 * passkey (a platform authenticator that keeps discoverable credentials and verifies the user
 * without a prompt).
 *
 * The browser is found from SVC_CHROMIUM, a chromium or chrome command on PATH, or the usual
 * install paths. Without one, browser suites are skipped with the reason in their title, except
 * under CI (the `CI` variable set), where a missing browser is a failing test: CI installs
 * Chromium itself (.ci/run), so a browser that is not there means the browser tests would
 * silently not run.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { describe, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { postJson, REPO_ROOT, startRelay, type RunningRelay, type StartRelayOptions } from './relay.js';

/** Browser commands looked up on PATH (the names .ci/run checks), after SVC_CHROMIUM. */
const COMMANDS = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

/** Where a browser usually is when PATH does not name it. */
const USUAL_PATHS = [
  '/usr/bin/chromium',
  '/snap/bin/chromium',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export type BrowserLookup = { path: string; missing: null } | { path: null; missing: string };

/** The browser to run, or why there is none. A SVC_CHROMIUM that names nothing runnable is an error, not a fallback. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): BrowserLookup {
  const named = env.SVC_CHROMIUM;
  if (named) {
    return isExecutableFile(named)
      ? { path: named, missing: null }
      : { path: null, missing: `SVC_CHROMIUM=${named} is not an executable file` };
  }
  const onPath = (env.PATH ?? '').split(delimiter).filter(Boolean);
  const candidates = [...COMMANDS.flatMap((name) => onPath.map((dir) => join(dir, name))), ...USUAL_PATHS];
  const found = candidates.find(isExecutableFile);
  if (found) return { path: found, missing: null };
  return {
    path: null,
    missing: `no Chromium found (set SVC_CHROMIUM, or install it: apt-get install -y chromium); looked for ${COMMANDS.join(', ')} on PATH and in ${USUAL_PATHS.join(', ')}`,
  };
}

export const CHROMIUM = findChromium();

/**
 * `describe` for a suite that needs the browser. Without a browser: skipped with the reason in
 * its title, or under CI one failing test that says the browser is missing.
 */
export function describeWithBrowser(title: string, body: () => void): void {
  if (CHROMIUM.missing === null) {
    // A page load, a WebAuthn ceremony and a redirect take seconds on a loaded two-core machine.
    describe(title, { timeout: 60_000 }, body);
  } else if (process.env.CI) {
    const reason = CHROMIUM.missing;
    describe(title, () => {
      it('runs in a real browser, which CI must provide', () => {
        throw new Error(`browser tests cannot run under CI: ${reason}`);
      });
    });
  } else {
    describe.skip(`${title} (skipped: ${CHROMIUM.missing})`, body);
  }
}

/** Launch the found Chromium headless. As root Chromium refuses to start without --no-sandbox. */
export async function launchBrowser(): Promise<Browser> {
  if (CHROMIUM.missing !== null) throw new Error(CHROMIUM.missing);
  const args = ['--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: CHROMIUM.path, headless: true, args, timeout: 30_000 });
}

/** CDP sends binary fields as padded base64; WebAuthn and the relay speak unpadded base64url. */
function base64url(base64: string): string {
  return Buffer.from(base64, 'base64').toString('base64url');
}

/** A credential the virtual authenticator holds (binary fields as unpadded base64url, like a credential's `id`). */
export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  userHandle?: string;
  signCount: number;
}

export interface PasskeyPage {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  /** The credentials the authenticator holds now. */
  credentials(): Promise<VirtualCredential[]>;
  close(): Promise<void>;
}

/**
 * A fresh browser context (its own cookies and storage) with one page whose WebAuthn calls go
 * to a virtual authenticator: CTAP2 over the internal transport (a platform passkey),
 * discoverable credentials, user verification that succeeds, presence given at once.
 */
export async function openPasskeyPage(
  browser: Browser,
  opts: { viewport?: { width: number; height: number } } = {},
): Promise<PasskeyPage> {
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1024, height: 768 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      ctap2Version: 'ctap2_1',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    context,
    page,
    cdp,
    authenticatorId,
    async credentials() {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      return credentials.map((c) => ({
        credentialId: base64url(c.credentialId),
        isResidentCredential: c.isResidentCredential,
        rpId: c.rpId,
        userHandle: c.userHandle === undefined ? undefined : base64url(c.userHandle),
        signCount: c.signCount,
      }));
    },
    close: () => context.close(),
  };
}

/** The folder for a test file's screenshots and other output (test/output/<name>/, not committed). */
export function testOutputDir(name: string): string {
  const dir = join(REPO_ROOT, 'test', 'output', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A port of 127.0.0.1 free at the moment of asking (the OS picks it, the probe lets it go). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (!address || typeof address !== 'object') throw new Error('no free port');
  return address.port;
}

/**
 * The real relay on 127.0.0.1 with public URL http://localhost:<port>: WebAuthn takes a domain,
 * never an IP address, as rp id, so a browser test's relay must be reached as localhost. The
 * port is chosen before the relay starts because the public URL is a setting.
 */
export async function startLocalhostRelay(opts: Omit<StartRelayOptions, 'port' | 'publicUrl'> = {}): Promise<RunningRelay> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const relay = await startRelay({ ...opts, port, publicUrl: `http://localhost:${port}` });
      return { ...relay, url: `http://localhost:${port}` };
    } catch (err) {
      // Another process may take the port between the probe and the listen: try another.
      if (attempt >= 4 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
}

/**
 * Sign in over HTTP with the passkey the page's authenticator already holds, as the web page
 * does on a later visit: passkeys.challenge, an assertion (`navigator.credentials.get`) over
 * the challenge's raw bytes made on the relay's own origin, passkeys.verify. Answers the KEY
 * token of that passkey. Leaves the page on the relay's origin.
 */
export async function passkeySignIn(passkey: PasskeyPage, relayUrl: string): Promise<{ token: string; peerId: string }> {
  const challenge = await postJson(`${relayUrl}/v1/passkeys/challenge`, {});
  if (challenge.status !== 200) throw new Error(`passkeys.challenge refused: ${JSON.stringify(challenge.body)}`);
  await passkey.page.goto(`${relayUrl}/v1/capabilities`);
  const assertion = await passkey.page.evaluate(
    // Runs in the browser (no DOM types here: the test files compile against Node only).
    async ({ hex, rpId }) => {
      const g = globalThis as any;
      const bytes = new Uint8Array(hex.match(/../g)!.map((h: string) => parseInt(h, 16)));
      const b64u = (buf: ArrayBuffer) =>
        g.btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      const got = await g.navigator.credentials.get({ publicKey: { challenge: bytes, rpId, userVerification: 'required' } });
      return {
        credential_id: got.id as string,
        client_data_json: b64u(got.response.clientDataJSON),
        authenticator_data: b64u(got.response.authenticatorData),
        signature: b64u(got.response.signature),
      };
    },
    { hex: challenge.body.challenge as string, rpId: challenge.body.rp_id as string },
  );
  const verified = await postJson(`${relayUrl}/v1/passkeys/verify`, { challenge: challenge.body.challenge, ...assertion });
  if (verified.status !== 200) throw new Error(`passkeys.verify refused: ${JSON.stringify(verified.body)}`);
  return { token: verified.body.token, peerId: verified.body.peer_id };
}
