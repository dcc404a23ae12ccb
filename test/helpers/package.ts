/**
 * The npm package as a person gets it: `npm pack` (whose prepack builds dist/ afresh), then
 * `npm install -g --prefix <dir> ./svc-bridge-<version>.tgz` into a temporary prefix. Used by
 * test/e2e/package-install.test.ts and the bridge bench.
 *
 * The pack runs in a copy of the checkout's package sources (node_modules linked, not copied),
 * because prepack deletes and rebuilds dist/, which other runs in this checkout may be using.
 * The install is `--prefer-offline`: the dependencies' archives come from npm's cache, where
 * installing this checkout put the versions its lockfile resolved. Their metadata (which
 * versions a range in package.json may take) is fetched from the registry where the cache has
 * none: `npm ci` installs from the lockfile's addresses and never reads it, so on a machine whose
 * npm cache is new (a fresh CI runner) `--offline` fails with ENOTCACHED.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { REPO_ROOT } from './relay.js';

/** What `npm pack` needs of the checkout: the package's own files and what builds them. */
const PACK_SOURCES = ['package.json', 'README.md', 'docs', 'ARCHITECTURE.md', 'keys.example', 'tsconfig.json', 'tsconfig.build.json', 'launch', 'shared', 'tools', 'relay', 'bridge', 'scripts'];

export interface InstalledPackage {
  /** The packed archive. */
  readonly tarball: string;
  /** The install prefix: bin/svc-bridge, bin/svc-relay, lib/node_modules/svc-bridge. */
  readonly prefix: string;
  readonly bin: { readonly bridge: string; readonly relay: string };
  /** PATH for the installed programs: the prefix's bin, then this Node's own directory (node, npm), and nothing of the checkout. */
  readonly path: string;
  /** Every file path in the archive, without its leading `package/`. */
  readonly files: readonly string[];
  /** A directory for the test's own files, removed with the rest. */
  readonly scratch: string;
  remove(): void;
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Pack this checkout and install the archive into a fresh temporary prefix. */
export function packAndInstall(): InstalledPackage {
  const root = mkdtempSync(join(tmpdir(), 'svc-package-'));
  try {
    const src = join(root, 'src');
    mkdirSync(src);
    for (const entry of PACK_SOURCES) cpSync(join(REPO_ROOT, entry), join(src, entry), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(src, 'node_modules'), 'dir');

    const nodeDir = dirname(process.execPath);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: [nodeDir, process.env.PATH ?? ''].join(delimiter),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      npm_config_loglevel: 'error',
    };
    run('npm', ['pack', '--pack-destination', root], src, env);
    const tarball = join(root, readdirSync(root).find((f) => /^svc-bridge-.*\.tgz$/.test(f))!);
    const files = run('tar', ['-tzf', tarball], root, env)
      .split('\n')
      .filter((f) => f !== '')
      .map((f) => f.replace(/^package\//, ''));
    rmSync(src, { recursive: true, force: true });

    const prefix = join(root, 'prefix');
    run('npm', ['install', '--global', '--prefer-offline', '--prefix', prefix, tarball], root, env);
    const scratch = join(root, 'scratch');
    mkdirSync(scratch);
    return {
      tarball,
      prefix,
      bin: { bridge: join(prefix, 'bin', 'svc-bridge'), relay: join(prefix, 'bin', 'svc-relay') },
      path: [join(prefix, 'bin'), nodeDir].join(delimiter),
      files,
      scratch,
      remove: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
}
