/**
 * `npm run bench -- appends --against <revision>` takes the other revision's sources from git
 * into a temporary directory on this checkout's packages (bench/appends-against.ts). The
 * measuring itself is the benchmark's; here, that the checkout it starts from is the right one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readlinkSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOut } from '../../bench/appends-against.js';
import { REPO_ROOT } from '../helpers/relay.js';

const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' });
const inGit = head.status === 0;

describe('appends --against', () => {
  it.skipIf(!inGit)(`unpacks the named commit with relay/main.ts, on this checkout's node_modules${(inGit ? '' : ' (skipped: this checkout is not a git repository)')}`, () => {
    const { commit, root } = checkOut('HEAD');
    try {
      expect(commit).toBe(head.stdout.trim());
      expect(existsSync(join(root, 'relay/main.ts'))).toBe(true);
      expect(readlinkSync(join(root, 'node_modules'))).toBe(join(REPO_ROOT, 'node_modules'));
      // The committed file, not the working tree's: package.json as git has it at that commit.
      const committed = spawnSync('git', ['show', `${commit}:package.json`], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout;
      expect(readFileSync(join(root, 'package.json'), 'utf8')).toBe(committed);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.skipIf(!inGit)(`names a revision git does not know and says how to find one${(inGit ? '' : ' (skipped: this checkout is not a git repository)')}`, () => {
    expect(() => checkOut('no-such-revision-4f1c')).toThrow(/--against no-such-revision-4f1c: not a commit of this checkout .*git log --oneline/);
  });
});
