#!/usr/bin/env node
/**
 * A throwaway PostgreSQL cluster for tests, CI and development: one directory holding the
 * cluster, its log and its socket, a server on a loopback port, removed whole on stop.
 *
 *   node scripts/postgres.mjs start [--dir D] [--port P] [--database NAME] [--url-file F] [--owner-pid PID]
 *   node scripts/postgres.mjs url   [--dir D]
 *   node scripts/postgres.mjs stop  [--dir D]
 *
 * `start` prints one line on stdout, the URL to connect to (postgres://postgres@127.0.0.1:P/
 * postgres, or the database --database created), and writes it to D/url (and to --url-file):
 *
 *   export SVC_TEST_DATABASE_URL=$(node scripts/postgres.mjs start)
 *
 * With --owner-pid, a small detached watcher stops and removes the cluster once that process
 * is gone, however it ended (a test runner killed after a timeout leaves no server behind).
 *
 * Starting a directory that already holds a cluster made here starts it again (or, running,
 * answers its URL). `stop` stops the server and removes the directory, only if this script
 * made it. Without --dir the directory is <tmpdir>/svc-postgres-<uid>, so a developer's start
 * and stop need no arguments.
 *
 * The cluster: initdb with trust authentication (the server listens on 127.0.0.1 only, its
 * socket is inside D; anyone on this machine may connect, which is what a throwaway test
 * server is for, and never a production setting), UTF8 with the C locale (text compares
 * bytewise, as in SQLite), fsync and synchronous_commit on (the tests check that an
 * acknowledged write is durable, so the server must not cheat on it), 300 connections (test
 * files in parallel workers, several relay processes with their pools). initdb refuses to run
 * as root: as root the cluster belongs to the `postgres` user (SVC_POSTGRES_USER to pick
 * another), through runuser. The binaries: SVC_PG_BIN, else the directory initdb on PATH
 * really lives in, else the newest /usr/lib/postgresql/<version>/bin (Debian's layout).
 *
 * Plain Node, no dependencies: CI runs it before `npm ci`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MARKER = 'svc-postgres.json';
const USAGE = `usage: node scripts/postgres.mjs start [--dir D] [--port P] [--database NAME] [--url-file F] [--owner-pid PID]
       node scripts/postgres.mjs url [--dir D]
       node scripts/postgres.mjs stop [--dir D]`;

class Refusal extends Error {}

function parseArgs(argv) {
  const [command, ...rest] = argv;
  const opts = {};
  const known = { '--dir': 'dir', '--port': 'port', '--database': 'database', '--url-file': 'urlFile', '--owner-pid': 'ownerPid' };
  for (let i = 0; i < rest.length; i++) {
    const key = known[rest[i]];
    const value = rest[i + 1];
    if (key === undefined || value === undefined) throw new Refusal(`unexpected argument ${rest[i]}\n${USAGE}`);
    opts[key] = value;
    i++;
  }
  if (opts.port !== undefined && !/^\d+$/.test(opts.port)) throw new Refusal(`--port takes a number, not ${opts.port}`);
  if (opts.ownerPid !== undefined && !/^\d+$/.test(opts.ownerPid)) throw new Refusal(`--owner-pid takes a process id, not ${opts.ownerPid}`);
  if (opts.database !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(opts.database)) {
    throw new Refusal(`--database takes a plain lower-case name (letters, digits, _), not ${opts.database}`);
  }
  const uid = process.getuid?.() ?? 0;
  opts.dir = resolve(opts.dir ?? join(tmpdir(), `svc-postgres-${uid}`));
  return { command, opts };
}

/** The directory holding initdb and pg_ctl. */
function findBin() {
  const has = (dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  if (process.env.SVC_PG_BIN) {
    if (has(process.env.SVC_PG_BIN)) return process.env.SVC_PG_BIN;
    throw new Refusal(`SVC_PG_BIN=${process.env.SVC_PG_BIN} holds no initdb and pg_ctl; point it at PostgreSQL's bin directory`);
  }
  // Through symbolic links (a distribution may link initdb onto PATH): psql lives beside the real one.
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir && has(dir)) return dirname(realpathSync(join(dir, 'initdb')));
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => has(join(root, v, 'bin'))) : [];
  versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  if (versions.length > 0) return join(root, versions[0], 'bin');
  throw new Refusal(
    'PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin. ' +
      'Install PostgreSQL (Debian/Ubuntu: apt-get install -y postgresql), or set SVC_PG_BIN to the directory holding initdb and pg_ctl.',
  );
}

/** Who runs the server: this user, or under root a system user (initdb refuses root). */
function serverUser() {
  if ((process.getuid?.() ?? 1) !== 0) return undefined;
  const name = process.env.SVC_POSTGRES_USER ?? 'postgres';
  const id = (flag) => spawnSync('id', [flag, name], { encoding: 'utf8' });
  const uid = id('-u');
  if (uid.status !== 0) {
    throw new Refusal(
      `running as root, and PostgreSQL refuses to run as root, but there is no user ${name} to run it as. ` +
        `Create one (useradd --system --home-dir /var/lib/postgresql ${name}; installing Debian's postgresql package does), or set SVC_POSTGRES_USER to an existing non-root user.`,
    );
  }
  if (spawnSync('runuser', ['--help'], { stdio: 'ignore' }).error) throw new Refusal('running as root needs runuser (util-linux) to start PostgreSQL as another user; install util-linux or run this as a non-root user');
  return { name, uid: Number(uid.stdout), gid: Number(id('-g').stdout) };
}

function run(user, bin, tool, args, dir) {
  const exe = join(bin, tool);
  const [file, argv] = user ? ['runuser', ['-u', user.name, '--', exe, ...args]] : [exe, args];
  const r = spawnSync(file, argv, { encoding: 'utf8', cwd: dir, env: { ...process.env, LC_ALL: 'C' } });
  if (r.error) throw new Refusal(`${tool} could not run: ${r.error.message}`);
  return r;
}

function must(r, what, dir) {
  if (r.status === 0) return r;
  const log = join(dir, 'postgres.log');
  const tail = existsSync(log) ? `\n--- ${log} (end) ---\n${readFileSync(log, 'utf8').split('\n').slice(-20).join('\n')}` : '';
  throw new Refusal(`${what} failed (exit ${r.status}):\n${(r.stderr || r.stdout).trim()}${tail}`);
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function readMarker(dir) {
  const file = join(dir, MARKER);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8'));
}

function running(user, bin, dir) {
  return existsSync(join(dir, 'data', 'PG_VERSION')) && run(user, bin, 'pg_ctl', ['-D', join(dir, 'data'), 'status'], dir).status === 0;
}

function writeUrl(dir, url, urlFile) {
  writeFileSync(join(dir, 'url'), url + '\n');
  if (urlFile) writeFileSync(urlFile, url + '\n');
}

function initCluster(user, bin, dir, port) {
  must(
    run(user, bin, 'initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions'], dir),
    'initdb',
    dir,
  );
  const settings = [
    `listen_addresses = '127.0.0.1'`,
    `port = ${port}`,
    `unix_socket_directories = '${dir.replaceAll("'", "''")}'`,
    'fsync = on',
    'synchronous_commit = on',
    'full_page_writes = on',
    'max_connections = 300',
  ];
  const conf = join(dir, 'data', 'postgresql.conf');
  writeFileSync(conf, readFileSync(conf, 'utf8') + '\n# scripts/postgres.mjs\n' + settings.join('\n') + '\n');
}

async function start(opts) {
  const bin = findBin();
  const user = serverUser();
  const { dir } = opts;
  let marker = readMarker(dir);
  if (marker === undefined) {
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      throw new Refusal(`${dir} is not empty and was not made by this script; pick an empty or new directory with --dir`);
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (user) chownSync(dir, user.uid, user.gid);
    if (user && run(user, '/usr/bin', 'env', ['test', '-w', dir], dir).status !== 0) {
      throw new Refusal(`the ${user.name} user cannot write ${dir} (a parent directory closed to it?); pick a directory under ${tmpdir()} with --dir`);
    }
    const port = Number(opts.port ?? (await freePort()));
    marker = { port, bin, user: user?.name ?? null };
    try {
      initCluster(user, bin, dir, port);
    } catch (e) {
      // Leave the directory as it was found (empty), so that starting again just works.
      rmSync(join(dir, 'data'), { recursive: true, force: true });
      throw e;
    }
    writeFileSync(join(dir, MARKER), JSON.stringify(marker) + '\n');
  } else if (opts.port !== undefined && Number(opts.port) !== marker.port) {
    throw new Refusal(`${dir} holds a cluster on port ${marker.port}; stop it first to use port ${opts.port}`);
  }
  if (!running(user, bin, dir)) {
    must(run(user, bin, 'pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'postgres.log'), '-w', '-t', '60', 'start'], dir), 'pg_ctl start', dir);
  }
  let database = 'postgres';
  if (opts.database !== undefined && opts.database !== 'postgres') {
    database = opts.database;
    const psql = (sql) => run(undefined, bin, 'psql', ['-X', '-q', '-t', '-A', '-h', '127.0.0.1', '-p', String(marker.port), '-U', 'postgres', '-d', 'postgres', '-c', sql], dir);
    const exists = must(psql(`SELECT 1 FROM pg_database WHERE datname = '${database}'`), 'psql', dir).stdout.trim() === '1';
    if (!exists) must(psql(`CREATE DATABASE ${database}`), `CREATE DATABASE ${database}`, dir);
  }
  const url = `postgres://postgres@127.0.0.1:${marker.port}/${database}`;
  writeUrl(dir, url, opts.urlFile);
  if (opts.ownerPid !== undefined) {
    const script = fileURLToPath(import.meta.url);
    spawn(process.execPath, [script, 'watch', '--dir', dir, '--owner-pid', opts.ownerPid], { detached: true, stdio: 'ignore' }).unref();
  }
  process.stdout.write(url + '\n');
  process.stderr.write(`postgres: running in ${dir} (log ${join(dir, 'postgres.log')}); stop with: node scripts/postgres.mjs stop --dir ${dir}\n`);
}

function url(opts) {
  const marker = readMarker(opts.dir);
  const file = join(opts.dir, 'url');
  if (marker === undefined || !existsSync(file)) throw new Refusal(`no cluster in ${opts.dir}; start one with: node scripts/postgres.mjs start --dir ${opts.dir}`);
  if (!running(serverUser(), marker.bin, opts.dir)) throw new Refusal(`the cluster in ${opts.dir} is not running; start it with: node scripts/postgres.mjs start --dir ${opts.dir}`);
  process.stdout.write(readFileSync(file, 'utf8'));
}

function stop(opts) {
  const { dir } = opts;
  if (!existsSync(dir)) {
    process.stderr.write(`postgres: nothing to stop in ${dir}\n`);
    return;
  }
  const marker = readMarker(dir);
  if (marker === undefined) throw new Refusal(`${dir} was not made by scripts/postgres.mjs (no ${MARKER}); not stopping or removing it`);
  const user = serverUser();
  const bin = existsSync(join(marker.bin, 'pg_ctl')) ? marker.bin : findBin();
  if (running(user, bin, dir)) {
    must(run(user, bin, 'pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', '-t', '60', 'stop'], dir), 'pg_ctl stop', dir);
  }
  rmSync(dir, { recursive: true, force: true });
  process.stderr.write(`postgres: stopped and removed ${dir}\n`);
}

/** Stop the cluster once the owner process is gone; end quietly when the cluster is stopped first. */
function watch(opts) {
  if (opts.ownerPid === undefined) throw new Refusal('watch needs --owner-pid');
  const alive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return e.code === 'EPERM';
    }
  };
  const timer = setInterval(() => {
    if (!existsSync(join(opts.dir, MARKER))) {
      clearInterval(timer);
    } else if (!alive(Number(opts.ownerPid))) {
      clearInterval(timer);
      stop(opts);
    }
  }, 500);
}

try {
  const { command, opts } = parseArgs(process.argv.slice(2));
  if (command === 'start') await start(opts);
  else if (command === 'url') url(opts);
  else if (command === 'stop') stop(opts);
  else if (command === 'watch') watch(opts);
  else throw new Refusal(USAGE);
} catch (e) {
  process.stderr.write(`postgres: ${e instanceof Refusal ? e.message : (e?.stack ?? String(e))}\n`);
  process.exitCode = 1;
}
