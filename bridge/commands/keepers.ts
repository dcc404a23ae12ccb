/**
 * `svc-bridge keepers <space>`: the owner signs the SPACE's keeper list (protocol/sealed.md §8)
 * and puts it (`PUT /v1/spaces/{name}/sealed/keepers`, sealed.keepers).
 *
 *   list   = canonical({"admission","change_every","keepers","revision","space_id","stampers","v":1})
 *   signed = L("sealed-keepers") || list
 *
 * Each flag replaces its member; a member not given stays as in the latest list (or the
 * defaults: no keepers, no stampers, admission stamped, change every day). The revision is the
 * next one; when another list was put meanwhile (KEEPER_LIST_STALE) the command signs again at
 * the revision the relay expects, once. The list goes through the bridge's own trust check
 * before and after (bridge/sealed/sealing.ts `status`), so the new revision is remembered here.
 */
import { toBase64url } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import {
  ADMISSIONS,
  CHANGE_EVERY_MAX,
  CHANGE_EVERY_MIN,
  buildKeeperList,
  readKeeperList,
  signKeeperList,
  type Admission,
  type KeeperList,
  type KeeperListFields,
} from '../../shared/sealed/keepers.js';
import { BridgeError, isRelayRefusal } from '../../tools/errors.js';
import { CommandUsage, has, one, parseArgs, peerArg, secondsArg, type CommandContext } from './common.js';

export const KEEPERS_HELP = `svc-bridge keepers SPACE [options]: sign and put the keeper list of a sealed SPACE you own.

Options (each replaces that part of the latest list; the rest stays):
  --keeper PEER        a KEY that may hand out the key besides you (repeat for several; at most 32)
  --no-keepers         no keepers besides you
  --stamper PEER       a KEY whose stamps vouch for members (repeat; at most 32)
  --no-stampers        no stampers
  --admission MODE     stamped (a keeper admits on its own only KEYS holding a stamp) or open
  --change-every S     seconds between key changes after someone left (${CHANGE_EVERY_MIN} to ${CHANGE_EVERY_MAX})

Prints the revision put and the list. The relay cannot forge it: members check your signature.
`;

const DEFAULT_CHANGE_EVERY = 86_400;

function listText(l: KeeperList): string[] {
  return [
    `revision:     ${l.revision}`,
    `keepers:      ${l.keepers.length === 0 ? '(only the owner)' : l.keepers.join(', ')}`,
    `stampers:     ${l.stampers.length === 0 ? '(only keepers and the owner)' : l.stampers.join(', ')}`,
    `admission:    ${l.admission}`,
    `change_every: ${l.change_every} s`,
  ];
}

export async function runKeepers(ctx: CommandContext, words: readonly string[]): Promise<void> {
  const args = parseArgs(words, ['keeper', 'stamper', 'admission', 'change-every'], ['no-keepers', 'no-stampers']);
  if (args.positional.length !== 1) throw new CommandUsage('usage: svc-bridge keepers SPACE [options]');
  const name = args.positional[0]!;
  if (has(args, 'keeper') && has(args, 'no-keepers')) throw new CommandUsage('--keeper and --no-keepers: give one');
  if (has(args, 'stamper') && has(args, 'no-stampers')) throw new CommandUsage('--stamper and --no-stampers: give one');
  const admission = one(args, 'admission');
  if (admission !== undefined && !(ADMISSIONS as readonly string[]).includes(admission)) throw new CommandUsage('--admission: stamped or open');
  const changeEvery = one(args, 'change-every');

  const keys = await ctx.sealing.status(name);
  if (keys.judged.authority.owner !== ctx.peerId) {
    throw new BridgeError('CONFIG', `you do not own ${name}: its owner ${keys.judged.authority.owner} signs its keeper list`, 'Ask the owner to add you as a keeper.');
  }
  const latest = keys.status.keeperList === null ? null : readKeeperList(keys.status.keeperList.bytes);
  const fields = (revision: number): KeeperListFields => ({
    space_id: keys.spaceId,
    revision,
    keepers: has(args, 'no-keepers') ? [] : has(args, 'keeper') ? args.flags.get('keeper')!.map((p) => peerArg(p, '--keeper')) : (latest?.keepers ?? []),
    stampers: has(args, 'no-stampers') ? [] : has(args, 'stamper') ? args.flags.get('stamper')!.map((p) => peerArg(p, '--stamper')) : (latest?.stampers ?? []),
    admission: (admission as Admission | undefined) ?? latest?.admission ?? 'stamped',
    change_every: changeEvery !== undefined ? secondsArg(changeEvery, '--change-every', CHANGE_EVERY_MIN, CHANGE_EVERY_MAX) : (latest?.change_every ?? DEFAULT_CHANGE_EVERY),
  });
  const put = async (revision: number) => {
    const bytes = buildKeeperList(fields(revision), ctx.peerId);
    return ctx.api.request({
      method: 'PUT',
      path: `/v1/spaces/${encodeURIComponent(name)}/sealed/keepers`,
      body: { list: toBase64url(bytes), ...signKeeperList(ctx.signer, bytes) },
    });
  };
  let revision = (latest?.revision ?? 0) + 1;
  try {
    await put(revision);
  } catch (e) {
    if (!isRelayRefusal(e, 'KEEPER_LIST_STALE') || e.detail === undefined || !/^[1-9][0-9]{0,9}$/.test(e.detail)) throw e;
    revision = Number(e.detail);
    ctx.log(`another keeper list was put meanwhile; signing again at revision ${revision}`);
    await put(revision);
  }
  // Read it back through the trust rules: this bridge remembers the new revision.
  const after = await ctx.sealing.status(name);
  const served = after.status.keeperList;
  if (served === null || served.revision !== revision) {
    throw new SvcError('KEEPER_LIST_STALE', `the relay took the list but shows revision ${served?.revision ?? 'none'}`);
  }
  ctx.out(`Keeper list of ${after.name} signed and put:`);
  for (const line of listText(readKeeperList(served.bytes))) ctx.out(`  ${line}`);
}
