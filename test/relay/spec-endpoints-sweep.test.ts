/**
 * The conformance sweep: every row of the endpoint catalogue (spec/2-endpoints.md) that names
 * an operation, a method and a path is served by the relay at that method and path (path
 * parameters compared by position, not name), under that operation's name. Rows the relay does
 * not serve yet are listed below with the reason; the sweep fails when a new gap appears and
 * also when a listed one gets its route, so the list only ever shrinks honestly.
 *
 * The refusals table /openapi.json uses (relay/documents/refusals.ts) is held equal to the
 * catalogue's refusals column here too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AFTER_SPEC_OPERATIONS, AFTER_SPEC_REFUSALS, OPERATION_REFUSALS } from '../../relay/documents/refusals.js';
import { AFTER_SPEC_CODES } from '../../shared/errors-catalogue.js';
import { call, startRelay, type RunningRelay } from '../helpers/relay.js';
import { registeredRoutes } from '../helpers/routes.js';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../helpers/shared-docs.js';

/**
 * Catalogue rows with no route in the relay today, each with why (operation name → reason).
 * Empty now: every row of the catalogue is served. A row the relay stops serving, or a new row
 * of the spec not built yet, goes here with its reason until its route exists.
 */
const KNOWN_GAPS: Readonly<Record<string, string>> = {};

interface Row {
  readonly section: string;
  readonly name: string;
  readonly method: string;
  readonly path: string;
  /** none, opt or req, from the auth column, the `(req)` after the path, or the section heading. */
  readonly auth: string | undefined;
  /** The refusals cell as written, or undefined where the table has no such column. */
  readonly refusals: string | undefined;
}

/** Every table row of the catalogue whose first cell is an operation name. */
function catalogueRows(text: string): Row[] {
  const rows: Row[] = [];
  let section = '';
  let header: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('### ')) section = line.slice(4).trim();
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim());
    if (cells[0] === 'operation') {
      header = cells;
      continue;
    }
    if (header === undefined || /^-+$/.test(cells[0]!)) continue;
    const cell = (name: string) => (header!.indexOf(name) < 0 ? undefined : cells[header!.indexOf(name)]);
    const where = /`([A-Z]+) ([^`]+)`(?:\s*\((none|opt|req)\))?/.exec(cell('method path') ?? '');
    if (!/^[a-z_]+(\.[a-z_]+)*$/.test(cells[0]!) || !where) continue;
    const sectionAuth = /auth (none|opt|req)\b/.exec(section)?.[1];
    rows.push({ section, name: cells[0]!, method: where[1]!, path: where[2]!, auth: cell('auth') ?? where[3] ?? sectionAuth, refusals: cell('refusals') });
  }
  return rows;
}

/** A path with every `{parameter}` the same, so parameters compare by position. */
function shape(path: string): string {
  return path.replace(/\{[^}]+\}/g, '{}');
}

const WIRE_AUTH: Record<string, string> = { none: 'none', opt: 'optional', req: 'bearer' };

/** The refusals cell as codes: "same as X" (or "same") is the row it names (or the row above). */
function refusalCodes(rows: readonly Row[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let previous: string[] = [];
  for (const row of rows) {
    const cell = row.refusals ?? '';
    const same = /^same(?: as (\S+))?$/.exec(cell);
    let codes: string[];
    if (same) {
      // "same as set" in space_blocks.remove is space_blocks.set: the row of the same family.
      const family = row.name.split('.')[0];
      const target = same[1] === undefined ? undefined : rows.find((r) => r.name === `${family}.${same[1]}`);
      codes = target === undefined ? previous : out.get(target.name)!;
    } else {
      // "none specific" and an OAuth-form note hold no code.
      codes = [...cell.matchAll(/\b[A-Z][A-Z0-9_]{2,}\b/g)].map((m) => m[0]);
      previous = codes;
    }
    out.set(row.name, codes);
  }
  return out;
}

describe.skipIf(!HAVE_SHARED_DOCS)(`every row of spec/2-endpoints.md has its route (known gaps listed)${WITHOUT_SHARED_DOCS}`, () => {
  const rows = catalogueRows(sharedDoc('spec/2-endpoints.md'));
  let relay: RunningRelay;
  let routes: Set<string>;
  let index: Map<string, { name: string; auth: string }>;

  beforeAll(async () => {
    relay = await startRelay();
    routes = new Set(registeredRoutes(relay.app).map((r) => `${r.method} ${shape(r.path)}`));
    const ops = (await call(relay, 'GET', '/', { headers: { accept: 'application/json' } })).body.operations as { name: string; method: string; path: string; auth: string }[];
    index = new Map(ops.map((o) => [`${o.method} ${shape(o.path)}`, o]));
  });

  afterAll(async () => {
    await relay?.close();
  });

  it('the catalogue tables were read: over a hundred rows, every name once', () => {
    expect(rows.length).toBeGreaterThan(100);
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
    expect(rows.find((r) => r.name === 'posts.append')).toMatchObject({ method: 'POST', path: '/v1/spaces/{name}/posts', auth: 'req' });
    expect(rows.find((r) => r.name === 'sealed.status')).toMatchObject({ auth: 'req' });
    expect(rows.find((r) => r.name === 'openapi')).toMatchObject({ method: 'GET', path: '/openapi.json', auth: 'none' });
  });

  it('every row outside the known gaps is served at its method and path', () => {
    const missing = rows.filter((r) => !(r.name in KNOWN_GAPS) && !routes.has(`${r.method} ${shape(r.path)}`)).map((r) => `${r.name}: ${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  it('each served row is registered under its operation name with its auth', () => {
    for (const r of rows.filter((row) => routes.has(`${row.method} ${shape(row.path)}`))) {
      const entry = index.get(`${r.method} ${shape(r.path)}`);
      expect(entry?.name, `${r.method} ${r.path}`).toBe(r.name);
      expect(entry?.auth, r.name).toBe(WIRE_AUTH[r.auth ?? 'req']);
    }
  });

  it('every known gap is a row of the catalogue that still has no route (a gap closed leaves the list)', () => {
    const byName = new Map(rows.map((r) => [r.name, r]));
    for (const [name, reason] of Object.entries(KNOWN_GAPS)) {
      const row = byName.get(name);
      expect(row, `${name} (${reason}) is not a row of the catalogue`).toBeDefined();
      expect(routes.has(`${row!.method} ${shape(row!.path)}`), `${name} now has its route: take it off the known gaps`).toBe(false);
    }
  });

  it("the refusals table of /openapi.json equals the catalogue's refusals column, row by row", () => {
    const spec = refusalCodes(rows);
    const later = new Set<string>(AFTER_SPEC_CODES);
    expect(Object.keys(OPERATION_REFUSALS).filter((n) => !AFTER_SPEC_OPERATIONS.includes(n))).toEqual(rows.map((r) => r.name));
    for (const [name, codes] of spec) {
      const laterHere = new Set<string>(AFTER_SPEC_REFUSALS[name] ?? []);
      expect(OPERATION_REFUSALS[name]!.filter((c) => !later.has(c) && !laterHere.has(c)), name).toEqual(codes);
    }
  });

  it('the operations served beyond the catalogue are none of its rows (a row added leaves the list)', () => {
    for (const name of AFTER_SPEC_OPERATIONS) {
      expect(rows.some((r) => r.name === name), name).toBe(false);
      expect(OPERATION_REFUSALS[name], name).toBeDefined();
    }
  });
});
