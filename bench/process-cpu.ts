/**
 * What the CPU benches share: a relay process's CPU time, read from outside it (/proc), which they
 * divide by the operations it answered (what the clients and other work on the machine do not
 * change), and the warm-up every process they measure gets first, the relay's and the in-process
 * append's alike.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One thread's run time so far in ns (/proc/<pid>/task/<tid>/schedstat); 0 when it has ended. */
function threadNs(pid: number, tid: string): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0; // the thread ended between the listing and the read
  }
}

/**
 * A process's CPU time so far in ns: the sum over its threads of the time each has run
 * (/proc/<pid>/task/<tid>/schedstat, nanoseconds, where /proc/<pid>/stat counts clock ticks of
 * 10 ms). Node's threads (the event loop, libuv's pool, V8's helpers, SQLite's checkpointer)
 * live as long as the process, so none leaves with its time during a round.
 */
export function processCpuReader(pid: number): () => number {
  return () => {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += threadNs(pid, tid);
    return ns;
  };
}

/**
 * How long a bench runs its cases before it measures them: V8 goes on optimising what a
 * request runs for many seconds after it starts to run it (measured on a 2-core machine: a
 * relay answering svc_get at ~1,200 calls/s spent ~550 µs of CPU per call in its first 10 s,
 * still compiling functions every request runs, and ~460 µs from about 12 s on; an append
 * over HTTP at ~500/s kept getting cheaper for as long). A long-running process spends its life
 * in that steady state, so per-call costs are measured there. SVC_BENCH_WARM_S sets it.
 */
export const WARM_MS = warmSeconds(process.env.SVC_BENCH_WARM_S) * 1000;

function warmSeconds(given: string | undefined): number {
  if (given === undefined || given === '') return 15;
  const s = Number(given);
  if (!Number.isFinite(s) || s < 0) throw new Error(`SVC_BENCH_WARM_S=${given}: give the warm-up in seconds, a number of 0 or more (15 when unset)`);
  return s;
}

/** How long each case runs in turn during a warm-up. */
export const WARM_SLICE_MS = 500;

/**
 * Run `slice(i)` (case i for about WARM_SLICE_MS) pass after pass over `cases` for WARM_MS, so
 * every case's code is warmed alike; `onPass` hears each pass end with the time gone so far.
 */
export async function warmUp(cases: number, slice: (i: number) => Promise<void>, onPass?: (pass: number, elapsedMs: number) => void): Promise<void> {
  const started = performance.now();
  for (let pass = 1; performance.now() - started < WARM_MS; pass++) {
    for (let i = 0; i < cases; i++) await slice(i);
    onPass?.(pass, performance.now() - started);
  }
}
