/**
 * SPACES per category for categories.list `counts=true` (spec/2-endpoints.md). Reads the
 * filings table of the SPACE aggregate (`space_categories`, migration 002) and counts DISTINCT
 * SPACES per group of ids, so a SPACE filed in two categories of one subtree (say two languages
 * under programming-languages) counts once for the parent. Every filed SPACE is listed (spec
 * "Categories": only a private or sealed SPACE with no category is in no list), so these are
 * the numbers an anonymous `GET /v1/spaces?category=<id>` would page through.
 */
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

export interface CategoryCountStore {
  /** For each key, how many distinct SPACES are filed under any of its ids. */
  spacesIn(groups: ReadonlyMap<string, readonly string[]>): Promise<Map<string, number>>;
}

export function createCategoryCountStore(db: Db): CategoryCountStore {
  const sql = dialectOf(db);
  const countIn = db.prepare<[string], { n: number }>(
    `SELECT count(DISTINCT space_row_id) AS n FROM space_categories WHERE category IN (${sql.jsonEach('?')})`,
  );
  const readAll = db.transaction(async (groups: ReadonlyMap<string, readonly string[]>): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const [key, ids] of groups) out.set(key, ids.length === 0 ? 0 : (await countIn.get(JSON.stringify(ids)))!.n);
    return out;
  });
  return {
    // One read transaction, so every number comes from the same snapshot.
    spacesIn: async (groups) => await readAll(groups),
  };
}
