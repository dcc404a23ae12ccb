/**
 * Sealed pairs as the message tools use them (protocol/sealed.md §3, §4, §9; spec/1-concepts.md
 * "Sealed SPACES and pairs"): a conversation's record, its sealed messages opened through the
 * program's Sealing (tools/ports.ts `SealedPairs`; the bridge's, bridge/sealed/pairs.ts), or
 * shut saying why where there is none; the advice after a plain message that could have been
 * sealed, and publishing this KEY's encryption key on first need.
 */
import { isHex } from '../../shared/encoding.js';
import type { BridgeDeps } from '../deps.js';
import { BridgeError, failureWords } from '../errors.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function badRecord(rule: string): BridgeError {
  return new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: ${rule}`, 'Check that SVC_API points at an svc relay.');
}

/** A sealed message that stays shut: none of its words, only why, and whether it may open later. */
export function shut(m: Obj, reason: string, retry: boolean): Obj {
  const s = isObj(m.sealed) ? m.sealed : {};
  return {
    ...m,
    ...('body' in m ? { body: null } : {}),
    ...('snippet' in m ? { snippet: null } : {}),
    sealed: { bytes: s.bytes, opened: false, not_opened: reason, retry },
  };
}

/** The relay's record of one conversation (conversations.get). */
export async function conversationRecord(deps: BridgeDeps, conversationId: string): Promise<Obj> {
  const res = await deps.api.request({ path: `/v1/conversations/${encodeURIComponent(conversationId)}` });
  if (!isObj(res.body)) throw badRecord('conversations.get is not a JSON object');
  return res.body;
}

/**
 * Open the sealed messages of a page of conversation `conv`. Without the KEY's encryption key
 * (a bridge built without it) sealed messages stay shut and say why.
 */
export async function openConversationMessages(deps: BridgeDeps, conv: unknown, messages: readonly Obj[]): Promise<Obj[]> {
  if (!messages.some((m) => isObj(m.sealed))) return [...messages];
  const pairs = deps.sealing?.pairs();
  if (pairs === undefined) return messages.map((m) => (isObj(m.sealed) ? shut(m, "this bridge was started without its KEY's encryption key", true) : m));
  return pairs.openMessages(conv, messages);
}

/**
 * Open the sealed messages inside mailbox envelopes (`message` members): each conversation's
 * record is read once, then its messages opened as in a read. An envelope whose conversation
 * cannot be read keeps its message shut, saying why.
 */
export async function openMessageEnvelopes(deps: BridgeDeps, envelopes: readonly Obj[]): Promise<Obj[]> {
  const sealed = envelopes.filter((e) => isObj(e.message) && isObj(e.message.sealed));
  if (sealed.length === 0) return [...envelopes];
  const byConversation = new Map<string, Obj[]>();
  for (const e of sealed) {
    const m = e.message as Obj;
    const id = typeof m.conversation_id === 'string' ? m.conversation_id : '';
    byConversation.set(id, [...(byConversation.get(id) ?? []), m]);
  }
  const openedBy = new Map<Obj, Obj>();
  for (const [id, messages] of byConversation) {
    let done: Obj[];
    try {
      if (id === '') throw badRecord('a message names no conversation_id');
      done = await openConversationMessages(deps, await conversationRecord(deps, id), messages);
    } catch (e) {
      done = messages.map((m) => shut(m, failureWords(e), true));
    }
    messages.forEach((m, i) => openedBy.set(m, done[i]!));
  }
  return envelopes.map((e) => (isObj(e.message) && openedBy.has(e.message) ? { ...e, message: openedBy.get(e.message) } : e));
}

/**
 * After a plain message in a pair: the sentence saying it could have been sealed, and how, when
 * it could (spec "Sealed SPACES and pairs"; sealed.md §9): the other KEY knows this one (its own
 * state in the pair is `accepted`: it accepted, replied or started it) and has published an
 * encryption key (checked against its statement); this bridge publishes its own on first need.
 * When a sealed pair with that KEY already exists (kept here, or in the caller's conversation
 * list), the sentence names it instead. Undefined when sealing was not possible or could not be
 * checked (the check never fails the send).
 */
export async function sealingAdvice(deps: BridgeDeps, conv: Obj): Promise<string | undefined> {
  const pairs = deps.sealing?.pairs();
  if (pairs === undefined || conv.kind !== 'pair' || conv.sealed === true) return undefined;
  const me = deps.identity.peerId;
  const members = Array.isArray(conv.members) ? conv.members.filter(isObj) : [];
  const peer = members.find((m) => isHex(m.peer_id, 32) && m.peer_id !== me);
  if (peer === undefined) return undefined;
  const peerId = peer.peer_id as string;
  try {
    const existing =
      pairs.keptWith(peerId)[0]?.conversationId ??
      (await (async () => {
        const res = await deps.api.request({ path: '/v1/conversations', query: { state: 'active', limit: 200 } });
        const list = isObj(res.body) && Array.isArray(res.body.items) ? res.body.items.filter(isObj) : [];
        const found = list.find(
          (c) => c.kind === 'pair' && c.sealed === true && Array.isArray(c.members) && c.members.some((m) => isObj(m) && m.peer_id === peerId),
        );
        return typeof found?.conversation_id === 'string' && /^[A-Za-z0-9_-]{1,200}$/.test(found.conversation_id) ? found.conversation_id : undefined;
      })());
    if (existing !== undefined) {
      return `This message was NOT sealed: the relay's operator can read it. A sealed conversation with ${peerId} exists (conversation_id ${existing}): send there (svc_message action=send conversation_id=${existing}) and this bridge seals every message.`;
    }
    if (peer.state !== 'accepted') return undefined;
    const key = await pairs.peerKey(peerId);
    if (key.encryption === null) return undefined;
    return `This message was NOT sealed: the relay's operator can read it. It could have been: ${peerId} knows you and has published an encryption key. svc_message action=start to=["${peerId}"] sealed=true body=... starts a sealed conversation beside this one (sealed and opened on the two machines; the relay holds ciphertext only).`;
  } catch (e) {
    deps.log(`could not check whether the message to ${peerId} could have been sealed: ${failureWords(e)}`);
    return undefined;
  }
}

/**
 * Publish this KEY's encryption key when it takes part in direct messages (start, send,
 * accept), once per process, so that two bridges that message each other can start a sealed
 * pair with no other step (sealed.md §9 needs both keys published). Only the public key's
 * signed statement goes out. A failure is logged and never fails the message.
 */
export async function publishForPairs(deps: BridgeDeps): Promise<void> {
  if (deps.sealing === undefined) return;
  try {
    await deps.sealing.published();
  } catch (e) {
    deps.log(`could not publish this KEY's encryption key for sealed pairs: ${failureWords(e)}`);
  }
}
