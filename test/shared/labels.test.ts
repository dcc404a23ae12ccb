import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../helpers/shared-docs.js';
import { fromHex, toHex, utf8, uuid16 } from '../../shared/encoding.js';
import {
  LABEL_NAMES,
  RESERVED_LABEL_NAMES,
  capabilityLabels,
  label,
  labelText,
  labelledHash,
  type LabelName,
} from '../../shared/labels.js';
import { loadVector } from '../helpers/vectors.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const labelsMd = sharedDoc('protocol/labels.md');

/** Label names in the tables of labels.md "Every label", by section. */
function documentedLabels(): Map<string, string[]> {
  const body = labelsMd.slice(labelsMd.indexOf('## Every label'), labelsMd.indexOf('### Reserved'));
  const out = new Map<string, string[]>();
  for (const section of body.split(/^### /m).slice(1)) {
    const title = section.split('\n')[0]!.trim();
    const names = [...section.matchAll(/^\| `([a-z0-9-]+)`/gm)].map((m) => m[1]!);
    out.set(title, [...new Set(names)]);
  }
  return out;
}

function independentSha256(...parts: Uint8Array[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

describe('label texts', () => {
  it('every label is "agent-state:" + name + ":v1", and L(name) adds exactly one zero byte', () => {
    for (const name of LABEL_NAMES) {
      expect(labelText(name)).toBe(`agent-state:${name}:v1`);
      const bytes = label(name);
      expect(toHex(bytes)).toBe(`${Buffer.from(`agent-state:${name}:v1`, 'utf8').toString('hex')}00`);
      expect(bytes.indexOf(0)).toBe(bytes.length - 1);
    }
  });

  it.skipIf(!HAVE_SHARED_DOCS)(`names each label of labels.md except the reference-only app connection labels${WITHOUT_SHARED_DOCS}`, () => {
    const sections = documentedLabels();
    expect(sections.size).toBeGreaterThanOrEqual(5);
    const documented = [...sections].filter(([title]) => title !== 'App connections').flatMap(([, names]) => names);
    expect(new Set(LABEL_NAMES)).toEqual(new Set(documented));
    expect(LABEL_NAMES).toHaveLength(new Set(LABEL_NAMES).size);
  });

  it.skipIf(!HAVE_SHARED_DOCS)(`matches the reserved list of labels.md, and no reserved name is a label${WITHOUT_SHARED_DOCS}`, () => {
    const reservedLine = labelsMd.slice(labelsMd.indexOf('### Reserved'), labelsMd.indexOf('A test should fail'));
    const reserved = [...reservedLine.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!);
    expect([...RESERVED_LABEL_NAMES]).toEqual(reserved);
    for (const name of RESERVED_LABEL_NAMES) expect(LABEL_NAMES as readonly string[]).not.toContain(name);
  });

  it('label() refuses a reserved or unknown name instead of hashing nothing', () => {
    for (const name of [...RESERVED_LABEL_NAMES, 'bogus', '']) {
      expect(() => label(name as LabelName)).toThrow(RangeError);
      expect(() => labelledHash(name as LabelName, new Uint8Array(1))).toThrow(RangeError);
    }
  });

  it('changing the bytes label() returned does not change the next L(name)', () => {
    const first = label('object');
    first.fill(0x41);
    expect(toHex(label('object'))).toBe(`${Buffer.from('agent-state:object:v1').toString('hex')}00`);
  });
});

describe('labelled hashes', () => {
  it('H(L(name) || parts) equals an independent SHA-256 of the concatenation', () => {
    const names = fc.constantFrom(...LABEL_NAMES);
    fc.assert(
      fc.property(names, fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 4 }), (name, parts) => {
        const expected = independentSha256(utf8(`agent-state:${name}:v1\u0000`), ...parts);
        expect(toHex(labelledHash(name, ...parts))).toBe(expected);
      }),
    );
  });

  it('reproduces the peer id, object id and both genesis hashes of object-vectors.json', () => {
    const v = loadVector('object-vectors.json');
    expect(toHex(labelledHash('agent', fromHex(v.public_key_hex, 32)))).toBe(v.author_id);
    expect(toHex(labelledHash('object', utf8(v.object.canonical_utf8)))).toBe(v.object.object_id);
    expect(toHex(labelledHash('object-private', utf8(v.object.private_utf8)))).toBe(v.object.private_digest);
    expect(toHex(labelledHash('object-genesis', uuid16(v.space_id)))).toBe(v.chain.genesis_hash);
    expect(toHex(labelledHash('control-genesis', uuid16(v.space_id)))).toBe(v.control.genesis_hash);
  });
});

describe('capabilityLabels()', () => {
  it.skipIf(!HAVE_SHARED_DOCS)(`publishes exactly the keys labels.md lists, each with its full label text${WITHOUT_SHARED_DOCS}`, () => {
    const listed = labelsMd.slice(labelsMd.indexOf('with these keys'), labelsMd.indexOf('plus `protocol.peer_id_label`'));
    const keys = /`([a-z_, \n]+)`/.exec(listed)![1]!.split(/[,\s]+/).filter(Boolean);
    const caps = capabilityLabels();
    expect(Object.keys(caps)).toEqual(keys);
    for (const [key, text] of Object.entries(caps)) expect(text).toBe(`agent-state:${key.replaceAll('_', '-')}:v1`);
  });
});

/** Every .ts file under a directory, recursively. */
function tsFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(path);
    return /\.[cm]?ts$/.test(e.name) ? [path] : [];
  });
}

describe('label strings live only in shared/labels.ts', () => {
  const files = ['shared', 'tools', 'relay', 'bridge'].flatMap((d) => tsFiles(join(REPO, d)));
  const labelsFile = join(REPO, 'shared', 'labels.ts');

  it('the scan sees the source tree, including the one file allowed to spell labels', () => {
    expect(files).toContain(labelsFile);
    expect(readFileSync(labelsFile, 'utf8')).toContain('agent-state:');
    expect(files.length).toBeGreaterThan(5);
  });

  it('no other .ts file under shared/, relay/ or bridge/ contains "agent-state:"', () => {
    const offenders = files
      .filter((f) => f !== labelsFile)
      .filter((f) => readFileSync(f, 'utf8').includes('agent-state:'))
      .map((f) => relative(REPO, f));
    expect(offenders).toEqual([]);
  });

  it('every literal name passed to label() or labelledHash() in the source is a current label', () => {
    const known = new Set<string>(LABEL_NAMES);
    const misuse: string[] = [];
    for (const f of files) {
      for (const m of readFileSync(f, 'utf8').matchAll(/\b(?:label|labelledHash|labelText)\(\s*['"`]([^'"`]+)['"`]/g)) {
        if (!known.has(m[1]!)) misuse.push(`${relative(REPO, f)}: ${m[1]}`);
      }
    }
    expect(misuse).toEqual([]);
  });
});
