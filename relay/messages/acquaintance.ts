/**
 * Who knows whom (spec/1-concepts.md "States: Conversation"): a KEY knows another when they
 * share a SPACE other than the welcome SPACE, when it accepted a pair with it, or when it
 * started a conversation with it. A first message to a KEY that does not know the sender is a
 * message request.
 *
 * This relay keeps no welcome SPACE (no setting or SPACE makes one), so any shared SPACE counts;
 * `welcomeSpace` is where an operator's welcome SPACE would be left out, by its row id.
 *
 * The relation is not symmetric: `knows(r, s)` is the recipient's side.
 */
import type { Store } from '../store/index.js';

/** The welcome SPACE's row id, if the operator keeps one; this relay keeps none. */
export const welcomeSpace: number | undefined = undefined;

/** Does `r` (the recipient) know `s` (the sender)? */
export async function knows(store: Store, r: string, s: string): Promise<boolean> {
  const c = store.conversations;
  return await c.acceptedPair(r, s) || await c.startedWith(r, s) || await c.shareSpace(r, s, welcomeSpace);
}

/**
 * The conversation holding `s` back from `r`: one `s` started where `r` has not accepted (its
 * state `requested`, or `declined`, which `s` still sees as requested), while `r` does not know
 * `s` otherwise. Until `r` accepts, `s` sends nothing more there and starts nothing else that
 * includes `r` (MESSAGE_REQUEST_WAITING).
 */
export async function heldBy(store: Store, s: string, r: string): Promise<string | undefined> {
  const waiting = await store.conversations.waitingRequest(s, r);
  if (waiting === undefined) return undefined;
  return await knows(store, r, s) ? undefined : waiting;
}
