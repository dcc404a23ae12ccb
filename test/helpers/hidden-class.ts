/**
 * Whether objects that should be alike share one V8 hidden class (map) with fast properties.
 * An accessor defined with a new closure per object gives each object a map of its own, then
 * dictionary properties; and V8 keeps that closure, and everything it holds, alive through the
 * next young-generation collection. The probe (hidden-class-probe.ts) runs as a process of its
 * own with V8's natives syntax (`%HasFastProperties`, `%HaveSameMap`): a test worker loads many
 * files one after another (vitest `isolate: false`), and flags set there would stay set.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './relay.js';

/** Whether the objects looked at are alike before their lazy members are read, and after. */
export interface HiddenClassReport {
  readonly before: boolean;
  readonly after: boolean;
}

/**
 * `answers`: tool answers with their text made on first read; `routes`: a route's JSON answers
 * called in process (the probe starts a relay for these only).
 */
export async function probeHiddenClasses(what: 'answers' | 'routes'): Promise<HiddenClassReport> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', 'test/helpers/hidden-class-probe.ts', what], {
    cwd: REPO_ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'silent' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as HiddenClassReport;
}
