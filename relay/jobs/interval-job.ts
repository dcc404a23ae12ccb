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
  /** Stop the timer; resolves once a pass already under way has finished (before the store closes). */
  stop(): Promise<void>;
}

export function createIntervalJob(opts: {
  intervalMs: number;
  pass: () => Promise<void>;
  report: (message: string) => void;
}): IntervalJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function once(): Promise<void> {
    if (running) return;
    running = opts.pass();
    try {
      await running;
    } finally {
      running = undefined;
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
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      // Its failure, if any, was reported by the timer's own handler.
      await running?.catch(() => undefined);
    },
  };
}
