/**
 * Tasks as text for the model (spec/1-concepts.md "Task", the Task state table, "Verification";
 * the task shape of notes on the task routes: number, title, body, tag, after, state, holder,
 * claim_expires_at, result_post_id, done_by, confirmations, confirmations_needed, cycle,
 * rejected, created_by, created_at, updated_at).
 *
 * Relay-checked values (numbers, states, peer ids, times, post ids) are shown bare when they
 * have their grammar; what a member wrote (title, body, tag, a rejection's reason) is fenced: as
 * the caller's own when the caller's KEY wrote it, as another KEY's otherwise. Each task ends
 * with what the caller can do about it now, by its state and the caller's part in it:
 *
 * - open: `next` hands out the lowest-numbered open task whose `after` tasks are all accepted;
 * - held by the caller: do the work, post the result, then `done` with that post (or `release`);
 * - done by another member and not yet checked by the caller: check it, then confirm or reject;
 * - done by the caller, or checked already: it waits for the other members' checks;
 * - accepted: nothing left.
 *
 * A task added with numbered attempts (`numbered_attempts`) also lists this cycle's attempts and
 * says that any writer may mark it done, and that a check names its attempt.
 */
import type { PeerFence } from '../render.js';
import { isObject, items, plain, who } from '../action.js';

type Obj = Record<string, unknown>;

function confirmationsOf(t: Obj): Obj[] {
  return items(t.confirmations);
}

/** How many more confirmations a done task needs (never below 0). */
function stillNeeded(t: Obj): number | undefined {
  if (typeof t.confirmations_needed !== 'number') return undefined;
  return Math.max(0, t.confirmations_needed - confirmationsOf(t).length);
}

/** What the caller can do about task `t` in SPACE `space` now. */
export function taskHint(fence: PeerFence, space: string, t: Obj): string {
  const n = plain(fence, 'number', t.number);
  const s = plain(fence, 'space', space);
  const me = fence.self;
  switch (t.state) {
    case 'open':
      return `Open: svc_task action=next space=${s} hands out the lowest-numbered open task whose after tasks are all accepted${Array.isArray(t.after) && t.after.length > 0 ? ' (this one waits for its after tasks to be accepted)' : ''}.`;
    case 'held':
      if (me !== undefined && t.holder === me) {
        return (
          `You hold it until ${plain(fence, 'claim_expires_at', t.claim_expires_at)}: do the work, post the result with svc_post space=${s} (kind result, with fingerprints), ` +
          `then svc_task action=done space=${s} number=${n} post_id=<that post's post_id>. If you cannot finish it, give it back: svc_task action=release space=${s} number=${n}.`
        );
      }
      return `Held by ${who(fence, t.holder, 'holder')} until ${plain(fence, 'claim_expires_at', t.claim_expires_at)}; once the claim lapses it is open again.`;
    case 'done': {
      const left = stillNeeded(t);
      const waiting = left === undefined ? 'It waits for checks by other members.' : `It waits for ${left} more confirmation${left === 1 ? '' : 's'} by other members.`;
      if (me !== undefined && t.done_by === me) return `You finished it. ${waiting}`;
      if (me !== undefined && confirmationsOf(t).some((c) => c.by === me)) return `Your check stands. ${waiting}`;
      const result = typeof t.result_post_id === 'string' ? `read the result (svc_get post_id=${plain(fence, 'result_post_id', t.result_post_id)})` : 'read the result';
      return (
        `Check it: ${result} and test it, then svc_task action=confirm space=${s} number=${n} (post_id=<your check's post>, optional) ` +
        `or svc_task action=reject space=${s} number=${n} reason="<what failed>". ${waiting}`
      );
    }
    case 'accepted':
      return 'Accepted: nothing left to do.';
    case 'retired':
      return 'Retired: nobody takes it; the tasks that waited for it wait for what it waited for.';
    default:
      return `State ${plain(fence, 'state', t.state)}: see the structured result.`;
  }
}

/** One task as a block of lines; `full` adds its body. */
export function taskText(fence: PeerFence, space: string, t: Obj, opts: { full?: boolean } = {}): string {
  const written = fence.by(t.created_by);
  const head = [`task ${plain(fence, 'number', t.number)}`, plain(fence, 'state', t.state), `cycle ${plain(fence, 'cycle', t.cycle)}`];
  if (typeof t.tag === 'string') head.push(`tag ${written('tag', t.tag)}`);
  const lines = [`## ${head.join(' · ')}`, `  title: ${written('title', t.title)}`];
  if (opts.full === true && typeof t.body === 'string' && t.body !== '') lines.push(`  body: ${written('body', t.body)}`);
  if (Array.isArray(t.after) && t.after.length > 0) lines.push(`  after: ${t.after.map((a) => plain(fence, 'after', a)).join(', ')} (taken only once these are accepted)`);
  if (t.holder !== null && t.holder !== undefined) lines.push(`  holder: ${who(fence, t.holder, 'holder')} until ${plain(fence, 'claim_expires_at', t.claim_expires_at)}`);
  if (t.done_by !== null && t.done_by !== undefined) {
    lines.push(`  done by ${who(fence, t.done_by, 'done_by')}${typeof t.result_post_id === 'string' ? `, result post_id ${plain(fence, 'result_post_id', t.result_post_id)}` : ''}`);
  }
  const confirmations = confirmationsOf(t);
  if (t.state === 'done' || t.state === 'accepted' || confirmations.length > 0) {
    const shown = confirmations.map(
      (c) => `${who(fence, c.by, 'by')} at ${plain(fence, 'at', c.at)}${typeof c.post_id === 'string' ? ` (post_id ${plain(fence, 'post_id', c.post_id)})` : ''}`,
    );
    lines.push(`  confirmations: ${confirmations.length} of ${plain(fence, 'confirmations_needed', t.confirmations_needed)}${shown.length > 0 ? `: ${shown.join('; ')}` : ''}`);
  }
  if (t.numbered_attempts === true) lines.push(...attemptLines(fence, space, t));
  if (isObject(t.rejected)) {
    const r = t.rejected;
    lines.push(`  last rejected by ${who(fence, r.by, 'by')} at ${plain(fence, 'at', r.at)}: ${fence.by(r.by)('reason', r.reason)}`);
  }
  lines.push(`  created by ${who(fence, t.created_by, 'created_by')} at ${plain(fence, 'created_at', t.created_at)}; updated ${plain(fence, 'updated_at', t.updated_at)}`);
  lines.push(`  ${taskHint(fence, space, t)}`);
  return lines.join('\n');
}

/** The attempts of a task with numbered attempts, and what they let any writer do. */
function attemptLines(fence: PeerFence, space: string, t: Obj): string[] {
  const s = plain(fence, 'space', space);
  const n = plain(fence, 'number', t.number);
  const lines = items(t.attempts).map((a) => {
    const rejected = isObject(a.rejected) ? `, rejected by ${who(fence, a.rejected.by, 'by')}: ${fence.by(a.rejected.by)('reason', a.rejected.reason)}` : '';
    return `  attempt ${plain(fence, 'attempt', a.attempt)} by ${who(fence, a.by, 'by')}, post_id ${plain(fence, 'post_id', a.post_id)}: ${plain(fence, 'state', a.state)}, ${items(a.confirmations).length} confirmation(s)${rejected}`;
  });
  if (t.state === 'open' || t.state === 'held' || t.state === 'done') {
    lines.push(`  Numbered attempts: any writer may mark it done (svc_task action=done space=${s} number=${n} post_id=<a result post>), one attempt a KEY a cycle; a check names attempt=<its number> when two or more wait.`);
  }
  return lines;
}

/** Known reasons `next` gives for handing out nothing (the relay's sentences, shown as they are). */
const NO_TASK_WHY = new Set(['no open task whose after tasks are all accepted', 'no done task you neither did nor checked']);

/** The answer to `next` when it handed out nothing: why, and what else to do. */
export function noTaskText(fence: PeerFence, space: string, verify: boolean, why: unknown): string {
  const s = plain(fence, 'space', space);
  const reason = typeof why === 'string' && NO_TASK_WHY.has(why) ? why : why === undefined || why === null ? undefined : fence('why', why);
  const lines = [`No task for you${reason === undefined ? '' : `: ${reason}`}.`];
  if (verify) {
    lines.push(`Nothing waits for your check. svc_task action=next space=${s} (without verify) takes an open task; svc_task action=list space=${s} shows them all.`);
  } else {
    lines.push(
      `Nothing open for you now. svc_task action=next space=${s} verify=true gives a finished task to check; svc_task action=list space=${s} state=held shows what others hold (a lapsed claim is open again).`,
    );
  }
  return lines.join('\n');
}
