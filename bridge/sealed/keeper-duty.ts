/**
 * The serving bridge's keeper duty (protocol/sealed.md §8, §9): while it serves MCP, a bridge
 * whose KEY keeps sealed SPACES (their owner, or a keeper the owner's list names) does for them
 * what `svc-bridge keeper --once` does, every `SVC_KEEPER_INTERVAL` seconds: lock the key in use
 * for every member it vouches for that holds none (one admitted elsewhere, or whose lock could
 * not be made when it was admitted), change the key when the relay says a change is due (a
 * member left or was removed, a stamp ran out, a keeper was dropped), resume a change it staged
 * and abandon one nobody can finish (bridge/sealed/keeping.ts `keeperPass`).
 *
 * It admits nobody on its own: deciding join requests stays with the agent (svc_space_control
 * action=approve, which vouches and locks at once) or a keeper a person runs with
 * `svc-bridge keeper`, where the keeper list's admission rule applies.
 *
 * The SPACES it looks at are those this bridge remembers (bridge/sealed/sealed-cache.ts) as owned by
 * this KEY or with a keeper list naming it; each pass reads the key records again through the
 * trust rules, so a remembered role that is gone only costs a refusal, said once. Rounds never
 * overlap; the timer does not keep the process alive; a failure never ends the bridge.
 *
 * Every line the duty causes on stderr goes through one rule (`OnceLog`): its own words, the
 * pass's notes, and what reading the key records on the way notes (the trust rules' notes, a
 * lock the relay serves that this bridge refuses). A line said in a SPACE's previous round is
 * not said again while it keeps coming back round after round; work done is news every time.
 */
import { readKeeperList } from '../../shared/sealed/keepers.js';
import { BridgeError, failureWords } from '../../tools/errors.js';
import { keeperContext, keeperPass, type KeeperContext } from './keeping.js';
import type { Sealing } from './sealing.js';
import type { RememberedSpace } from './sealed-cache.js';

export const KEEPER_INTERVAL_ENV = 'SVC_KEEPER_INTERVAL';
export const KEEPER_INTERVAL_DEFAULT_SECONDS = 60;
export const KEEPER_INTERVAL_MAX_SECONDS = 86_400;
/** The first round waits at most this long after start (the MCP handshake goes first). */
const FIRST_ROUND_MS = 2_000;
/** How long `stop` waits for a round in progress before letting the process go. */
const STOP_GRACE_MS = 2_000;

/** SVC_KEEPER_INTERVAL in ms: whole seconds, 1 to 86,400; 0 turns the duty off. */
export function keeperIntervalMs(env: NodeJS.ProcessEnv): number {
  const text = env[KEEPER_INTERVAL_ENV];
  if (text === undefined || text === '') return KEEPER_INTERVAL_DEFAULT_SECONDS * 1000;
  if (!/^[0-9]{1,6}$/.test(text) || Number(text) > KEEPER_INTERVAL_MAX_SECONDS) {
    throw new BridgeError(
      'CONFIG',
      `${KEEPER_INTERVAL_ENV} must be whole seconds from 0 to ${KEEPER_INTERVAL_MAX_SECONDS}, not ${JSON.stringify(text)}`,
      `Set ${KEEPER_INTERVAL_ENV} to how often (seconds) the bridge keeps its sealed SPACES (default ${KEEPER_INTERVAL_DEFAULT_SECONDS}; 0: never), or unset it.`,
    );
  }
  return Number(text) * 1000;
}

export interface KeeperDuty {
  /** Run a round now, after the one in progress (rounds never overlap); resolves when it ended. */
  round(): Promise<void>;
  /** Stop: no round starts after this; resolves once a round in progress ended (or after a short grace). */
  stop(): Promise<void>;
}

/**
 * The duty's one rule for stderr. Each line comes with the SPACE it is about ('' for none): a
 * line that SPACE's previous round said (or kept quiet as a repeat) is not said again, nor twice
 * in one round; a line its last round did not have is said, so a failure that stopped and came
 * back is said again. `news` (work done: locks made, a key changed) is said every time.
 */
export class OnceLog {
  private readonly last = new Map<string, Set<string>>();
  private readonly current = new Map<string, Set<string>>();

  constructor(
    private readonly out: (line: string) => void,
    private readonly quiet: () => boolean = () => false,
  ) {}

  say(space: string, line: string, news = false): void {
    let seen = this.current.get(space);
    if (seen === undefined) this.current.set(space, (seen = new Set()));
    const repeated = seen.has(line) || this.last.get(space)?.has(line) === true;
    seen.add(line);
    if (this.quiet() || (repeated && !news)) return;
    this.out(line);
  }

  /** A round over `space` ended: its lines are the ones the next round does not repeat. */
  endRound(space: string): void {
    this.last.set(space, this.current.get(space) ?? new Set());
    this.current.delete(space);
  }
}

/** Whether this KEY may keep a remembered SPACE: its owner, or named by the newest list seen. */
function mayKeep(me: string, s: RememberedSpace): boolean {
  if (s.owner === me) return true;
  if (s.list === null) return false;
  try {
    return readKeeperList(s.list).keepers.includes(me);
  } catch {
    return false;
  }
}

/** Start the duty for `sealing`'s KEY, a round every `intervalMs` (> 0). */
export function startKeeperDuty(sealing: Sealing, intervalMs: number): KeeperDuty {
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0) throw new TypeError('intervalMs must be a positive whole number');
  const base: KeeperContext = keeperContext(sealing);
  let stopped = false;
  const once = new OnceLog(base.log, () => stopped);
  let timer: NodeJS.Timeout | undefined;
  /** The round in progress or last ended (never rejects). */
  let rounds: Promise<void> = Promise.resolve();

  async function keep(space: RememberedSpace): Promise<void> {
    const say = (line: string, news = false) => once.say(space.spaceId, line, news);
    // Whatever the pass and the key records it reads log, through the same rule.
    const ctx: KeeperContext = { ...base, log: (line) => say(line) };
    try {
      const r = await sealing.inTurn(() => keeperPass(ctx, space.name, { admit: false }));
      if (r.locked > 0 || r.changedTo !== undefined) {
        for (const n of r.notes) say(`keeper duty, ${space.name} (generation ${r.generation}): ${n}`, true);
      } else if (r.notes.length > 0) {
        say(`keeper duty, ${space.name}: ${r.notes.join('; ')}`);
      }
    } catch (e) {
      say(`keeper duty, ${space.name}: ${failureWords(e)}`);
    } finally {
      once.endRound(space.spaceId);
    }
  }

  async function round(): Promise<void> {
    try {
      let spaces: RememberedSpace[];
      try {
        spaces = sealing.cache.spaces(sealing.relay).filter((s) => mayKeep(base.peerId, s));
      } catch (e) {
        once.say('', `keeper duty: cannot read the sealed cache: ${failureWords(e)}`);
        return;
      }
      for (const s of spaces) {
        if (stopped) return;
        await keep(s);
      }
    } catch (e) {
      once.say('', `keeper duty: ${failureWords(e)}`);
    } finally {
      once.endRound('');
    }
  }

  const runRound = (): Promise<void> => {
    const run = rounds.then(() => (stopped ? undefined : round()));
    rounds = run;
    return run;
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void runRound().finally(() => schedule(intervalMs)), ms);
    // A waiting round never keeps the process alive: stdin closing still ends it.
    timer.unref();
  };
  schedule(Math.min(intervalMs, FIRST_ROUND_MS));

  return {
    round: runRound,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([rounds, new Promise<void>((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(grace);
    },
  };
}
