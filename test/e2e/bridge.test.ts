/**
 * The bridge end to end: a real relay on loopback, real svc-bridge
 * processes over stdio with the MCP SDK's client, two KEYS in two key directories (A's client
 * speaks MCP 2025-11-25, B's 2026-07-28).
 *
 * Run 1 (KEY A) creates a SPACE, reads its mailbox, posts results with fingerprints and a
 * dossier, and exits. While it is away a peer writes to it and its token expires. Run 2 (a new
 * process, same key directory) reads its own newest dossier, continues the mailbox from the
 * saved cursor, finds run 1's result by SEEK on a fingerprint, has its token revoked mid-run,
 * and invites KEY B, which joins and reads (with proofs). Token expiry and revocation are
 * survived without the agent noticing: no tool answer is an error.
 *
 * A third KEY, C, is a plain HTTP client (no bridge): it joins by link and writes to A.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { readTokenFile } from '../../bridge/keys/token-file.js';
import { toHex } from '../../shared/encoding.js';
import { callTool, startBridge, tempHome, toolOk, type McpRevision, type RunningBridge } from '../helpers/bridge.js';
import { call, post } from '../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

let relay: RunningRelay;
const homeA = tempHome('svc-e2e-a-');
const homeB = tempHome('svc-e2e-b-');
const open: RunningBridge[] = [];
let c: MintedToken;

const space = freshName('e2e');
const fileHash = toHex(randomBytes(32));
const commit = toHex(randomBytes(20));

/** What run 1 leaves behind for run 2 to check. */
const run1: { peer?: string; runId?: string; resultId?: string; dossierId?: string } = {};

beforeAll(async () => {
  relay = await startRelay();
  c = await mintToken(relay.url);
}, 60_000);

afterAll(async () => {
  await Promise.all(open.map((b) => b.close()));
  await relay?.close();
});

async function bridge(home: string, revision: McpRevision = '2025-11-25'): Promise<RunningBridge> {
  const b = await startBridge({ relayUrl: relay.url, home, revision });
  open.push(b);
  return b;
}

async function stop(b: RunningBridge): Promise<void> {
  await b.close();
  open.splice(open.indexOf(b), 1);
}

/** C writes to A in the SPACE (a question addressed to A: a mailbox item with reason `to`). */
async function cWrites(body: string): Promise<void> {
  await post(relay, c, space, { kind: 'question', body, to: [run1.peer!] });
}

describe('two runs of one KEY, then a second KEY', () => {
  it('run 1 creates a SPACE, reads its mailbox, posts results with fingerprints and a dossier, and exits', async () => {
    const a = await bridge(homeA);
    const me = toolOk(await callTool(a, 'svc_whoami', {}));
    run1.peer = me.peer_id;
    run1.runId = me.bridge.run_id;
    toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: space, title: 'Parser work', description: 'Findings on the parser.' }));
    // C joins by a link A made, then writes to A.
    const invite = toolOk(await callTool(a, 'svc_space_control', { action: 'invite', name: space, role: 'writer', max_uses: 1 }));
    const joined = await call(relay, 'POST', '/v1/join', { token: c.token, body: { link: invite.link } });
    expect(joined.status).toBe(200);
    await cWrites('Did the CRLF fix land?');
    const mail = toolOk(await callTool(a, 'svc_mailbox', {}));
    expect(mail.items).toHaveLength(1);
    expect(mail.bridge.saved_cursor).toBe('1');

    const r1 = toolOk(
      await callTool(a, 'svc_post', {
        space,
        kind: 'result',
        title: 'CRLF handled',
        body: 'The parser now normalises line ends.',
        fingerprints: [
          { scheme: 'sha256.file', value: fileHash },
          { scheme: 'git.commit', value: commit },
        ],
      }),
    );
    expect(r1.bridge).toMatchObject({ signed: true, run_id: run1.runId, receipt_check: { ok: true } });
    run1.resultId = r1.post_id;
    toolOk(await callTool(a, 'svc_post', { space, kind: 'fail', body: 'Tabs in keys still break.', fingerprints: [{ scheme: 'git.commit', value: commit }] }));
    toolOk(await callTool(a, 'svc_read_space', { space }));

    // The dossier, as the write_dossier prompt says: the saved cursors in data.dossier.cursors.
    const prompt = await a.client.getPrompt({ name: 'write_dossier', arguments: { space } });
    const steps = (prompt.messages[0]!.content as { text: string }).text;
    const suggested = JSON.parse(/For example data: (\{.*\})/.exec(steps)![1]!);
    expect(suggested.dossier.cursors).toMatchObject({ mailbox: '1', [`space:${space}`]: expect.any(String) });
    const d = toolOk(await callTool(a, 'svc_post', { space, kind: 'dossier', title: 'Run 1', body: `Results: ${r1.post_id}. Open: tabs in keys.`, data: suggested }));
    run1.dossierId = d.post_id;
    await stop(a);
  });

  it('while A is away, C writes to it and its token expires', async () => {
    await cWrites('Also: what about tabs?');
    relay.clock.advance(91 * 24 * 60 * 60 * 1000);
  });

  it('run 2 continues: own dossier, mailbox from the saved cursor, SEEK, an invite for KEY B; expiry and revocation unnoticed', async () => {
    const a = await bridge(homeA);
    const me = toolOk(await callTool(a, 'svc_whoami', {}));
    expect(me.peer_id).toBe(run1.peer);
    expect(me.bridge.run_id).not.toBe(run1.runId);
    expect(a.stderr()).toContain('TOKEN_EXPIRED');

    const dossier = toolOk(await callTool(a, 'svc_read_space', { space, standing: true, kind: ['dossier'], author: run1.peer, limit: 1, detail: 'full' }));
    expect(dossier.items).toHaveLength(1);
    expect(dossier.items[0]).toMatchObject({ post_id: run1.dossierId, run_id: run1.runId, data: { dossier: { cursors: { mailbox: '1' } } } });

    const mail = toolOk(await callTool(a, 'svc_mailbox', {}));
    expect(mail.bridge).toMatchObject({ cursor_from: 'saved', after_sent: '1', saved_cursor: '2' });
    expect(mail.items.map((e: any) => e.post.body ?? e.post.snippet)).toEqual(['Also: what about tabs?']);

    const seek = toolOk(await callTool(a, 'svc_seek', { fingerprint: [`sha256.file:${fileHash}`] }));
    expect(seek.items[0]).toMatchObject({ post_id: run1.resultId, match: 'fingerprint', mine: true });

    // The token is revoked behind the bridge's back; the next call still works.
    const dir = openKeyDirectory(homeA);
    const held = readTokenFile(dir, 'default', new URL(relay.url), run1.peer!)!;
    expect((await call(relay, 'DELETE', '/v1/tokens/current', { token: held.token })).status).toBe(200);
    const invite = toolOk(await callTool(a, 'svc_space_control', { action: 'invite', name: space, role: 'reader', max_uses: 1 }));
    expect(a.stderr()).toContain('TOKEN_REVOKED');
    expect(readTokenFile(dir, 'default', new URL(relay.url), run1.peer!)!.token).not.toBe(held.token);

    const later = toolOk(await callTool(a, 'svc_post', { space, kind: 'progress', body: 'Run 2 picked up the tabs question.', reply_to: mail.items[0].post.post_id }));
    expect(later.bridge.run_id).toBe(me.bridge.run_id);

    // KEY B, in its own key directory and speaking MCP 2026-07-28, joins with the link and reads.
    const b = await bridge(homeB, '2026-07-28');
    const bMe = toolOk(await callTool(b, 'svc_whoami', {}));
    expect(bMe.peer_id).not.toBe(run1.peer);
    toolOk(await callTool(b, 'svc_join', { action: 'join', link: invite.link }));
    relay.clock.advance(11 * 60_000);
    await (relay.app as any).checkpointer.runOnce(relay.clock.now());
    const read = toolOk(await callTool(b, 'svc_read_space', { space, proof: true, token_budget: 20_000 }));
    const kinds = read.items.map((x: any) => `${x.author === run1.peer ? 'A' : 'C'}:${x.kind}`);
    expect(kinds).toEqual(['C:question', 'A:result', 'A:fail', 'A:dossier', 'C:question', 'A:progress']);
    expect(read.bridge.checks.every((x: any) => x.proof.ok === true && x.inclusion.ok === true)).toBe(true);
    expect(read.bridge.changed_history).toBe(false);
    const byRun = new Map(read.items.filter((x: any) => x.author === run1.peer).map((x: any) => [x.kind, x.run_id]));
    expect(byRun.get('result')).toBe(run1.runId);
    expect(byRun.get('progress')).toBe(me.bridge.run_id);
    // B's cursor for the SPACE is its own, in its own key directory.
    expect(read.bridge.saved_cursor).toBe(read.head_seq);
    expect(toolOk(await callTool(a, 'svc_read_space', { space })).items.map((x: any) => x.kind)).toEqual(['dossier', 'question', 'progress']);
  });
});
