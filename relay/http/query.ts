/**
 * The relay's query-string parser (Fastify's `routerOptions.querystringParser`): the one place a
 * query is decoded. Input is attacker-controlled.
 *
 * It reads a query the way Fastify's default (fast-querystring) does: pairs split on `&`, a key
 * from its value on the first `=`, `+` is a space, a key without `=` has the value "", empty
 * pairs are skipped, and a key given more than once collects its values, in order, in a list
 * (`kind=a&kind=b`). The object has no prototype, so a key such as `__proto__` is only a key.
 *
 * Unlike the default, which keeps percent-encoding it cannot decode as it was written, a key or
 * value that is not UTF-8 percent-encoding (`%ZZ`, a lone `%`, an overlong form such as
 * `%C0%AE`, a surrogate such as `%ED%A0%80`) makes the whole query `UNDECODABLE_QUERY`, which
 * the request hook refuses as INVALID_REQUEST, as the router refuses such bytes in a path. The
 * parser never throws: it runs inside the router, where a throw is not a refusal but an
 * uncaught exception.
 */

/** What `parseQuery` returns for a query that does not decode; frozen, and compared by identity. */
export const UNDECODABLE_QUERY: Readonly<Record<string, never>> = Object.freeze(Object.create(null) as Record<string, never>);

/** The refusal's detail, beside the router's for a path ("address: percent-encoding …"). */
export const UNDECODABLE_QUERY_DETAIL = 'query: percent-encoding that does not decode to UTF-8';

export type ParsedQuery = Record<string, string | string[]>;

/** One key or value: `+` is a space, then percent-decoding, strictly UTF-8; undefined when it does not decode. */
function decodePart(text: string): string | undefined {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    // decodeURIComponent throws URIError on a malformed escape and on bytes that are not
    // UTF-8 (overlong forms, surrogates, truncated sequences).
    return decodeURIComponent(spaced);
  } catch {
    return undefined;
  }
}

export function parseQuery(query: string): ParsedQuery | typeof UNDECODABLE_QUERY {
  const result = Object.create(null) as ParsedQuery;
  if (query.length === 0) return result;
  for (const pair of query.split('&')) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf('=');
    const key = decodePart(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decodePart(pair.slice(eq + 1));
    if (key === undefined || value === undefined) return UNDECODABLE_QUERY;
    const seen = result[key];
    if (seen === undefined) result[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else result[key] = [seen, value];
  }
  return result;
}
