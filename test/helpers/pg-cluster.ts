/**
 * A throwaway PostgreSQL cluster for one test file: initdb into a temporary directory, the
 * server on a free loopback port with its socket in that directory, trust authentication for
 * the one role `svc`, fsync off (nothing here has to survive a crash of the machine), removed
 * whole on stop. initdb refuses to run as root, so under root the cluster belongs to the
 * Debian `postgres` user (`runuser`). `SVC_PG_BIN` names the server's bin directory when it is
 * not Debian's PostgreSQL 15 one.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgCluster {
  /** A URL for a database of the cluster (`postgres` unless named). */
  url(database?: string): string;
  /** A new, empty database (UTF8) named `name`; answers its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): void;
}

function binDir(): string {
  if (process.env.SVC_PG_BIN) return process.env.SVC_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL server binaries not found (install postgresql or set SVC_PG_BIN)');
  return join(root, versions[0]!, 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]): void => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'svc', '--auth=trust', '--encoding=UTF8', '--locale=C', '-N']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const url = (database = 'postgres') => `postgres://svc@127.0.0.1:${port}/${database}`;
  return {
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
