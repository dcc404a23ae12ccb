/**
 * When a serving bridge begins what no answer waits for (the keeper duty, the outbox's first
 * send, the log line naming its KEY): once its client's opening requests are answered. A client
 * opens with `initialize` (2025-11-25) and then asks what the server offers (tools/list and the
 * like); at 2026-07-28 its first request is already one of those. So the moment is the turn
 * after the answer to the first request other than `initialize` went out, or OPENING_WAIT_MS
 * after the start when the client has asked nothing more by then.
 *
 * Those duties need the KEY, which a start reads from its file without deriving anything from
 * it (bridge/keys/keys.ts `deferredInfo`); begun at once, they would load node:crypto and derive
 * the KEY's public half while the client waits for its tool list, which needs neither.
 */
import type { Transport } from '@modelcontextprotocol/server';
import { tapTransport } from '../tools/resources/transport-tap.js';

/** How long the duties wait at most for the client's first request after `initialize` to be answered. */
export const OPENING_WAIT_MS = 1000;

/** `inner`, calling `begin` once when the opening is over (see the header). */
export function afterOpening(inner: Transport, begin: () => void, waitMs = OPENING_WAIT_MS): Transport {
  let over = false;
  const asked = new Set<string | number>();
  const end = () => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    asked.clear();
    setImmediate(begin);
  };
  // The timer keeps nothing alive: stdin does, and a bridge whose stdin closed stops.
  const timer = setTimeout(end, waitMs).unref();
  return tapTransport(inner, {
    inbound: (m) => {
      if (!over && 'method' in m && m.method !== 'initialize' && 'id' in m && m.id !== undefined && m.id !== null) asked.add(m.id);
      return m;
    },
    outbound: (m) => {
      if (!over && !('method' in m) && 'id' in m && m.id !== undefined && m.id !== null && asked.has(m.id)) end();
      return m;
    },
  });
}
