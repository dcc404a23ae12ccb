/**
 * Who keeps a sealed SPACE and who is vouched for, as the relay reads its own records
 * (protocol/sealed.md §5, §8), built on the member-side rules of shared/sealed/keepers.ts so the
 * relay and the bridge decide the same way.
 *
 * The relay uses these answers to refuse (NOT_A_KEEPER, LOCK_RECIPIENT_NOT_VOUCHED, LOCKS_MISSING)
 * and to show an advisory `vouched` flag. Every keeper list and stamp it reads here was verified
 * against its signer when it was put (relay/routes/sealed.ts); a member's software checks them
 * again itself and never takes the relay's `vouched` for anything.
 */
import { isKeeper, isVouched, listInForce, readKeeperList, vouching, type SpaceAuthority } from '../../shared/sealed/keepers.js';
import type { Stamp } from '../../shared/sealed/stamps.js';

/** A stored keeper list: its bytes (verified when put) and who signed it. */
export interface StoredList {
  list: Uint8Array;
  signedBy: string;
}

/** A stored stamp's columns. */
export interface StoredStamp {
  peerId: string;
  issuer: string;
  notAfter: number | null;
}

/** The owner in place, the latest list and, after a hand-over, the owner it came from. */
export function authorityOf(owner: string, latest: StoredList | undefined, ownerWas: string | null): SpaceAuthority {
  return {
    owner,
    latest: latest === undefined ? null : { list: readKeeperList(latest.list), signedBy: latest.signedBy },
    previousOwner: ownerWas ?? undefined,
  };
}

export function keeperOf(peer: string, authority: SpaceAuthority): boolean {
  return isKeeper(peer, authority);
}

/** The KEYS besides the owner that the list in force names as keepers. */
export function listedKeepers(authority: SpaceAuthority): string[] {
  return listInForce(authority)?.list.keepers ?? [];
}

/** Seconds between key changes after a departure: the list's, or one day with no list in force. */
export function changeEverySeconds(authority: SpaceAuthority): number {
  return listInForce(authority)?.list.change_every ?? 86_400;
}

export function stampOf(s: StoredStamp): Stamp {
  const stamp: Stamp = { issuer: s.issuer, peer_id: s.peerId, v: 1 };
  if (s.notAfter !== null) stamp.not_after = s.notAfter;
  return stamp;
}

/** Whether `peer` is vouched for at `nowMs`, given the stamp it holds here (if any). */
export function vouchedFor(peer: string, stamp: StoredStamp | undefined, authority: SpaceAuthority, nowMs: number): boolean {
  return isVouched(peer, stamp === undefined ? [] : [stampOf(stamp)], authority, Math.floor(nowMs / 1000));
}

/** Whether a stamp from `issuer` counts under `authority` (for the stamp replacement rule). */
export function issuerCounts(issuer: string, authority: SpaceAuthority): boolean {
  return vouching(authority).issuers.has(issuer);
}
