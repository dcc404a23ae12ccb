/**
 * Direct messages end to end (spec/1-concepts.md "Conversation and message", the Conversation
 * state table; spec/2-endpoints.md "Mailbox, messages, blocks"; protocol/sealed.md §9): the real
 * relay in-process and three real bridge processes over stdio with the MCP SDK client, one key
 * directory each. Ann, Ben and Cat share no SPACE, so every first message is a request.
 *
 * The tests run in order, each building on the last: Ann's request to Ben and what Ben sees
 * (svc_messages, svc_mailbox, svc://mailbox), Ann held until Ben answers, Ben's reply accepting
 * it, Ben's read cursor continuing where it stopped, a group of three that Cat leaves, Ben
 * blocking Cat and what Cat is told, a sealed pair whose words reach Ben's tool output and
 * appear nowhere in the relay's data directory, and a group that writes on while Cat's request
 * waits.
 */
import { storedContent } from '../helpers/test-store.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

const WHO = ['ann', 'ben', 'cat'] as const;
type Who = (typeof WHO)[number];

let relay: RunningRelay;
const home = Object.fromEntries(WHO.map((w) => [w, tempHome()])) as Record<Who, string>;
const id = {} as Record<Who, string>;
const bridges: Partial<Record<Who, RunningBridge>> = {};
/** The pair Ann started with Ben, the group of three. */
let pairId = '';
let groupId = '';

async function tool(who: Who, name: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, name, args);
  return { r, text: textOf(r), data: r.structuredContent as any };
}

async function ok(who: Who, name: string, args: Record<string, unknown>) {
  const out = await tool(who, name, args);
  expect(out.r.isError, out.text).toBeFalsy();
  return out;
}

async function refused(who: Who, name: string, args: Record<string, unknown>, code: string) {
  const out = await tool(who, name, args);
  expect(out.r.isError, out.text).toBe(true);
  expect(out.data.error.code, out.text).toBe(code);
  return out;
}

beforeAll(async () => {
  relay = await startRelay();
  await Promise.all(
    WHO.map(async (who) => {
      id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
      bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env: { SVC_KEEPER_INTERVAL: '0' } });
      // Signing in registers the KEY at the relay: from then on it can be written to.
      await callTool(bridges[who]!, 'svc_whoami', {});
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('direct messages through the bridge', () => {
  it('delivers a first message from an unknown KEY as a request, which the recipient is told to accept, decline or answer', async () => {
    const sent = await ok('ann', 'svc_message', { action: 'start', to: [id.ben], body: 'Hello Ben, this is Ann.' });
    pairId = sent.data.conversation.conversation_id;
    expect(sent.text).toContain(`Waiting for ${id.ben} to accept your message request`);
    expect(sent.data.conversation.members).toContainEqual({ peer_id: id.ben, state: 'requested' });

    const requests = await ok('ben', 'svc_messages', { action: 'list', state: 'requested' });
    expect(requests.data.items.map((c: any) => c.conversation_id)).toEqual([pairId]);
    expect(requests.text).toContain(`A message request from ${id.ann}: accept it (svc_message action=accept conversation_id=${pairId})`);
    // Ann's words reach Ben fenced as another KEY's.
    expect(requests.text).toMatch(/⟦peer snippet [0-9a-f]{8}⟧Hello Ben, this is Ann\.⟦\/peer [0-9a-f]{8}⟧/);

    // The resource first: reading it moves no cursor, svc_mailbox does.
    const resource = await bridges.ben!.client.readResource({ uri: 'svc://mailbox' });
    const shown = (resource.contents[0] as { text: string }).text;
    expect(shown).toContain('message_request');
    expect(shown).toContain(`accept it (svc_message action=accept conversation_id=${pairId})`);
    const mailbox = await ok('ben', 'svc_mailbox', {});
    expect(mailbox.text).toContain('message_request');
    expect(mailbox.text).toContain('A message request from');
    expect(mailbox.text).toContain('or reply (action=send');
  }, 60_000);

  it('holds the sender until the request is answered, saying why', async () => {
    const held = await refused('ann', 'svc_message', { action: 'send', conversation_id: pairId, body: 'Are you there?' }, 'MESSAGE_REQUEST_WAITING');
    expect(held.text).toContain('send nothing more to it (in any conversation) until it accepts or replies');
    const read = await ok('ann', 'svc_messages', { action: 'read', conversation_id: pairId });
    // Ann's own words come back fenced as her own.
    expect(read.text).toMatch(/⟦own body [0-9a-f]{8}⟧Hello Ben, this is Ann\.⟦\/own [0-9a-f]{8}⟧/);
    expect(read.text).toContain('Waiting for');
  }, 60_000);

  it('takes a reply as acceptance, after which the sender writes again', async () => {
    const first = await ok('ben', 'svc_messages', { action: 'read', conversation_id: pairId });
    expect(first.data.items.map((m: any) => m.seq)).toEqual(['1']);
    expect(first.data.bridge).toMatchObject({ saved_cursor: '1', cursor_moved: true, read_seq: '1' });
    const replyTo = first.data.items[0].message_id;
    const reply = await ok('ben', 'svc_message', { action: 'send', conversation_id: pairId, body: 'Hi Ann, Ben here.', reply_to: replyTo });
    expect(reply.text).toContain('Your reply accepted the message request');
    expect(reply.data.conversation.state).toBe('accepted');

    await ok('ann', 'svc_message', { action: 'send', conversation_id: pairId, body: 'Good to hear from you.' });
    // Ben continues where he stopped: only what he has not been shown, his own reply included.
    const next = await ok('ben', 'svc_messages', { action: 'read', conversation_id: pairId });
    expect(next.data.items.map((m: any) => m.seq)).toEqual(['2', '3']);
    expect(next.text).toContain('(your saved cursor)');
    const again = await ok('ben', 'svc_messages', { action: 'read', conversation_id: pairId });
    expect(again.data.items).toEqual([]);
    const list = await ok('ben', 'svc_messages', { action: 'list' });
    expect(list.data.items.find((c: any) => c.conversation_id === pairId)).toMatchObject({ state: 'accepted', unread: false });
  }, 60_000);

  it('runs a group of three in which a member who leaves keeps what came before and sees nothing after', async () => {
    const started = await ok('ann', 'svc_message', { action: 'start', to: [id.ben, id.cat], body: 'A group for the three of us.' });
    groupId = started.data.conversation.conversation_id;
    expect(started.data.conversation.kind).toBe('group');
    await ok('cat', 'svc_message', { action: 'accept', conversation_id: groupId });
    await ok('ben', 'svc_message', { action: 'accept', conversation_id: groupId });
    await ok('cat', 'svc_message', { action: 'send', conversation_id: groupId, body: 'Cat is in.' });
    const left = await ok('cat', 'svc_message', { action: 'leave', conversation_id: groupId });
    expect(left.data.state).toBe('left');
    await ok('ann', 'svc_message', { action: 'send', conversation_id: groupId, body: 'After Cat left.' });

    const got = await ok('ben', 'svc_messages', { action: 'get', conversation_id: groupId });
    expect(got.text).toContain(`${id.cat} left since`);
    const ben = await ok('ben', 'svc_messages', { action: 'read', conversation_id: groupId });
    expect(ben.data.items.map((m: any) => m.body)).toEqual(['A group for the three of us.', 'Cat is in.', 'After Cat left.']);
    const cat = await ok('cat', 'svc_messages', { action: 'read', conversation_id: groupId });
    expect(cat.data.items.map((m: any) => m.body)).toEqual(['A group for the three of us.', 'Cat is in.']);
    expect(cat.text).toContain('You left this group');
    await refused('cat', 'svc_message', { action: 'send', conversation_id: groupId, body: 'Back again?' }, 'CONVERSATION_LEFT');
  }, 90_000);

  it('blocks a KEY, which is told only that its messages are not accepted', async () => {
    const blocked = await ok('ben', 'svc_message', { action: 'block', peer_id: id.cat });
    expect(blocked.text).toContain(`Blocked: ${id.cat} cannot message you`);
    const listed = await ok('ben', 'svc_messages', { action: 'blocks' });
    expect(listed.data.items.map((b: any) => b.peer_id)).toEqual([id.cat]);

    const cat = await refused('cat', 'svc_message', { action: 'start', to: [id.ben], body: 'Let me explain.' }, 'MESSAGES_NOT_ACCEPTED');
    expect(cat.text).toContain(`${id.ben} does not accept messages from you. Stop messaging that KEY.`);
    expect(cat.text).not.toMatch(/block/i);
    const own = await refused('ben', 'svc_message', { action: 'start', to: [id.cat], body: 'Never mind.' }, 'BLOCKED_BY_YOU');
    expect(own.text).toContain(`svc_message action=unblock peer_id=${id.cat}`);
    await ok('ben', 'svc_message', { action: 'unblock', peer_id: id.cat });
  }, 60_000);

  it('says plainly that a plain message between KEYS that know each other could have been sealed', async () => {
    // Both bridges published their encryption keys when they first messaged.
    const plain = await ok('ann', 'svc_message', { action: 'send', conversation_id: pairId, body: 'Still in plain words.' });
    expect(plain.text).toContain(`This message was NOT sealed: the relay's operator can read it. It could have been: ${id.ben} knows you`);
    expect(plain.text).toContain(`svc_message action=start to=["${id.ben}"] sealed=true`);
  }, 60_000);

  it('seals a pair on the two machines: the recipient reads the words, the relay data directory holds none of them', async () => {
    const marker = `sealed-marker-${Date.now().toString(36)}-only-for-ben`;
    const started = await ok('ann', 'svc_message', { action: 'start', to: [id.ben], sealed: true, body: `First sealed words: ${marker}` });
    const sealedId = started.data.conversation.conversation_id;
    expect(sealedId).not.toBe(pairId);
    expect(started.data.conversation).toMatchObject({ sealed: true, kind: 'pair' });
    expect(started.text).toContain('sealed:          yes, on this machine');

    const ben = await ok('ben', 'svc_messages', { action: 'read', conversation_id: sealedId });
    expect(ben.data.items[0]).toMatchObject({ body: `First sealed words: ${marker}`, sealed: { opened: true } });
    expect(ben.text).toContain(marker);
    expect(ben.text).toContain('sealed: opened on this machine');
    // Ben's reply is sealed by itself (sealed omitted), and Ann opens it.
    const reply = await ok('ben', 'svc_message', { action: 'send', conversation_id: sealedId, body: `Sealed reply ${marker}` });
    expect(reply.data.bridge.sealed).toBe(true);
    const ann = await ok('ann', 'svc_messages', { action: 'read', conversation_id: sealedId });
    expect(ann.data.items.map((m: any) => m.body)).toEqual([`First sealed words: ${marker}`, `Sealed reply ${marker}`]);
    // Ben's list opens the latest message of the sealed pair too.
    const list = await ok('ben', 'svc_messages', { action: 'list' });
    expect(list.data.items.find((c: any) => c.conversation_id === sealedId).latest).toMatchObject({ snippet: `Sealed reply ${marker}`, sealed: { opened: true } });
    // The sealed message reached Ben's mailbox opened.
    const mailbox = await ok('ben', 'svc_mailbox', {});
    expect(mailbox.text).toContain(`First sealed words: ${marker}`);
    // Plain words into the plain pair now name the sealed one.
    const plain = await ok('ann', 'svc_message', { action: 'send', conversation_id: pairId, body: 'One more plain one.' });
    expect(plain.text).toContain(`A sealed conversation with ${id.ben} exists (conversation_id ${sealedId})`);
    await refused('ann', 'svc_message', { action: 'send', conversation_id: sealedId, sealed: false, body: 'plain?' }, 'INVALID_REQUEST');
    // One sealed pair per two KEYS: a second start names the one to send into.
    const again = await refused('ann', 'svc_message', { action: 'start', to: [id.ben], sealed: true, body: 'again' }, 'SEALED_CONVERSATION_EXISTS');
    expect(again.text).toContain(`svc_message action=send conversation_id=${sealedId}`);
    // Cat only accepted a group Ann started: Cat does not know Ann, so nothing sealed starts there.
    const stranger = await refused('ann', 'svc_message', { action: 'start', to: [id.cat], sealed: true, body: 'secret' }, 'SEALED_NEEDS_ACQUAINTANCE');
    expect(stranger.text).toContain(`Send an ordinary message first: svc_message action=start to=["${id.cat}"] body=... (without sealed)`);

    // Every byte the relay keeps (SQLite: the database and its -wal and -shm files; PostgreSQL:
    // every row of every table), in any encoding of the marker.
    const forms = [marker, Buffer.from(marker, 'utf16le'), Buffer.from(marker).toString('base64').slice(0, 24), Buffer.from(marker).toString('base64url').slice(0, 24)].map((f) =>
      typeof f === 'string' ? Buffer.from(f) : f,
    );
    const stored = await storedContent(relay);
    for (const form of forms) expect(stored(form), 'the relay holds the marker').toBe(false);
    // The check can fail: the plain words are there.
    expect(stored('Still in plain words.')).toBe(true);
  }, 90_000);

  it('lets a group write on while a member’s request waits, telling the sender that member sees it only once it accepts', async () => {
    // Ann knows Ben (she started their pair); Cat does not, so Cat's part is a request.
    const started = await ok('ben', 'svc_message', { action: 'start', to: [id.ann, id.cat], body: 'Ben asks Ann and Cat.' });
    const waitId = started.data.conversation.conversation_id;
    expect(started.data.conversation.members).toContainEqual({ peer_id: id.cat, state: 'requested' });
    const ann = await ok('ann', 'svc_message', { action: 'send', conversation_id: waitId, body: 'Ann answers in the group.' });
    expect(ann.data.not_yet_accepted).toEqual([id.cat]);
    expect(ann.text).toContain(`${id.cat} has not accepted its message request yet: it is told of nothing sent here until it accepts, and will see it in the conversation then.`);
    const got = await ok('ann', 'svc_messages', { action: 'get', conversation_id: waitId });
    expect(got.text).toContain(`${id.cat} has not accepted its message request yet`);

    const mailbox = await ok('cat', 'svc_mailbox', { limit: 200 });
    const here = mailbox.data.items.filter((e: any) => e.message?.conversation_id === waitId);
    expect(here.map((e: any) => [e.reason, e.message.author])).toEqual([['message_request', id.ben]]);

    const accepted = await ok('cat', 'svc_message', { action: 'accept', conversation_id: waitId });
    expect(accepted.text).toContain(`Messages sent while your request waited were not put in your mailbox: read them with svc_messages action=read conversation_id=${waitId}.`);
    const cat = await ok('cat', 'svc_messages', { action: 'read', conversation_id: waitId });
    expect(cat.data.items.map((m: any) => m.body)).toEqual(['Ben asks Ann and Cat.', 'Ann answers in the group.']);
    const after = await ok('ann', 'svc_message', { action: 'send', conversation_id: waitId, body: 'Welcome, Cat.' });
    expect(after.data.not_yet_accepted).toBeUndefined();
    expect(after.text).not.toContain('has not accepted');
  }, 90_000);
});
