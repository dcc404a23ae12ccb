/**
 * Both programs check the Node.js version before anything else loads (launch/node-version.ts):
 * on an older Node they print one line (what they need, what they found, one command that runs
 * them on Node 24) and exit 1, instead of crashing inside better-sqlite3's native binary or
 * failing to find node:sqlite.
 * The end-to-end cases build the real entries with the project's build settings and run them
 * with an older Node found on this machine.
 *
 * @module-tag slow
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_NODE_TOO_OLD, NODE_NEEDED, nodeIsRecentEnough, nodeTooOldLine } from '../launch/node-version.js';
import { REPO_ROOT } from './helpers/relay.js';

describe('the Node.js version rule', () => {
  it('22.13 and later pass (node:sqlite without a flag); anything older, or not a version, does not', () => {
    for (const v of ['22.13.0', 'v22.13.0', '22.13.1', '22.20.0', '23.0.0', '24.21.0', '100.0.0']) expect(nodeIsRecentEnough(v), v).toBe(true);
    for (const v of ['22.12.0', 'v22.12.9', '22.11.9', '22.2.0', 'v20.20.2', '18.19.0', '8.17.0', '', 'v22', 'twenty-two']) expect(nodeIsRecentEnough(v), v).toBe(false);
  });

  it('is the range package.json states in engines.node', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${NODE_NEEDED.major}.${NODE_NEEDED.minor}`);
  });

  it('the line names what is needed, what was found, and a command that reruns the same program on Node 24', () => {
    const line = nodeTooOldLine('svc-relay', 'v20.20.2', '/opt/svc/dist/relay/main.js', ['--port', '8788', '--public-url', "it's here"]);
    expect(line).toBe(
      "svc-relay needs Node.js 22.13 or later; this is Node 20.20.2. Run it with Node 24 in one command: npx -y node@24 /opt/svc/dist/relay/main.js --port 8788 --public-url 'it'\\''s here'",
    );
    expect(line).not.toContain('\n');
  });
});

/** Every `node` on PATH (and the usual system places) whose version is below the one needed. */
function olderNode(): { path: string; version: string } | undefined {
  const candidates = [...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'node')), '/usr/bin/node', '/usr/local/bin/node'];
  for (const path of candidates) {
    const r = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const version = r.status === 0 ? r.stdout.trim() : '';
    if (version !== '' && !nodeIsRecentEnough(version)) return { path, version };
  }
  return undefined;
}

const older = olderNode();

describe('the built entries', () => {
  // Inside the checkout (ignored by git), so the build finds node_modules and package.json's type.
  let out = '';
  beforeAll(() => {
    out = mkdtempSync(join(REPO_ROOT, '.svc-test-build-'));
    const tsc = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', out], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (tsc.status !== 0) throw new Error(`build failed: ${tsc.stdout}${tsc.stderr}`);
  }, 120_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.skipIf(older === undefined)(
    `on an older Node (${older?.version ?? 'none on this machine: skipped'}) each program prints one line and exits 1, and nothing crashes`,
    () => {
      for (const [program, entry] of [
        ['svc-relay', 'relay/main.js'],
        ['svc-bridge', 'bridge/main.js'],
      ] as const) {
        const script = join(out, entry);
        const r = spawnSync(older!.path, [script, '--port', '0'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
        expect(r.signal, program).toBeNull();
        expect(r.status, program).toBe(EXIT_NODE_TOO_OLD);
        expect(r.stdout, program).toBe('');
        expect(r.stderr, program).toBe(`${nodeTooOldLine(program, older!.version, script, ['--port', '0'])}\n`);
        expect(r.stderr, program).toContain(`${program} needs Node.js 22.13 or later; this is Node ${older!.version.replace(/^v/, '')}.`);
      }
    },
    60_000,
  );

  it('on this Node both programs start past the check (--help answers)', () => {
    for (const [usage, entry] of [
      ['Usage: svc-relay', 'relay/main.js'],
      ['svc-bridge              serve MCP over stdio', 'bridge/main.js'],
    ] as const) {
      const r = spawnSync(process.execPath, [join(out, entry), '--help'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
      expect(r.status, entry).toBe(0);
      expect(r.stdout, entry).toContain(usage);
    }
  }, 60_000);
});
