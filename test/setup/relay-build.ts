/**
 * vitest global setup: the relay compiled once per test run for the relays and `svc-relay`
 * commands the tests spawn (test/helpers/relay-build.ts says why and where). A failed build
 * fails only the tests that spawn a relay, with the build's output, not the whole run.
 */
import { rmSync } from 'node:fs';
import { buildRelay, RELAY_BUILD_ERROR_ENV, RELAY_MAIN_ENV, relayBuildDir } from '../helpers/relay-build.js';

export default async function setup(): Promise<() => void> {
  if (process.env.SVC_TEST_RELAY === 'sources') return () => {};
  const dir = relayBuildDir();
  try {
    process.env[RELAY_MAIN_ENV] = await buildRelay(dir);
  } catch (e) {
    process.env[RELAY_BUILD_ERROR_ENV] = `compiling the relay for the tests failed: ${(e as Error).message}`;
  }
  return () => rmSync(dir, { recursive: true, force: true });
}
