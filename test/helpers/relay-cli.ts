/**
 * Running `svc-relay <command>` as its own process (`relayEntry()`: the run's compiled relay),
 * for the backup and restore commands: exit code, stdout and stderr.
 */
import { spawn } from 'node:child_process';
import { REPO_ROOT, relayEntry } from './relay.js';

export interface CliRun {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Start a command; `done` resolves when it exits. */
export function startCli(args: string[], env: Record<string, string> = {}): { done: Promise<CliRun> } {
  const child = spawn(process.execPath, [...relayEntry(), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliRun>((resolve) => child.on('exit', (code, signal) => resolve({ code: code ?? signal ?? 'unknown', stdout, stderr })));
  return { done };
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return startCli(args, env).done;
}
