/**
 * The relay's downloadable tools as a user gets them: fetched over HTTP from the real relay,
 * written to a temporary folder, run with `node` as a child process (asynchronously: the relay
 * under test runs in this process and must keep answering while the script talks to it) or
 * imported as an ES module.
 */
import { spawn } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ToolDir {
  readonly dir: string;
  /** The path of a file written into the folder. */
  write(name: string, text: string): string;
  remove(): void;
}

export function toolDir(): ToolDir {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tools-'));
  return {
    dir,
    write(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text, { mode: 0o600 });
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Fetch `path` (e.g. `/sign-post.mjs`) from the relay and write it into `dir`. */
export async function downloadTool(relayUrl: string, path: string, dir: ToolDir): Promise<string> {
  const res = await fetch(`${relayUrl}${path}`);
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
  return dir.write(path.slice(1), await res.text());
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node <script> ...args` with a clean environment (HOME in the tool folder); stdin if given. */
export function runNode(script: string, args: readonly string[], opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: opts.cwd ?? tmpdir(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}

/** Import a downloaded module (a file URL, so the test loads exactly the bytes served). */
export async function importTool<T = any>(path: string): Promise<T> {
  return (await import(/* @vite-ignore */ pathToFileURL(path).href)) as T;
}

/** An Ed25519 PKCS#8 PEM key file (the bridge's key directory format) for a 32-byte seed. */
export function pemOfSeed(seed: Uint8Array): string {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed)]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }) as string;
}

/** The lines of a verify-post run that start with `verdict` and name `check`. */
export function lines(run: Run, verdict: 'PASS' | 'FAIL' | 'SKIP' | 'NOTE', check?: string): string[] {
  return run.stdout.split('\n').filter((l) => l.startsWith(`${verdict}  `) && (check === undefined || l.startsWith(`${verdict}  ${check}:`)));
}
