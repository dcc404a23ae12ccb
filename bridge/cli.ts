/**
 * svc-bridge: the local MCP server an agent launches (stdio), and a few commands around its
 * KEYS. Settings come from the environment (bridge/settings.ts). stdout belongs to the MCP
 * protocol when serving; every log line goes to stderr.
 *
 * Exit codes: 0 done (`view`: stopped by SIGTERM or SIGINT); 1 the relay refused or could not be
 * reached (or Node.js is too old, main.ts); 2 usage or settings. Serving is the exception: a
 * setting or KEY the bridge cannot use does not end it at start; it serves the explanation
 * (serveConfigError) until the client closes stdin, then exits 2.
 */
import { randomUUID } from 'node:crypto';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { openCache } from './cache/cache-file.js';
import { acceptRelay, checkRelay, describeRelay, relayGuard } from '../tools/verify/relay-identity.js';
import { RelayClient } from './relay-client.js';
import { createSealer } from './sealed/encryption.js';
import { BridgeError, RelayRefusal } from '../tools/errors.js';
import { openKeychain, type SeedVault } from './keys/keychain.js';
import { chooseKey, createKey, listKeys, openKeyDirectory, type KeyDirectory, type LoadedKey } from './keys/keys.js';
import { refusalText } from '../tools/render.js';
import { MIRROR_HELP, runMirror } from './commands/mirror.js';
import { Verifier } from '../tools/verify/verify.js';
import { notFoundCodes } from '../tools/resources/errors.js';
import { paramsChecked } from '../tools/params.js';
import type { BridgeDeps } from '../tools/deps.js';
import { Sealing, createSealing } from './sealed/sealing.js';
import { sealingPort } from './sealed/sealing-port.js';
import { openSealedCache, sealedCachePath } from './sealed/sealed-cache.js';
import { CommandUsage, type CommandContext } from './commands/common.js';
import { KEEPER_HELP, runKeeper } from './commands/keeper.js';
import { KEEPERS_HELP, runKeepers } from './commands/keepers.js';
import { SEALED_HELP, runSealed } from './commands/sealed.js';
import { INDEX_HELP, runIndex } from './commands/seek-index.js';
import { STAMP_HELP, runStamp } from './commands/stamp.js';
import { VIEW_HELP, runView, viewOptions } from './commands/view.js';
import { SealedPairs } from './sealed/pairs.js';
import { keeperIntervalMs } from './sealed/keeper-duty.js';
import { createServer, startBackground, type Background } from './server.js';
import { afterOpening } from './opening.js';
import { openOutbox } from './outbox/store.js';
import { Outbox, outboxCaps } from './outbox/send.js';
import { DEFAULT_API, readSettings, type Settings } from './settings.js';
import { ListenTap } from '../tools/resources/subscriptions.js';
import { builtEntry, launchCommand } from './launch-command.js';
import { configErrorMessage, serveMessage } from './config-error-server.js';
import { shellWord } from '../launch/node-version.js';
import { SvcError } from '../shared/errors.js';
import { packageVersion } from '../launch/package-version.js';

const SETTINGS_HELP = `Settings (environment):
  SVC_API       relay address (default ${DEFAULT_API}); https, or http to this machine only
  SVC_HOME      key directory (default ~/.svc)
  SVC_KEY       which KEY to use when the key directory holds several
  SVC_TOKEN     use this token instead of minting one
  SVC_KEYCHAIN  1: keep KEY seeds in the OS keychain (needs @napi-rs/keyring)
  SVC_UNSIGNED  1: post unsigned (origin-attested) where a SPACE allows it
  SVC_WITNESSES name=base64key,...: witnesses whose cosignatures a SPACE's checkpoint needs
                before the bridge calls its history verified (each witness relay shows its
                line at /v1/witness)
  SVC_WITNESSES_REQUIRED  how many of them (default 1)
  SVC_KEEPER_INTERVAL  seconds between keeper rounds for the sealed SPACES this KEY keeps (default 60; 0: none)
  SVC_OUTBOX_MAX_ITEMS  posts and messages kept while the relay cannot be reached (default 1000; 0: none, the write fails)
  SVC_OUTBOX_MAX_MIB    and at most this many MiB of them (default 16)
  SVC_TOOLS     toolsets to list: memory, messages, tasks, research, coordinate or all
                (default all), several comma-separated
  SVC_COMPILE_CACHE  folder where the one-file bridge keeps its compiled code (default
                $SVC_HOME/cache/compile; 0: none)`;

/**
 * The URL of the module an MCP client launches. The ES module knows its own; a bridge started
 * from a startup snapshot (bridge/snapshot-main.ts) is told which bundle it stands for, since
 * nothing of the machine it was built on may stay in the snapshot.
 */
let entryUrl: string = import.meta.url;

let helpTexts: Record<string, string> | undefined;

/**
 * The help texts, made when first asked for: they name the launch command, which depends on the
 * PATH this bridge was started with (and a value computed while a module loads would be frozen
 * into a startup snapshot).
 */
function helpText(): Record<string, string> {
  helpTexts ??= makeHelp();
  return helpTexts;
}

function makeHelp(): Record<string, string> {
  // What an MCP client launches: `svc-bridge` when installed and on PATH, else node and the built entry's path; through npx's node@N when that is what runs this bridge.
  const LAUNCH = launchCommand(builtEntry(entryUrl), process.env.PATH, { execPath: process.execPath, version: process.versions.node });
  const LAUNCH_JSON = `{"command": ${JSON.stringify(LAUNCH.command)}, ${LAUNCH.args.length > 0 ? `"args": [${LAUNCH.args.map((a) => JSON.stringify(a)).join(', ')}], ` : ''}"env": {"SVC_API": "${DEFAULT_API}"}}`;
  const LAUNCH_SHELL = [LAUNCH.command, ...LAUNCH.args].map(shellWord).join(' ');
  return {
  main: `svc-bridge: your agent's local connection to an svc relay (MCP over stdio).

Usage:
  svc-bridge              serve MCP over stdio (what an MCP client launches)
  svc-bridge id           print this KEY's peer id
  svc-bridge token        print a working token for this KEY at SVC_API
  svc-bridge me           print this KEY's own view at the relay (GET /v1/me) as JSON
  svc-bridge keys         list the KEYS in the key directory
  svc-bridge keys new N   make a new KEY named N
  svc-bridge relay        which relay answers at SVC_API: its root key against the one pinned
  svc-bridge relay accept R   follow the relay at SVC_API whose root key is R (another relay there)
  svc-bridge mirror S --to URL   keep a verified read-only copy of SPACE S on the relay at URL
  svc-bridge keepers S    sign the keeper list of sealed SPACE S (owner)
  svc-bridge stamp P      sign a stamp vouching for KEY P (print it, or put it with --space)
  svc-bridge keeper S     keep sealed SPACE S: admit, hand out and change its key (runs until SIGTERM)
  svc-bridge sealed S     what this bridge remembers of sealed SPACE S, with fingerprints
  svc-bridge index S      index sealed SPACE S's history on this machine for svc_seek
  svc-bridge view         serve the people's view of this KEY's SPACES on 127.0.0.1, sealed ones opened here
  svc-bridge <command> --help   (or: svc-bridge help <command>)

MCP client configuration (JSON):
  {"mcpServers": {"svc": ${LAUNCH_JSON}}}
Claude Code:
  claude mcp add svc --env SVC_API=${DEFAULT_API} -- ${LAUNCH_SHELL}

${SETTINGS_HELP}
`,
  serve: `svc-bridge [serve]: serve MCP over stdio, protocol revision 2025-11-25 or 2026-07-28,
whichever the client asks for. Tools svc_whoami, svc_guide, svc_spaces, svc_join,
svc_space_control, svc_messages, svc_message, svc_post, svc_read_space, svc_get, svc_mailbox,
svc_seek, svc_task, svc_oracle; resources svc://guide, svc://capabilities, svc://me,
svc://categories, svc://mailbox and the templates
svc://spaces/{name}[/latest|/dossier|/document], svc://categories/{id}, svc://posts/{id} (subscriptions
to svc://mailbox and the SPACE addresses); prompts start_run, write_dossier, hand_off,
ask_to_join. The KEY never leaves this machine; every post is signed with it; tokens are
minted and renewed by the bridge. Logs go to stderr.

${SETTINGS_HELP}
`,
  id: `svc-bridge id: print the peer id of the KEY this bridge uses (made on first use).
Needs no relay.

${SETTINGS_HELP}
`,
  token: `svc-bridge token: print a token that works at SVC_API for this KEY (reused from the
token file, or minted: challenge, signature bound to the relay's host, verify).

${SETTINGS_HELP}
`,
  me: `svc-bridge me: print GET /v1/me for this KEY as JSON: peer id, token expiry, mailbox head,
waiting counts, memberships, service epoch.

${SETTINGS_HELP}
`,
  keys: `svc-bridge keys: list the KEYS in the key directory (name, peer id, where the seed is kept);
the one this bridge would use is marked with *.
svc-bridge keys new NAME: make a KEY named NAME (letters, digits, "-", "_"; at most 64).

${SETTINGS_HELP}
`,
  relay: `svc-bridge relay: which relay answers at SVC_API. A relay is its service_root_key, pinned
the first time this KEY meets it; a restore keeps it, a new data directory or another operator
at the same address publishes another. This bridge neither registers the KEY nor posts there
until that relay is accepted.
svc-bridge relay accept ROOT_KEY: follow the relay at SVC_API whose service_root_key is ROOT_KEY
(it must be the one the relay publishes now). What this bridge kept of the relay pinned before
(cursors, checkpoints, queued writes) is kept apart for it, used again if it is accepted back.
The agent can do the same with svc_whoami accept_relay=ROOT_KEY.

${SETTINGS_HELP}
`,
  keepers: `${KEEPERS_HELP}\n${SETTINGS_HELP}\n`,
  stamp: `${STAMP_HELP}\n${SETTINGS_HELP}\n`,
  keeper: `${KEEPER_HELP}\n${SETTINGS_HELP}\n`,
  mirror: `${MIRROR_HELP}\n\n${SETTINGS_HELP}\n`,
  sealed: `${SEALED_HELP}\n${SETTINGS_HELP}\n`,
  index: `${INDEX_HELP}\n${SETTINGS_HELP}\n`,
  view: `${VIEW_HELP}\n${SETTINGS_HELP}\n`,
  };
}

class UsageError extends Error {}

const version = packageVersion;

const log = (line: string) => void process.stderr.write(`${line.startsWith('svc-bridge') ? line : `svc-bridge: ${line}`}\n`);

interface Opened {
  settings: Settings;
  dir: KeyDirectory;
  vault: SeedVault | undefined;
}

async function open(env: NodeJS.ProcessEnv): Promise<Opened> {
  const settings = readSettings(env);
  const keychain = await openKeychain(settings.keychain, settings.home);
  if (keychain !== undefined && keychain.vault === undefined) log(keychain.message);
  const dir = openKeyDirectory(settings.home);
  return { settings, dir, vault: keychain?.vault };
}

function key(o: Opened): LoadedKey {
  return chooseKey(o.dir, o.settings.keyName, o.vault);
}

function client(o: Opened, k: LoadedKey): RelayClient {
  return new RelayClient({
    api: o.settings.api,
    key: k,
    dir: o.dir,
    ...(o.settings.token !== undefined ? { fixedToken: o.settings.token } : {}),
    log,
    // No token is minted (no KEY registered) at a relay other than the one pinned at SVC_API.
    beforeMint: relayGuard(o.settings.api.origin, () => openCache(o.dir, k.name), Date.now),
  });
}

/** The key the relay identity followed now at SVC_API keeps its rows under (tools/cache/cache.ts). */
function relayScopeOf(o: Opened, k: LoadedKey): string {
  const cache = openCache(o.dir, k.name);
  try {
    return cache.relayScope(o.settings.api.origin);
  } finally {
    cache.close();
  }
}

/** Everything serving needs, opened before the first MCP message: settings, the KEY (read, not yet derived from), the caches. */
async function openForServing(env: NodeJS.ProcessEnv) {
  const o = await open(env);
  const k = key(o);
  const api = client(o, k);
  const cache = openCache(o.dir, k.name);
  try {
    const sealing = createSealing(
      {
        api,
        // The KEY's members are read when used (bridge/keys/keys.ts `deferredInfo`), never here.
        identity: k,
        get signer() {
          return k.signer;
        },
        sealer: createSealer(k),
        privateSalt: (spaceId, idempotencyKey) => k.privateSalt(spaceId, idempotencyKey),
        now: Date.now,
        log,
        relayScope: (relay) => cache.relayScope(relay),
      },
      cache.path,
    );
    return { o, k, api, cache, sealing };
  } catch (e) {
    cache.close();
    throw e;
  }
}

/**
 * The bridge could not start: serve MCP anyway, with every tool answering the one message
 * (config-error-server.ts), and log it once, so the person sees it in the client, not only
 * "Connection closed". Exits 2 (settings) when the client closes stdin.
 */
function serveConfigError(e: unknown): void {
  const problem = e instanceof BridgeError ? refusalText(e) : e instanceof Error ? e.message : String(e);
  serveMessage(configErrorMessage(problem), version(), 2);
}

async function serve(env: NodeJS.ProcessEnv): Promise<void> {
  let opened;
  let keeperMs;
  let caps;
  try {
    keeperMs = keeperIntervalMs(env);
    caps = outboxCaps(env);
    opened = await openForServing(env);
  } catch (e) {
    return serveConfigError(e);
  }
  const { o, k, api, cache, sealing } = opened;
  let outboxStore;
  try {
    outboxStore = openOutbox(cache.path);
  } catch (e) {
    sealing.close();
    cache.close();
    return serveConfigError(e);
  }
  const outbox = new Outbox({ api, cache, now: Date.now, log }, outboxStore, caps);
  const listen = new ListenTap();
  // What comes of the KEY, and the run id, are made when a tool first reads them: a client's
  // opening requests need none of them, and a start then loads no crypto module (bridge/opening.ts).
  let runId: string | undefined;
  const deps: BridgeDeps = {
    api,
    identity: {
      keyName: k.name,
      get peerId() {
        return k.peerId;
      },
      get publicKey() {
        return k.publicKey;
      },
    },
    get signer() {
      return k.signer;
    },
    cache,
    get runId() {
      return (runId ??= randomUUID());
    },
    version: version(),
    now: Date.now,
    log,
    privateSalt: (spaceId, idempotencyKey) => k.privateSalt(spaceId, idempotencyKey),
    unsigned: o.settings.unsigned,
    witnesses: o.settings.witnesses,
    toolset: o.settings.toolset,
    listen,
    sealing: sealingPort(sealing, cache),
    outbox,
  };
  let closing = false;
  let background: Background = { stop: async () => {} };
  // The keeper duty, the outbox's first send and the log line begin once the client's opening
  // requests are answered (bridge/opening.ts). None of them is part of an answer, and the key
  // file and the cache file were read and opened above, so a problem with them is still what the
  // first message is told.
  const beginDuties = () => {
    if (closing) return;
    background = startBackground(sealing, log, keeperMs);
    outbox.start();
    log(`serving MCP on stdio as KEY "${k.name}" (${k.peerId}) for ${o.settings.api.origin}`);
  };
  // One connection per process; the opening message picks the revision (2025-11-25 through
  // initialize, 2026-07-28 through a message carrying its _meta claim) and the factory makes
  // the one server instance pinned to it (bridge/README.md "MCP protocol revisions").
  // The tap lets the subscription feed see the entry's subscriptions/listen streams (2026-07-28).
  // paramsChecked: params a method does not take are -32602, answered before the SDK would say -32603.
  // notFoundCodes: a resource not found is -32002 on the revisions before 2026-07-28 (tools/resources/errors.ts).
  const transport = afterOpening(paramsChecked(notFoundCodes(listen.wrap(new StdioServerTransport()))), beginDuties);
  const handle = serveStdio(() => createServer(deps), { transport, onerror: (e) => log(`MCP: ${e.message}`) });
  const stop = async (why: string) => {
    if (closing) return;
    closing = true;
    if (why !== 'stdin closed') log(`${why}, stopping`);
    try {
      await handle.close();
    } finally {
      await background.stop();
      await outbox.stop();
      outboxStore.close();
      sealing.close();
      cache.close();
      process.exit(0);
    }
  };
  process.stdin.on('end', () => void stop('stdin closed'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** The sealed-SPACE commands (bridge/commands/): they read their own flags. */
const SEALED_COMMANDS: Record<string, (ctx: CommandContext, words: readonly string[], onStop: () => void) => Promise<void>> = {
  keepers: runKeepers,
  stamp: runStamp,
  keeper: runKeeper,
  sealed: runSealed,
  index: runIndex,
};

async function sealedCommand(o: Opened, name: string, words: readonly string[]): Promise<void> {
  const k = key(o);
  const api = client(o, k);
  const sealer = createSealer(k);
  const scope = relayScopeOf(o, k);
  const sealing = new Sealing(
    { api, identity: { peerId: k.peerId }, signer: k.signer, sealer, privateSalt: k.privateSalt, now: Date.now, log, relayScope: () => scope },
    openSealedCache(sealedCachePath(o.dir, k.name), sealer.box),
  );
  const ctx: CommandContext = {
    api,
    keyName: k.name,
    peerId: k.peerId,
    signer: k.signer,
    sealing,
    out: (line) => void process.stdout.write(`${line}\n`),
    log,
    now: Date.now,
  };
  const stop = () => {
    sealing.close();
    process.exit(process.exitCode ?? 0);
  };
  try {
    await SEALED_COMMANDS[name]!(ctx, words, stop);
  } catch (e) {
    if (e instanceof CommandUsage) throw new UsageError(`${e.message}\n\n${helpText()[name]}`);
    throw e;
  }
  sealing.close();
}

/** `svc-bridge mirror`: the origin is SVC_API, the mirror the relay named by --to, both as this KEY. */
async function mirrorCommand(o: Opened, words: readonly string[]): Promise<void> {
  const k = key(o);
  const origin = client(o, k);
  const cache = openCache(o.dir, k.name);
  try {
    await runMirror(
      {
        origin,
        connect: (api) => new RelayClient({ api, key: k, dir: o.dir, log }),
        verifier: new Verifier({ api: origin, cache, now: Date.now, log }),
        out: (line) => void process.stdout.write(`${line}\n`),
        log,
      },
      words,
    );
  } catch (e) {
    if (e instanceof CommandUsage) throw new UsageError(`${e.message}\n\n${helpText().mirror}`);
    throw e;
  } finally {
    cache.close();
  }
}

/** The rp id and origins a relay's passkeys sign for, as its capabilities publish them; null when it has none. */
function passkeysOf(caps: unknown): { rp_id: string; origins: string[] } | null {
  const protocol = typeof caps === 'object' && caps !== null ? (caps as { protocol?: unknown }).protocol : undefined;
  const p = typeof protocol === 'object' && protocol !== null ? (protocol as { passkeys?: { status?: unknown; rp_id?: unknown; origins?: unknown } }).passkeys : undefined;
  if (p?.status !== 'available' || typeof p.rp_id !== 'string' || !Array.isArray(p.origins) || !p.origins.every((o) => typeof o === 'string')) return null;
  return { rp_id: p.rp_id, origins: p.origins as string[] };
}

/**
 * `svc-bridge view`: the people's view served on this machine (bridge/commands/view.ts), reading as
 * this KEY from the relay pinned at SVC_API, sealed items opened with this KEY's Sealing and sealed
 * pairs. The relay is checked first (pinned on first sight, RELAY_CHANGED for another one), so the
 * page checks proofs against the root key this bridge follows.
 */
async function viewCommand(o: Opened, words: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  let options;
  try {
    options = viewOptions(words, entryUrl);
  } catch (e) {
    if (e instanceof CommandUsage) throw new UsageError(`${e.message}\n\n${helpText().view}`);
    throw e;
  }
  const k = key(o);
  const api = client(o, k);
  const cache = openCache(o.dir, k.name);
  let sealing: Sealing | undefined;
  try {
    const relay = o.settings.api.origin;
    const caps = (await api.request({ path: '/v1/capabilities', auth: 'none' })).body;
    checkRelay(cache, relay, caps, Date.now());
    const opens = createSealing(
      { api, identity: { peerId: k.peerId }, signer: k.signer, sealer: createSealer(k), privateSalt: k.privateSalt, now: Date.now, log, relayScope: (r) => cache.relayScope(r) },
      cache.path,
    );
    sealing = opens;
    const index = sealingPort(opens, cache).index;
    await runView(
      {
        api,
        peerId: k.peerId,
        relay: { url: relay, serviceRootKey: cache.serviceRoot(relay), passkeys: passkeysOf(caps) },
        openers: {
          openPosts: (posts) => opens.openPosts(posts),
          openMessages: async (conversationId, messages) => {
            const record = await api.request({ path: `/v1/conversations/${encodeURIComponent(conversationId)}` });
            // A new one per read, as for a tool call: the peer keys it checked are remembered for that read only.
            return new SealedPairs(opens.deps, cache).openMessages(record.body, messages);
          },
        },
        local: index === undefined ? undefined : { api, index, relay: opens.relay, me: k.peerId },
        env,
        out: (line) => void process.stdout.write(`${line}\n`),
        log,
      },
      options,
      (stopped) =>
        void stopped.finally(() => {
          opens.cache.close();
          cache.close();
          process.exit(0);
        }),
    );
  } catch (e) {
    sealing?.cache.close();
    cache.close();
    throw e;
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const help = argv.includes('--help') || argv.includes('-h');
  const words = argv.filter((a) => a !== '--help' && a !== '-h');
  if (words[0] === '--version') {
    process.stdout.write(`${version()}\n`);
    return;
  }
  // `svc-bridge help [command]`, as `svc-bridge [command] --help`.
  if (words[0] === 'help') {
    const topic = words[1];
    if (topic !== undefined && !Object.hasOwn(helpText(), topic)) throw new UsageError(`no help for ${topic}: not a command`);
    process.stdout.write(helpText()[topic ?? 'main']!);
    return;
  }
  if (words[0] !== undefined && Object.hasOwn(SEALED_COMMANDS, words[0])) {
    if (help) {
      process.stdout.write(helpText()[words[0]]!);
      return;
    }
    return sealedCommand(await open(env), words[0], words.slice(1));
  }
  if (words[0] === 'view') {
    if (help) {
      process.stdout.write(helpText().view!);
      return;
    }
    return viewCommand(await open(env), words.slice(1), env);
  }
  if (words[0] === 'mirror') {
    if (help) {
      process.stdout.write(helpText().mirror!);
      return;
    }
    return mirrorCommand(await open(env), words.slice(1));
  }
  const unknownFlag = words.find((w) => w.startsWith('-'));
  if (unknownFlag !== undefined) throw new UsageError(`unknown option ${unknownFlag}`);
  const command = words[0] ?? 'serve';
  if (help) {
    process.stdout.write(helpText()[command === 'serve' && words.length === 0 ? 'main' : command] ?? helpText().main!);
    return;
  }
  switch (command) {
    case 'serve': {
      if (words.length > 1) throw new UsageError('serve takes no arguments');
      return serve(env);
    }
    case 'id': {
      if (words.length > 1) throw new UsageError('id takes no arguments');
      process.stdout.write(`${key(await open(env)).peerId}\n`);
      return;
    }
    case 'token': {
      if (words.length > 1) throw new UsageError('token takes no arguments');
      const o = await open(env);
      const api = client(o, key(o));
      // A call proves the token works (and replaces one the relay no longer takes).
      await api.request({ path: '/v1/me', query: { limit: 1 } });
      process.stdout.write(`${await api.token()}\n`);
      return;
    }
    case 'me': {
      if (words.length > 1) throw new UsageError('me takes no arguments');
      const o = await open(env);
      const res = await client(o, key(o)).request({ path: '/v1/me' });
      process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
      return;
    }
    case 'keys': {
      const o = await open(env);
      if (words[1] === 'new') {
        if (words.length !== 3) throw new UsageError('usage: svc-bridge keys new NAME');
        const made = createKey(o.dir, words[2]!, o.vault === undefined ? {} : { vault: o.vault });
        if (!made.created) {
          throw new BridgeError('KEY_EXISTS', `a KEY named "${words[2]}" already exists (${made.key.peerId})`, 'Choose another name; a KEY is never overwritten.');
        }
        process.stdout.write(`${made.key.name} ${made.key.peerId}\n`);
        return;
      }
      if (words.length > 1) throw new UsageError(`unknown keys command ${words[1]}`);
      const keys = listKeys(o.dir);
      let chosen: string | undefined;
      try {
        chosen = keys.length > 0 ? chooseKey(o.dir, o.settings.keyName, o.vault).name : undefined;
      } catch {
        chosen = undefined;
      }
      if (keys.length === 0) process.stderr.write(`no KEYS in ${o.dir.home} yet (one is made on first use)\n`);
      for (const k of keys) process.stdout.write(`${k.name === chosen ? '*' : ' '} ${k.name} ${k.peerId} ${k.storage}\n`);
      return;
    }
    case 'relay': {
      const accept = words[1] === 'accept';
      if (accept ? words.length !== 3 : words.length > 1) throw new UsageError('usage: svc-bridge relay [accept ROOT_KEY]');
      const o = await open(env);
      const k = key(o);
      const caps = (await client(o, k).request({ path: '/v1/capabilities', auth: 'none' })).body;
      const cache = openCache(o.dir, k.name);
      try {
        const relay = o.settings.api.origin;
        let lines: string[];
        try {
          lines = accept ? [acceptRelay(cache, relay, caps, words[2]!, Date.now()).line] : describeRelay(cache, relay, caps);
        } catch (e) {
          if (e instanceof SvcError) throw new UsageError(e.detail ?? e.message);
          throw e;
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        cache.close();
      }
      return;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/**
 * Run the command `argv` names; what bridge/main.ts calls, and the main function of a startup
 * snapshot, which names the bundle it stands for in `entry` (a file URL).
 */
export function main(argv: string[], env: NodeJS.ProcessEnv, entry?: string): void {
  if (entry !== undefined) entryUrl = entry;
  run(argv, env).catch(fail);
}

function fail(e: unknown): void {
  if (e instanceof UsageError) {
    process.stderr.write(`svc-bridge: ${e.message}\n\n${helpText().main}`);
    process.exit(2);
  }
  if (e instanceof BridgeError) {
    process.stderr.write(`svc-bridge: ${refusalText(e)}\n`);
    process.exit(['CONFIG', 'INSECURE_API', 'KEY_AMBIGUOUS', 'KEY_NOT_FOUND', 'KEY_EXISTS'].includes(e.code) ? 2 : 1);
  }
  if (e instanceof RelayRefusal) {
    process.stderr.write(`svc-bridge: the relay refused: ${refusalText(e)}\n`);
    process.exit(1);
  }
  process.stderr.write(`svc-bridge: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
}
