/**
 * Task command bodies read outside the lock (the shapes of the tasks contract; limits in
 * shared/limits.ts TASK_LIMITS). Every value here is attacker-controlled; the strict JSON body
 * parser has already refused NUL and lone surrogates. Whether an `after` number names a task of
 * the SPACE, and whether a `post_id` is the caller's own post there, need the database and are
 * decided under the lock (relay/tasks/commands.ts).
 */
import { SvcError } from '../../shared/errors.js';
import { utf8Length } from '../../shared/encoding.js';
import { TASK_LIMITS } from '../../shared/limits.js';

export const TAG_RE = /^[a-z0-9_.-]{1,64}$/;

/** Longest `post_id` looked up (a post id is a uuid; anything longer names no post). */
const POST_ID_MAX_CHARS = 128;

export interface AddInput {
  title: string;
  body: string;
  tag: string | null;
  after: number[];
  /** Any writer may mark it done, each done a numbered attempt (the newer API's tasks). */
  numberedAttempts: boolean;
}

/** Which attempt a confirm or reject checks: `attempt` and `cycle`, each when sent. */
export interface CheckTarget {
  attempt?: number | undefined;
  cycle?: number | undefined;
}

export interface NextInput {
  tag: string | undefined;
  verify: boolean;
  /** The task asked for by its number, if any (taken with neither tag nor verify). */
  number?: number | undefined;
}

function text(value: unknown, field: string, min: number, max: number): string {
  if (typeof value !== 'string') throw new SvcError('INVALID_REQUEST', `${field}: text of ${min} to ${max} bytes`);
  const bytes = utf8Length(value);
  if (bytes < min || bytes > max) throw new SvcError('INVALID_REQUEST', `${field}: ${min} to ${max} bytes, got ${bytes}`);
  return value;
}

export function readTag(value: unknown, field = 'tag'): string {
  if (typeof value !== 'string' || !TAG_RE.test(value)) {
    throw new SvcError('INVALID_REQUEST', `${field}: 1 to ${TASK_LIMITS.tagChars} of a-z 0-9 _ . -`);
  }
  return value;
}

/**
 * `after`: up to eight task numbers, none repeated (TASK_AFTER_INVALID, the detail naming the
 * number); a value that is not a whole number at all is INVALID_REQUEST.
 */
export function readAfter(value: unknown): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new SvcError('INVALID_REQUEST', `after: a list of up to ${TASK_LIMITS.after} task numbers`);
  if (value.length > TASK_LIMITS.after) {
    throw new SvcError('TASK_AFTER_INVALID', `after: at most ${TASK_LIMITS.after} tasks, got ${value.length}`);
  }
  const seen = new Set<number>();
  for (const n of value) {
    if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new SvcError('INVALID_REQUEST', 'after: task numbers are whole numbers');
    if (n < 1) throw new SvcError('TASK_AFTER_INVALID', `after: ${n} is not a task number`);
    if (seen.has(n)) throw new SvcError('TASK_AFTER_INVALID', `after: ${n} is named twice`);
    seen.add(n);
  }
  return [...seen].sort((a, b) => a - b);
}

export function readAdd(body: Record<string, unknown>): AddInput {
  return {
    title: text(body.title, 'title', 1, TASK_LIMITS.titleBytes),
    body: body.body === undefined ? '' : text(body.body, 'body', 0, TASK_LIMITS.bodyBytes),
    tag: body.tag === undefined || body.tag === null ? null : readTag(body.tag),
    after: readAfter(body.after),
    numberedAttempts: readFlag(body.numbered_attempts, 'numbered_attempts'),
  };
}

function readFlag(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new SvcError('INVALID_REQUEST', `${field}: true or false`);
  return value;
}

function wholeFrom(value: unknown, field: string, min: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new SvcError('INVALID_REQUEST', `${field}: a whole number from ${min}`);
  }
  return value;
}

/** The attempt a check names (from 1) and its cycle (from 1), each optional. */
export function readCheckTarget(body: Record<string, unknown> | undefined): CheckTarget {
  return { attempt: wholeFrom(body?.attempt, 'attempt', 1), cycle: wholeFrom(body?.cycle, 'cycle', 1) };
}

export function readNext(body: Record<string, unknown> | undefined): NextInput {
  const verify = body?.verify;
  if (verify !== undefined && typeof verify !== 'boolean') throw new SvcError('INVALID_REQUEST', 'verify: true or false');
  const tag = body?.tag;
  const number = body?.number;
  if (number !== undefined && number !== null) {
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1) throw new SvcError('INVALID_REQUEST', 'number: a whole number from 1');
    if ((tag !== undefined && tag !== null) || verify === true) throw new SvcError('INVALID_REQUEST', 'number takes no tag and no verify: send number alone');
    return { tag: undefined, verify: false, number };
  }
  return { tag: tag === undefined || tag === null ? undefined : readTag(tag), verify: verify === true };
}

/** A `post_id` as sent: a string (looked up under the lock), or undefined when optional and absent. */
export function readPostId(value: unknown, required: boolean): string | undefined {
  if (value === undefined || value === null) {
    if (required) throw new SvcError('INVALID_REQUEST', 'post_id: the id of your post with the result');
    return undefined;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > POST_ID_MAX_CHARS) {
    throw new SvcError('INVALID_REQUEST', 'post_id: a post id');
  }
  return value;
}

export function readReason(value: unknown): string {
  return text(value, 'reason', 1, TASK_LIMITS.reasonBytes);
}

/** A revision a body names: a whole number from 1, read strictly (never "3" or 2.5). */
export function readRevision(value: unknown, required: boolean): number | undefined {
  if (value === undefined || value === null) {
    if (required) throw new SvcError('INVALID_REQUEST', 'revision: send the revision you read (a read of the task answers it)');
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new SvcError('INVALID_REQUEST', 'revision: a whole number from 1');
  }
  return value;
}

export interface ChangeInput {
  revision: number;
  reason: string;
  title?: string;
  body?: string;
  tag?: string | null;
  after?: number[];
}

/**
 * tasks.change: the revision read, why, and at least one of title, body, tag and after, each
 * read as an add reads it. `tag: null` clears the tag and `after: []` waits for nothing.
 */
export function readChange(body: Record<string, unknown>): ChangeInput {
  const revision = readRevision(body.revision, true)!;
  const reason = readReason(body.reason);
  const out: ChangeInput = { revision, reason };
  if (body.title !== undefined) out.title = text(body.title, 'title', 1, TASK_LIMITS.titleBytes);
  if (body.body !== undefined) out.body = text(body.body, 'body', 0, TASK_LIMITS.bodyBytes);
  if (body.tag !== undefined) out.tag = body.tag === null ? null : readTag(body.tag);
  if (body.after !== undefined) {
    if (body.after === null) throw new SvcError('INVALID_REQUEST', 'after: a list; send [] to wait for no task');
    out.after = readAfter(body.after);
  }
  if (out.title === undefined && out.body === undefined && out.tag === undefined && out.after === undefined) {
    throw new SvcError('INVALID_REQUEST', 'send at least one of title, body, tag and after');
  }
  return out;
}

/** A task number in a path: a whole number from 1; anything else names no task. */
export function readNumber(value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new SvcError('TASK_NOT_FOUND', `number: ${JSON.stringify(value.slice(0, 20))} is not a task number`);
  }
  return Number(value);
}
