/**
 * The command lines of `svc-relay backup`, `restore` and `migrate` (relay/cli.ts hands them
 * argv after the command word). Output: nothing on success unless stdout is a terminal (or the
 * restore closed SPACES, which an operator must always hear about); one line on stderr for a
 * failure, saying what to do next, and exit code 2 (something named is unusable) or 1 (the work
 * failed).
 */
import { parseArgs } from 'node:util';
import { DEFAULT_DATA_DIR } from '../config.js';
import { pooledRandom } from '../ids.js';
import { backup } from './backup.js';
import { CommandError } from './command-error.js';
import { restore } from './restore.js';
import { migrateToPostgres } from './migrate.js';
import { defaultCheckpointLog } from '../checkpoint-log.js';

export const BACKUP_HELP = `Usage: svc-relay backup <file> [--data DIR]

  Writes one file: a consistent copy of the relay's database, made while the relay serves
  (SQLite's online backup API), with the service key files of the data directory. Run it from
  another process beside the serving relay. The file holds the service's private keys: keep it
  as safe as the data directory. Progress shows on a terminal only.

  --data DIR   the relay's data directory (default ${DEFAULT_DATA_DIR}; env SVC_RELAY_DATA)
`;

export const RESTORE_HELP = `Usage: svc-relay restore <backup> --data DIR [--checkpoint-log FILE | --without-checkpoint-log]

  Starts the new or empty data directory DIR from a backup, then compares it with the
  checkpoint log the lost relay kept: every SPACE whose signed chain reaches past what the
  backup holds is closed (reads and export still work) and continues in a new SPACE with the
  same members, under a new service_epoch, with a signed notice at GET /v1/recovery. A relay
  started on DIR meanwhile answers reads and refuses writes (SERVICE_READ_ONLY). Start the
  relay on DIR afterwards; it keeps appending to the same checkpoint log.

  --data DIR               where to restore (default ${DEFAULT_DATA_DIR}; env SVC_RELAY_DATA)
  --checkpoint-log FILE    the checkpoint log to compare with (default DIR/checkpoints.log;
                           env SVC_RELAY_CHECKPOINT_LOG)
  --without-checkpoint-log restore without comparing: nothing is closed, and clients holding
                           newer checkpoints see the history change, unexplained
`;

export const MIGRATE_HELP = `Usage: svc-relay migrate --from DIR --to postgres://USER@HOST/DATABASE

  Copies the relay in DIR (its SQLite database) whole into an empty PostgreSQL database:
  every table with its ids, tokens (stored as hashes) and sealed records (ciphertext) as
  they are, in one transaction; then builds SEEK's index there and verifies the target: every
  row count, every SPACE's post and event chains link by link, every checkpoint's signature
  and Merkle root, then every row value by value. Any difference fails (exit 1) and names it; the target is left as it is, to
  drop. The source is only read, from one snapshot. Stop the relay first (a relay still
  serving from DIR is refused where the system shows open files, as on Linux). Afterwards
  start the relay with --data DIR (its service keys stay there) and --database URL.
  Progress shows on a terminal only.

  --from DIR   the SQLite relay's data directory (default ${DEFAULT_DATA_DIR}; env SVC_RELAY_DATA)
  --to URL     the target database (env SVC_DATABASE_URL, which keeps a password out of ps)
`;

/**
 * Both commands copy SQLite's file with SQLite's own means; a relay on PostgreSQL (`--database`,
 * SVC_DATABASE_URL) is backed up and restored with PostgreSQL's.
 */
function refuseOnPostgres(database: string | undefined, command: 'backup' | 'restore'): void {
  if (database === undefined || database === '') return;
  const tools = command === 'backup' ? 'pg_dump (or continuous archiving)' : 'pg_restore (or point-in-time recovery)';
  throw new CommandError(
    `${command}: this relay's database is PostgreSQL (--database / SVC_DATABASE_URL), and svc-relay ${command} works on the SQLite file only; use ${tools} for the database, and copy the service key files of the data directory with it`,
    2,
  );
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

export async function runBackup(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, database: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(BACKUP_HELP);
    return 0;
  }
  refuseOnPostgres(values.database ?? env.SVC_DATABASE_URL, 'backup');
  if (positionals.length !== 1) throw new CommandError(`backup: name one file to write, e.g. svc-relay backup relay-$(date +%F).backup\n\n${BACKUP_HELP}`, 2);
  const result = await backup({ dataDir: values.data ?? env.SVC_RELAY_DATA ?? DEFAULT_DATA_DIR, target: positionals[0]!, now: Date.now });
  if (process.stdout.isTTY) say(`backup written: ${result.file} (${result.pages} pages; ${result.keyFiles.join(', ')})`);
  return 0;
}

export async function runRestore(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      database: { type: 'string' },
      'checkpoint-log': { type: 'string' },
      'without-checkpoint-log': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(RESTORE_HELP);
    return 0;
  }
  refuseOnPostgres(values.database ?? env.SVC_DATABASE_URL, 'restore');
  if (positionals.length !== 1) throw new CommandError(`restore: name one backup file\n\n${RESTORE_HELP}`, 2);
  if (values['without-checkpoint-log'] && values['checkpoint-log'] !== undefined) {
    throw new CommandError('restore: --checkpoint-log and --without-checkpoint-log exclude each other; pick one', 2);
  }
  const dataDir = values.data ?? env.SVC_RELAY_DATA ?? DEFAULT_DATA_DIR;
  const checkpointLog = values['without-checkpoint-log'] ? null : (values['checkpoint-log'] ?? env.SVC_RELAY_CHECKPOINT_LOG ?? defaultCheckpointLog(dataDir));
  const r = await restore({
    backup: positionals[0]!,
    dataDir,
    checkpointLog,
    now: Date.now,
    random: pooledRandom(),
    pauseFile: env.SVC_RELAY_TEST_RESTORE_PAUSE,
  });
  if (r.tornLogLine) process.stderr.write('svc-relay: restore: the checkpoint log ended in a line cut short (a crash while writing it); that line was left out\n');
  for (const id of r.missing) {
    process.stderr.write(`svc-relay: restore: SPACE ${id} has checkpoints in the log but is not in the backup (made after it); it is lost and cannot be continued\n`);
  }
  if (r.closed.length > 0) {
    say(`restore: positions were lost; service_epoch ${r.previousEpoch} -> ${r.serviceEpoch}`);
    for (const c of r.closed) {
      const chains = c.chains.map((x) => `${x.stream} signed to ${x.signed_last}, survived to ${x.survived_last}`).join('; ');
      say(`  ${c.name} closed (${chains}); continues in ${c.replacedBy}`);
    }
  } else if (process.stdout.isTTY) {
    say(`restore: nothing lost; service_epoch ${r.serviceEpoch} kept${r.imported > 0 ? `; ${r.imported} checkpoints taken from the log` : ''}`);
  }
  return 0;
}

export async function runMigrate(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { from: { type: 'string' }, to: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(MIGRATE_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new CommandError(`migrate: unexpected ${positionals[0]}; name the source with --from and the target with --to\n\n${MIGRATE_HELP}`, 2);
  const url = values.to ?? env.SVC_DATABASE_URL;
  if (url === undefined || url === '') throw new CommandError(`migrate: name the target database: --to postgres://USER@HOST/DATABASE (or SVC_DATABASE_URL)\n\n${MIGRATE_HELP}`, 2);
  if (!/^postgres(ql)?:\/\//i.test(url)) throw new CommandError('migrate: --to takes a postgres:// (or postgresql://) URL', 2);
  const dataDir = values.from ?? env.SVC_RELAY_DATA ?? DEFAULT_DATA_DIR;
  const r = await migrateToPostgres({ dataDir, url });
  if (process.stdout.isTTY) {
    const v = r.verified;
    const n = (x: number) => x.toLocaleString('en');
    say(`migrate: ${n(r.rows)} rows of ${r.tables} tables copied to ${r.target} and verified (SPACES ${n(v.spaces)}, posts ${n(v.posts)}, events ${n(v.events)}, checkpoints ${n(v.checkpoints)})`);
    say(`start the relay with: svc-relay --data ${dataDir} --database ${r.target}`);
  }
  return 0;
}
