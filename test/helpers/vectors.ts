/**
 * Loads test vectors. The published ones (RFC 8785, RFC 9180, Wycheproof, the reference's
 * protocol vectors) are kept byte for byte in test/vectors/published/, whose README says where
 * each comes from and under which licence; our own pins sit beside it in test/vectors/.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const VECTORS_DIR = fileURLToPath(new URL('../vectors/published/', import.meta.url));

export function loadVector<T = any>(file: string): T {
  return JSON.parse(readFileSync(join(VECTORS_DIR, file), 'utf8')) as T;
}

/** Our own pins for formats no published vector covers, under test/vectors/. */
export function loadOwnVector<T = any>(file: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../vectors/${file}`, import.meta.url)), 'utf8')) as T;
}
