/**
 * `svc-bridge keeper <space>`: a long-running keeper of a sealed SPACE (protocol/sealed.md §8,
 * §9), run as the owner or as a KEY the owner's keeper list names. Each pass is
 * bridge/sealed/keeping.ts `keeperPass` with admission on: admit waiting join requests by the keeper
 * list's rule, lock the key for every member it vouches for, change the key when a change is
 * due (or with `--change-now`), abandon a change nobody can finish.
 *
 * Between passes it waits on its mailbox with a long-poll read (join requests arrive there),
 * at most 25 s, then passes again, until SIGTERM or SIGINT. `--once` does one pass and exits
 * (non-zero when the pass failed). It keeps no mailbox cursor of its own.
 */
import { WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { keeperPass, type PassReport } from '../sealed/keeping.js';
import { failureWords } from '../../tools/errors.js';
import { CommandUsage, has, parseArgs, sleep, type CommandContext } from './common.js';

export { keeperPass, STALE_STAGE_MS, type PassReport } from '../sealed/keeping.js';

export const KEEPER_HELP = `svc-bridge keeper SPACE [--once] [--change-now]: keep a sealed SPACE's key.
As its owner or a keeper the owner's keeper list names: admit waiting join requests by the
list's admission rule (stamped: only KEYS with a stamp from the owner, a keeper or a stamper,
checked here; open: everyone), hand the key (a lock) to every member vouched for, and change
the key when someone left or was removed or a stamp ran out. Runs until SIGTERM, waking on
its mailbox (long-poll) at least every ${WAIT_SECONDS_MAX} s.
  --once         one pass, then exit (non-zero if it failed)
  --change-now   change the key in this pass even if no change is due
`;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The mailbox position to wait after (GET /v1/me). */
async function mailboxHead(ctx: CommandContext): Promise<string> {
  const res = await ctx.api.request({ path: '/v1/me' });
  const b = isObj(res.body) ? res.body : {};
  const head = isObj(b.mailbox) ? b.mailbox.head_seq : undefined;
  return typeof head === 'string' && /^[0-9]{1,20}$/.test(head) ? head : '0';
}

/** Wait for mail (or at most 25 s); returns the position to wait after next time. */
async function waitForMail(ctx: CommandContext, after: string): Promise<string> {
  const res = await ctx.api.request({ path: '/v1/mailbox', query: { after, wait: WAIT_SECONDS_MAX, limit: 50, detail: 'ids' }, timeoutMs: 30_000 + WAIT_SECONDS_MAX * 1000 });
  const b = isObj(res.body) ? res.body : {};
  return typeof b.next_after === 'string' && /^[0-9]{1,20}$/.test(b.next_after) ? b.next_after : after;
}

function print(ctx: CommandContext, name: string, r: PassReport): void {
  if (r.notes.length === 0) return;
  ctx.out(`${new Date(ctx.now()).toISOString()} ${name} (generation ${r.generation}):`);
  for (const n of r.notes) ctx.out(`  ${n}`);
}

export async function runKeeper(ctx: CommandContext, words: readonly string[], onStop: () => void): Promise<void> {
  const args = parseArgs(words, [], ['once', 'change-now']);
  if (args.positional.length !== 1) throw new CommandUsage('usage: svc-bridge keeper SPACE [--once] [--change-now]');
  const name = args.positional[0]!;
  if (has(args, 'once')) {
    const r = await keeperPass(ctx, name, { changeNow: has(args, 'change-now') });
    print(ctx, name, r);
    if (r.notes.length === 0) ctx.out(`${name}: nothing to do (generation ${r.generation}).`);
    return;
  }
  let stopping = false;
  let busy = false;
  const stop = (why: string) => {
    ctx.log(`${why}, stopping`);
    stopping = true;
    // Waiting between passes holds no write: stop now. A pass in progress finishes first.
    if (!busy) onStop();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  ctx.log(`keeping ${name} as ${ctx.peerId}; SIGTERM stops`);
  let after = await mailboxHead(ctx);
  let changeNow = has(args, 'change-now');
  while (!stopping) {
    busy = true;
    try {
      print(ctx, name, await keeperPass(ctx, name, { changeNow }));
      changeNow = false;
    } catch (e) {
      ctx.log(`pass failed: ${failureWords(e)}`);
    } finally {
      busy = false;
    }
    if (stopping) break;
    try {
      after = await waitForMail(ctx, after);
    } catch (e) {
      ctx.log(`waiting on the mailbox failed: ${failureWords(e)}`);
      await sleep(5_000);
    }
  }
  onStop();
}
