/**
 * The svc-relay command line (relay/main.ts) as an operator meets it: help, usage errors, and
 * the line that says where it listens, run as a real process through tsx.
 *
 * @module-tag slow
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, spawnRelay, tempDataDir, relayEntry } from '../helpers/relay.js';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run relay/main.ts with `args`; stop it with SIGTERM once `until` matches its stdout. */
function runRelay(args: string[], until?: RegExp): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...relayEntry(), ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`relay did not finish: ${stderr}`));
    }, 30_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (until?.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('svc-relay on the command line', () => {
  it('-h and --help print the usage and exit 0', async () => {
    for (const flag of ['-h', '--help']) {
      const r = await runRelay([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Usage: svc-relay');
      expect(r.stdout).toContain('--public-url');
    }
  }, 60_000);

  it('an unknown option is a usage error (exit 2) that names it and shows the usage', async () => {
    const r = await runRelay(['--prot', '8787']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'--prot'");
    expect(r.stderr).toContain('Usage: svc-relay');
  }, 60_000);

  it('the listening line gives the bound address, and the public URL when one is set', async () => {
    const r = await runRelay(['--port', '0', '--data', tempDataDir(), '--public-url', 'https://relay.example'], /listening on .*\n/);
    // Its own line, among the request log's JSON lines (Fastify's own "Server listening" comes first).
    expect(r.stdout).toMatch(/^svc-relay listening on http:\/\/127\.0\.0\.1:\d+ \(public URL https:\/\/relay\.example\)$/m);
  }, 60_000);

  it('a port already in use is one line on stderr naming the address and --port, and exit code 2', async () => {
    const first = await spawnRelay(tempDataDir());
    try {
      const port = new URL(first.url).port;
      const r = await runRelay(['--port', port, '--data', tempDataDir()]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^svc-relay: 127\\.0\\.0\\.1:${port} is already in use; pick another port with --port`));
      expect(r.stderr).not.toContain('    at ');
    } finally {
      await first.kill();
    }
  }, 60_000);

  it('a data directory it cannot open is one line naming it and what to check, exit 1, no stack', async () => {
    const file = join(tempDataDir(), 'a-file');
    writeFileSync(file, 'not a directory');
    const r = await runRelay(['--port', '0', '--data', join(file, 'data')]);
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc-relay: cannot open the database in .*a-file\/data: .*Check that the directory exists and this user may read and write it/);
    expect(r.stderr).not.toContain('    at ');
  });
});
