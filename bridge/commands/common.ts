/**
 * What the sealed-SPACE commands of svc-bridge share (`keepers`, `stamp`, `keeper`, `sealed`):
 * the context cli.ts builds for them (the relay client, the KEY's signer and its Sealing,
 * stdout for results, stderr for logs) and a small strict reader of `--flag value` arguments.
 * The commands never see key bytes: the KEY signs through its signer and seals through the
 * Sealing (bridge/sealed/sealing.ts).
 */
import type { Signer } from '../../shared/identity.js';
import type { RelayApi } from '../../tools/api.js';
import type { Sealing } from '../sealed/sealing.js';

export interface CommandContext {
  readonly api: RelayApi;
  /** This KEY: name and peer id. */
  readonly keyName: string;
  readonly peerId: string;
  readonly signer: Signer;
  readonly sealing: Sealing;
  /** One line of result to stdout. */
  readonly out: (line: string) => void;
  /** One line to stderr. */
  readonly log: (line: string) => void;
  readonly now: () => number;
}

/** A usage problem: cli.ts prints it with the command's help and exits 2. */
export class CommandUsage extends Error {}

export interface ParsedArgs {
  readonly positional: readonly string[];
  /** Every value of each flag, in the order given; a switch has the value ''. */
  readonly flags: ReadonlyMap<string, readonly string[]>;
}

/**
 * `words` after the command: flags `--name value` (the names in `valued`), switches `--name`
 * (the names in `switches`), the rest positional. Unknown flags are a usage error.
 */
export function parseArgs(words: readonly string[], valued: readonly string[], switches: readonly string[] = []): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('--')) {
      positional.push(w);
      continue;
    }
    const name = w.slice(2);
    if (switches.includes(name)) {
      flags.set(name, [...(flags.get(name) ?? []), '']);
    } else if (valued.includes(name)) {
      const v = words[i + 1];
      if (v === undefined) throw new CommandUsage(`--${name} needs a value`);
      flags.set(name, [...(flags.get(name) ?? []), v]);
      i++;
    } else {
      throw new CommandUsage(`unknown option ${w}`);
    }
  }
  return { positional, flags };
}

/** The one value of a flag, or undefined; given twice is a usage error. */
export function one(args: ParsedArgs, name: string): string | undefined {
  const vs = args.flags.get(name);
  if (vs === undefined) return undefined;
  if (vs.length > 1) throw new CommandUsage(`--${name} is given once`);
  return vs[0];
}

export function has(args: ParsedArgs, name: string): boolean {
  return args.flags.has(name);
}

const PEER_RE = /^[0-9a-f]{64}$/;

export function peerArg(value: string, what: string): string {
  if (!PEER_RE.test(value)) throw new CommandUsage(`${what}: a peer id, 64 lowercase hex (svc-bridge id prints yours)`);
  return value;
}

/** A whole number of seconds within bounds. */
export function secondsArg(value: string, what: string, min: number, max: number): number {
  if (!/^[0-9]{1,15}$/.test(value)) throw new CommandUsage(`${what}: whole seconds`);
  const n = Number(value);
  if (n < min || n > max) throw new CommandUsage(`${what}: ${min} to ${max} seconds`);
  return n;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
