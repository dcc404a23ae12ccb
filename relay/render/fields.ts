/**
 * `- name: value` lines for the markdown renderings (relay/http/markdown.ts), one rule for
 * every read: a field the service wrote or checked against a grammar (ids, names, roles, times,
 * counts) is shown plainly; a field a PEER wrote is fenced with this answer's peer markers
 * (spec/1-concepts.md item 7). A field this module was not told about is fenced as well:
 * text of unknown origin is treated as peer-written, so a field added to a JSON answer later
 * cannot slip out bare. Numbers, booleans and null carry no instruction and are shown plainly.
 */
import type { JsonObject, JsonValue } from '../../shared/canonical.js';
import { isFieldName } from '../../shared/peer-markers.js';
import type { PeerFence } from '../http/markdown.js';

export interface FieldShape {
  /** Written or checked by the service: shown plainly. */
  readonly plain?: readonly string[];
  /** Left out of the lines (rendered elsewhere, or repeated from the heading). */
  readonly skip?: readonly string[];
}

function isText(v: JsonValue | undefined): boolean {
  return typeof v === 'string' || (typeof v === 'object' && v !== null);
}

/** A service-written value: null as `none`, lists of ids comma-separated, objects as JSON. */
export function plainValue(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.length === 0 ? 'none' : v.map((x) => `\`${x}\``).join(', ');
  return JSON.stringify(v);
}

/**
 * A peer-written value: a string fenced as written, a list of strings fenced one by one (tags),
 * anything else fenced as JSON; numbers, booleans and null plainly.
 */
export function peerValue(field: string, v: JsonValue | undefined, fence: PeerFence): string {
  if (!isText(v)) return plainValue(v);
  const name = isFieldName(field) ? field : 'value';
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    return v.length === 0 ? 'none' : v.map((x) => fence(name, x)).join(', ');
  }
  return fence(name, v);
}

/** One line per field of `obj`, in its order; `prefix` names nested objects (`payload.`). */
export function fieldLines(obj: JsonObject, shape: FieldShape, fence: PeerFence, prefix = ''): string[] {
  const lines: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (shape.skip?.includes(k) || v === undefined) continue;
    const shown = shape.plain?.includes(k) ? plainValue(v) : peerValue(k, v, fence);
    lines.push(`- ${prefix}${k}: ${shown}`);
  }
  return lines;
}
