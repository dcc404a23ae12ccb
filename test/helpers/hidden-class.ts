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

export interface HiddenClassReport {
  /** Tool answers with their text made on first read: alike before any text is read. */
  readonly answersBefore: boolean;
  /** …and after some were read. */
  readonly answersAfter: boolean;
  /** A route's JSON answers called in process: alike before their text and headers are read. */
  readonly routeBefore: boolean;
  readonly routeAfter: boolean;
}

export async function probeHiddenClasses(): Promise<HiddenClassReport> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', 'test/helpers/hidden-class-probe.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'silent' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as HiddenClassReport;
}
