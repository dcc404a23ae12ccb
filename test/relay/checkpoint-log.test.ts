/**
 * The checkpoint log file (relay/checkpoint-log.ts): one JSON line per entry, a line cut short
 * by a crash left out when reading and cut off when the log is opened again, and a line that is
 * not an entry refused by its number.
 */
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openCheckpointLog, readCheckpointLog, type LogEntry } from '../../relay/checkpoint-log.js';
import { tempDataDir } from '../helpers/relay.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function logPath(): string {
  const d = tempDataDir('svc-cplog-');
  dirs.push(d);
  return join(d, 'nested', 'checkpoints.log');
}

const marker = (n: number): LogEntry => ({ restore: { at: `t${n}`, previous_epoch: 'a', service_epoch: 'b', cuts: [] } });

describe('the checkpoint log', () => {
  it('appends one line per entry, creating its directory, and reads them back in order', () => {
    const path = logPath();
    const log = openCheckpointLog(path);
    log.append(marker(1));
    log.append(marker(2));
    log.close();
    expect(readCheckpointLog(path)).toEqual({ entries: [marker(1), marker(2)], torn: false });
    expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(3);
  });

  it('a last line cut short is left out when reading and cut off when the log is opened again', () => {
    const path = logPath();
    const log = openCheckpointLog(path);
    log.append(marker(1));
    log.close();
    appendFileSync(path, '{"checkpoint":{"checkpoint_id":"ab');
    expect(readCheckpointLog(path)).toEqual({ entries: [marker(1)], torn: true });
    const again = openCheckpointLog(path);
    expect(again.droppedTail).toBe('{"checkpoint":{"checkpoint_id":"ab'.length);
    again.append(marker(2));
    again.close();
    expect(readCheckpointLog(path)).toEqual({ entries: [marker(1), marker(2)], torn: false });
  });

  it('a whole file with no newline at all is cut to nothing, and an intact log is left alone', () => {
    const path = logPath();
    openCheckpointLog(path).close();
    writeFileSync(path, '{"restore":');
    const log = openCheckpointLog(path);
    expect(log.droppedTail).toBe(11);
    log.close();
    expect(readFileSync(path, 'utf8')).toBe('');
    const intact = openCheckpointLog(path);
    intact.append(marker(3));
    intact.close();
    expect(openCheckpointLog(path).droppedTail).toBe(0);
  });

  it('a complete line that is not an entry is refused with its line number', () => {
    const path = logPath();
    openCheckpointLog(path).close();
    writeFileSync(path, `${JSON.stringify(marker(1))}\n[1,2]\n`);
    expect(() => readCheckpointLog(path)).toThrow('line 2 is not a log entry');
    writeFileSync(path, `${JSON.stringify(marker(1))}\n{"checkpoint":{},"extra":1}\n`);
    expect(() => readCheckpointLog(path)).toThrow(/line 2 is not a log entry \(expected "checkpoint" or "restore"\)/);
  });
});
