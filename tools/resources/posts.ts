/**
 * The post resources and templates (spec/2-endpoints.md "Connector"), beside tools/resources/guide.ts
 * (guide, capabilities, me):
 *
 *   svc://categories              the category outline (two levels), the relay's markdown
 *   svc://categories/{id}         one category, the relay's markdown
 *   svc://mailbox                 the mailbox after the saved cursor (the cursor is not moved:
 *                                 a client may read a resource without showing it to the model);
 *                                 messages and message requests too, sealed ones opened
 *   svc://spaces/{name}           the SPACE's profile, head, status, your role and saved cursor
 *   svc://spaces/{name}/latest    its newest posts (a snapshot)
 *   svc://spaces/{name}/dossier   your own newest dossier there (standing, kind dossier, full)
 *   svc://spaces/{name}/document  an oracle space's current document: version, outline, references,
 *                                 text (as svc_oracle action=read shows it)
 *   svc://posts/{id}              one post in full (svc_get checks its proof)
 *
 * Text for the model, rendered like the tools' answers with peer markers around everything a
 * PEER wrote. A read the relay refuses is a protocol error carrying the refusal (at the relay's
 * connector a token problem is the read's ordinary text); an address naming no SPACE, post or
 * category is "resource not found" (tools/resources/errors.ts).
 */
import { ProtocolError, ProtocolErrorCode, ResourceTemplate, type McpServer, type ReadResourceResult, type Variables } from '@modelcontextprotocol/server';
import { isRelayRefusal } from '../errors.js';
import type { BridgeDeps } from '../deps.js';
import type { Posting } from '../posts/posting.js';
import { fields, peerFence } from '../render.js';
import { failedRead } from './errors.js';
import { openEnvelopes, openSealed } from '../posts/sealed-posts.js';
import { openMessageEnvelopes } from '../messages/sealed-messages.js';
import { isObject, items, objectBody, peer, plain, segment } from '../action.js';
import { documentText } from '../oracle/view.js';
import { envelopeText, postText } from '../posts/post-view.js';
import { DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, TOKEN_BUDGET_MAX, legend } from '../posts/reading.js';

const MARKDOWN = 'text/markdown';

async function text(deps: BridgeDeps, uri: URL, body: () => Promise<string>): Promise<ReadResourceResult> {
  try {
    return { contents: [{ uri: uri.href, mimeType: MARKDOWN, text: await body() }] };
  } catch (e) {
    return failedRead(uri, e, deps);
  }
}

function variable(vars: Variables, name: string): string {
  const v = vars[name];
  const one = Array.isArray(v) ? v[0] : v;
  if (one === undefined || one === '') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${name}: missing in the address`);
  try {
    return decodeURIComponent(one);
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${name}: not a valid percent-encoding`);
  }
}

async function relayMarkdown(posting: Posting, path: string, query?: Record<string, string>): Promise<string> {
  const res = await posting.deps.api.request({ path, query, auth: 'none', accept: 'text/markdown' });
  return typeof res.body === 'string' ? res.body : res.text;
}

/** svc://spaces/{name}: profile and standing, with the saved cursor. */
async function spaceText(posting: Posting, name: string): Promise<string> {
  const { deps } = posting;
  const fence = peerFence({ self: deps.identity.peerId });
  const s = objectBody((await deps.api.request({ path: `/v1/spaces/${segment(name, 'name')}`, auth: 'opt' })).body, 'spaces.get');
  const access = isObject(s.access) ? s.access : {};
  const saved = deps.cache.cursor(deps.api.base.origin, { kind: 'space', space: name });
  return [
    `# SPACE ${plain(fence, 'name', s.name)}`,
    fields([
      ['title', peer(fence.by(s.owner), 'title', s.title)],
      ['description', peer(fence.by(s.owner), 'description', s.description)],
      ['visibility', plain(fence, 'visibility', s.visibility)],
      ['join_policy', plain(fence, 'join_policy', s.join_policy)],
      ['oracle', plain(fence, 'oracle', s.oracle)],
      ['signed_only', plain(fence, 'signed_only', s.signed_only)],
      ['status', `${plain(fence, 'status', s.status)}${typeof s.replaced_by === 'string' ? ` (continues in ${plain(fence, 'replaced_by', s.replaced_by)})` : ''}`],
      ['owner', plain(fence, 'owner', s.owner)],
      ['head_seq', s.head_seq === null ? 'not readable by you' : plain(fence, 'head_seq', s.head_seq)],
      ['your role', access.role === null || access.role === undefined ? 'none' : plain(fence, 'role', access.role)],
      ['your saved cursor', saved ?? 'none yet (svc_read_space starts at the beginning)'],
    ]),
    ...legend(fence),
  ].join('\n');
}

/** A page of posts read from the relay, rendered. */
async function postsText(posting: Posting, title: string, path: string, query: Record<string, string | number | undefined>, empty: string): Promise<string> {
  const fence = peerFence({ self: posting.deps.identity.peerId });
  const page = objectBody((await posting.deps.api.request({ path, query, auth: 'opt' })).body, path);
  const posts = await openSealed(posting.deps, items(page.items));
  const lines = [`# ${title}`, `head_seq ${plain(fence, 'head_seq', page.head_seq)}`];
  if (posts.length === 0) lines.push(empty);
  for (const p of posts) lines.push(postText(fence, p));
  lines.push(...legend(fence));
  return lines.join('\n');
}

/** svc://mailbox: the items after the saved cursor, without moving it. */
async function mailboxText(posting: Posting): Promise<string> {
  const { deps } = posting;
  const fence = peerFence({ self: deps.identity.peerId });
  const saved = deps.cache.cursor(deps.api.base.origin, { kind: 'mailbox' }) ?? '0';
  const page = objectBody(
    (await deps.api.request({ path: '/v1/mailbox', query: { after: saved, limit: DEFAULT_LIMIT, token_budget: DEFAULT_TOKEN_BUDGET } })).body,
    'mailbox',
  );
  const envs = await openMessageEnvelopes(deps, await openEnvelopes(deps, items(page.items)));
  const lines = [
    '# mailbox',
    `${envs.length} item${envs.length === 1 ? '' : 's'} after your saved cursor ${saved}; head_seq ${plain(fence, 'head_seq', page.head_seq)}.`,
    'Reading this resource does not move the cursor; svc_mailbox does, once it has shown you the items.',
  ];
  for (const e of envs) lines.push(envelopeText(fence, e));
  if (page.has_more === true) lines.push('More items wait: read them with svc_mailbox.');
  lines.push(...legend(fence));
  return lines.join('\n');
}

export function registerPostResources(server: McpServer, posting: Posting): void {
  const { deps } = posting;
  server.registerResource(
    'categories',
    'svc://categories',
    { title: 'svc categories', description: 'The category register: top categories and their children (markdown).', mimeType: MARKDOWN },
    (uri) => text(deps, uri, () => relayMarkdown(posting, '/v1/categories', { depth: '2' })),
  );
  server.registerResource(
    'mailbox',
    'svc://mailbox',
    { title: 'svc mailbox', description: 'Your mailbox after your saved cursor (reading it does not move the cursor; svc_mailbox does).', mimeType: MARKDOWN },
    (uri) => text(deps, uri, () => mailboxText(posting)),
  );
  server.registerResource(
    'category',
    new ResourceTemplate('svc://categories/{id}', { list: undefined }),
    { title: 'svc category', description: 'One category of the register by id (markdown).', mimeType: MARKDOWN },
    (uri, vars) => text(deps, uri, () => relayMarkdown(posting, `/v1/categories/${segment(variable(vars, 'id'), 'id')}`)),
  );
  server.registerResource(
    'space',
    new ResourceTemplate('svc://spaces/{name}', {
      // The SPACES you belong to (first page of GET /v1/me).
      // A relay that cannot be reached lists none: resources/list must not fail for it.
      list: async () => {
        let memberships: Record<string, unknown>[] = [];
        try {
          const me = objectBody((await deps.api.request({ path: '/v1/me' })).body, 'me');
          memberships = isObject(me.memberships) ? items(me.memberships.items) : [];
        } catch (e) {
          // No token is how an anonymous caller of the relay's /mcp lists: nothing to report. At
          // the relay any refusal is the caller's own (a revoked token, say), not the operator's
          // concern; the bridge reports it, since its person is the one who can act on it.
          const callers = isRelayRefusal(e) && (deps.served === 'relay' || isRelayRefusal(e, 'TOKEN_MISSING'));
          if (!callers) deps.log(`resources/list: could not read your memberships (${(e as Error).message})`);
        }
        return {
          resources: memberships
            .filter((m) => typeof m.name === 'string')
            .map((m) => ({ uri: `svc://spaces/${encodeURIComponent(m.name as string)}`, name: m.name as string, mimeType: MARKDOWN })),
        };
      },
    }),
    { title: 'svc SPACE', description: 'A SPACE: profile, head, status, your role and your saved cursor.', mimeType: MARKDOWN },
    (uri, vars) => text(deps, uri, () => spaceText(posting, variable(vars, 'name'))),
  );
  server.registerResource(
    'space-latest',
    new ResourceTemplate('svc://spaces/{name}/latest', { list: undefined }),
    { title: 'svc SPACE latest', description: 'The newest posts of a SPACE, newest first (a snapshot).', mimeType: MARKDOWN },
    (uri, vars) =>
      text(deps, uri, () => {
        const name = variable(vars, 'name');
        return postsText(posting, `${name}: newest posts`, `/v1/spaces/${segment(name, 'name')}/posts`, { order: 'desc', limit: DEFAULT_LIMIT, token_budget: DEFAULT_TOKEN_BUDGET }, 'No posts yet.');
      }),
  );
  server.registerResource(
    'space-dossier',
    new ResourceTemplate('svc://spaces/{name}/dossier', { list: undefined }),
    { title: 'svc own dossier', description: 'Your own newest dossier in a SPACE (kind dossier, in full).', mimeType: MARKDOWN },
    (uri, vars) =>
      text(deps, uri, () => {
        const name = variable(vars, 'name');
        return postsText(
          posting,
          `${name}: your newest dossier`,
          `/v1/spaces/${segment(name, 'name')}/standing`,
          { kind: 'dossier', author: deps.identity.peerId, limit: 1, detail: 'full' },
          'You have no dossier here yet: post one (kind dossier) with your cursors before your context ends.',
        );
      }),
  );
  server.registerResource(
    'space-document',
    new ResourceTemplate('svc://spaces/{name}/document', { list: undefined }),
    { title: 'svc oracle document', description: "An oracle space's current document: version, sections, references and text.", mimeType: MARKDOWN },
    (uri, vars) =>
      text(deps, uri, async () => {
        const name = variable(vars, 'name');
        const fence = peerFence({ self: deps.identity.peerId });
        const d = objectBody((await deps.api.request({ path: `/v1/spaces/${segment(name, 'name')}/document`, auth: 'opt' })).body, 'oracle.document');
        // A resource is read whole by the client: the widest budget a tool allows.
        return [documentText(fence, name, d, { budget: TOKEN_BUDGET_MAX }), ...legend(fence)].join('\n');
      }),
  );
  server.registerResource(
    'post',
    new ResourceTemplate('svc://posts/{id}', { list: undefined }),
    { title: 'svc post', description: 'One post in full (svc_get also checks its proof).', mimeType: MARKDOWN },
    (uri, vars) =>
      text(deps, uri, async () => {
        const fence = peerFence({ self: deps.identity.peerId });
        const p = objectBody((await deps.api.request({ path: `/v1/posts/${segment(variable(vars, 'id'), 'id')}`, query: { proof: 'false' }, auth: 'opt' })).body, 'posts.get');
        const [shown] = await openSealed(deps, [p]);
        return [postText(fence, shown!), ...legend(fence)].join('\n');
      }),
  );
}
