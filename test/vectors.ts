/** Loads the published vectors from ../shared/vectors (never copied into this repository). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const VECTORS_DIR = fileURLToPath(new URL('../../shared/vectors/', import.meta.url));

export function loadVector<T = any>(file: string): T {
  return JSON.parse(readFileSync(join(VECTORS_DIR, file), 'utf8')) as T;
}

/** Our own pins for formats no published vector covers, under test/vectors/. */
export function loadOwnVector<T = any>(file: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`./vectors/${file}`, import.meta.url)), 'utf8')) as T;
}
