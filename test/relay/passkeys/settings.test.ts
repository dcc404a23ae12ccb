/**
 * The operator's passkey settings on the svc-relay command line (relay/cli.ts): --no-passkeys
 * and SVC_PASSKEYS=off turn passkeys off; --passkey-rp-id / SVC_PASSKEY_RP_ID and the repeatable
 * --passkey-origin / SVC_PASSKEY_ORIGINS (comma separated) set what assertions must name; a
 * value that is no host name or no origin is a usage error. Run as a real process.
 *
 * @module-tag slow
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, spawnRelay, tempDataDir, relayEntry } from '../../helpers/relay.js';

async function challengeOf(args: string[], env: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const relay = await spawnRelay(tempDataDir(), { args, env });
  try {
    const r = await fetch(`${relay.url}/v1/passkeys/challenge`, { method: 'POST' });
    return { status: r.status, body: await r.json() };
  } finally {
    await relay.kill();
  }
}

function usageError(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...relayEntry(), '--port', '0', '--data', tempDataDir(), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('passkey settings', () => {
  it('default: rp_id and origin from the public URL', async () => {
    const r = await challengeOf(['--public-url', 'https://relay.example']);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ rp_id: 'relay.example', origins: ['https://relay.example'] });
  }, 60_000);

  it('--passkey-rp-id and repeated --passkey-origin set them; so do SVC_PASSKEY_RP_ID and SVC_PASSKEY_ORIGINS', async () => {
    const flags = await challengeOf(['--passkey-rp-id', 'example.org', '--passkey-origin', 'https://example.org', '--passkey-origin', 'https://app.example.org']);
    expect(flags.body).toMatchObject({ rp_id: 'example.org', origins: ['https://example.org', 'https://app.example.org'] });
    const env = await challengeOf([], { SVC_PASSKEY_RP_ID: 'example.net', SVC_PASSKEY_ORIGINS: 'https://example.net, https://id.example.net' });
    expect(env.body).toMatchObject({ rp_id: 'example.net', origins: ['https://example.net', 'https://id.example.net'] });
  }, 60_000);

  it('--no-passkeys and SVC_PASSKEYS=off answer PASSKEYS_UNAVAILABLE (501)', async () => {
    for (const [args, env] of [[['--no-passkeys'], {}], [[], { SVC_PASSKEYS: 'off' }]] as [string[], Record<string, string>][]) {
      const r = await challengeOf(args, env);
      expect(r.status).toBe(501);
      expect(r.body.error.code).toBe('PASSKEYS_UNAVAILABLE');
    }
  }, 60_000);

  it('an origin that is not exactly an origin, or an rp_id that is not a host name, is a usage error (exit 2)', async () => {
    const origin = await usageError(['--passkey-origin', 'https://relay.example/path']);
    expect(origin.code).toBe(2);
    expect(origin.stderr).toContain('--passkey-origin: not an origin');
    const rp = await usageError(['--passkey-rp-id', 'https://relay.example']);
    expect(rp.code).toBe(2);
    expect(rp.stderr).toContain('--passkey-rp-id: not a lowercase host name');
  }, 60_000);
});
