/**
 * `npm run bench -- appends --against <revision>`: the SQLite append figures of this checkout
 * beside those of another revision, measured in the same run.
 *
 * The other revision's sources are taken from git (`git archive`) into a temporary directory
 * that uses this checkout's installed packages, and both relays run as their own processes on
 * their own SQLite files, started the same way (`relay/main.ts` through tsx, every rate limit
 * off). The clients are this checkout's (bench/appends-cases.ts `runHttp`): 1 KiB signed
 * appends at 1, 16 and 64 clients into one SPACE and into 64 SPACES. Every round runs every
 * case on both relays back to back, the order alternating from round to round, so whatever else
 * the machine does falls on both alike.
 *
 * For each case: the best round of each relay (as the other suites report) and the median
 * round, and "after/before", this checkout's figure over the other's. A store change is held to
 * falling no more than 10% (the interface the relay's stores share, relay/store/database.ts,
 * made every statement asynchronous for PostgreSQL's sake); the verdict line says whether the
 * lowest case met that. Progress goes to stderr on a terminal only.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpawnedRelay } from '../test/helpers/relay.js';
import { REPO_ROOT } from '../test/helpers/relay.js';
import { best, latencyOf, LAYOUTS, ROUND_MS, runHttp, setUpWriters, WARMUP_MS, type CaseResult, type Layout, type Space, type Writer } from './appends-cases.js';
import { median, progress, type Row, type SuiteReport } from './harness.js';
import { spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const CLIENTS = [1, 16, 64] as const;
const BYTES = 1024;
/** How far the figures may fall against the other revision. */
const MOST_FALL = 0.1;
/** More rounds than the other suites' five: two relays' figures are compared, each the best of its rounds. */
const ROUNDS = 7;

interface Side {
  label: string;
  relay: SpawnedRelay;
  writers: Writer[];
  hot: Space;
  spread: Space[];
}

function git(args: string[]): string {
  const r = spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`--against needs git on PATH: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** The other revision's sources in a temporary directory, on this checkout's node_modules. */
export function checkOut(revision: string): { commit: string; root: string } {
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`]);
  } catch {
    throw new Error(`--against ${revision}: not a commit of this checkout (try a commit id, a tag or a branch; \`git log --oneline\` lists them)`);
  }
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-against-'));
  const tar = join(root, 'sources.tar');
  git(['archive', '--format=tar', '-o', tar, commit]);
  const untar = spawnSync('tar', ['-xf', tar, '-C', root], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`unpacking ${commit}: ${untar.stderr.trim()}`);
  rmSync(tar);
  if (!existsSync(join(root, 'relay/main.ts'))) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`--against ${revision}: that revision has no relay/main.ts to start`);
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  return { commit, root };
}

export async function runAgainst(revision: string): Promise<SuiteReport> {
  const { commit, root } = checkOut(revision);
  const short = commit.slice(0, 10);
  const dirs = [tempDataDir('svc-bench-before-'), tempDataDir('svc-bench-after-')];
  const relays: SpawnedRelay[] = [];
  const sides: Side[] = [];
  try {
    progress(`starting the relay of ${short} and this checkout's`);
    const before = await spawnBenchRelay(dirs[0]!, {}, [], root);
    relays.push(before);
    const after = await spawnBenchRelay(dirs[1]!);
    relays.push(after);
    progress('KEYS and SPACES');
    sides.push({ label: `before (${short})`, relay: before, ...(await setUpWriters(before.url, CLIENTS)) });
    sides.push({ label: 'after (this checkout)', relay: after, ...(await setUpWriters(after.url, CLIENTS)) });

    const key = (layout: Layout, c: number, s: Side) => `http 1 KiB ${layout} ×${c} ${s.label}`;
    const results = new Map<string, CaseResult>();
    const total = LAYOUTS.length * CLIENTS.length * sides.length;
    for (let round = 0; round < ROUNDS; round++) {
      let n = 0;
      for (const layout of LAYOUTS) {
        for (const c of CLIENTS) {
          const order = round % 2 === 0 ? sides : [...sides].reverse();
          for (const s of order) {
            const name = key(layout, c, s);
            progress(`round ${round + 1}/${ROUNDS}, case ${++n}/${total}: ${name}`);
            const expected = Math.max(1500, best(results.get(name)?.opsPerSec ?? [0]));
            const r = await runHttp([s.relay.url], s.writers, layout, s.hot, s.spread, BYTES, c, expected);
            const acc = results.get(name) ?? { opsPerSec: [], latencyMs: [] };
            acc.opsPerSec.push(...r.opsPerSec);
            acc.latencyMs.push(...r.latencyMs);
            results.set(name, acc);
          }
        }
      }
    }
    progress('');

    const rows: Row[] = [];
    const notes: string[] = [];
    // Judged on the best rounds, as every suite reports its figures (bench/appends-cases.ts
    // `best`): the round least disturbed by other work. Medians swing more from run to run on a
    // shared machine.
    let worst = { ratio: Number.POSITIVE_INFINITY, median: Number.NaN, name: '' };
    for (const layout of LAYOUTS) {
      for (const c of CLIENTS) {
        const [b, a] = sides.map((s) => results.get(key(layout, c, s))!);
        const bestRatio = best(a!.opsPerSec) / best(b!.opsPerSec);
        const medianRatio = median(a!.opsPerSec) / median(b!.opsPerSec);
        rows.push({ name: key(layout, c, sides[0]!), opsPerSec: best(b!.opsPerSec), latency: latencyOf(b!.latencyMs), note: `median ${Math.round(median(b!.opsPerSec))}/s` });
        rows.push({
          name: key(layout, c, sides[1]!),
          opsPerSec: best(a!.opsPerSec),
          baseline: key(layout, c, sides[0]!),
          latency: latencyOf(a!.latencyMs),
          note: `median ${Math.round(median(a!.opsPerSec))}/s; after/before ${bestRatio.toFixed(2)} best, ${medianRatio.toFixed(2)} median`,
        });
        if (bestRatio < worst.ratio) worst = { ratio: bestRatio, median: medianRatio, name: `1 KiB ${layout} ×${c}` };
      }
    }
    const fell = 1 - worst.ratio;
    notes.push(
      `before: ${commit} (its sources from git, this checkout's node_modules); after: this checkout; both relays from relay/main.ts through tsx, ` +
        'SVC_RELAY_NO_RATE_LIMITS=1, synchronous=FULL, each on its own data directory; the same clients for both',
      `ops/s: best of ${ROUNDS} rounds of ${ROUND_MS} ms after ${WARMUP_MS} ms of warm-up, each round running every case on both relays back to back ` +
        '(order alternating); "vs baseline": time per append ÷ before\'s; p50/p99/max over every measured request',
      `lowest after/before: ${worst.ratio.toFixed(2)} (${worst.name}, best rounds; median rounds ${worst.median.toFixed(2)}); ` +
        `${fell > 0 ? `fell ${(fell * 100).toFixed(0)}%` : 'did not fall'}, target: no more than ${MOST_FALL * 100}%: ${fell <= MOST_FALL ? 'met' : 'missed'}`,
    );
    return { title: `Signed appends over HTTP on SQLite: this checkout against ${short}, in the same run`, rows, notes };
  } finally {
    progress('');
    await Promise.all(relays.map(async (r) => await r.kill('SIGTERM')));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }
}
