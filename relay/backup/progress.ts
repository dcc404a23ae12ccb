/**
 * Progress of a long step on a terminal: what, how far, how long left, on one line rewritten in
 * place. Nothing at all when stderr is not a terminal (cron, logs, tests): quiet unless
 * something fails.
 */
export interface Progress {
  update(done: number, total: number): void;
  finish(): void;
}

export function terminalProgress(what: string, unit: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): Progress {
  if (!stream.isTTY) return { update() {}, finish() {} };
  const started = now();
  let shown = false;
  return {
    update(done, total) {
      const elapsed = now() - started;
      const share = total > 0 ? done / total : 1;
      const left = done > 0 ? Math.ceil(((elapsed / done) * (total - done)) / 1000) : undefined;
      const eta = left === undefined ? '' : `, about ${left} s left`;
      stream.write(`\r${what}: ${Math.floor(share * 100)}% (${done.toLocaleString('en')} of ${total.toLocaleString('en')} ${unit})${eta}\x1b[K`);
      shown = true;
    },
    finish() {
      if (shown) stream.write('\n');
    },
  };
}
