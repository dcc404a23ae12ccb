/**
 * The advisory locks every relay process sharing one PostgreSQL database agrees on. An
 * advisory lock is a number the database locks for whoever asks first; the keys are fixed
 * constants (the bytes of a short ASCII tag) or derived from what is locked by a fixed rule,
 * so that any version of the relay takes the same lock for the same purpose.
 *
 * Writers lock what they touch (relay/store/database.ts `under`), never the whole database:
 *
 * - the write gate, WRITE_LOCK: every writer holds it shared, so writers pass it together; a
 *   wide write (`immediate`: a restore, a batch spanning many KEYS) holds it exclusive and so
 *   waits for every other writer and they for it;
 * - a SPACE (its `seq`, chain head, control revision, members, roles, invites, blocks, sealed
 *   keys, tasks and oracle state), keyed by its row id;
 * - a conversation (its message `seq` and members), keyed by a hash of its id;
 * - a KEY (what is counted per KEY across SPACES: its memberships, links made a day, roleless
 *   posts a day, passkey counter, idempotency keys of its messages), keyed by a hash of its
 *   peer id;
 * - a mailbox (its `mailbox_seq`), keyed by the same hash of the KEY's peer id.
 *
 * One global order, so that two writers can never each hold what the other waits for: the
 * gate first, then SPACES, then conversations, then KEYS, then mailboxes, each kind ascending
 * by its lock number (mailboxes last: a transaction's deliveries lock them just before COMMIT). A transaction takes all the locks it names at once, in that order, at BEGIN; one
 * that needs more later (a nested write, its mailbox deliveries before COMMIT) may only add
 * locks that sort after every lock it holds. `orderCheck` finds the ones that do not; PostgreSQL
 * would still detect the deadlock such an inversion can cause, and the relay retries the
 * transaction it aborts (connection.ts), but a correct order never needs it.
 *
 * The two-number form `pg_advisory_xact_lock(kind, id)` keeps these apart from the one-number
 * locks below (PostgreSQL's two key spaces do not overlap). Two conversations or two KEYS
 * whose ids hash alike share a lock: they wait for each other, nothing worse.
 */
import type { WriteLocks } from '../database.js';

/** The write gate: shared by every writer, exclusive for a wide write. */
export const WRITE_LOCK = 0x7376_6377_7269_7465n; // 'svcwrite'

/** Held (session scope) while migrations run, so two relay processes starting at once migrate once. */
export const MIGRATE_LOCK = 0x7376_636d_6967_7261n; // 'svcmigra'

/** Held (session scope) for one checkpointer pass, so one relay process signs each range. */
export const CHECKPOINTER_LOCK = 0x7376_6363_6b70_6e74n; // 'svcckpnt'

/** The kinds of lock in their global order; the number is the first half of a two-number lock. */
export const LOCK_KIND = {
  space: 0x7376_6301, // 'svc' 1
  conversation: 0x7376_6302,
  key: 0x7376_6303,
  mailbox: 0x7376_6304,
} as const;

export type LockKind = keyof typeof LOCK_KIND;

/** One lock: its kind and the 32-bit number of what it locks. */
export interface Lock {
  kind: LockKind;
  id: number;
}

/** FNV-1a over the UTF-16 code units, as a signed 32-bit number (what int4 holds). */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` in the global order. */
export function compareLocks(a: Lock, b: Lock): number {
  return LOCK_KIND[a.kind] - LOCK_KIND[b.kind] || a.id - b.id;
}

/** The distinct locks `w` names, in the global order. */
export function locksOf(w: WriteLocks): Lock[] {
  const all: Lock[] = [];
  for (const s of w.spaces ?? []) all.push({ kind: 'space', id: s | 0 });
  for (const c of w.conversations ?? []) all.push({ kind: 'conversation', id: hash32(c) });
  for (const k of w.keys ?? []) all.push({ kind: 'key', id: hash32(k) });
  for (const m of w.mailboxes ?? []) all.push({ kind: 'mailbox', id: hash32(m) });
  all.sort(compareLocks);
  return all.filter((l, i) => i === 0 || compareLocks(all[i - 1]!, l) !== 0);
}

/** A stable name for a lock, for the set of those held and for messages. */
export function lockName(l: Lock): string {
  return `${l.kind}:${l.id}`;
}

/** The statement taking `l` (numbers only: nothing a caller wrote goes into the text). */
export function lockStatement(l: Lock): string {
  return `SELECT pg_advisory_xact_lock(${LOCK_KIND[l.kind]}, ${l.id})`;
}

/** The statement taking the write gate, shared or exclusive. */
export function gateStatement(exclusive: boolean): string {
  return `SELECT pg_advisory_xact_lock${exclusive ? '' : '_shared'}(${WRITE_LOCK})`;
}
