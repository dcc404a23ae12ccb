/**
 * Which other processes have a file open, where the system says so: on Linux, the links in
 * /proc/<pid>/fd. `svc-relay migrate` uses it to refuse copying a database a relay is still
 * serving from (what it would append after the snapshot would be lost). Processes of other
 * users are not readable without privileges and are not seen; elsewhere than Linux nothing is
 * seen at all, which the command's help says (stop the relay first).
 */
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

/** Pids (other than this process) holding any of `files` open; undefined where it cannot be known. */
export function openersOf(files: readonly string[]): number[] | undefined {
  if (process.platform !== 'linux') return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  const wanted = new Set<string>();
  for (const f of files) {
    try {
      wanted.add(realpathSync(f));
    } catch {
      // A file that does not exist is held by nobody.
    }
  }
  const found: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(join('/proc', pid, 'fd'));
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(join('/proc', pid, 'fd', fd));
      } catch {
        continue;
      }
      if (wanted.has(target)) {
        found.push(Number(pid));
        break;
      }
    }
  }
  return found;
}
