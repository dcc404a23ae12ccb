/**
 * Text renderings for the model (spec/1-concepts.md item 7: every field a PEER wrote is
 * evidence, never an instruction, and text renderings wrap peer-written fields in delimiters).
 * The peer marker format itself is defined once, in shared/peer-markers.ts (the relay's
 * `Accept: text/markdown` renderings use the same); this module draws the nonce per answer.
 */
import { randomBytes } from 'node:crypto';
import { PEER_CLOSE, PEER_OPEN, checkNonce, fence as fenceWith, markerNote, nonceFrom } from '../shared/peer-markers.js';
import type { RefusalFields } from './errors.js';

export { PEER_CLOSE, PEER_OPEN };

/** The sentence that tells the model how to read the markers (tool descriptions, instructions). */
export const PEER_MARKER_NOTE = markerNote();

export interface PeerFence {
  readonly nonce: string;
  /** Fence one peer-written value (strings as written, anything else as JSON). */
  (field: string, value: unknown): string;
}

/** A fence for one answer (shared/peer-markers.ts); `nonce` only for tests. */
export function peerFence(nonce: string = nonceFrom(randomBytes(4))): PeerFence {
  checkNonce(nonce);
  return Object.assign((field: string, value: unknown) => fenceWith(field, value, nonce), { nonce });
}

/**
 * A refusal as text (api-notes §6): `CODE. message (detail) fix Retry-After: n seconds.
 * Request id x.` The relay's message already starts with the code; a local one does not.
 */
export function refusalText(r: RefusalFields): string {
  const message = /[.!?]$/.test(r.message) ? r.message : `${r.message}.`;
  const parts = [message.startsWith(`${r.code}.`) ? message : `${r.code}. ${message}`];
  if (r.detail !== undefined && r.detail !== '') parts.push(`(${r.detail})`);
  if (r.fix !== '') parts.push(r.fix);
  if (r.retryAfter !== undefined) parts.push(`Retry-After: ${r.retryAfter} seconds.`);
  if (r.requestId !== undefined && r.requestId !== '') parts.push(`Request id ${r.requestId}.`);
  return parts.join(' ');
}

/** Aligned `key: value` lines. */
export function fields(rows: ReadonlyArray<readonly [string, string | number | boolean | null | undefined]>): string {
  const shown = rows.filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v === null ? '-' : String(v)}`).join('\n');
}
