/**
 * A tool answer whose text is made on first read (tools/answer.ts `answer`): made once, when
 * read, an ordinary enumerable member to its readers (spread, JSON, assignment), and every such
 * answer of one hidden class, so that none keeps what its text is made from alive past a
 * young-generation collection (a probe in a process of its own checks it: test/helpers/hidden-class.ts).
 */
import { describe, expect, it } from 'vitest';
import { answer } from '../../tools/answer.js';
import { probeHiddenClasses } from '../helpers/hidden-class.js';

describe('an answer with its text made on first read', () => {
  it('makes the text once, when first read, and not before', () => {
    let made = 0;
    const r = answer(() => `text ${++made}`, { n: 1 });
    expect(made).toBe(0);
    expect(r.content).toEqual([{ type: 'text', text: 'text 1' }]);
    expect(r.content).toEqual([{ type: 'text', text: 'text 1' }]);
    expect(made).toBe(1);
  });

  it('reads as a plain answer: enumerable content in keys, spreads and JSON; content can be replaced', () => {
    const r = answer(() => 'hello', { n: 1 });
    expect(Object.keys(r).sort()).toEqual(['content', 'structuredContent']);
    expect(JSON.parse(JSON.stringify(r))).toEqual({ structuredContent: { n: 1 }, content: [{ type: 'text', text: 'hello' }] });
    expect({ ...r }.content).toEqual([{ type: 'text', text: 'hello' }]);
    r.content = [];
    expect(r.content).toEqual([]);
  });

  it('is of one hidden class with fast properties for every answer, before and after its text is read', async () => {
    const report = await probeHiddenClasses('answers');
    expect(report.before).toBe(true);
    expect(report.after).toBe(true);
  }, 30_000);
});
