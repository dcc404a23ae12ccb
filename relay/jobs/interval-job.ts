/**
 * The timer of a background job (the checkpointer, the SEEK indexer): every `intervalMs` it
 * runs one asynchronous pass, never two at once (a pass still running when the timer fires
 * again is left to finish, and that tick does nothing), and reports a pass that throws
 * instead of letting it escape. The timer is unref'd: a job never keeps the process alive.
 *
 * The job's own work (what one pass does, how it yields to the event loop) stays with the job.
 */

export interface IntervalJob {
  /** Start the timer (a second start while running does nothing). */
  start(): void;
  /** Stop the timer; a pass already under way finishes on its own. */
  stop(): void;
}

export function createIntervalJob(opts: {
  intervalMs: number;
  pass: () => Promise<void>;
  report: (message: string) => void;
}): IntervalJob {
  let timer: NodeJS.Timeout | undefined;
  let running = false;

  async function once(): Promise<void> {
    if (running) return;
    running = true;
    try {
      await opts.pass();
    } finally {
      running = false;
    }
  }

  return {
    start() {
      if (timer) return;
      timer = setInterval(() => {
        once().catch((e: unknown) => opts.report(e instanceof Error ? (e.stack ?? e.message) : String(e)));
      }, opts.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
