/**
 * The one-file bridge's program compiled with V8's code cache (ARCHITECTURE.md "Decisions").
 *
 * bridge.mjs carries the bridge's program on its last two lines, line comments that
 * scripts/bundle-bridge.mjs appends:
 *
 *   //svc-program <text, gzip, base64>
 *   //svc-program-hash <hash>
 *
 * the text being bridge/program.ts bundled as one CommonJS function
 * (`(function (exports, require, module, __filename, __dirname) { … })`), the hash the first 16
 * hex digits of its SHA-256. A line comment costs V8 little to skip, but Node reads, decodes and
 * scans the whole file at every start, before any of it runs: compressed, the program's line is a
 * quarter of the text's size, and only a start that finds no cache file (below) inflates it.
 * bundle-main.ts reads the hash from the file's last bytes and compiles the program here.
 *
 * Compiling megabytes of JavaScript is a good part of a start; V8 can instead take the code an
 * earlier start compiled (its code cache), made by the same V8 with the same flags from the
 * same text. The cache lives in the key directory:
 *
 *   cache/compile/bridge-<hash>-node<version>-<arch>.v8   0600, in a 0700 folder
 *
 * one file per program and Node.js build, so another bridge or another Node never meets a cache
 * that is not its own. Each file holds a header (a magic, two lengths and the CRC-32 of what
 * follows), the program text and V8's data: a start that finds it whole neither reads nor
 * decodes the text in bridge.mjs. A torn or damaged file is ignored (V8 does not check its own
 * checksum in release builds); V8 checks its version, flags and the text's length and compiles
 * the text afresh when any differs (`cachedDataRejected`). Whatever the file holds, the program
 * runs; at worst as slowly as with no cache.
 *
 * A start that found no cache it could use makes one with `save()`, which bundle-main.ts calls
 * once the program has served its opening requests: made then, the cache holds every function a
 * start runs (V8 compiles a function when first called), not only the top level that compiling
 * alone would give. It is written to a temporary file and renamed into place, so two bridges
 * starting at once leave one whole file; older files of other programs are removed, the newest
 * few kept for bridges of other versions on the same machine.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { crc32, gunzipSync, gzipSync } from 'node:zlib';

/** The line that carries the program text, and the last line, that carries its hash. */
const TEXT_MARK = '//svc-program ';
const HASH_MARK = '//svc-program-hash ';
/** The bytes read from a bundle's end to find its hash line. */
const TAIL_BYTES = 128;

export interface ProgramText {
  readonly text: string;
  readonly hash: string;
}

/** The last two lines of a bundle that carries `program`, newline first. */
export function programLines(program: ProgramText): string {
  const packed = gzipSync(Buffer.from(program.text, 'utf8'), { level: 9 });
  return `\n${TEXT_MARK}${packed.toString('base64')}\n${HASH_MARK}${program.hash}\n`;
}

/** The program's hash on a bundle's last line, from the file's last bytes; undefined when it has none. */
export function programHash(file: string): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(Math.min(TAIL_BYTES, size));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    const m = new RegExp(`\\n${HASH_MARK}([0-9a-f]{16})\\n?$`).exec(tail.toString('latin1'));
    return m?.[1];
  } finally {
    closeSync(fd);
  }
}

/** The program text a bundle's bytes carry, or undefined when they carry none. */
export function programTextIn(bytes: Buffer): string | undefined {
  const at = bytes.lastIndexOf(`\n${TEXT_MARK}`, bytes.length, 'latin1');
  if (at < 0) return undefined;
  const start = at + 1 + TEXT_MARK.length;
  const end = bytes.indexOf(10, start);
  return gunzipSync(Buffer.from(bytes.toString('latin1', start, end < 0 ? bytes.length : end), 'base64')).toString('utf8');
}

/** What a cache file begins with, before its lengths and CRC-32. */
const MAGIC = Buffer.from('svc-v8-code-cache 2\n', 'latin1');
const HEADER = MAGIC.length + 12;
/** Cache files of other programs kept beside this one's. */
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
  /** The cache file of this program on this Node.js, when the cache is kept. */
  readonly file: string | undefined;
  /**
   * Make the cache file from what has been compiled so far, when this start found none it could
   * use; once. Returns whether a file was written. Never throws: without a cache the program
   * only compiles again.
   */
  save(): boolean;
}

export interface ProgramSource {
  /** A hash of the program text (the build's), naming its cache file. */
  readonly hash: string;
  /** The program text, `(function (exports, require, module, __filename, __dirname) { … })`: read only when no cache holds it. */
  readonly text: () => string;
  /** The file the text came from: stack traces name it, and `require` resolves from it. */
  readonly filename: string;
  /** The cache folder, or undefined to keep no cache. */
  readonly cacheDir: string | undefined;
}

/** The cache file name of a program `hash` on this Node.js. */
export function cacheFileName(hash: string): string {
  return `bridge-${hash}-node${process.versions.node}-${process.arch}.v8`;
}

/** The program text and V8 data of a cache file's bytes, or undefined when they do not check. */
export function cacheContent(bytes: Buffer): { text: string; data: Buffer } | undefined {
  if (bytes.length < HEADER || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const textLength = bytes.readUInt32LE(MAGIC.length);
  const dataLength = bytes.readUInt32LE(MAGIC.length + 4);
  const crc = bytes.readUInt32LE(MAGIC.length + 8);
  const body = bytes.subarray(HEADER);
  if (body.length !== textLength + dataLength || crc32(body) !== crc) return undefined;
  return { text: body.toString('utf8', 0, textLength), data: body.subarray(textLength) };
}

/** A cache file's bytes for program `text` and V8 data `data`. */
export function cacheBytes(text: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(text, 'utf8'), data]);
  const header = Buffer.alloc(12);
  header.writeUInt32LE(body.length - data.length, 0);
  header.writeUInt32LE(data.length, 4);
  header.writeUInt32LE(crc32(body), 8);
  return Buffer.concat([MAGIC, header, body]);
}

function readCache(file: string): { text?: string; data?: Buffer; use: CacheUse } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return { use: 'absent' };
  }
  const content = cacheContent(bytes);
  return content === undefined ? { use: 'damaged' } : { ...content, use: 'used' };
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

/** Remove the cache files of other programs but the newest KEEP_OTHERS, and temporary files left by a crash. */
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

/** Compile and run the program, with its code cache when there is one that fits. */
export function loadProgram(source: ProgramSource): Program {
  const file = source.cacheDir === undefined ? undefined : join(source.cacheDir, cacheFileName(source.hash));
  const found = file === undefined ? { use: 'off' as const } : readCache(file);
  const text = found.text ?? source.text();
  const script = new Script(text, {
    filename: source.filename,
    ...(found.data === undefined ? {} : { cachedData: found.data }),
    // The program's import() of a module it does not carry (the OS keychain's) resolves as in
    // the file it came from.
    importModuleDynamically: ((specifier: string) => import(specifier)) as never,
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
        writeWhole(file, cacheBytes(text, script.createCachedData()));
        removeOld(source.cacheDir, basename(file));
        return true;
      } catch {
        return false;
      }
    },
  };
}
