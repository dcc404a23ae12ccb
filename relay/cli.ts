/**
 * svc-relay: parse settings, open the store, build the app, listen. Stops cleanly on SIGTERM
 * and SIGINT: Fastify's close lets in-flight requests finish, then the database closes.
 *
 * Exit codes: 0 stopped; 1 failed (or Node.js too old, main.ts); 2 usage: a bad flag, or an
 * address it cannot listen on (in use, not allowed, not this machine's), said in one line.
 */
import { parseArgs } from 'node:util';
import {
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS,
  checkDatabaseUrl,
  checkPasskeyOrigin,
  checkPasskeyRpId,
  checkPublicUrl,
  defaultPublicSpaceKeyAge,
  parsePublicSpaceKeyAge,
  publicBaseUrl,
  type RelayConfig,
} from './config.js';
import { buildApp } from './app.js';
import type { MetricsServer } from './metrics/expose.js';
import { MONITORING_HELP, MONITORING_OPTIONS, parseMonitoring, startMetricsListener } from './monitoring.js';
import { parseWitnessSettings, WITNESS_HELP, WITNESS_OPTIONS } from './tlog/settings.js';
import { pooledRandom } from './ids.js';
import { openStore } from './store/index.js';
import { redactUrl } from './store/postgres/connection.js';
import { loadServiceKeys } from './service-keys.js';
import { CHECKPOINT_LOG_KEY } from './service-mode.js';
import { defaultCheckpointLog, openCheckpointLog, type CheckpointLog } from './checkpoint-log.js';
import { CommandError } from './backup/command-error.js';
import { BACKUP_HELP, MIGRATE_HELP, RESTORE_HELP, runBackup, runMigrate, runRestore } from './backup/commands.js';
import { RESTORE_LOCK_FILE } from './backup/restore.js';
import { parseMirrorOrigins } from './mirrors/origin.js';
import { DATABASE_FILE } from './store/sqlite/open.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const HELP = `svc-relay: the svc relay (HTTP+JSON, one SQLite file or a PostgreSQL database).

Usage: svc-relay [--host H] [--port P] [--data DIR] [--database URL] [--checkpoint-log FILE] [--public-url URL] [--public-space-key-age SECONDS] [--dev]
       svc-relay backup <file> [--data DIR]
       svc-relay restore <backup> --data DIR [--checkpoint-log FILE]
       svc-relay migrate --from DIR --to postgres://…

  --host H          interface to listen on (default ${DEFAULT_HOST}; env SVC_RELAY_HOST)
  --port P          port, 0 for any free one (default ${DEFAULT_PORT}; env SVC_RELAY_PORT)
  --data DIR        data directory: database and service keys (default ${DEFAULT_DATA_DIR}; env SVC_RELAY_DATA)
  --database URL    keep the data in PostgreSQL (postgres://user:password@host:5432/db) instead
                    of DIR's SQLite file; any number of relay processes may share it, each with
                    the same service keys in its DIR (env SVC_DATABASE_URL)
  --checkpoint-log FILE
                    every signed checkpoint is also appended here, fsync'd; a restore compares
                    a backup with it, so put it on another disk (default DIR/checkpoints.log,
                    or where the last restore kept it; env SVC_RELAY_CHECKPOINT_LOG)
  --public-url URL  address clients use, e.g. https://relay.example; its host is the token
                    challenge audience (default http://HOST:PORT; env SVC_PUBLIC_URL)
  --public-space-key-age SECONDS
                    how long a KEY must be registered before it creates a public or oracle
                    SPACE (default ${DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS}, a day; 0, no wait, for a relay that listens on
                    loopback only and has no public URL; env SVC_PUBLIC_SPACE_KEY_AGE)
  --no-app-sign-in  turn OAuth app sign-in off (env SVC_APP_SIGN_IN=off); it is also off when
                    passkeys are off
  --allow-loopback-client-documents
                    fetch OAuth client ID metadata documents from http://127.0.0.1 and
                    http://localhost too (tests only; env SVC_ALLOW_LOOPBACK_CLIENT_DOCUMENTS=1)
  --mirror-from URL keep read-only mirrors of SPACES of the relay at URL, pushed by their owners
                    with svc-bridge mirror; repeatable (default none; env SVC_RELAY_MIRROR_FROM,
                    comma separated)
  --no-passkeys     turn passkey KEYS off: PASSKEYS_UNAVAILABLE everywhere (env SVC_PASSKEYS=off)
  --passkey-rp-id HOST
                    the WebAuthn rp_id passkeys are bound to (default the public URL's host
                    name; env SVC_PASSKEY_RP_ID)
  --passkey-origin ORIGIN
                    an origin assertions may come from, repeatable (default the public URL's
                    origin; env SVC_PASSKEY_ORIGINS, comma separated)
${MONITORING_HELP}${WITNESS_HELP}  --dev             development mode: the service certificate says development: true
  -h, --help        show this text

${BACKUP_HELP}
${RESTORE_HELP}
${MIGRATE_HELP}`;

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new Error(`--port: not a port number: ${text}`);
  return Number(text);
}

function parsePasskeys(
  values: { 'no-passkeys'?: boolean; 'passkey-rp-id'?: string; 'passkey-origin'?: string[] },
  env: NodeJS.ProcessEnv,
): RelayConfig['passkeys'] {
  if (values['no-passkeys'] || env.SVC_PASSKEYS === 'off') return false;
  const rpId = values['passkey-rp-id'] ?? env.SVC_PASSKEY_RP_ID;
  const origins = values['passkey-origin'] ?? env.SVC_PASSKEY_ORIGINS?.split(',').map((o) => o.trim()).filter((o) => o !== '');
  return {
    rpId: rpId === undefined ? undefined : checkPasskeyRpId(rpId),
    origins: origins === undefined || origins.length === 0 ? undefined : origins.map(checkPasskeyOrigin),
  };
}

/** `--database` / SVC_DATABASE_URL; empty is unset (SQLite). */
function databaseOf(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : checkDatabaseUrl(text);
}

interface Settings extends RelayConfig {
  readonly checkpointLog: string | undefined;
  /** Whether the operator set --public-space-key-age (or its variable) rather than leaving the default. */
  readonly keyAgeGiven: boolean;
}

/**
 * The line a relay with no key age by default says when it starts: a person who ran `npm start`
 * on their own machine creates public and oracle SPACES at once, and learns how to ask for the wait.
 */
function keyAgeLine(settings: Settings): string | undefined {
  if (settings.keyAgeGiven || settings.publicSpaceKeyAgeSeconds !== 0) return undefined;
  return 'svc-relay: no key age: new KEYS may create public and oracle SPACES at once, since this relay listens on loopback only and has no public URL (--public-space-key-age 86400 asks a day, as a relay with a public URL does)\n';
}

function parseSettings(argv: string[], env: NodeJS.ProcessEnv): Settings | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      data: { type: 'string' },
      database: { type: 'string' },
      'checkpoint-log': { type: 'string' },
      'public-url': { type: 'string' },
      'public-space-key-age': { type: 'string' },
      ...MONITORING_OPTIONS,
      ...WITNESS_OPTIONS,
      dev: { type: 'boolean', default: false },
      'no-passkeys': { type: 'boolean', default: false },
      'passkey-rp-id': { type: 'string' },
      'passkey-origin': { type: 'string', multiple: true },
      'no-app-sign-in': { type: 'boolean', default: false },
      'allow-loopback-client-documents': { type: 'boolean', default: false },
      'mirror-from': { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const publicUrl = (values['public-url'] ?? env.SVC_PUBLIC_URL) || undefined;
  if (publicUrl !== undefined) checkPublicUrl(publicUrl);
  const host = values.host ?? env.SVC_RELAY_HOST ?? DEFAULT_HOST;
  const keyAge = values['public-space-key-age'] ?? env.SVC_PUBLIC_SPACE_KEY_AGE;
  return {
    host,
    port: parsePort(values.port ?? env.SVC_RELAY_PORT ?? String(DEFAULT_PORT)),
    dataDir: values.data ?? env.SVC_RELAY_DATA ?? DEFAULT_DATA_DIR,
    database: databaseOf(values.database ?? env.SVC_DATABASE_URL),
    checkpointLog: values['checkpoint-log'] ?? env.SVC_RELAY_CHECKPOINT_LOG,
    publicUrl,
    dev: values.dev,
    publicSpaceKeyAgeSeconds: keyAge === undefined ? defaultPublicSpaceKeyAge({ host, publicUrl }) : parsePublicSpaceKeyAge(keyAge),
    keyAgeGiven: keyAge !== undefined,
    passkeys: parsePasskeys(values, env),
    ...parseMonitoring(values, env),
    ...parseWitnessSettings(values, env),
    appSignIn: !values['no-app-sign-in'] && env.SVC_APP_SIGN_IN !== 'off',
    allowLoopbackClientDocuments:
      values['allow-loopback-client-documents'] || env.SVC_ALLOW_LOOPBACK_CLIENT_DOCUMENTS === '1',
    mirrorOrigins: parseMirrorOrigins(values['mirror-from'], env.SVC_RELAY_MIRROR_FROM),
  };
}

/**
 * The one line for an address the relay cannot listen on (a usage problem: another flag fixes
 * it), or undefined for any other failure.
 */
function listenRefusal(e: unknown, config: RelayConfig): string | undefined {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const address = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return `${address} is already in use; pick another port with --port (e.g. --port ${config.port === 65535 ? 8788 : config.port + 1}, or --port 0 for any free one)`;
  if (code === 'EACCES') return `no permission to listen on ${address}; pick a port above 1023 with --port`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return `cannot listen on ${address}: ${config.host} is not an address of this machine; pick another with --host`;
  return undefined;
}

/**
 * The checkpoint log the serving relay appends: the flag (or env), else where the last restore
 * kept it, else beside the database. None for a memory-only relay.
 */
function checkpointLogOf(settings: Settings, stored: string | undefined): CheckpointLog | undefined {
  if (settings.checkpointLog !== undefined) return openCheckpointLog(settings.checkpointLog);
  if (settings.dataDir === ':memory:') return undefined;
  return openCheckpointLog(stored ?? defaultCheckpointLog(settings.dataDir));
}

/** backup, restore and migrate: run, and exit with their code; a CommandError is one line on stderr. */
async function command(run: (argv: string[], env: NodeJS.ProcessEnv) => Promise<number>, name: string): Promise<never> {
  try {
    process.exit(await run(process.argv.slice(3), process.env));
  } catch (e) {
    if (e instanceof CommandError) {
      process.stderr.write(`svc-relay ${name}: ${e.message}\n`);
      process.exit(e.exitCode);
    }
    if ((e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') === true) {
      process.stderr.write(`svc-relay ${name}: ${(e as Error).message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'backup') return command(runBackup, 'backup');
  if (process.argv[2] === 'restore') return command(runRestore, 'restore');
  if (process.argv[2] === 'migrate') return command(runMigrate, 'migrate');
  let settings: Settings | 'help';
  try {
    settings = parseSettings(process.argv.slice(2), process.env);
  } catch (e) {
    process.stderr.write(`svc-relay: ${(e as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
  if (settings === 'help') {
    process.stdout.write(HELP);
    return;
  }
  const config = settings;
  const clock = () => Date.now();
  const random = pooledRandom();
  if (config.database === undefined && config.dataDir !== ':memory:' && existsSync(join(config.dataDir, RESTORE_LOCK_FILE)) && !existsSync(join(config.dataDir, DATABASE_FILE))) {
    process.stderr.write(`svc-relay: a restore is placing the database in ${config.dataDir}; start the relay once it is in place (it serves reads while the restore finishes)\n`);
    process.exit(1);
  }
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore(config.database ?? config.dataDir);
  } catch (e) {
    // A data directory or database the relay cannot open or write: one line saying which and what to do.
    const why = e instanceof Error ? e.message : String(e);
    if (config.database !== undefined) {
      process.stderr.write(`svc-relay: cannot open the PostgreSQL database ${redactUrl(config.database)}: ${why}. Check that the server answers at that address and this user may connect, create tables and write there, or pick another with --database.\n`);
      process.exit(1);
    }
    process.stderr.write(`svc-relay: cannot open the database in ${config.dataDir}: ${why}. Check that the directory exists and this user may read and write it (and the files in it), or pick another with --data.\n`);
    process.exit(1);
  }
  const checkpointLog = checkpointLogOf(config, await store.state.get(CHECKPOINT_LOG_KEY));
  if (checkpointLog !== undefined && checkpointLog.droppedTail > 0) {
    process.stderr.write(`svc-relay: checkpoint log ${checkpointLog.path} ended in a line cut short (${checkpointLog.droppedTail} bytes, a crash while writing it); cut it off before appending\n`);
  }
  const serviceKeys = loadServiceKeys({ dataDir: config.dataDir, dev: config.dev, now: clock(), random });
  // Benchmarks only: a relay with no rate limits must never face the public.
  const rateLimits = process.env.SVC_RELAY_NO_RATE_LIMITS !== '1';
  if (!rateLimits) process.stderr.write('svc-relay: SVC_RELAY_NO_RATE_LIMITS=1: every rate limit is off (benchmarks only)\n');
  // Measured on two cores (npm run bench -- appends --cpu): off unless asked for.
  const verifyOffThread = process.env.SVC_RELAY_VERIFY_OFF_THREAD === '1';
  const app = buildApp({ config, store, clock, random, serviceKeys, rateLimits, verifyOffThread, checkpointLog });

  let metricsServer: MetricsServer | undefined;
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    process.stderr.write(`svc-relay: ${signal}, finishing requests\n`);
    void metricsServer?.close();
    app
      .close()
      .catch((e: unknown) => process.stderr.write(`svc-relay: close failed: ${String(e)}\n`))
      .finally(async () => {
        await store.close();
        checkpointLog?.close();
        process.exit(0);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (e) {
    const taken = listenRefusal(e, config);
    if (taken === undefined) throw e;
    await app.close().catch(() => {});
    await store.close();
    process.stderr.write(`svc-relay: ${taken}\n`);
    process.exit(2);
  }
  try {
    metricsServer = await startMetricsListener(app, config.metrics);
  } catch (e) {
    await app.close().catch(() => {});
    await store.close();
    process.stderr.write(`svc-relay: ${(e as Error).message}\n`);
    process.exit(2);
  }
  const address = app.server.address();
  const bound = address && typeof address === 'object' ? address : undefined;
  const notes = [
    ...(config.host === '0.0.0.0' || config.host === '::' ? ['on every interface'] : []),
    ...(config.publicUrl !== undefined ? [`public URL ${publicBaseUrl(config, bound)}`] : []),
    ...(metricsServer !== undefined ? [`metrics on ${metricsServer.url}`] : []),
  ];
  process.stdout.write(`svc-relay listening on ${publicBaseUrl({ ...config, publicUrl: undefined }, bound)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}\n`);
  const keyAge = keyAgeLine(config);
  if (keyAge !== undefined) process.stdout.write(keyAge);
}

main().catch((e: unknown) => {
  process.stderr.write(`svc-relay: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
