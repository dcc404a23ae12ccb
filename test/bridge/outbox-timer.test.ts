/**
 * The outbox's background retry never keeps a process alive: a Node process that queued a write
 * for a relay that cannot be reached (a real RelayClient, a real cache file, a closed port) and
 * has nothing else to do ends by itself, its write still on disk for the next bridge.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openOutbox } from '../../bridge/outbox/store.js';
import { cachePath } from '../../bridge/cache/cache-file.js';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { tempHome } from '../helpers/bridge.js';
import { REPO_ROOT } from '../helpers/relay.js';
import { stablePort } from '../helpers/ports.js';

const mod = (path: string) => JSON.stringify(pathToFileURL(join(REPO_ROOT, path)).href);

describe('the outbox timer', () => {
  it('does not keep a process alive that queued a write and has nothing else to do', async () => {
    const home = tempHome('svc-outbox-timer-');
    // Nothing listens there, and no other worker's relay takes it meanwhile (test/helpers/ports.ts).
    const port = await stablePort();
    const script = join(dirname(home), 'queue.mts');
    writeFileSync(
      script,
      `import { openCache } from ${mod('bridge/cache/cache-file.ts')};
import { RelayClient } from ${mod('bridge/relay-client.ts')};
import { chooseKey, openKeyDirectory } from ${mod('bridge/keys/keys.ts')};
import { openOutbox } from ${mod('bridge/outbox/store.ts')};
import { Outbox } from ${mod('bridge/outbox/send.ts')};
const dir = openKeyDirectory(${JSON.stringify(home)});
const key = chooseKey(dir, undefined);
const api = new RelayClient({ api: new URL('http://127.0.0.1:${port}'), key, dir });
const cache = openCache(dir, key.name);
const outbox = new Outbox({ api, cache, now: Date.now, log: (l) => process.stderr.write(l + '\\n') }, openOutbox(cache.path), { maxItems: 10, maxBytes: 1 << 20 });
outbox.queue({ kind: 'post', target: 'space:s', label: 's', path: '/v1/spaces/s/posts', query: {}, body: { kind: 'obs' }, idempotencyKey: 'k-1', check: {} });
await outbox.flush();
process.stdout.write('queued and tried once\\n');
`,
    );
    try {
      const run = await new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        // A timer that held the process would retry for ever: give up long after the first retry is due.
        const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(guard);
          resolve({ code, out, err });
        });
      });
      expect(run.err).toContain('queued in the outbox');
      expect(run.out).toBe('queued and tried once\n');
      expect(run.code).toBe(0);
      const store = openOutbox(cachePath(openKeyDirectory(home), 'default'));
      try {
        expect(store.summary(`http://127.0.0.1:${port}`, Date.now())).toMatchObject({ count: 1, lastError: { text: expect.stringMatching(/the relay at .* is unreachable/) } });
      } finally {
        store.close();
      }
    } finally {
      rmSync(dirname(home), { recursive: true, force: true });
    }
  }, 60_000);
});
