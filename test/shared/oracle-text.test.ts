/**
 * The oracle text grammar (shared/oracle-text.ts; spec/1-concepts.md "Oracle document and
 * version"): one example per rule, then properties over any text (never throws, sections cover
 * the text in order, nothing inside code is a link).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyTarget, findSection, parseOracleText, sectionText, utf8Length } from '../../shared/oracle-text.js';

const refs = (text: string) => parseOracleText(text).references.map((r) => ({ kind: r.kind, target: r.target, label: r.label, section: r.section }));
const rules = (text: string) => parseOracleText(text).problems.map((p) => p.rule);

describe('headings and sections', () => {
  it('headings of one to three # start sections, with level, heading, path and ranges', () => {
    const text = 'intro line\n# Intro\ntext\n## Setup\nmore\n### Keys\n## Use\n# Other\n';
    const p = parseOracleText(text);
    expect(p.sections.map((s) => [s.number, s.level, s.heading, s.path, s.line])).toEqual([
      [1, 1, 'Intro', 'Intro', 2],
      [2, 2, 'Setup', 'Intro/Setup', 4],
      [3, 3, 'Keys', 'Intro/Setup/Keys', 6],
      [4, 2, 'Use', 'Intro/Use', 7],
      [5, 1, 'Other', 'Other', 8],
    ]);
    expect(p.preambleEnd).toBe('intro line\n'.length);
    expect(sectionText(text, p.sections[1]!)).toBe('## Setup\nmore\n');
    expect(sectionText(text, p.sections[4]!)).toBe('# Other\n');
  });

  it('a level skipped leaves it out of the path', () => {
    expect(parseOracleText('# A\n### C\n').sections[1]!.path).toBe('A/C');
  });

  it('four # signs, or # with no space after, are text; four are a deep_heading problem', () => {
    const p = parseOracleText('#### Deep\n#tag\n');
    expect(p.sections).toEqual([]);
    expect(p.problems.map((x) => x.rule)).toEqual(['deep_heading']);
  });

  it('an empty heading still starts a section and is an empty_heading problem', () => {
    const p = parseOracleText('#\ntext\n');
    expect(p.sections.map((s) => s.heading)).toEqual(['']);
    expect(rules('#\n')).toEqual(['empty_heading']);
  });

  it('byte ranges count UTF-8 bytes (é is 2, an emoji 4)', () => {
    const text = 'é\n# 😀\nx';
    const p = parseOracleText(text);
    expect(p.preambleBytes).toBe(3);
    expect(p.sections[0]).toMatchObject({ byteStart: 3, byteEnd: 3 + 7 + 1 });
    expect(utf8Length(text)).toBe(Buffer.byteLength(text));
  });

  it('CRLF line ends are read like LF', () => {
    const p = parseOracleText('# A\r\n[[abc]]\r\n');
    expect(p.sections[0]!.heading).toBe('A');
    expect(p.references[0]!.target).toBe('abc');
  });

  it('finds a section by number, by heading or by path, ignoring case', () => {
    const p = parseOracleText('# Intro\n## Setup\n# 7\n');
    expect(findSection(p.sections, '2')!.heading).toBe('Setup');
    expect(findSection(p.sections, 'setup')!.number).toBe(2);
    expect(findSection(p.sections, 'INTRO/SETUP')!.number).toBe(2);
    expect(findSection(p.sections, '7')!.number).toBe(3);
    expect(findSection(p.sections, 'nothing')).toBeUndefined();
    expect(findSection(p.sections, '0')).toBeUndefined();
  });
});

describe('list items and code', () => {
  it('counts `- ` list items outside fences', () => {
    expect(parseOracleText('- one\n  - two\n-three\n```\n- code\n```\n').listItems).toBe(2);
  });

  it('nothing inside a fenced code block is a heading or a link', () => {
    const p = parseOracleText('```ts\n# not a heading\n[[abc]]\n```\n~~~\n[[def]]\n~~~~\n[[ghi]]\n');
    expect(p.sections).toEqual([]);
    expect(p.references.map((r) => r.target)).toEqual(['ghi']);
  });

  it('a fence closes only on the same character, at least as long', () => {
    const p = parseOracleText('````\n```\n[[abc]]\n~~~~\n````\n[[def]]\n');
    expect(p.references.map((r) => r.target)).toEqual(['def']);
  });

  it('an unclosed fence runs to the end and is an unclosed_fence problem', () => {
    const p = parseOracleText('[[abc]]\n```\n# x\n[[def]]\n');
    expect(p.references.map((r) => r.target)).toEqual(['abc']);
    expect(p.problems).toEqual([{ rule: 'unclosed_fence', line: 2, detail: expect.any(String) }]);
  });

  it('a backtick line with a backtick in its info string is not a fence', () => {
    expect(parseOracleText('```a`b\n[[abc]]\n').references).toHaveLength(1);
  });

  it('nothing inside inline code is a link; a run closes at the next run of the same length', () => {
    expect(refs('`[[abc]]` [[def]] ``x ` [[ghi]] `` [[jkl]]').map((r) => r.target)).toEqual(['def', 'jkl']);
  });

  it('an inline backtick with no closer is text, and a link after it counts', () => {
    expect(refs('a ` b [[abc]]').map((r) => r.target)).toEqual(['abc']);
  });
});

describe('links', () => {
  it('reads the four forms with and without labels', () => {
    expect(refs('[[space-one]] [[space-one/12|the twelfth]] [[https://example.org/a?b=c]] [[sha256.file:ab12|file]]')).toEqual([
      { kind: 'space', target: 'space-one', label: null, section: null },
      { kind: 'post', target: 'space-one/12', label: 'the twelfth', section: null },
      { kind: 'url', target: 'https://example.org/a?b=c', label: null, section: null },
      { kind: 'fingerprint', target: 'sha256.file:ab12', label: 'file', section: null },
    ]);
  });

  it('carries the SPACE name and seq of space and post links, and the section they stand in', () => {
    const p = parseOracleText('# A\n[[abc/3]]\n## B\n[[def]]\n');
    expect(p.references).toEqual([
      { kind: 'post', target: 'abc/3', label: null, section: 1, line: 2, space: 'abc', seq: 3 },
      { kind: 'space', target: 'def', label: null, section: 2, line: 4, space: 'def' },
    ]);
  });

  it('trims target and label; an empty label is none', () => {
    expect(refs('[[ abc | x y ]] [[abc|  ]]')).toEqual([
      { kind: 'space', target: 'abc', label: 'x y', section: null },
      { kind: 'space', target: 'abc', label: null, section: null },
    ]);
  });

  it('a link in a heading belongs to that heading\'s section', () => {
    expect(refs('# See [[abc]]\n')[0]!.section).toBe(1);
  });

  it('malformed targets are problems, not references', () => {
    for (const t of ['', 'AB', 'ab', 'abc/0', 'abc/012', 'abc/x', 'Bad Name', 'https://', 'https://a b', '9x:', ':v', `${'a'.repeat(64)}`]) {
      expect(classifyTarget(t), t).toHaveProperty('problem', 'malformed_link');
    }
    expect(classifyTarget('http://example.org')).toHaveProperty('problem', 'insecure_link');
    expect(classifyTarget(`x:${'v'.repeat(1025)}`)).toHaveProperty('problem');
    expect(classifyTarget(`x:${'v'.repeat(1024)}`)).toMatchObject({ kind: 'fingerprint' });
  });

  it('an unclosed [[ is text and an unclosed_link problem; a [[ met again restarts', () => {
    expect(rules('[[abc')).toEqual(['unclosed_link']);
    const p = parseOracleText('[[a [[abc]]');
    expect(p.references.map((r) => r.target)).toEqual(['abc']);
    expect(p.problems.map((x) => x.rule)).toEqual(['unclosed_link']);
  });

  it('a link does not cross a line or inline code', () => {
    expect(refs('[[abc\n]]')).toEqual([]);
    expect(refs('[[ab `c` d]]')).toEqual([]);
  });
});

describe('any text (properties)', () => {
  const pieces = fc.constantFrom('#', '## ', '### ', '#### ', '- ', '```', '~~~', '`', '``', '[[', ']]', '|', 'abc', 'abc/7', 'https://x.y', 'k:v', ' ', '\n', '\r\n', 'é', '😀', '\ud800');
  const texts = fc.oneof(fc.string({ unit: 'binary', maxLength: 400 }), fc.array(pieces, { maxLength: 120 }).map((a) => a.join('')));

  it('never throws, and sections cover the text after the preamble in order, byte ranges too', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const p = parseOracleText(text);
        let at = p.preambleEnd;
        let byteAt = p.preambleBytes;
        expect(utf8Length(text, 0, p.preambleEnd)).toBe(p.preambleBytes);
        p.sections.forEach((s, i) => {
          expect(s.number).toBe(i + 1);
          expect(s.start).toBe(at);
          expect(s.byteStart).toBe(byteAt);
          expect(s.end).toBeGreaterThan(s.start);
          expect(s.byteEnd - s.byteStart).toBe(utf8Length(text, s.start, s.end));
          expect(text.slice(s.start, s.start + s.level)).toBe('#'.repeat(s.level));
          at = s.end;
          byteAt = s.byteEnd;
        });
        expect(at).toBe(text.length);
        for (const r of p.references) expect(r.section === null || (r.section >= 1 && r.section <= p.sections.length)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('a [[…]] inside inline code or a fence is never a reference', () => {
    const link = fc.constantFrom('[[abc]]', '[[abc/1|l]]', '[[https://x.y]]', '[[k:v]]');
    const before = fc.array(pieces.filter((s) => !s.includes('`') && !s.includes('~') && !s.includes('[') && !s.includes(']')), { maxLength: 20 }).map((a) => a.join('').replace(/\n/g, ' ').replace(/\r/g, ' '));
    fc.assert(
      fc.property(before, link, before, fc.constantFrom('inline', 'fence'), (a, l, b, where) => {
        const text = where === 'inline' ? `${a} \`${l}\` ${b}` : `${a}\n\`\`\`\n${b}${l}\n\`\`\`\n`;
        expect(parseOracleText(text).references).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('stays linear on 64 KiB of hostile text (many openers, backtick runs, headings)', () => {
    const hostile = ['[['.repeat(32768), '`'.repeat(1) + ' ``'.repeat(21000), '#\n'.repeat(32768), '[[a|'.repeat(16384), `${'`'.repeat(3)}\n${'x\n'.repeat(30000)}`];
    for (const text of hostile) {
      const p = parseOracleText(text);
      expect(p.sections.length).toBeLessThanOrEqual(32768);
    }
  });
});
