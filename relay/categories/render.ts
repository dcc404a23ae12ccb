/**
 * How categories.list and categories.get answer (spec/2-endpoints.md; spec/1-concepts.md
 * "Categories": a record shows what goes in it, what goes elsewhere, examples, other names,
 * child categories, and the filters that limit SPACE lists and SEEK to it). JSON first; the
 * markdown renderings (`Accept: text/markdown`) are built from the JSON so both say the same.
 *
 * The register is the service's own text, not a PEER's, so nothing here needs fencing.
 */
import type { JsonObject, JsonValue } from '../../shared/canonical.js';
import { childrenOf, getCategory, levelOf, pathOf, REGISTER_LICENCE, REGISTER_RELEASE } from './index.js';
import type { SearchHit } from './search.js';
import type { Category } from './types.js';

/** SPACES per category id (including descendants), when `counts=true`. */
export type Counts = ReadonlyMap<string, number> | undefined;

export function registerInfo(count?: number): JsonObject {
  const out: JsonObject = { release: REGISTER_RELEASE, licence: REGISTER_LICENCE };
  if (count !== undefined) out.count = count;
  return out;
}

/** The filters that limit SPACE lists and SEEK to a category. */
export function filtersFor(id: string): JsonObject {
  return {
    spaces: `GET /v1/spaces?category=${id}`,
    seek: `GET /v1/seek?category=${id}`,
    includes_descendants: true,
  };
}

function pathNames(id: string): JsonObject[] {
  return pathOf(id).map((p) => ({ id: p, name: getCategory(p)!.name }));
}

/**
 * One outline node: id, name, what goes in it, how many live children, and (while `depth`
 * allows) the children themselves. `depth` counts the levels still to show, this one included.
 */
export function outlineNode(c: Category, depth: number, counts: Counts): JsonObject {
  const kids = childrenOf(c.id);
  const node: JsonObject = { id: c.id, name: c.name, level: levelOf(c.id), covers: c.covers, child_count: kids.length };
  if (counts) node.spaces = counts.get(c.id) ?? 0;
  if (depth > 1 && kids.length > 0) node.children = kids.map((k) => outlineNode(k, depth - 1, counts));
  return node;
}

/** `GET /v1/categories/{id}`: the whole record. */
export function categoryRecord(c: Category): JsonObject {
  return {
    id: c.id,
    name: c.name,
    status: c.replacedBy === null ? 'live' : 'retired',
    replaced_by: c.replacedBy,
    parent: c.parent,
    path: pathNames(c.id),
    level: levelOf(c.id),
    covers: c.covers,
    elsewhere: c.elsewhere.map((e) => ({ topic: e.topic, id: e.id, name: getCategory(e.id)?.name ?? e.id })),
    examples: [...c.examples],
    other_names: [...c.aliases],
    children: childrenOf(c.id).map((k) => ({ id: k.id, name: k.name, covers: k.covers, child_count: childrenOf(k.id).length })),
    filters: filtersFor(c.id),
    register: registerInfo(),
  };
}

/** One name-lookup hit. */
export function searchHit(hit: SearchHit, counts: Counts): JsonObject {
  const c = hit.category;
  const out: JsonObject = {
    id: c.id,
    name: c.name,
    path: pathOf(c.id),
    level: levelOf(c.id),
    covers: c.covers,
    matched: hit.matched,
    via: hit.via,
  };
  if (counts) out.spaces = counts.get(c.id) ?? 0;
  return out;
}

// ---- markdown ------------------------------------------------------------------------------

/** `Accept: text/markdown` asks for the connector-style rendering (spec/2-endpoints.md). */
export { wantsMarkdown } from '../http/markdown.js';

function s(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}

function outlineLines(nodes: readonly JsonValue[], indent: string, out: string[]): void {
  for (const n of nodes as JsonObject[]) {
    const extra = [n.child_count === 0 ? '' : `${s(n.child_count)} below`, n.spaces === undefined ? '' : `${s(n.spaces)} SPACES`]
      .filter(Boolean)
      .join(', ');
    out.push(`${indent}- **${s(n.name)}** \`${s(n.id)}\`${extra ? ` (${extra})` : ''}: ${s(n.covers)}`);
    if (Array.isArray(n.children)) outlineLines(n.children, `${indent}  `, out);
  }
}

/** The list answer (outline or name lookup) as markdown. */
export function listMarkdown(answer: JsonObject): string {
  const reg = answer.register as JsonObject;
  const out = [`# Categories`, '', `Register ${s(reg.release)}, licence ${s(reg.licence)}, ${s(reg.count)} entries.`, ''];
  const under = answer.under as JsonObject | null;
  if (under) out.push(`Under **${s(under.name)}** \`${s(under.id)}\`.`, '');
  if (typeof answer.q === 'string') {
    out.push(`Lookup: ${JSON.stringify(answer.q)}`, '');
    for (const h of answer.items as JsonObject[]) {
      const spaces = h.spaces === undefined ? '' : ` (${s(h.spaces)} SPACES)`;
      out.push(`- **${s(h.name)}** \`${s(h.id)}\`${spaces}: ${s(h.covers)} (matched ${s(h.matched)}: ${s(h.via)}; path ${(h.path as string[]).join(' › ')})`);
    }
    if ((answer.items as JsonValue[]).length === 0) out.push('No category matched.');
  } else {
    outlineLines(answer.items as JsonValue[], '', out);
  }
  out.push('', 'One category: `GET /v1/categories/{id}`. SPACES in one: `GET /v1/spaces?category={id}`.');
  return `${out.join('\n')}\n`;
}

/** One record as markdown. */
export function recordMarkdown(r: JsonObject): string {
  const out = [`# ${s(r.name)} \`${s(r.id)}\``, ''];
  out.push(`Path: ${(r.path as JsonObject[]).map((p) => `\`${s(p.id)}\``).join(' › ')}`);
  if (r.status === 'retired') out.push(`Retired: file under \`${s(r.replaced_by)}\` instead.`);
  out.push('', `**What goes in it:** ${s(r.covers)}`);
  const elsewhere = r.elsewhere as JsonObject[];
  if (elsewhere.length > 0) {
    out.push('', '**What goes elsewhere:**');
    for (const e of elsewhere) out.push(`- ${s(e.topic)}: \`${s(e.id)}\` (${s(e.name)})`);
  }
  out.push('', `**Examples:** ${(r.examples as string[]).join('; ')}`);
  const names = r.other_names as string[];
  if (names.length > 0) out.push('', `**Other names:** ${names.join(', ')}`);
  const children = r.children as JsonObject[];
  if (children.length > 0) {
    out.push('', '**Child categories:**');
    for (const c of children) out.push(`- **${s(c.name)}** \`${s(c.id)}\`: ${s(c.covers)}`);
  }
  const f = r.filters as JsonObject;
  out.push('', `**Filters** (child categories included): \`${s(f.spaces)}\`, \`${s(f.seek)}\``);
  const reg = r.register as JsonObject;
  out.push('', `Register ${s(reg.release)}, licence ${s(reg.licence)}.`);
  return `${out.join('\n')}\n`;
}
