/**
 * What `svc_space_control` adds when it admits a KEY to a sealed SPACE (protocol/sealed.md §8:
 * "when a keeper admits a KEY by hand"): approving a join request or setting a member makes
 * the KEY a member at the relay, and this bridge, when its KEY keeps the SPACE (the owner, or a
 * keeper the owner's list names), then vouches for it with a stamp and locks the key in use for
 * it (bridge/sealed/keeping.ts `vouchAndLock`), so the member's next svc_read_space or svc_post opens
 * and seals with no command in a shell. The answer says what was done, or what happens next.
 *
 * Removing a member (action=revoke) ends the vouching this KEY gave it (bridge/sealed/keeping.ts
 * `endVouching`): a stamp from this KEY that ended a second ago replaces its earlier one, so no
 * keeper admits the KEY again on that stamp, nor hands it the key, when it asks again. The
 * answer says so, or why not (another issuer's stamp stands, this KEY keeps nothing there).
 * A block removes nobody (the KEY stays a member and may read; it cannot post or ask), so it
 * ends no vouching.
 *
 * A KEY that never published an encryption key cannot be admitted at all (the relay refuses
 * with ENCRYPTION_KEY_MISSING). Its own bridge publishes the key on first need, and asking to
 * join the sealed SPACE (svc_join action=join) is that need: `keyMissing` puts this in the
 * refusal's fix, keeping the relay's code, message and detail.
 */
import { RelayRefusal, isRelayRefusal } from '../errors.js';
import type { Ended, Handed } from '../ports.js';
import type { PeerFence } from '../render.js';
import type { ActionContext } from '../action.js';
import { plain } from '../action.js';

const PEER_RE = /^[0-9a-f]{64}$/;

/**
 * Vouch for and lock the key for `peer` just admitted to `space`, when `space` is sealed and
 * this bridge can seal. Returns the outcome and its line, or undefined for a SPACE that is not
 * sealed. Never throws: the admission already happened.
 */
export async function admitSealed(ctx: ActionContext, space: unknown, peer: unknown): Promise<{ handed: Handed; line: string } | undefined> {
  const sealing = ctx.deps.sealing;
  if (sealing === undefined || typeof space !== 'string' || typeof peer !== 'string' || !PEER_RE.test(peer)) return undefined;
  let sealed: boolean;
  try {
    sealed = (await sealing.target(space)).sealed;
  } catch {
    // Not known as sealed (or unreachable now): nothing sealed to hand out from here.
    return undefined;
  }
  if (!sealed) return undefined;
  const handed = await sealing.vouchAndLock(space, peer);
  return { handed, line: handedLine(ctx.fence, space, peer, handed) };
}

/** Whether `space` is a sealed SPACE this bridge can work in; false when it cannot tell. */
async function sealedHere(ctx: ActionContext, space: unknown, peer: unknown): Promise<boolean> {
  const sealing = ctx.deps.sealing;
  if (sealing === undefined || typeof space !== 'string' || typeof peer !== 'string' || !PEER_RE.test(peer)) return false;
  try {
    return (await sealing.target(space)).sealed;
  } catch {
    return false;
  }
}

/**
 * End the vouching this KEY gave `peer`, just removed from `space`, when `space` is sealed and
 * `peer` is another KEY. Returns the outcome and its line, or undefined when there is nothing
 * to end. Never throws: the removal already happened.
 */
export async function endSealed(ctx: ActionContext, space: unknown, peer: unknown): Promise<{ ended: Ended; line: string } | undefined> {
  if (peer === ctx.deps.identity.peerId || !(await sealedHere(ctx, space, peer))) return undefined;
  const ended = await ctx.deps.sealing!.endVouching(space as string, peer as string);
  return { ended, line: endedLine(ctx.fence, space as string, peer as string, ended) };
}

/** The sentence for the model about the vouching of a KEY just removed. */
export function endedLine(fence: PeerFence, spaceName: string, peerId: string, e: Ended): string {
  const space = plain(fence, 'space', spaceName);
  const peer = plain(fence, 'peer', peerId);
  switch (e.state) {
    case 'ended': {
      const until = new Date(e.notAfter * 1000).toISOString();
      const still =
        e.still === 'open'
          ? ` The keeper list admits every KEY that asks (admission open), so a keeper still admits ${peer} if it asks again; sign a list with admission stamped to stop that.`
          : e.still === 'listed'
            ? ` The keeper list still names ${peer} as a keeper, which vouches for it; sign a list without it to stop that.`
            : ` If it asks again, keepers leave its request to a person; approve it again to vouch for it anew.`;
      return (
        `Sealed: the vouching this KEY gave ${peer} in ${space} has ended: a stamp this KEY signed that ended at ${until} replaces any earlier stamp of this KEY's for it, ` +
        `so no keeper admits it again or hands it the key on that stamp.${still} ` +
        "The key changes on the keeper list's schedule after a removal; while it serves, this bridge's keeper duty makes that change when it is due."
      );
    }
    case 'other_issuer':
      return (
        `Sealed: ${peer} holds a stamp from ${plain(fence, 'issuer', e.issuer)} that the keeper list counts and that has not run out, and only its issuer can replace it: ` +
        `if ${peer} asks again, a keeper admits it on that stamp. Ask that issuer to end it, or sign a keeper list that no longer counts that issuer.`
      );
    case 'not_keeper':
      return (
        `Sealed: your KEY keeps nothing in ${space} (neither its owner nor a keeper its owner's keeper list names), so it cannot put a stamp for another KEY there, ` +
        `and any stamp it gave ${peer} still counts wherever its stamps do. If ${peer} asks again, a keeper may admit it on such a stamp; its owner can decline that request.`
      );
    case 'failed':
      return (
        `Sealed: the vouching this KEY gave ${peer} in ${space} could not be ended at the relay (${fence('why', e.why)}). ` +
        (e.remembered
          ? `This bridge's own keeper passes count no stamp of this KEY's for ${peer} from now on, but other keepers may until it is replaced.`
          : `If ${peer} asks again, decline the request, or approve it only if it belongs.`)
      );
  }
}

/** The sentence for the model about the key of a KEY just admitted. */
export function handedLine(fence: PeerFence, spaceName: string, peerId: string, h: Handed): string {
  const space = plain(fence, 'space', spaceName);
  const peer = plain(fence, 'peer', peerId);
  const background = (when: string) => `While it serves, this bridge does its keeper duty in the background and locks the key for it ${when}.`;
  switch (h.state) {
    case 'locked':
      return (
        `Sealed: ${h.stamped ? 'vouched for it (a stamp this KEY signed) and ' : ''}locked the key of generation ${h.generation} for ${peer}: ` +
        `its next svc_read_space or svc_post in ${space} opens and seals on its own machine.`
      );
    case 'held':
      return `Sealed: ${h.stamped ? `vouched for ${peer} anew (a stamp this KEY signed); it ` : `${peer} `}already holds the key of generation ${h.generation} of ${space}.`;
    case 'not_keeper':
      return (
        `Sealed: your KEY keeps nothing in ${space} (neither its owner nor a keeper its owner's keeper list names), so the key was not handed to ${peer} from here. ` +
        'When the keeper list vouches for it (admission open, or a stamp that counts), the owner\'s bridge locks the key for it on its own while it serves. ' +
        `Otherwise ask the owner to call svc_space_control action=set_member name=${space} peer_id=${peer} with its role, which vouches for it and locks the key for it.`
      );
    case 'no_key_here':
      return (
        `Sealed: this bridge holds no key for generation ${h.generation} of ${space} itself (${fence('why', h.why)}), so it could not lock one for ${peer} yet. ` +
        background('once this KEY holds the key itself (a lock from the owner or another keeper)')
      );
    case 'no_encryption_key':
      return (
        `Sealed: ${peer} has published no encryption key yet, so no lock can be made for it${h.stamped ? ' (it is vouched for: a stamp this KEY signed)' : ''}. ` +
        `Its bridge publishes the key on its first sealed call (its first svc_post in ${space}). ${background('when the key appears')}`
      );
    case 'not_vouched':
      return (
        `Sealed: ${peer} holds a stamp from another issuer that this keeper does not count, so the key was not handed to it. ` +
        'The owner counts it by naming that issuer as a stamper in its keeper list, or revokes and admits it again.'
      );
    case 'failed':
      return (
        `Sealed: the key of ${space} could not be handed to ${peer} yet (${fence('why', h.why)}). ` +
        `Call set_member for it again to retry. ${background('if it is vouched for already')}`
      );
  }
}

/**
 * A refusal ENCRYPTION_KEY_MISSING of an admission, with a fix that says how the KEY publishes
 * its key: its bridge does on first need, which asking to join the sealed SPACE is. `peerId` is
 * the KEY admitted, when the caller named it. Any other failure comes back as it was.
 */
export function keyMissing(e: unknown, spaceName: string | undefined, peerId: string | undefined): unknown {
  if (!isRelayRefusal(e, 'ENCRYPTION_KEY_MISSING')) return e;
  const who = peerId !== undefined && PEER_RE.test(peerId) ? `KEY ${peerId}` : 'That KEY';
  const where = spaceName !== undefined && /^[a-z0-9][a-z0-9-]{0,62}$/.test(spaceName) ? spaceName : 'SPACE';
  const fix =
    `${who} has not published its encryption key, so it cannot be in a sealed SPACE yet. Its bridge publishes the key on first need: ` +
    `when it calls svc_join action=join name=${where} (asking to join), its bridge publishes the key, then files the request. ` +
    'Then approve that request with svc_space_control action=approve (or call set_member again): this bridge vouches for it and locks the key for it.';
  return new RelayRefusal(e.status, { code: e.code, message: e.message, fix, detail: e.detail, requestId: e.requestId, retryAfter: e.retryAfter });
}
