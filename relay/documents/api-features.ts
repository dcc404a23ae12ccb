/**
 * Which API versions svc speaks, feature by feature. svc implements API 0.1 of the agent memory
 * service; the public service has since moved to 0.9. What its later versions added that svc
 * also serves is named here, so a client written for the newer API can ask
 * `GET /v1/capabilities` (`features`) instead of guessing, and the served reference says the
 * same (relay/documents/reference.ts, section "API versions"). Every feature is additive: an 0.1
 * client sees the answers it always saw.
 *
 * `api` is the newer API's version where the public service's change list names the change;
 * features it only added (its list names no added field) say `after 0.1`.
 */
import { ATTACHMENTS_FEATURE } from '../files/limits.js';
import { FINDING_LIMITS, POST_BATCH_MAX, SEALED_PAGE_LIMIT_MAX, SUMMARY_MAX_BYTES, TASK_BATCH_MAX, TASK_LIMITS } from '../../shared/limits.js';

/** The newest API version of the public service these notes were compared against. */
export const NEWER_API_VERSION = '0.9';

export interface ApiFeature {
  readonly name: string;
  readonly api: string;
  readonly what: string;
}

/** What svc serves of the newer API. */
export const SUPPORTED_FEATURES: readonly ApiFeature[] = [
  {
    name: 'signed_tool_arguments',
    api: 'after 0.1',
    what: 'svc_post takes a post signed on the client\'s machine: canonical, private, alg, signature, passed to posts.append as they are.',
  },
  {
    name: 'sealed_tool_arguments',
    api: 'after 0.1',
    what: 'svc_post takes sealed {header, ciphertext}; svc_space_control create takes sealed {space_id, commitment, lock}; svc_message start and send take sealed {header, ciphertext, commitment?, locks?}: sealed on the client\'s machine, passed on as they are.',
  },
  {
    name: 'post_summary',
    api: 'after 0.1',
    what: `A post's summary (1 to ${SUMMARY_MAX_BYTES} bytes): a member of its object, signed with it, shown at snippets and full, never on a hidden post nor in a sealed SPACE.`,
  },
  {
    name: 'post_batches',
    api: 'after 0.1',
    what: `posts.append takes posts: up to ${POST_BATCH_MAX} post bodies (unsigned, signed or sealed) in one call, each appended in order and answered on its own (its receipt, or its refusal's envelope); svc_post takes posts too, each item made as one post alone and all sent in one posts.append.`,
  },
  {
    name: 'task_batches',
    api: 'after 0.1',
    what: `tasks.add takes tasks: up to ${TASK_BATCH_MAX} tasks in one call, each added in order and answered on its own (its task, or its refusal's envelope); svc_task add takes the same.`,
  },
  {
    name: 'sealed_keeper',
    api: 'after 0.1',
    what: `The newer keeper's reads and writes: sealed pages take limit up to ${SEALED_PAGE_LIMIT_MAX}; generations are taken as numbers or decimal strings and a lock's generation is served as a decimal string; waiting requests carry the requester as requester and as peer.peer_id; sealed.locks answers added, and its LOCK_RECIPIENT_NOT_A_MEMBER and LOCK_RECIPIENT_NOT_VOUCHED name the recipient as the bare peer id in detail; sealed.status answers owner_was as the previous owner\'s peer id (its keys as owner_was_key); upkeep answers change_due_at.`,
  },
  ATTACHMENTS_FEATURE,
  {
    name: 'task_changes',
    api: '0.4',
    what: 'tasks.get reads one task by its number (a retired one too; history=true pages its earlier words); tasks.change sets title, body, tag or after naming the revision read and why (TASK_CHANGED when stale); a task answers its revision, and a holder whose task changed after it took it sends that revision with done; tasks.retire (coordinator or above) takes a task off the list, the tasks that waited for it waiting for what it waited for; svc_task get, change and retire.',
  },
  {
    name: 'task_after_gating',
    api: 'after 0.1',
    what: 'A task whose after tasks are not all accepted (a change may make a held one wait) is neither taken, finished nor checked: tasks.next with number (one task by its number, svc_task next number) and done, confirm and reject answer TASK_WAITING.',
  },
  {
    name: 'task_attempts',
    api: '0.6',
    what: `Numbered attempts, for a task added with numbered_attempts true (tasks.add, one task or a batch's): any writer marks it done, holding it or not, naming a post of the SPACE (its own, or another KEY's not hidden); each done is a numbered attempt (done answers attempt), up to ${TASK_LIMITS.attemptsPerCycle} a cycle and one a KEY (TASK_NOT_OPEN, TASK_LIMIT, TASK_ALREADY_CHECKED, TASK_NOT_DONE for a result a reject set aside). confirm and reject take attempt and cycle (with neither, the one attempt waiting) and answer attempt; the task answers attempt and attempts. A task added without it answers as API 0.1, so 0.1 clients see no change; the newer API's check offers are not kept. svc_task takes numbered_attempts on add and attempt on confirm and reject.`,
  },
  {
    name: 'task_token_budget',
    api: '0.3',
    what: 'tasks.list takes token_budget and answers tokens_estimated, and budget_cut when the budget left a task out.',
  },
  {
    name: 'detail_headlines',
    api: '0.3',
    what: 'posts.read and posts.standing take detail=headlines: each post as seq, kind, by (a short name the page\'s authors maps to its peer id), re, replaces and retracts by seq, title or its body\'s first 80 characters as start, open (what reading it whole costs, in tokens) and flags; tokens_estimated counts the items and authors, and token_budget bounds them; svc_read_space takes it too. Only when asked: the default stays snippets, as 0.1 reads it (the newer API answers headlines unless asked). Old versions of a document are not left out as the newer API leaves them.',
  },
  {
    name: 'finding',
    api: 'after 0.1',
    what: `posts.append takes kind finding, unsigned or signed: data.claim one line of 1 to ${FINDING_LIMITS.claimChars} characters, data.status proposed, supported or disputed, data.confidence low, medium or high, data.sources up to ${FINDING_LIMITS.sources} post ids or seqs of the SPACE (INVALID_REQUEST naming each wrong field; SOURCE_NOT_FOUND). findings.list (GET /v1/spaces/{name}/findings, svc_spaces action=findings) answers each finding's number, status (withdrawn once retracted), sources, cited_by, source_withdrawn, contested and task; findings.get (GET /v1/posts/{id}/finding) one post's sources, the posts citing it and its finding. A finding is contested as the newer API has it, by a member's warn or fail citing it or a post it rests on in data.sources, or a task check's reject of it as the task's result, and confirmed by that task's checks. findings.list takes status, fingerprint, since, before, limit and token_budget. The mailbox adds cited (a post naming yours in data.sources) and contested (a member's warn or fail contesting a finding of yours). Not served: svc_get finding and svc_mailbox's reason filter for the two new reasons (the memory tool set's listing has no room; a read without reason shows them), and a contested notice for a task check's reject.`,
  },
  {
    name: 'propose_change_prompt',
    api: 'after 0.1',
    what: 'The connector\'s propose_change prompt drafts every call of a public proposal (its SPACE, the proposal post, three tasks, its entry in the proposals SPACE) and sends none.',
  },
];

/** What svc does not serve of the newer API, named so a client can tell. */
export const LEFT_OUT_FEATURES: readonly ApiFeature[] = [
  { name: 'task_jobs', api: '0.4 to 0.7', what: 'tasks.next jobs (work, check, upkeep), check offers, joint claims, progress posts and delete.' },
  { name: 'funding', api: '0.8, 0.9', what: 'Deposits, balances and storage billing: a relay a team runs for itself bills nothing.' },
];

/** The `features` member of `GET /v1/capabilities`. */
export function featuresCapability(apiVersion: string): Record<string, unknown> {
  return {
    api_version: apiVersion,
    newer_api_version: NEWER_API_VERSION,
    supported: SUPPORTED_FEATURES.map((f) => f.name),
    left_out: LEFT_OUT_FEATURES.map((f) => f.name),
    by_name: Object.fromEntries([
      ...SUPPORTED_FEATURES.map((f) => [f.name, { status: 'supported', api: f.api, what: f.what }]),
      ...LEFT_OUT_FEATURES.map((f) => [f.name, { status: 'left_out', api: f.api, what: f.what }]),
    ]),
  };
}
