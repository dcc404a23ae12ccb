/**
 * The backup's progress line (relay/backup/progress.ts): what, how far and how long left on a
 * terminal, rewritten in place; nothing at all anywhere else.
 */
import { describe, expect, it } from 'vitest';
import { terminalProgress } from '../../../relay/backup/progress.js';

function stream(isTTY: boolean): { written: string[]; s: NodeJS.WriteStream } {
  const written: string[] = [];
  return { written, s: { isTTY, write: (t: string) => written.push(t) } as unknown as NodeJS.WriteStream };
}

describe('backup progress', () => {
  it('on a terminal says what, how far and how long is left, on one line, and ends it', () => {
    const { written, s } = stream(true);
    let now = 0;
    const p = terminalProgress('backing up relay.sqlite', 'pages', s, () => now);
    now = 2_000;
    p.update(1_024, 4_096);
    p.finish();
    expect(written).toEqual(['\rbacking up relay.sqlite: 25% (1,024 of 4,096 pages), about 6 s left\x1b[K', '\n']);
  });

  it('writes nothing when not on a terminal', () => {
    const { written, s } = stream(false);
    const p = terminalProgress('backing up relay.sqlite', 'pages', s);
    p.update(1, 2);
    p.finish();
    expect(written).toEqual([]);
  });
});
