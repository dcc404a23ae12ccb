/**
 * `svc-bridge stamp`: stamps (protocol/sealed.md §8), a KEY's signed word that another KEY
 * belongs to it, counted by keepers when they decide who is vouched for.
 *
 *   stamp  = canonical({"issuer","not_after"?,"peer_id","v":1})
 *   signed = L("sealed-stamp") || stamp
 *
 * - `svc-bridge stamp PEER [--until T | --days N]` signs a stamp for PEER and prints the
 *   `PUT …/sealed/stamp` body as one JSON line, to hand to PEER outside the service.
 * - With `--space S` it puts it at once (sealed.stamp): as a keeper, for a KEY you admit by
 *   hand; or for yourself.
 *   Either way, a stamp that counts now is this KEY vouching for PEER anew: its keeper passes
 *   count its stamps for PEER again where its vouching for PEER was ended on a removal
 *   (bridge/sealed/keeping.ts `endVouching`). One that ended already (`--until` a past time, with
 *   `--space`) ends this KEY's vouching there for a KEY that left on its own.
 * - `svc-bridge stamp --put JSON --space S` puts a stamp someone gave you (before asking to
 *   join: a keeper reads it with the request). The JSON must be a stamp naming this KEY, with
 *   a well-formed signature; the relay checks the signature against the issuer's KEY.
 */
import { fromBase64url, toBase64url } from '../../shared/encoding.js';
import { NOT_AFTER_MAX, readStamp, readStampPut, type Stamp } from '../../shared/sealed/stamps.js';
import { putStamp, signedStamp } from '../sealed/stamping.js';
import { CommandUsage, has, one, parseArgs, peerArg, type CommandContext } from './common.js';

export const STAMP_HELP = `svc-bridge stamp PEER [--until TIME | --days N] [--space SPACE]
  Sign a stamp saying KEY PEER belongs to you. Without --space, print it as one JSON line to
  give to PEER (it puts it with --put); with --space, put it in that sealed SPACE now.
  --until TIME   when the stamp stops counting: an ISO date-time or seconds since 1970
  --days N       the same, N days from now
svc-bridge stamp --put JSON --space SPACE
  Put a stamp someone gave you (the JSON line they printed) in a sealed SPACE, before asking
  to join it: its keeper reads the stamp with your request.
`;

const DAY_SECONDS = 86_400;

function notAfterOf(ctx: CommandContext, until: string | undefined, days: string | undefined): number | undefined {
  if (until !== undefined && days !== undefined) throw new CommandUsage('--until and --days: give one');
  const nowSeconds = Math.floor(ctx.now() / 1000);
  if (days !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(days)) throw new CommandUsage('--days: a whole number of days');
    return nowSeconds + Number(days) * DAY_SECONDS;
  }
  if (until === undefined) return undefined;
  const seconds = /^[0-9]{1,12}$/.test(until) ? Number(until) : Math.floor(Date.parse(until) / 1000);
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > NOT_AFTER_MAX) throw new CommandUsage('--until: an ISO date-time or seconds since 1970');
  return seconds;
}

function describe(s: Stamp): string {
  return `${s.issuer} vouches for ${s.peer_id}${s.not_after === undefined ? ', without end' : ` until ${new Date(s.not_after * 1000).toISOString()}`}`;
}

async function put(ctx: CommandContext, space: string, body: Record<string, string>): Promise<void> {
  // A stamp is put before asking to join: the encryption key is needed next (first need).
  await ctx.sealing.published();
  const r = await putStamp(ctx.api, space, body);
  if (!r.stored) {
    ctx.out(`Not stored: another issuer's stamp for this KEY still vouches in ${space} (issuer ${String(r.issuer)}).`);
    return;
  }
  ctx.out(`Stamp put in ${space}: ${describe(readStamp(fromBase64url(body.stamp, 'stamp')))}.`);
}

export async function runStamp(ctx: CommandContext, words: readonly string[]): Promise<void> {
  const args = parseArgs(words, ['until', 'days', 'space', 'put']);
  const space = one(args, 'space');
  if (has(args, 'put')) {
    if (args.positional.length !== 0 || has(args, 'until') || has(args, 'days')) throw new CommandUsage('usage: svc-bridge stamp --put JSON --space SPACE');
    if (space === undefined) throw new CommandUsage('--put needs --space: the sealed SPACE to put the stamp in');
    let given: unknown;
    try {
      given = JSON.parse(one(args, 'put')!);
    } catch {
      throw new CommandUsage('--put: the JSON line the issuer printed');
    }
    const { stamp: bytes, envelope } = readStampPut(given);
    const stamp = readStamp(bytes);
    if (stamp.peer_id !== ctx.peerId) throw new CommandUsage(`--put: this stamp is for ${stamp.peer_id}, not for this KEY (${ctx.peerId})`);
    await put(ctx, space, { stamp: toBase64url(bytes), ...envelope });
    return;
  }
  if (args.positional.length !== 1) throw new CommandUsage('usage: svc-bridge stamp PEER [--until TIME | --days N] [--space SPACE]');
  const peer = peerArg(args.positional[0]!, 'PEER');
  const notAfter = notAfterOf(ctx, one(args, 'until'), one(args, 'days'));
  const body = signedStamp(ctx.signer, ctx.peerId, peer, notAfter);
  // A person vouching for PEER anew (a stamp that counts now): this KEY's keeper passes count
  // its stamps for PEER again wherever its vouching was ended on a removal (a stamp names no
  // SPACE; it counts where it is put). A stamp that ended already vouches for nothing.
  if (notAfter === undefined || notAfter >= Math.floor(ctx.now() / 1000)) ctx.sealing.cache.clearVouchingEnded(ctx.sealing.relay, peer);
  if (space !== undefined) {
    await put(ctx, space, body);
    return;
  }
  ctx.out(JSON.stringify(body));
  ctx.log(`stamp: ${describe(readStamp(fromBase64url(body.stamp, 'stamp')))}. Give the line above to that KEY; it puts it with: svc-bridge stamp --put '<line>' --space SPACE`);
}
