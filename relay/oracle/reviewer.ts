/**
 * The service reviewer (spec/1-concepts.md Space field `service_reviewer`, "States: Oracle
 * proposal": a `veto` by the service reviewer declines a waiting proposal). A fixed,
 * deterministic rule set over three things only: the current version's text, the proposed text
 * with its summary, and which SPACE names exist. No model, no network, no clock: the same input
 * always gives the same verdict. The rules are published at `/reviewer-rules.md`, rendered from
 * the same list the relay applies (`REVIEWER_RULES`), so the document and the behaviour cannot
 * drift apart.
 *
 * The reviewer only refuses. A proposal that breaks no rule stays waiting for the owner or an
 * admin: whether a change is right is theirs to judge, and a rule set that approved would let
 * anyone rewrite a document without a person looking at it.
 *
 * Texts are attacker-controlled (up to 64 KiB each): the grammar is read by the one linear
 * parser (shared/oracle-text.ts) and lines are counted in a map, so a review is linear.
 */
import { parseOracleText, utf8Length, type OracleText } from '../../shared/oracle-text.js';

/** One text read once for the reviewer; made outside the write lock. */
export interface TextAnalysis {
  readonly text: string;
  readonly bytes: number;
  readonly parsed: OracleText;
  /** Each line (without its end) and how many times it occurs. */
  readonly lines: ReadonlyMap<string, number>;
}

export function analyseText(text: string): TextAnalysis {
  const lines = new Map<string, number>();
  for (const line of text.split('\n')) {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line;
    lines.set(l, (lines.get(l) ?? 0) + 1);
  }
  return { text, bytes: utf8Length(text), parsed: parseOracleText(text), lines };
}

export interface ReviewInput {
  /** The current version, or null when the document has none yet. */
  current: TextAnalysis | null;
  proposed: TextAnalysis;
  /** The proposal's summary (its title), or null when it has none. */
  summary: string | null;
  /** Whether a SPACE with this name exists on this relay. */
  spaceExists(name: string): Promise<boolean>;
}

export type ReviewerRuleId = 'empty_text' | 'no_summary' | 'no_change' | 'deletes_over_half' | 'breaks_grammar' | 'unknown_space';

export interface ReviewerRule {
  readonly id: ReviewerRuleId;
  /** One line: what the rule refuses. */
  readonly title: string;
  /** Markdown: how it is measured. */
  readonly explanation: string;
  /** Why `input` breaks the rule, or undefined when it keeps it. */
  check(input: ReviewInput): string | undefined | Promise<string | undefined>;
}

export interface RuleBreak {
  rule: ReviewerRuleId;
  reason: string;
}

/** How many problems or names one reason lists at most; the rest are counted. */
const LISTED_MAX = 5;

function listed(items: readonly string[]): string {
  const shown = items.slice(0, LISTED_MAX).join('; ');
  return items.length > LISTED_MAX ? `${shown}; and ${items.length - LISTED_MAX} more` : shown;
}

function isBlankText(text: string): boolean {
  return text.trim() === '';
}

/** Bytes of the current text's lines (each with its line end) that the proposed text no longer has. */
function removedBytes(current: TextAnalysis, proposed: TextAnalysis): number {
  let removed = 0;
  for (const [line, count] of current.lines) {
    const kept = Math.min(count, proposed.lines.get(line) ?? 0);
    if (kept < count) removed += (count - kept) * (utf8Length(line) + 1);
  }
  // The last line has no line end: never count more than the text holds.
  return Math.min(removed, current.bytes);
}

function problemKey(p: { rule: string; detail: string }): string {
  return `${p.rule}\u0000${p.detail}`;
}

export const REVIEWER_RULES: readonly ReviewerRule[] = [
  {
    id: 'empty_text',
    title: 'The text is empty.',
    explanation: 'A version carries the whole document. A proposal whose text is empty or only white space would erase it.',
    check: (i) => (isBlankText(i.proposed.text) ? 'the proposed text is empty' : undefined),
  },
  {
    id: 'no_summary',
    title: 'The proposal has no summary.',
    explanation: "The summary is the post's `title`; deciders and the version list show it. A proposal without one is refused.",
    check: (i) => (i.summary === null || isBlankText(i.summary) ? 'the proposal has no summary (title)' : undefined),
  },
  {
    id: 'no_change',
    title: 'The text is the same as the current version.',
    explanation: 'Byte for byte the same text as the current version changes nothing.',
    check: (i) => (i.current !== null && i.current.text === i.proposed.text ? 'the text is the same as the current version' : undefined),
  },
  {
    id: 'deletes_over_half',
    title: 'It deletes more than half of the text.',
    explanation:
      'Counted by lines: every line of the current text that the proposal no longer has (as many times as it occurred) counts its bytes and its line end as deleted. More than half of the current text\'s bytes deleted is refused; a moved line is not deleted, a changed line is.',
    check: (i) => {
      if (i.current === null || i.current.bytes === 0) return undefined;
      const removed = removedBytes(i.current, i.proposed);
      return removed * 2 > i.current.bytes ? `it deletes ${removed} of the current text's ${i.current.bytes} bytes (more than half)` : undefined;
    },
  },
  {
    id: 'breaks_grammar',
    title: 'It breaks the document grammar.',
    explanation:
      'The grammar is the one `GET /v1/spaces/{name}/document` reads: headings `#` to `###`, list items, fenced code, inline code, links `[[...]]`. A proposal that adds a problem the current text does not have is refused: a heading with four or more `#` or no text, a code fence that never closes, a `[[` with no `]]`, a link whose target is none of the link forms, an `http://` link.',
    check: (i) => {
      const before = new Map<string, number>();
      for (const p of i.current?.parsed.problems ?? []) before.set(problemKey(p), (before.get(problemKey(p)) ?? 0) + 1);
      const added: string[] = [];
      for (const p of i.proposed.parsed.problems) {
        const left = before.get(problemKey(p)) ?? 0;
        if (left > 0) before.set(problemKey(p), left - 1);
        else added.push(`line ${p.line}: ${p.detail}`);
      }
      return added.length === 0 ? undefined : `it breaks the grammar: ${listed(added)}`;
    },
  },
  {
    id: 'unknown_space',
    title: 'It links to a SPACE that does not exist.',
    explanation:
      'Every `[[name]]` or `[[name/seq]]` the proposal adds must name a SPACE that exists on this relay. Links the current text already has are left alone.',
    check: async (i) => {
      const had = new Set<string>();
      for (const r of i.current?.parsed.references ?? []) if (r.space !== undefined) had.add(r.space);
      const missing: string[] = [];
      for (const r of i.proposed.parsed.references) {
        const name = r.space;
        if (name === undefined || had.has(name) || missing.includes(name)) continue;
        if (!await i.spaceExists(name)) missing.push(name);
      }
      return missing.length === 0 ? undefined : `it links to SPACES that do not exist: ${listed(missing)}`;
    },
  },
];

/** Every rule the proposal breaks, in rule order; empty when it breaks none. */
export async function review(input: ReviewInput): Promise<RuleBreak[]> {
  const out: RuleBreak[] = [];
  for (const rule of REVIEWER_RULES) {
    const reason = await rule.check(input);
    if (reason !== undefined) out.push({ rule: rule.id, reason });
  }
  return out;
}

/** The veto's reason (its body): one line per broken rule, naming the rule. */
export function vetoReason(breaks: readonly RuleBreak[]): string {
  return breaks.map((b) => `service reviewer rule ${b.rule}: ${b.reason}`).join('\n');
}

/**
 * `/reviewer-rules.md`, from the same list the relay applies. `reviewer` is the peer id the
 * service's decisions are posted under.
 */
export function reviewerRulesMarkdown(reviewer: string): string {
  const rules = REVIEWER_RULES.map((r, n) => `${n + 1}. **\`${r.id}\`**: ${r.title} ${r.explanation}`).join('\n');
  return `# Service reviewer rules

The service reviewer reads every new proposal in an oracle space whose \`service_reviewer\` is on (the default; the owner can turn it off with spaces.update). It applies the rules below and nothing else: no model, no network, no clock. The same current text, proposed text and existing SPACE names always give the same verdict.

- A proposal that breaks a rule is declined at once, in the same transaction that stores it: the service posts a \`veto\` replying to it, with one line per broken rule as the reason, and the proposer gets it in the mailbox as a \`reply\`. The proposal stays in the version list as declined.
- A proposal that breaks no rule stays waiting for the owner or an admin. The reviewer never approves: whether a change is right is for a person to judge.
- Versions posted by the owner or an admin become current at once and are not reviewed.
- The service's \`veto\` posts are unsigned (origin-attested: the relay's receipt is the evidence) and authored by the service's own peer id \`${reviewer}\`, which is \`decision.by\` in the version list. No other KEY can post as it.

## Rules

${rules}

A text longer than a post's body (65,536 bytes) never reaches the reviewer: the append refuses it first.
`;
}
