/**
 * What a tool answers when its body throws something that is no refusal (tools/answer.ts):
 * the bridge names its own fault with the error's message and logs the stack to stderr; the
 * relay's connector answers INTERNAL with the catalogue's words and keeps the message (which may
 * name files, queries or other callers' data) in its own log only.
 */
import { describe, expect, it } from 'vitest';
import { failure, guarded } from '../../tools/answer.js';
import { RelayRefusal } from '../../tools/errors.js';

describe('an unexpected failure inside a tool', () => {
  it('at the bridge is BRIDGE_FAULT naming the error, its stack logged', () => {
    const lines: string[] = [];
    const r = failure(new Error('disk on fire'), { log: (l) => lines.push(l) });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ error: { code: 'BRIDGE_FAULT', source: 'bridge' } });
    expect((r.content[0] as { text: string }).text).toContain('disk on fire');
    expect(lines.join('\n')).toMatch(/svc-bridge: tool failed: Error: disk on fire/);
  });

  it("at the relay's connector is INTERNAL without the error's words, which go to the relay's log", async () => {
    const lines: string[] = [];
    const r = await guarded({ log: (l) => lines.push(l), served: 'relay' }, async () => {
      throw new Error('SELECT secret FROM tokens');
    });
    expect(r.structuredContent).toMatchObject({ error: { code: 'INTERNAL', source: 'relay' } });
    expect(JSON.stringify(r)).not.toContain('SELECT secret');
    expect(lines.join('\n')).toContain('SELECT secret FROM tokens');
  });

  it("passes a relay refusal through as the relay's, wherever the tools are served", () => {
    const refused = new RelayRefusal(404, { code: 'SPACE_NOT_FOUND', message: 'No SPACE has that name.', fix: 'Check the name.', detail: undefined, requestId: undefined, retryAfter: undefined });
    for (const served of ['bridge', 'relay'] as const) {
      const r = failure(refused, { log: () => {}, served });
      expect(r.structuredContent).toMatchObject({ error: { code: 'SPACE_NOT_FOUND', source: 'relay' } });
    }
  });
});
