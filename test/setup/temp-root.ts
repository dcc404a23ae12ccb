/**
 * vitest global setup: one temporary folder for the whole run, removed when the run ends, made
 * the temporary folder of the workers and of the programs they start through TMPDIR, which
 * os.tmpdir() reads at every call. The tests make key directories, data directories and packages
 * by the hundred; a test that does not remove its own leaves nothing behind after the run, and a
 * test killed by its timeout neither. Set last, after the other setups made what outlives a
 * worker (the PostgreSQL cluster's folder, owned by another user, stays where that setup puts
 * it), and opened to other users for reading (each folder made inside is still mkdtemp's own
 * 0700) so that a program a test runs as another user finds its way in.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const before = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
