/**
 * `npm run bench` runs every suite; `npm run bench -- core` (or several names) runs only those.
 * Each suite prints its title, its table and its notes. Add a suite by listing it in SUITES.
 */
import { availableParallelism, loadavg } from 'node:os';
import { formatTable, type Suite } from './harness.js';
import { coreSuite } from './core.js';
import { appendsSuite } from './appends.js';
import { catchUpSuite } from './catch-up.js';
import { seekSuite } from './seek.js';
import { sealedSuite } from './sealed.js';
import { bridgeSuite } from './bridge.js';
import { messagesSuite } from './messages.js';
import { tasksSuite } from './tasks.js';
import { oracleSuite } from './oracle.js';
import { connectorSuite } from './connector.js';
import { toolsSuite } from './tools.js';
import { findingsSuite } from './findings.js';

const SUITES: readonly Suite[] = [coreSuite, appendsSuite, catchUpSuite, seekSuite, bridgeSuite, sealedSuite, messagesSuite, oracleSuite, tasksSuite, connectorSuite, toolsSuite, findingsSuite];

function pick(names: readonly string[]): Suite[] {
  if (names.length === 0) return [...SUITES];
  const known = new Map(SUITES.map((s) => [s.name, s]));
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new Error(`unknown suite ${unknown.join(', ')}; suites: ${SUITES.map((s) => s.name).join(', ')}`);
  }
  return [...new Set(names)].map((n) => known.get(n)!);
}

async function main(names: readonly string[]): Promise<void> {
  const suites = pick(names);
  // Other work on the machine slows every figure; the load average says how much there was.
  const load = loadavg()[0]!.toFixed(2);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs, load ${load} at start`);
  for (const suite of suites) {
    const started = performance.now();
    const report = await suite.run();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`\n== ${report.title ?? suite.title} (${seconds} s)\n`);
    console.log(report.table ?? formatTable(report.rows));
    if (report.notes.length > 0) console.log(`\n${report.notes.join('\n')}`);
  }
}

/** Options that take a value in the next argument (appends: --store postgres, --against <revision>, --db-latency 1ms, …), not a suite name. */
const VALUED_OPTIONS = new Set(['--store', '--against', '--db-latency', '--processes', '--clients', '--rounds']);

/** The suite names among the arguments: options (starting with --) and their values are a suite's own (seek: --full). */
function suiteNames(argv: readonly string[]): string[] {
  return argv.filter((a, i) => !a.startsWith('--') && !VALUED_OPTIONS.has(argv[i - 1] ?? ''));
}

main(suiteNames(process.argv.slice(2))).catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
