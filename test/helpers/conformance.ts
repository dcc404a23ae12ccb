/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, its `server` mode)
 * run against one Streamable HTTP endpoint: which of its server scenarios apply to svc, which
 * are skipped and why, and a runner that starts the suite's CLI once per scenario and reads
 * back every check it wrote (`checks.json` in its output folder).
 *
 * Many scenarios call fixtures of the suite's own reference server ("everything server"):
 * tools, prompts and resources named `test_*` and `test://...`. svc serves its own tools,
 * resources and prompts, so those scenarios are skipped by name; what they check in general
 * (an error as an `isError` result, a resource read as text with its type, a template read,
 * a subscription) is checked on svc's own surface in test/tools/conformance.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './relay.js';

const CLI = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

const FIXTURE = 'calls a fixture of the suite\'s reference server';
const NO_LOGGING = 'svc offers no logging capability: tools tell everything in their result';

/** Server scenarios svc does not run, each with the reason. */
export const SKIPPED: Readonly<Record<string, string>> = {
  'logging-set-level': NO_LOGGING,
  'tools-call-with-logging': NO_LOGGING,
  'completion-complete': 'svc offers no completions (no `completions` capability)',
  'tools-call-with-progress': 'svc tools answer in one result and send no progress notifications',
  'tools-call-sampling': 'svc never asks the client to sample (no sampling)',
  'tools-call-elicitation': 'svc never asks the client for input (no elicitation)',
  'elicitation-sep1034-defaults': 'svc never asks the client for input (no elicitation)',
  'elicitation-sep1330-enums': 'svc never asks the client for input (no elicitation)',
  'tools-call-image': 'svc tools answer text only (no image content)',
  'tools-call-audio': 'svc tools answer text only (no audio content)',
  'resources-read-binary': 'svc resources are text only (no blob contents)',
  'prompts-get-with-image': 'svc prompts are text only (no image content)',
  'tools-call-simple-text': `${FIXTURE} (tool test_simple_text)`,
  'tools-call-embedded-resource': `${FIXTURE} (tool test_embedded_resource)`,
  'tools-call-mixed-content': `${FIXTURE} (tool test_multiple_content_types)`,
  'tools-call-error': `${FIXTURE} (tool test_error_handling)`,
  'json-schema-2020-12': `${FIXTURE} (tool json_schema_2020_12_tool)`,
  'resources-read-text': `${FIXTURE} (resource test://static-text)`,
  'resources-templates-read': `${FIXTURE} (template test://template/{id}/data)`,
  'resources-subscribe': `${FIXTURE} (test://watched-resource; svc subscribes only its own svc:// addresses)`,
  'resources-unsubscribe': `${FIXTURE} (test://watched-resource; svc subscribes only its own svc:// addresses)`,
  'prompts-get-simple': `${FIXTURE} (prompt test_simple_prompt)`,
  'prompts-get-with-args': `${FIXTURE} (prompt test_prompt_with_arguments)`,
  'prompts-get-embedded-resource': `${FIXTURE} (prompt test_prompt_with_embedded_resource)`,
};

/** Server scenarios that apply to any svc endpoint. */
export const APPLICABLE: readonly string[] = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'server-sse-multiple-streams',
  'server-sse-polling',
  'dns-rebinding-protection',
];

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: unknown;
}

function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every server scenario the installed suite knows (`conformance list --server`). */
export async function serverScenarios(): Promise<string[]> {
  const { stdout } = await run(['list', '--server']);
  return [...stdout.matchAll(/^\s*- ([a-z0-9-]+)/gm)].map((m) => m[1]!);
}

/** Run one scenario against `url`; answers the checks it recorded. */
export async function runScenario(url: string, scenario: string): Promise<Check[]> {
  const out = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
  try {
    const r = await run(['server', '--url', url, '--scenario', scenario, '-o', out]);
    const checks: Check[] = [];
    for (const d of readdirSync(out)) checks.push(...(JSON.parse(readFileSync(join(out, d, 'checks.json'), 'utf8')) as Check[]));
    if (checks.length === 0) throw new Error(`conformance ${scenario} wrote no checks (exit ${r.code}): ${r.stderr || r.stdout}`);
    return checks;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The failed checks of these scenarios against `url`, as readable lines (empty: all passed). */
export async function failures(url: string, scenarios: readonly string[]): Promise<string[]> {
  const results = await Promise.all(scenarios.map(async (s) => ({ s, checks: await runScenario(url, s) })));
  return results.flatMap(({ s, checks }) =>
    checks.filter((c) => c.status === 'FAILURE').map((c) => `${s} / ${c.id}: ${c.errorMessage ?? ''} ${JSON.stringify(c.details ?? {}).slice(0, 300)}`),
  );
}
