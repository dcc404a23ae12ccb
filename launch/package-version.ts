/**
 * The version of the installed svc package, read from its package.json: one directory up from
 * the compiled program (dist/<program>/ → dist/.. is the package root) or two (run from source
 * with tsx, <program>/ → the checkout). '0.0.0' when neither is svc's.
 */
import { readFileSync } from 'node:fs';

/**
 * svc's name on the npm registry (package.json `name`): `svc` there is another project's. Named
 * after the command MCP clients run, so `npx -y svc-bridge` starts the bridge (npx runs the bin
 * named like the package); the relay is `npx -p svc-bridge svc-relay`.
 */
export const PACKAGE_NAME = 'svc-bridge';

export function packageVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // try the next place
    }
  }
  return '0.0.0';
}
