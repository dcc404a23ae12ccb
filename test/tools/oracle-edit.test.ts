/**
 * Section replacement for oracle proposals (tools/oracle/edit.ts): sections found as the relay
 * numbers them (shared/oracle-text.ts), the new words put in place, and the check a retry makes
 * that the part replaced still reads the same.
 */
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../shared/errors.js';
import { applyEdit, planEdit, replan } from '../../tools/oracle/edit.js';

const DOC = [
  'Preamble line.',
  '',
  '# Intro',
  'Intro words.',
  '',
  '## Setup',
  'Install it.',
  '',
  '```',
  '# not a heading',
  '```',
  '',
  '# Usage',
  'Run it.',
  '',
].join('\n');

function refusal(f: () => unknown): SvcError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SvcError);
    return e as SvcError;
  }
  throw new Error('expected a refusal');
}

describe('naming the section a proposal replaces', () => {
  it('finds a section by number, heading or path, ignoring case, and skips headings inside code fences', () => {
    expect(planEdit(DOC, '2').target).toMatchObject({ whole: false, section: { number: 2, heading: 'Setup' } });
    expect(planEdit(DOC, 'setup').target).toMatchObject({ section: { number: 2 } });
    expect(planEdit(DOC, 'INTRO/SETUP').target).toMatchObject({ section: { number: 2 } });
    expect(planEdit(DOC, 'Usage').target).toMatchObject({ section: { number: 3 } });
    expect(planEdit(DOC, '2').before).toBe('## Setup\nInstall it.\n\n```\n# not a heading\n```\n\n');
  });

  it('refuses a section the document does not have, naming the sections it has', () => {
    const e = refusal(() => planEdit(DOC, 'Missing'));
    expect(e.code).toBe('INVALID_REQUEST');
    expect(e.detail).toContain('no section "Missing"');
    expect(e.detail).toContain('1 "Intro", 2 "Intro/Setup", 3 "Usage"');
  });

  it('refuses a heading that names two sections, asking for the number or path', () => {
    const twice = '# A\nx\n## Notes\none\n# B\ny\n## Notes\ntwo\n';
    const e = refusal(() => planEdit(twice, 'notes'));
    expect(e.detail).toContain('names 2 sections');
    expect(e.detail).toContain('2 "A/Notes", 4 "B/Notes"');
    expect(planEdit(twice, 'B/Notes').target).toMatchObject({ section: { number: 4 } });
  });

  it('refuses a section in a document without headings, and takes the whole text when no section is named', () => {
    expect(refusal(() => planEdit('just text\n', '1')).detail).toContain('has no sections');
    expect(planEdit('just text\n', undefined)).toEqual({ target: { whole: true }, before: 'just text\n' });
  });
});

describe('putting the new words in', () => {
  it('keeps the heading line and replaces what follows it, leaving the rest of the text as it was', () => {
    const out = applyEdit(DOC, planEdit(DOC, 'Setup'), 'Install it with npm.\n');
    expect(out).toBe(DOC.replace('## Setup\nInstall it.\n\n```\n# not a heading\n```\n\n', '## Setup\nInstall it with npm.\n\n'));
  });

  it('replaces the heading too when the new words open with one (a rename)', () => {
    const out = applyEdit(DOC, planEdit(DOC, 'Usage'), '# Running\nRun it twice.');
    expect(out.endsWith('# Running\nRun it twice.\n')).toBe(true);
    expect(out.startsWith('Preamble line.\n\n# Intro\nIntro words.\n\n## Setup\n')).toBe(true);
  });

  it('keeps the separation before the next section when the old section ended without a blank line', () => {
    const tight = '# A\none\n# B\ntwo';
    expect(applyEdit(tight, planEdit(tight, 'A'), 'uno')).toBe('# A\nuno\n# B\ntwo');
    expect(applyEdit(tight, planEdit(tight, 'B'), 'dos')).toBe('# A\none\n# B\ndos');
  });

  it('empties a section to its heading when the new words are empty', () => {
    expect(applyEdit('# A\none\n\n# B\ntwo\n', planEdit('# A\none\n\n# B\ntwo\n', 'A'), '')).toBe('# A\n\n# B\ntwo\n');
  });

  it('takes the whole text as given when no section is named', () => {
    expect(applyEdit(DOC, planEdit(DOC, undefined), '# New\n')).toBe('# New\n');
  });
});

describe('the same part in a newer text, for a retry', () => {
  it('finds the section by its path where its number moved, with the same words', () => {
    const plan = planEdit(DOC, 'Usage');
    const newer = `# Added first\nnew\n\n${DOC}`;
    const again = replan(newer, plan)!;
    expect(again.target).toMatchObject({ section: { number: 4, path: 'Usage' } });
    expect(again.before).toBe(plan.before);
    expect(applyEdit(newer, again, 'Run it often.')).toContain('# Added first\nnew\n\n');
  });

  it('shows a changed section as changed words, and a section that is gone or doubled as none', () => {
    const plan = planEdit(DOC, 'Usage');
    expect(replan(DOC.replace('Run it.', 'Run it now.'), plan)!.before).not.toBe(plan.before);
    expect(replan(DOC.replace('# Usage', '# Use'), plan)).toBeUndefined();
    expect(replan(`${DOC}# Usage\nagain\n`, plan)).toBeUndefined();
  });

  it('shows the whole text as the part replaced when no section was named', () => {
    const plan = planEdit(DOC, undefined);
    expect(replan('other', plan)!.before).toBe('other');
  });
});
