/**
 * vitest reporter, beside the default one: after a run, one line per skipped test with why it
 * was skipped. The default reporter only counts skipped tests ("3 skipped"), so a test that no
 * longer runs on some machine (no Chromium, no spec beside the checkout, the other store) would
 * go unnoticed. The reason is the test's own words: a title ending "(skipped: ...)", or the note
 * given to `ctx.skip(note)`.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SkipReasons implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const result = test.result();
        const note = result.state === 'skipped' ? result.note : undefined;
        lines.push(`   ↓ ${module.relativeModuleId} > ${test.fullName}${note ? ` [${note}]` : ''}`);
      }
    }
    if (lines.length > 0) process.stdout.write(`\n Skipped, each with why (${lines.length}):\n${lines.join('\n')}\n`);
  }
}
