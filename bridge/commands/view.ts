/**
 * `svc-bridge view [--port N] [--open] [--page-dir DIR]`: the people's view of what this KEY may
 * read, served on this machine (bridge/view/server.ts), sealed SPACES and sealed pairs opened here
 * (bridge/view/sealed-answers.ts). It prints one link with a one-time secret and serves until
 * SIGTERM or Ctrl-C.
 *
 * `--open` hands the link to the browser without putting the secret on a command line, where
 * other users of the machine could read it (ps): it writes a page of its own that moves on to
 * the link (a private file in a private temporary folder, removed once the link is used or the
 * view stops) and opens that file with $BROWSER, else the system's opener (open, xdg-open,
 * rundll32's FileProtocolHandler).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RelayApi } from '../../tools/api.js';
import { forwardRead } from '../view/forward.js';
import type { LocalSearch } from '../view/local-hits.js';
import type { Openers } from '../view/sealed-answers.js';
import { findPageDir, isPageDir } from '../view/page-files.js';
import { CommandUsage, has, one, parseArgs } from './common.js';

export const VIEW_HELP = `svc-bridge view [--port N] [--open] [--page-dir DIR]: serve the people's view of what this KEY
may read (its SPACES, posts with their proofs checked in the browser, tasks, oracle documents, its
mailbox and conversations) on 127.0.0.1 only, reading as this KEY; sealed SPACES and sealed pairs
are opened on this machine, and nothing opened is sent to the relay. Prints one link carrying a
one-time secret: the first page that opens it holds the session, and the link works no more
(start the view again for a new one). Serves until SIGTERM or Ctrl-C.
  --port N        listen on port N of 127.0.0.1 (default: a free port)
  --open          open the link in the browser ($BROWSER, else the system's opener)
  --page-dir DIR  the view's files (default: relay/web/view of this installation)
`;

export interface ViewContext {
  readonly api: RelayApi;
  readonly peerId: string;
  /**
   * The relay's address, the root key this bridge pinned there, and the rp id and origins its
   * passkeys sign for (capabilities), with which the page checks a post a passkey signed.
   */
  readonly relay: { readonly url: string; readonly serviceRootKey: string | undefined; readonly passkeys: { readonly rp_id: string; readonly origins: readonly string[] } | null };
  readonly openers: Openers;
  /** The local index of the sealed SPACES this KEY opened, for SEEK; none without one. */
  readonly local: LocalSearch | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly log: (line: string) => void;
}

function portArg(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw new CommandUsage('--port: a port number, 0 to 65535 (0: a free one)');
  return Number(value);
}

/** The program that opens a file in the browser, and its arguments before the file. */
function opener(env: NodeJS.ProcessEnv): { command: string; args: string[] } {
  if (env.BROWSER !== undefined && env.BROWSER !== '') return { command: env.BROWSER, args: [] };
  if (process.platform === 'darwin') return { command: 'open', args: [] };
  if (process.platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler'] };
  return { command: 'xdg-open', args: [] };
}

function htmlAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Open `link` in the browser through a private page that moves on to it; returns how to remove that page. */
function openInBrowser(link: string, env: NodeJS.ProcessEnv, log: (line: string) => void): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'svc-view-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const file = join(dir, 'open.html');
  const target = htmlAttribute(link);
  writeFileSync(
    file,
    `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${target}">\n<title>svc view</title>\n<p><a href="${target}">Open the svc view</a></p>\n`,
    { mode: 0o600, flag: 'wx' },
  );
  const how = opener(env);
  // Loaded here, where it is used: the bridge loads this module at every start.
  const child = process.getBuiltinModule('node:child_process').spawn(how.command, [...how.args, file], { stdio: 'ignore', detached: true });
  child.once('spawn', () => log(`asked ${how.command} to open the link`));
  child.once('error', (e) => log(`could not open the browser with ${how.command} (${e.message}): open the link yourself`));
  child.unref();
  return remove;
}

/** What the command line asks for, read before the relay is asked anything. */
export interface ViewOptions {
  readonly port: number;
  readonly pageDir: string;
  readonly open: boolean;
}

/** Read the options; the page's folder is looked for from `entryUrl`, the module this bridge runs. */
export function viewOptions(words: readonly string[], entryUrl: string): ViewOptions {
  const args = parseArgs(words, ['port', 'page-dir'], ['open']);
  if (args.positional.length > 0) throw new CommandUsage('view takes no SPACE or other words, only its options');
  const port = portArg(one(args, 'port'));
  const given = one(args, 'page-dir');
  const pageDir = given ?? findPageDir(entryUrl);
  if (pageDir === undefined || !isPageDir(pageDir)) {
    throw new CommandUsage(
      given !== undefined
        ? `--page-dir ${given}: no index.html there`
        : "the view's page (relay/web/view/) is not installed beside this bridge: run svc-bridge from the npm package or a checkout, or name the folder with --page-dir",
    );
  }
  return { port, pageDir, open: has(args, 'open') };
}

/** Serve the view until SIGTERM or SIGINT, then call `onStop` with the server's closing. */
export async function runView(ctx: ViewContext, options: ViewOptions, onStop: (stopped: Promise<void>) => void): Promise<void> {
  let removeOpener: (() => void) | undefined;
  // Loaded here, not with the bridge: serving MCP needs no HTTP server (and node:http cannot be
  // held in the bridge's startup snapshot).
  const { startViewServer } = await import('../view/server.js');
  const server = await startViewServer({
    port: options.port,
    pageDir: options.pageDir,
    // The root key and passkeys also at the top, where the relay's own host.json has them: the page reads one shape on both hosts.
    hostInfo: () => {
      const root = ctx.relay.serviceRootKey ?? null;
      return { host: 'bridge', peer_id: ctx.peerId, service_root_key: root, passkeys: ctx.relay.passkeys, relay: { url: ctx.relay.url, service_root_key: root } };
    },
    read: (path, search) => forwardRead(ctx.api, ctx.openers, path, search, ctx.local),
    log: ctx.log,
    // The link is used: the page that moved on to it has done its work.
    onSession: () => removeOpener?.(),
  });
  ctx.out(server.link);
  ctx.log(`serving the view of KEY ${ctx.peerId} at ${server.origin} (reads go to ${ctx.relay.url}); SIGTERM or Ctrl-C stops it`);
  if (options.open) removeOpener = openInBrowser(server.link, ctx.env, ctx.log);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (stopping !== undefined) return;
    stopping = server.close().finally(() => removeOpener?.());
    onStop(stopping);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
