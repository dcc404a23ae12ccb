/**
 * vitest global setup: the one-file bridge, built once per test run (test/helpers/bundle.ts
 * says why and where), and the folder where the run's bridges keep its compiled code
 * (SVC_COMPILE_CACHE): each test's key directory is new, and each would otherwise compile the
 * bundle and write its code cache. A failed build (sources that do not compile) fails only the tests that
 * run the bundle, with the build's output, not the whole run.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_ENV, BUNDLE_ERROR_ENV, COMPILE_CACHE_ENV, buildBridgeBundle } from '../helpers/bundle.js';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-bundle-'));
  const file = join(dir, 'bridge.mjs');
  try {
    buildBridgeBundle(file);
    process.env[BUNDLE_ENV] = file;
    mkdirSync(join(dir, 'compile'), { mode: 0o700 });
    process.env[COMPILE_CACHE_ENV] = join(dir, 'compile');
  } catch (e) {
    process.env[BUNDLE_ERROR_ENV] = (e as Error).message;
  }
  return () => rmSync(dir, { recursive: true, force: true });
}
