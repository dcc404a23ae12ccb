/**
 * The team's spec and protocol notes (spec/*.md, protocol/*.md) live in the shared folder beside
 * the checkout, not in this repository. Tests that hold the code to their words read them from
 * there when it is present (as in CI) and are skipped in a lone clone, which has no spec to
 * compare with; every other test runs the same either way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHARED = fileURLToPath(new URL('../../../shared/', import.meta.url));

/** True when ../shared holds the spec (a CI run, or a checkout beside the shared folder). */
export const HAVE_SHARED_DOCS = existsSync(join(SHARED, 'spec', '1-concepts.md'));

/** Said in the title of a test that compares with the spec, where it is skipped for want of it. */
export const WITHOUT_SHARED_DOCS = HAVE_SHARED_DOCS ? '' : ' (skipped: no ../shared/spec beside this checkout to compare with)';

/** A document of ../shared (`spec/1-concepts.md`), or '' when the folder is not there. */
export function sharedDoc(path: string): string {
  return HAVE_SHARED_DOCS ? readFileSync(join(SHARED, path), 'utf8') : '';
}
