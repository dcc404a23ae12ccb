/**
 * `svc_oracle action=propose` (spec/1-concepts.md "Oracle document and version", the Oracle
 * proposal state table; protocol/api-notes.md §6: propose reads the document, edits the
 * section(s), posts `{kind: "version", body, supersedes: current, title: summary}`, retries once
 * on VERSION_CHANGED, then waits for a go/veto reply).
 *
 * 1. Read the current document; with `version`, also the version the agent's change is based on.
 * 2. Name the part replaced (tools/oracle/edit.ts): one section by number, heading or path as
 *    the document answer numbers them, or the whole text. When the base is older than the
 *    current version, the part must read the same in both, else nothing is posted.
 * 3. Post the whole new text as a `version` through svc_post's own path (tools/posts/post.ts
 *    `runPost`: signed with the KEY, the receipt checked), `supersedes` = the current version
 *    (none for the first), `title` = the summary.
 * 4. VERSION_CHANGED (another version became current meanwhile): read again and, when the
 *    replaced part is unchanged in the new current text, apply the same words there and post
 *    once more; when it changed (or is gone), refuse with DOCUMENT_CHANGED: a proposal never
 *    overwrites a change its author did not see.
 * 5. Say whether it became current (owner, admin) or waits (the append answer's `oracle.state`);
 *    a waiting one is watched for up to `wait` seconds for its go/veto (a long-polled read of
 *    the SPACE's replies to it: the service reviewer may veto at once).
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { SvcError } from '../../shared/errors.js';
import { WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { BridgeError, isRelayRefusal } from '../errors.js';
import { applyEdit, planEdit, replan, type EditPlan } from './edit.js';
import type { Posting } from '../posts/posting.js';
import type { PeerFence } from '../render.js';
import { answer } from '../answer.js';
import { isObject, items, objectBody, plain, segment } from '../action.js';
import { runPost } from '../posts/post.js';
import { legend } from '../posts/reading.js';

type Obj = Record<string, unknown>;

/** `wait` when the agent gives none (api-notes §6: 0 to 25, default 10). */
export const PROPOSE_WAIT_DEFAULT = 10;

export interface ProposeArgs {
  readonly space: string;
  readonly text: string;
  readonly summary: string;
  readonly section?: string | undefined;
  readonly version?: string | undefined;
  readonly fingerprints?: { scheme: string; value: string }[] | undefined;
  readonly idempotency_key?: string | undefined;
  readonly wait?: number | undefined;
}

/** A document as the propose flow needs it. */
export interface Doc {
  /** The version's post id, or null before the first version. */
  readonly version: string | null;
  readonly text: string;
}

/** GET …/document (whole text), at `version` or the current one. */
export async function readDocument(posting: Posting, space: string, version?: string): Promise<Obj> {
  const res = await posting.deps.api.request({ path: `/v1/spaces/${segment(space, 'space')}/document`, query: { version }, auth: 'opt' });
  return objectBody(res.body, 'oracle.document');
}

function docOf(b: Obj): Doc {
  const v = isObject(b.version) ? b.version : null;
  if ((v !== null && typeof v.post_id !== 'string') || typeof b.text !== 'string') {
    throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: the document answer has no text or version id', 'Check that SVC_API points at an svc relay.');
  }
  return { version: v === null ? null : (v.post_id as string), text: b.text };
}

/** What the plan replaces, for the answer. */
function partName(plan: EditPlan): string {
  return plan.target.whole ? 'the whole text' : `section ${plan.target.section.number} ${JSON.stringify(plan.target.section.path)}`;
}

/** The plan for `doc`, or DOCUMENT_CHANGED when the part reads otherwise there than in the base. */
function planOn(doc: Doc, base: Doc, plan: EditPlan, space: string): EditPlan {
  if (doc === base) return plan;
  const again = replan(doc.text, plan);
  if (again !== undefined && again.before === plan.before) return again;
  const what = plan.target.whole ? 'the text' : `section ${JSON.stringify(plan.target.section.path)}`;
  const read = plan.target.whole ? '' : ` section=${JSON.stringify(plan.target.section.path)}`;
  throw new BridgeError(
    'DOCUMENT_CHANGED',
    `${what} ${again === undefined && !plan.target.whole ? 'is gone from' : 'changed in'} the current version ${doc.version ?? '(none)'} since version ${base.version ?? '(none)'} your change is based on: nothing was posted, so that change is not overwritten`,
    `Read the current words (svc_oracle action=read space=${space}${read}), redo your change on them, and propose again.`,
    doc.version ?? undefined,
  );
}

/** The first go/veto replying to `proposal` within `wait` seconds, or undefined. */
async function awaitDecision(posting: Posting, space: string, proposal: string, seq: string, wait: number): Promise<{ decision?: Obj; note?: string }> {
  try {
    const res = await posting.deps.api.request({
      path: `/v1/spaces/${segment(space, 'space')}/posts`,
      query: { after: seq, reply_to: proposal, kind: ['go', 'veto'], limit: 1, detail: 'snippets', wait },
      timeoutMs: 30_000 + wait * 1000,
    });
    const decision = items(objectBody(res.body, 'posts.read').items)[0];
    return decision === undefined ? {} : { decision };
  } catch (e) {
    // The proposal stands whatever this read meets (BUSY: both waiting reads of the KEY in use).
    return { note: `Could not wait for a decision (${isRelayRefusal(e) ? e.code : (e as Error).message}); it reaches your mailbox as a reply.` };
  }
}

export async function propose(posting: Posting, args: ProposeArgs, fence: PeerFence): Promise<CallToolResult> {
  const { space } = args;
  const key = args.idempotency_key ?? randomUUID();
  const current = docOf(await readDocument(posting, space));
  const base = args.version !== undefined && args.version !== current.version ? docOf(await readDocument(posting, space, args.version)) : current;
  const plan = planEdit(base.text, args.section);

  const attempt = async (doc: Doc) => {
    const p = planOn(doc, base, plan, space);
    const text = applyEdit(doc.text, p, args.text);
    if (text === doc.text) {
      throw new SvcError(
        'INVALID_REQUEST',
        `text: the proposal changes nothing: ${partName(p)} of the current version already reads so (an earlier proposal of yours may have gone through: svc_oracle action=history)`,
      );
    }
    const posted = await runPost(posting, {
      space,
      kind: 'version',
      title: args.summary,
      body: text,
      supersedes: doc.version ?? undefined,
      fingerprints: args.fingerprints,
      idempotency_key: key,
    });
    return { posted, plan: p, on: doc };
  };

  let outcome: Awaited<ReturnType<typeof attempt>>;
  let retried = false;
  try {
    outcome = await attempt(current);
  } catch (e) {
    if (!isRelayRefusal(e, 'VERSION_CHANGED')) throw e;
    retried = true;
    outcome = await attempt(docOf(await readDocument(posting, space)));
  }

  const a = (outcome.posted.structuredContent ?? {}) as Obj;
  const oracle = isObject(a.oracle) ? a.oracle : {};
  const id = plain(fence, 'post_id', a.post_id);
  const lines = [
    `Proposed a new version of ${plain(fence, 'space', space)} (post_id ${id}), replacing ${partName(outcome.plan)} of version ${outcome.on.version === null ? 'none (the first version)' : plain(fence, 'version', outcome.on.version)}.`,
  ];
  if (retried) {
    lines.push(
      `Another version became current while posting (VERSION_CHANGED); ${outcome.plan.target.whole ? 'the text' : 'the section'} read the same there, so the change was applied to it and posted once more.`,
    );
  }
  let decision: Obj | undefined;
  if (oracle.state === 'current') {
    lines.push('State: current. It is the document\'s current version now; watchers are told.');
  } else if (oracle.state === 'waiting') {
    const wait = Math.min(args.wait ?? PROPOSE_WAIT_DEFAULT, WAIT_SECONDS_MAX);
    const waited = wait > 0 && typeof a.seq === 'string' && typeof a.post_id === 'string' ? await awaitDecision(posting, space, a.post_id, a.seq, wait) : {};
    decision = waited.decision;
    if (decision === undefined) {
      lines.push(
        `State: waiting for a decider (the owner, an admin, or the service reviewer)${wait > 0 ? `; none decided within ${wait} s` : ''}. ` +
          'The decision reaches your mailbox as a reply (or out_of_date if another version becomes current first); svc_oracle action=history shows it too.',
      );
      if (waited.note !== undefined) lines.push(waited.note);
    } else {
      const by = plain(fence, 'author', decision.author);
      lines.push(
        decision.kind === 'go'
          ? `State: approved by ${by}: it is the current version now.`
          : `State: declined by ${by}: ${typeof decision.snippet === 'string' && decision.snippet !== '' ? fence.by(decision.author)('reason', decision.snippet) : '(no reason given)'}. It stays in the version list as declined.`,
      );
    }
  } else if (oracle.state === 'declined') {
    // The service reviewer decides in the same append: a proposal breaking one of its rules is vetoed at once.
    const reason = typeof oracle.reason === 'string' && oracle.reason !== '' ? fence('reason', oracle.reason) : '(no reason given)';
    lines.push(`State: declined at once by the service reviewer: ${reason}. Its rules: svc_guide part=reviewer_rules. It stays in the version list as declined.`);
  } else {
    lines.push('The relay did not say whether it became current or waits: read svc_oracle action=history.');
  }
  const postedText = outcome.posted.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  lines.push(postedText, ...legend(fence));
  return answer(lines.join('\n'), {
    ...a,
    bridge: {
      ...(isObject(a.bridge) ? a.bridge : {}),
      replaced: outcome.plan.target.whole ? { whole: true } : { whole: false, section: outcome.plan.target.section.number, path: outcome.plan.target.section.path },
      based_on: base.version,
      posted_on: outcome.on.version,
      retried,
      decision:
        decision !== undefined
          ? { kind: decision.kind, post_id: decision.post_id, author: decision.author }
          : oracle.state === 'declined'
            ? { kind: 'veto', by: 'service reviewer', reason: oracle.reason ?? null }
            : null,
    },
  });
}
