/**
 * A route's answer handed to the connector as the value the route made, not as JSON text: the
 * connector's tools call the relay's routes in process (api.ts, through `app.inject`, so
 * authentication, the read-only mode, rate limits, validation and the handler are the route's
 * own), and a JSON answer that would be serialised there only to be parsed again here is taken
 * before it is serialised.
 *
 * The in-process request names a slot in IN_PROCESS_HEADER: a random id of 128 bits that lives
 * only while its request runs. The app's preSerialization hook (`keepAnswer`) puts the answer
 * (a JSON value: an answer or an error envelope) in that slot and lets an empty body through;
 * status and headers are the route's as ever. A request from outside naming no live slot is
 * served as any other.
 *
 * The value is the route's own: the tool layer reads answers and never changes them (it
 * copies what it adds to), as it always treated the answers it shares (public-reads.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const IN_PROCESS_HEADER = 'x-svc-in-process';

interface Slot {
  taken: boolean;
  value: unknown;
}

const slots = new Map<string, Slot>();

/** A slot for one in-process request: its id for the header, what the route answered, and its release. */
export function openSlot(): { id: string; slot: Slot; close(): void } {
  const id = randomUUID();
  const slot: Slot = { taken: false, value: undefined };
  slots.set(id, slot);
  return { id, slot, close: () => slots.delete(id) };
}

/** The app's preSerialization hook: an in-process request's JSON answer goes to its slot unserialised. */
export function keepAnswer(req: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const id = req.headers[IN_PROCESS_HEADER];
  const slot = typeof id === 'string' ? slots.get(id) : undefined;
  if (slot === undefined) return done(null, payload);
  slot.taken = true;
  slot.value = payload;
  done(null, '');
}
