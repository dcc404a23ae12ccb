/**
 * The one-file bridge's program compiled with V8's code cache (ARCHITECTURE.md "Decisions").
 *
 * bridge.mjs carries the bridge's program on its last line, a line comment that
 * scripts/bundle-bridge.mjs appends:
 *
 *   //svc-program <hash> <text, base64>
 *
 * the text being bridge/program.ts bundled as one CommonJS function
 * (`(function (exports, require, module, __filename, __dirname) { … })`), the hash the first 16
 * hex digits of its SHA-256. bundle-main.ts reads its own file and compiles the text here. A
 * line comment costs V8 next to nothing to skip, where a string literal of the same text would
 * be scanned, escapes and all, at every start. Compiling megabytes of JavaScript is a good part
 * of a start; V8 can instead take the code an earlier start compiled (its code cache), made by the
 * same V8 with the same flags from the same text. The cache lives in the key directory:
 *
 *   cache/compile/bridge-<text hash>-node<version>-<arch>.v8   0600, in a 0700 folder
 *
 * one file per program text and Node.js build, so another bridge or another Node never meets a
 * cache that is not its own. Each file is a header (a magic, the length and the CRC-32 of what
 * follows) and the V8 data. A start reads it, checks the header (a torn or damaged file is
 * ignored: V8 does not check its own checksum in release builds) and hands the data to V8,
 * which checks its version, flags and the text's length and compiles the text afresh when
 * any differs (`cachedDataRejected`). Whatever the file holds, the program runs; at worst as
 * slowly as with no cache.
 *
 * A start that found no cache it could use makes one with `save()`, which bundle-main.ts calls
 * once the program has served its opening requests: made then, the cache holds every function a
 * start runs (V8 compiles a function when first called), not only the top level that compiling
 * alone would give. It is written to a temporary file and renamed into place, so two bridges
 * starting at once leave one whole file; older files of other program texts are removed, the
 * newest few kept for bridges of other versions on the same machine.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/** What the program's line begins with, after the newline before it. */
export const PROGRAM_MARK = '//svc-program ';

export interface ProgramText {
  readonly text: string;
  readonly hash: string;
}

/** The line that carries `text` and its `hash`, newline first. */
export function programLine(program: ProgramText): string {
  return `\n${PROGRAM_MARK}${program.hash} ${Buffer.from(program.text, 'utf8').toString('base64')}\n`;
}

/** The program a bundle's bytes carry on their last line, or undefined when they carry none. */
export function programIn(file: Buffer): ProgramText | undefined {
  const at = file.lastIndexOf(`\n${PROGRAM_MARK}`, undefined, 'latin1');
  if (at < 0) return undefined;
  const line = file.toString('latin1', at + 1 + PROGRAM_MARK.length).trimEnd();
  const space = line.indexOf(' ');
  if (space < 0) return undefined;
  return { hash: line.slice(0, space), text: Buffer.from(line.slice(space + 1), 'base64').toString('utf8') };
}

/** What a cache file begins with, before its length and CRC-32. */
const MAGIC = Buffer.from('svc-v8-code-cache 1\n', 'latin1');
const HEADER = MAGIC.length + 8;
/** Cache files of other program texts kept beside this one's. */
const KEEP_OTHERS = 3;

/** How this start compiled the program. */
export type CacheUse =
  /** from the cache file */
  | 'used'
  /** no cache file (the first start of this program on this Node.js) */
  | 'absent'
  /** a cache file whose header did not check (torn, damaged, not ours) */
  | 'damaged'
  /** a cache file V8 would not take (another V8, other flags) */
  | 'rejected'
  /** no cache folder (the cache is not kept) */
  | 'off';

export interface Program {
  /** What the program's text exports (`module.exports`). */
  readonly exports: Record<string, unknown>;
  readonly cache: CacheUse;
  /** The cache file of this program text on this Node.js, when the cache is kept. */
  readonly file: string | undefined;
  /**
   * Make the cache file from what has been compiled so far, when this start found none it could
   * use; once. Returns whether a file was written. Never throws: without a cache the program
   * only compiles again.
   */
  save(): boolean;
}

export interface ProgramSource {
  /** `(function (exports, require, module, __filename, __dirname) { … })`, as the build writes it. */
  readonly text: string;
  /** A hash of `text` (the build's), naming its cache file. */
  readonly hash: string;
  /** The file the text came from: stack traces name it, and `require` resolves from it. */
  readonly filename: string;
  /** The cache folder, or undefined to keep no cache. */
  readonly cacheDir: string | undefined;
}

/** The cache file name of a program text `hash` on this Node.js. */
export function cacheFileName(hash: string): string {
  return `bridge-${hash}-node${process.versions.node}-${process.arch}.v8`;
}

/** The V8 data of a cache file's bytes, or undefined when its header does not check. */
export function cacheData(bytes: Buffer): Buffer | undefined {
  if (bytes.length < HEADER || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const length = bytes.readUInt32LE(MAGIC.length);
  const crc = bytes.readUInt32LE(MAGIC.length + 4);
  const data = bytes.subarray(HEADER);
  return data.length === length && crc32(data) === crc ? data : undefined;
}

/** A cache file's bytes for V8 data `data`. */
export function cacheBytes(data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32LE(data.length, 0);
  header.writeUInt32LE(crc32(data), 4);
  return Buffer.concat([MAGIC, header, data]);
}

function readCache(file: string): { data?: Buffer; use: CacheUse } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return { use: 'absent' };
  }
  const data = cacheData(bytes);
  return data === undefined ? { use: 'damaged' } : { data, use: 'used' };
}

/** Write `bytes` to `file` whole: a temporary file beside it (0600), renamed over it. */
function writeWhole(file: string, bytes: Buffer): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, file);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
}

/** Remove the cache files of other program texts but the newest KEEP_OTHERS, and temporary files left by a crash. */
function removeOld(dir: string, kept: string): void {
  const others: { name: string; at: number }[] = [];
  for (const name of readdirSync(dir)) {
    if (name === kept || !/^\.?bridge-.*\.v8(\.\d+\.tmp)?$/.test(name)) continue;
    try {
      const at = statSync(join(dir, name)).mtimeMs;
      if (name.endsWith('.tmp')) {
        // Another start may be writing it now; one left for a minute is a crash's.
        if (Date.now() - at > 60_000) unlinkSync(join(dir, name));
      } else others.push({ name, at });
    } catch {
      // gone meanwhile
    }
  }
  others.sort((a, b) => b.at - a.at);
  for (const { name } of others.slice(KEEP_OTHERS)) {
    try {
      unlinkSync(join(dir, name));
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * Make the cache folder (0700) inside the key directory's cache folder, which the bridge made
 * when it opened the key directory: never the key directory itself.
 */
function makeFolder(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** Compile and run the program text, with its code cache when there is one that fits. */
export function loadProgram(source: ProgramSource): Program {
  const file = source.cacheDir === undefined ? undefined : join(source.cacheDir, cacheFileName(source.hash));
  const found = file === undefined ? { use: 'off' as const } : readCache(file);
  const script = new Script(source.text, {
    filename: source.filename,
    ...(found.data === undefined ? {} : { cachedData: found.data }),
    // The program's import() of a module it does not carry (the OS keychain's) resolves as in
    // the file it came from.
    importModuleDynamically: (specifier: string) => import(specifier),
  });
  const cache: CacheUse = found.use === 'used' && script.cachedDataRejected === true ? 'rejected' : found.use;
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  run(module.exports, createRequire(source.filename), module, source.filename, dirname(source.filename));
  let saved = cache === 'used' || file === undefined;
  return {
    exports: module.exports,
    cache,
    file,
    save() {
      if (saved || file === undefined || source.cacheDir === undefined) return false;
      saved = true;
      try {
        makeFolder(source.cacheDir);
        writeWhole(file, cacheBytes(script.createCachedData()));
        removeOld(source.cacheDir, basename(file));
        return true;
      } catch {
        return false;
      }
    },
  };
}
