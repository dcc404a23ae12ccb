/**
 * Every route a Fastify app has, read from its router's own listing (`printRoutes`), not from
 * the relay's operations index, so a route that never named its operation is still found.
 * HEAD routes Fastify adds beside each GET are left out.
 */
import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  readonly method: string;
  /** The path with each `:param` written `{param}`, as the operations index writes it. */
  readonly path: string;
}

/**
 * Parse the tree `printRoutes({ commonPrefix: false })` draws: each line is a segment under
 * the line above it that is one level (four columns) shallower, with its methods in brackets.
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  const lines = app.printRoutes({ commonPrefix: false }).split('\n');
  const stack: string[] = [];
  const out: RegisteredRoute[] = [];
  for (const line of lines) {
    const m = /^((?:[│ ]   )*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const path = stack.join('') + m[2]!;
    stack.push(m[2]!);
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '' && x !== 'HEAD')) {
      out.push({ method, path: path.replace(/:([A-Za-z0-9_]+)/g, '{$1}') });
    }
  }
  return out;
}
