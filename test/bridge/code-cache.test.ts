/**
 * The one-file bridge's program compiled with V8's code cache (bridge/code-cache.ts): the first
 * load makes the cache file, later loads use it, and a cache file that does not fit (damaged,
 * torn, made from another text, written for another Node.js) is never used: the program runs,
 * compiled afresh, and a whole cache is made again. Real V8 compilation in this process; the
 * bundle's own use of it is in test/bridge/bundle.test.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheBytes, cacheContent, cacheFileName, loadProgram, programHash, programLines, programTextIn, type ProgramSource } from '../../bridge/code-cache.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A key directory's cache folder, made as the bridge makes it; the compile cache goes in `compile/` inside it. */
function cacheFolder(): string {
  const home = mkdtempSync(join(tmpdir(), 'svc-code-cache-'));
  dirs.push(home);
  mkdirSync(join(home, 'cache'), { mode: 0o700 });
  return join(home, 'cache', 'compile');
}

/** A program text as the build writes one: a CommonJS function whose exports tell what ran. */
function source(cacheDir: string | undefined, answer = 42, hash = `test${answer}`): ProgramSource {
  const text = `(function (exports, require, module, __filename, __dirname) {"use strict";
const { basename } = require('node:path');
function square(n) { return n * n; }
module.exports = { answer: ${answer}, square, file: basename(__filename), strict: (function () { return this === undefined; })() };
})`;
  return { text: () => text, hash, filename: join(tmpdir(), 'bridge.mjs'), cacheDir };
}

describe('the program compiled with its code cache', () => {
  it('runs the text as a CommonJS module in strict mode, then makes the cache once; the next load uses it', () => {
    const dir = cacheFolder();
    const first = loadProgram(source(dir));
    expect(first.cache).toBe('absent');
    expect(first.exports).toMatchObject({ answer: 42, file: 'bridge.mjs', strict: true });
    expect((first.exports.square as (n: number) => number)(7)).toBe(49);
    expect(first.save()).toBe(true);
    expect(first.save()).toBe(false);
    expect(readdirSync(dir)).toEqual([cacheFileName('test42')]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, cacheFileName('test42'))).mode & 0o777).toBe(0o600);

    const second = loadProgram(source(dir));
    expect(second.cache).toBe('used');
    expect(second.exports.answer).toBe(42);
    expect(second.save()).toBe(false);
  });

  it('names the cache by the text and the Node.js that made it, so another bridge or Node never reads it', () => {
    expect(cacheFileName('0123456789abcdef')).toBe(`bridge-0123456789abcdef-node${process.versions.node}-${process.arch}.v8`);
    const dir = cacheFolder();
    const made = loadProgram(source(dir));
    made.save();
    const other = loadProgram(source(dir, 7));
    expect(other.cache).toBe('absent');
    expect(other.exports.answer).toBe(7);
  });

  it('ignores a damaged or torn cache file, runs the program, and replaces the file with a whole one', () => {
    const dir = cacheFolder();
    const made = loadProgram(source(dir));
    made.save();
    const file = made.file!;
    const whole = readFileSync(file);
    const flipped = Buffer.from(whole);
    flipped[flipped.length - 10]! ^= 0xff;
    for (const bad of [flipped, whole.subarray(0, whole.length - 1), whole.subarray(0, 10), Buffer.from('not a cache at all'), Buffer.alloc(0)]) {
      writeFileSync(file, bad);
      const loaded = loadProgram(source(dir));
      expect(loaded.cache).toBe('damaged');
      expect(loaded.exports.answer).toBe(42);
      expect(loaded.save()).toBe(true);
      expect(cacheContent(readFileSync(file))).toBeDefined();
      expect(loadProgram(source(dir)).cache).toBe('used');
    }
  });

  it('hands V8 data it refuses (made from another text): the program is compiled afresh and the cache made again', () => {
    const dir = cacheFolder();
    const longer = loadProgram(source(dir, 123456789, 'longer'));
    longer.save();
    const foreign = cacheContent(readFileSync(longer.file!))!.data;
    const file = join(dir, cacheFileName('same'));
    writeFileSync(file, cacheBytes(source(dir, 1).text(), foreign));
    const loaded = loadProgram(source(dir, 1, 'same'));
    expect(loaded.cache).toBe('rejected');
    expect(loaded.exports.answer).toBe(1);
    expect(loaded.save()).toBe(true);
    const again = loadProgram(source(dir, 1, 'same'));
    expect(again.cache).toBe('used');
    expect(again.exports.answer).toBe(1);
  });

  it('keeps no cache without a folder, and makes no key directory: only the compile folder inside its cache folder', () => {
    const off = loadProgram(source(undefined));
    expect(off.cache).toBe('off');
    expect(off.save()).toBe(false);
    const home = join(mkdtempSync(join(tmpdir(), 'svc-code-cache-')), 'svc');
    dirs.push(home);
    const loaded = loadProgram(source(join(home, 'cache', 'compile')));
    expect(loaded.cache).toBe('absent');
    expect(loaded.save()).toBe(false);
    expect(() => statSync(home)).toThrow();
  });

  it('keeps the newest three caches of other program texts and removes older ones', () => {
    const dir = cacheFolder();
    for (let n = 1; n <= 5; n++) {
      const p = loadProgram(source(dir, n));
      p.save();
      // Distinct modification times, oldest first.
      const t = new Date(Date.now() - (10 - n) * 60_000);
      utimesSync(p.file!, t, t);
    }
    expect(readdirSync(dir).sort()).toEqual([2, 3, 4, 5].map((n) => cacheFileName(`test${n}`)).sort());
  });

  it('reads back what it writes: the header holds the lengths and CRC-32 of the text and the data', () => {
    const data = Buffer.from('some bytes V8 made');
    expect(cacheContent(cacheBytes('(function () {})', data))).toEqual({ text: '(function () {})', data });
    expect(cacheContent(Buffer.concat([cacheBytes('(function () {})', data), Buffer.from('x')]))).toBeUndefined();
  });

  it('compiles the text the cache file holds, so a start with a cache reads no text from the bundle', () => {
    const dir = cacheFolder();
    loadProgram(source(dir)).save();
    const loaded = loadProgram({ ...source(dir), text: () => { throw new Error('the text was read'); } });
    expect(loaded.cache).toBe('used');
    expect(loaded.exports.answer).toBe(42);
  });

  it('finds the program on the last two lines of a bundle, its hash in the last bytes, and none in a file without them', () => {
    const dir = cacheFolder();
    const program = { text: '(function (exports, require, module) { /* a "//svc-program " comment */ module.exports = { n: 1 }; })', hash: '0123456789abcdef' };
    const file = join(dir, '..', 'bridge.mjs');
    writeFileSync(file, `#!/usr/bin/env node\nconsole.log("entry");\n${'// filler\n'.repeat(50)}${programLines(program).slice(1)}`);
    expect(programHash(file)).toBe(program.hash);
    expect(programTextIn(readFileSync(file))).toBe(program.text);
    writeFileSync(file, 'console.log("entry");\n');
    expect(programHash(file)).toBeUndefined();
    expect(programTextIn(readFileSync(file))).toBeUndefined();
  });

  it('carries the program compressed on its line (Node reads and scans the whole bundle at every start), its text given back whole', () => {
    const body = Array.from({ length: 2000 }, (_, i) => `exports.f${i} = function () { return "entry ${i} ± − →"; };`).join('\n');
    const program = { text: `(function (exports, require, module) {${body}})`, hash: 'fedcba9876543210' };
    const lines = programLines(program);
    expect(lines.length).toBeLessThan(Buffer.byteLength(program.text, 'utf8') / 4);
    expect(programTextIn(Buffer.from(`console.log("entry");${lines}`, 'utf8'))).toBe(program.text);
  });
});
