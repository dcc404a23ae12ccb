/**
 * The category register's data files (relay/categories/register/*.json), their JSON Schema and
 * the loader that checks them when the relay starts (relay/categories/load.ts;
 * spec/1-concepts.md "Categories"): the files load into the register the relay serves, and
 * each rule of the loader refuses a copy of the files broken in that one way, naming the file
 * and the entry.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { allCategories, REGISTER_RELEASE } from '../../../relay/categories/index.js';
import { loadRegister, RegisterError, type RegisterFile } from '../../../relay/categories/load.js';
import { REGISTER_FILES, TOP_IDS } from '../../../relay/categories/register.js';
import type { EntryInput } from '../../../relay/categories/types.js';

const DIR = new URL('../../../relay/categories/', import.meta.url);
const SCHEMA = JSON.parse(readFileSync(new URL('register.schema.json', DIR), 'utf8'));

/** An entry of a copy, loosely typed so a test can break it. */
type Entry = { id: string; parent?: string | null; aliases?: string[]; [field: string]: unknown };
type Files = Record<string, { entries: Entry[] }>;

/** A copy of the data files with `change` made to it, as the loader takes them. */
function broken(change: (files: Files) => void): RegisterFile[] {
  const files = structuredClone(REGISTER_FILES) as Files;
  change(files);
  return TOP_IDS.map((name) => ({ name, data: files[name] }));
}

/** The entry `id` of a copy, wherever it is. */
function entry(files: Files, id: string): Entry {
  for (const file of Object.values(files)) {
    const found = file.entries.find((e) => e.id === id);
    if (found) return found;
  }
  throw new Error(`no entry ${id}`);
}

function added(id: string, parent: string): Entry {
  return { id, name: `Test entry ${id}`, parent, covers: 'An entry added by a test.', examples: ['an example'] };
}

describe('the data files', () => {
  it('load into the register the relay serves, every entry with the same content', () => {
    const loaded = loadRegister(TOP_IDS.map((name) => ({ name, data: REGISTER_FILES[name] })));
    expect(loaded).toEqual(allCategories());
    expect(loaded.length).toBe(546);
  });

  it.skipIf(REGISTER_RELEASE !== '2026-09-18')(`hold release 2026-09-18 as it was written when the release was made, to the letter${(REGISTER_RELEASE === '2026-09-18' ? '' : ` (skipped: the register is release ${REGISTER_RELEASE} now)`)}`, () => {
    // The digest of the whole register in data order, every field of every entry: a change of
    // content is a new release (REGISTER_RELEASE), which this test then leaves alone.
    const digest = createHash('sha256').update(JSON.stringify(allCategories())).digest('hex');
    expect(digest).toBe('dbfa2f757715e096625e3617f09c6cf453aa17fa32bbc666ca5a57d817781cba');
  });

  it('are one per top category, named by its id', () => {
    const names = readdirSync(new URL('register/', DIR)).sort();
    expect(names).toEqual(TOP_IDS.map((id) => `${id}.json`).sort());
  });

  it('are each valid against register.schema.json, a draft 2020-12 JSON Schema', () => {
    expect(SCHEMA.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const schema = z.fromJSONSchema(SCHEMA);
    for (const name of TOP_IDS) {
      const data = JSON.parse(readFileSync(new URL(`register/${name}.json`, DIR), 'utf8'));
      const r = schema.safeParse(data);
      expect(r.success, `${name}.json: ${JSON.stringify(r.error?.issues[0])}`).toBe(true);
      expect(data.$schema).toBe('../register.schema.json');
    }
  });

  it('the schema describes the fields of an entry as the loader types them', () => {
    // Every field of EntryInput, and the ones it requires, checked by the compiler here.
    const fields = { id: true, name: true, parent: true, covers: true, examples: true, aliases: true, elsewhere: true, replacedBy: true } satisfies Record<
      keyof EntryInput,
      true
    >;
    type RequiredField = { [K in keyof EntryInput]-?: undefined extends EntryInput[K] ? never : K }[keyof EntryInput];
    const required = { id: true, name: true, parent: true, covers: true, examples: true } satisfies Record<RequiredField, true>;
    expect(Object.keys(SCHEMA.$defs.entry.properties).sort()).toEqual(Object.keys(fields).sort());
    expect([...SCHEMA.$defs.entry.required].sort()).toEqual(Object.keys(required).sort());
  });
});

describe('the loader refuses a broken register, naming the file and the entry', () => {
  // [what is broken, the change, what the message must say]
  const cases: [string, (files: Files) => void, RegExp][] = [
    // the form of one entry (register.schema.json)
    ['an id that is not a slug', (f) => void (entry(f, 'chess').id = 'Chess_Openings'), /^category register: games-and-sport\.json entries\[\d+\] "Chess_Openings": id: .*pattern.*\(register\.schema\.json\)$/],
    ['an id over 64 characters', (f) => void (entry(f, 'chess').id = 'c'.repeat(65)), /games-and-sport\.json entries\[\d+\] "c{65}": id: .*64/],
    ['an entry without a name', (f) => void delete entry(f, 'chess').name, /games-and-sport\.json entries\[\d+\] "chess": name: /],
    ['a blank name', (f) => void (entry(f, 'chess').name = '  '), /"chess": name: .*pattern/],
    ['no examples', (f) => void (entry(f, 'chess').examples = []), /"chess": examples: .*>=1/],
    ['a covers too short to say anything', (f) => void (entry(f, 'chess').covers = 'Chess.'), /"chess": covers: .*>=11/],
    ['a field the schema does not know', (f) => void (entry(f, 'web3').replaced_by = 'blockchain'), /computing\.json entries\[\d+\] "web3": Unrecognized key: "replaced_by"/],
    ['no parent field', (f) => void delete entry(f, 'chess').parent, /"chess": parent: /],
    ['an elsewhere that points at a malformed id', (f) => void (entry(f, 'chess').elsewhere = { 'board games': 'Board Games' }), /"chess": elsewhere\.board games: .*pattern/],
    ['a file that is not an object of entries', (f) => void ((f as Record<string, unknown>).general = [entry(f, 'general')]), /^category register: general\.json: .*\(register\.schema\.json\)$/],
    // what one entry cannot say alone
    ['an id twice', (f) => void f.general!.entries.push({ ...entry(f, 'chess'), parent: 'general' }), /^category register: general\.json "chess": the id is also in games-and-sport\.json$/],
    ['a file whose first entry is not its top category', (f) => void f.science!.entries.push(f.science!.entries.shift()!), /^category register: science\.json: the first entry must be the top category "science", with parent null$/],
    ['a second top category in a file', (f) => void (entry(f, 'chess').parent = null), /games-and-sport\.json "chess": only the file's first entry is a top category/],
    ['a parent that is not in the register', (f) => void (entry(f, 'chess').parent = 'board-games-and-more'), /games-and-sport\.json "chess": parent "board-games-and-more" is not in the register/],
    ['parents that go round', (f) => void (entry(f, 'deep-learning').parent = 'transformers'), /artificial-intelligence\.json "deep-learning": its parents go round: deep-learning › transformers › deep-learning/],
    [
      'an entry in another branch’s file',
      (f) => {
        const chess = entry(f, 'chess');
        f['games-and-sport']!.entries.splice(f['games-and-sport']!.entries.indexOf(chess), 1);
        f.general!.entries.push(chess);
      },
      /general\.json "chess": it sits under games-and-sport, so it belongs in games-and-sport\.json/,
    ],
    ['level 3 outside artificial intelligence and programming languages', (f) => void f.science!.entries.push(added('loop-quantum-gravity', 'physics')), /science\.json "loop-quantum-gravity": level 3 \(science › physics › loop-quantum-gravity\); this branch goes 2 levels deep/],
    ['level 4 inside programming languages', (f) => void f.computing!.entries.push(added('rust-async-runtimes', 'rust-language')), /"rust-async-runtimes": level 4 .*; this branch goes 3 levels deep/],
    ['level 5 under artificial intelligence', (f) => void f['artificial-intelligence']!.entries.push(added('attention-heads', 'transformers')), /"attention-heads": level 5 .*; this branch goes 4 levels deep/],
    ['a replacement that is not in the register', (f) => void (entry(f, 'web3').replacedBy = 'distributed-ledgers'), /computing\.json "web3": retired in favour of "distributed-ledgers", which is not in the register/],
    ['a replacement that is itself retired', (f) => void (entry(f, 'web3').replacedBy = 'chatbots'), /"web3": retired in favour of "chatbots", which is not another live entry/],
    ['an entry retired in favour of itself', (f) => void (entry(f, 'web3').replacedBy = 'web3'), /"web3": retired in favour of "web3", which is not another live entry/],
    ['a live entry under a retired one', (f) => void f['artificial-intelligence']!.entries.push(added('support-bots', 'chatbots')), /artificial-intelligence\.json "support-bots": a live entry under the retired "chatbots"/],
    ['a pointer elsewhere to no entry', (f) => void (entry(f, 'chess').elsewhere = { 'card games': 'card-games-and-more' }), /"chess": elsewhere "card games" points at "card-games-and-more", which is not in the register/],
    ['a pointer elsewhere to a retired entry', (f) => void (entry(f, 'chess').elsewhere = { 'chess on a chain': 'web3' }), /"chess": elsewhere "chess on a chain" points at "web3", which is not another live entry/],
    ['a pointer elsewhere to the entry itself', (f) => void (entry(f, 'chess').elsewhere = { chess: 'chess' }), /"chess": elsewhere "chess" points at "chess", which is not another live entry/],
    ['an other name that is another entry’s id', (f) => void entry(f, 'chess').aliases!.push('Computing'), /games-and-sport\.json "chess": "Computing" reads as "computing", which is already computing\.json "computing"/],
    ['a name that is another entry’s other name', (f) => void (entry(f, 'chess').name = 'Golang'), /"chess": "Golang" reads as "golang", which is already computing\.json "go-language"/],
    ['an other name with no letters or digits', (f) => void entry(f, 'chess').aliases!.push('!!!'), /"chess": "!!!" has no letters or digits to look it up by/],
  ];

  it.each(cases)('%s', (_what, change, message) => {
    const files = broken(change);
    expect(() => loadRegister(files)).toThrow(RegisterError);
    expect(() => loadRegister(files)).toThrow(message);
  });

  it('the copies above were broken, not the files themselves', () => {
    expect(() => loadRegister(broken(() => {}))).not.toThrow();
  });
});
