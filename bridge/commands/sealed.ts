/**
 * `svc-bridge sealed <space> [--forget]`: what this bridge remembers of a sealed SPACE
 * (bridge/sealed/sealed-cache.ts) beside what the relay shows now, with the fingerprints to compare
 * outside the service (protocol/sealed.md §2, §5).
 *
 * `--forget` clears the memory of the SPACE (owner, keeper lists, generation, secrets): the
 * step sealed.md §5 asks for after missed hand-overs, once the person compared the new owner's
 * fingerprint outside the service. The next read meets the SPACE for the first time again and
 * takes the key from the locks the relay holds for this KEY.
 */
import { displayFingerprint } from '../../shared/sealed/encryption-key.js';
import { failureWords, isBridgeError } from '../../tools/errors.js';
import { CommandUsage, has, parseArgs, type CommandContext } from './common.js';

export const SEALED_HELP = `svc-bridge sealed SPACE [--forget]: what this bridge remembers of a sealed SPACE (owner,
keeper list revision, generation in use) and what the relay shows now, with the encryption key
fingerprints to compare with their people outside the service.
  --forget   clear what is remembered of it (after comparing the new owner's fingerprint)
`;

export async function runSealed(ctx: CommandContext, words: readonly string[]): Promise<void> {
  const args = parseArgs(words, [], ['forget']);
  if (args.positional.length !== 1) throw new CommandUsage('usage: svc-bridge sealed SPACE [--forget]');
  const name = args.positional[0]!;
  const { sealing } = ctx;
  const remembered = sealing.cache.spaceByName(sealing.relay, name);
  if (has(args, 'forget')) {
    if (remembered === undefined) {
      ctx.out(`Nothing remembered of ${name} at ${sealing.relay}.`);
      return;
    }
    sealing.cache.forget(sealing.relay, remembered.spaceId);
    ctx.out(`Forgot sealed SPACE ${name} (${remembered.spaceId}): its owner ${remembered.owner}, keeper list revision ${remembered.listRevision ?? 'none'}, generation ${remembered.generation}. The next read meets it anew.`);
    return;
  }
  ctx.out(`This KEY: ${ctx.peerId}, encryption key fingerprint ${displayFingerprint(sealing.deps.sealer.fingerprint)}`);
  if (remembered === undefined) ctx.out(`Remembered of ${name}: nothing yet.`);
  else {
    ctx.out(`Remembered of ${name} (${remembered.spaceId})${remembered.createdHere ? ', created here' : ''}:`);
    ctx.out(`  owner:        ${remembered.owner}${remembered.ownerWas ? ` (took over from ${remembered.ownerWas})` : ''}`);
    ctx.out(`  keeper list:  ${remembered.listRevision === null ? 'none seen' : `revision ${remembered.listRevision}, signed by ${remembered.listSignedBy}`}`);
    ctx.out(`  generation:   ${remembered.generation}`);
  }
  try {
    const keys = await sealing.status(name);
    const fp = (k: { encryption: { fingerprint: string } | null }) => (k.encryption === null ? 'none' : displayFingerprint(k.encryption.fingerprint));
    ctx.out(`The relay shows, accepted by the trust rules:`);
    ctx.out(`  owner:        ${keys.status.owner.peerId}, fingerprint ${fp(keys.status.owner)}`);
    ctx.out(`  keeper list:  ${keys.status.keeperList === null ? 'none' : `revision ${keys.status.keeperList.revision}`}`);
    ctx.out(`  generation:   ${keys.generation}${keys.secret === undefined ? ' (this KEY holds no key for it yet)' : ' (key held)'}`);
    for (const r of keys.refused) ctx.out(`  refused:      ${r}`);
  } catch (e) {
    if (!isBridgeError(e)) throw e;
    ctx.out(`The relay's key records are refused: ${failureWords(e)}`);
    process.exitCode = 1;
  }
}
