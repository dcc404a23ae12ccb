/**
 * The request log of a real relay process (SVC_LOG_LEVEL=info): one JSON line per answered
 * request with method, route pattern, status, time and the request id its X-Request-Id
 * carries, and none of the secrets that went through it: tokens, a passkey assertion, invite
 * and hand-over codes, an OAuth client secret, authorization code, PKCE verifier and state,
 * an app token, sealed bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callConnector, connectConnector } from '../helpers/connector.js';
import { createSpace, freshName } from '../helpers/spaces.js';
import { makeLink, joinLink } from '../helpers/invites.js';
import { approveCode, exchange, exchangeParams, pkcePair, REDIRECT, register, startAuthorization } from '../helpers/oauth-flow.js';
import { passkeyChallenge, softAuthenticator, verifyBody } from '../helpers/passkey-authenticator.js';
import { createSealedSpace, publishKey, sealedKey, sealedPostBody } from '../helpers/sealed.js';
import { call, mintToken, spawnRelay, tempDataDir, type RunningRelay, type SpawnedRelay } from '../helpers/relay.js';

let spawned: SpawnedRelay;
/** The spawned relay where the helpers want a relay: they only use its address. */
let relay: RunningRelay;
/** Every secret sent or received below, with what it is. */
const secrets = new Map<string, string>();
/** X-Request-Id of every answer, with its method and status. */
const answered = new Map<string, { status: number }>();

function keep(what: string, value: unknown): void {
  if (typeof value !== 'string' || value.length < 8) throw new Error(`${what}: no secret to look for (${String(value)})`);
  secrets.set(value, what);
}

beforeAll(async () => {
  spawned = await spawnRelay(tempDataDir(), { env: { SVC_LOG_LEVEL: 'info' } });
  relay = { url: spawned.url } as RunningRelay;
});
afterAll(async () => {
  await spawned.kill();
});

describe('the request log of a relay process', () => {
  it('holds one JSON line per request with its id, and no token, code, assertion, secret or sealed byte', async () => {
    // Sign-in with an Ed25519 KEY: the token challenge and the token.
    const owner = await mintToken(relay.url);
    keep('token', owner.token);

    // Sign-in with a passkey: the assertion and the token.
    const authenticator = softAuthenticator();
    const challenge = await passkeyChallenge(relay);
    const assertion = verifyBody(authenticator, challenge, true);
    const signedIn = await call(relay, 'POST', '/v1/passkeys/verify', { body: assertion });
    expect(signedIn.status).toBe(200);
    for (const field of ['signature', 'authenticator_data', 'client_data_json']) keep(`passkey ${field}`, assertion[field]);
    keep('passkey token', signedIn.body.token);

    // An invite made, looked at through its page, and used; a hand-over offered by link.
    const name = freshName('log');
    await createSpace(relay, owner.token, { name });
    const link = await makeLink(relay, owner, name, { role: 'writer' });
    keep('invite code', link.code);
    expect((await fetch(link.link)).status).toBeLessThan(500);
    const joiner = await mintToken(relay.url);
    keep('token', joiner.token);
    expect((await joinLink(relay, joiner, link.link)).status).toBe(200);
    const offer = await call(relay, 'POST', `/v1/spaces/${name}/hand-over`, { token: owner.token, body: {} });
    expect(offer.status).toBe(201);
    keep('hand-over code', offer.body.code);

    // OAuth: a confidential app authorizes with PKCE and state, then exchanges its code.
    const reg = await register(relay, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' });
    expect(reg.status).toBe(201);
    const app = { clientId: reg.body.client_id, secret: reg.body.client_secret as string, pkce: pkcePair(), redirectUri: REDIRECT };
    keep('client secret', app.secret);
    keep('PKCE verifier', app.pkce.verifier);
    keep('PKCE challenge', app.pkce.challenge);
    const state = 'state-kept-by-the-app-0123456789';
    keep('state', state);
    const request = await startAuthorization(relay, app, { state });
    const code = await approveCode(relay, owner.token, request);
    keep('authorization code', code);
    const exchanged = await exchange(relay, exchangeParams(app, code, { client_secret: app.secret }));
    expect(exchanged.status).toBe(200);
    keep('app token', exchanged.body.access_token);

    // A sealed post: its header and ciphertext travel as one base64url string.
    const sealer = await sealedKey(relay);
    keep('token', sealer.token);
    expect((await publishKey(relay, sealer)).status).toBe(200);
    const space = await createSealedSpace(relay, sealer);
    const { body } = sealedPostBody(space, sealer, 1, { title: 'sealed title', body: 'sealed words never logged' });
    const sealed = body.sealed as { header: string; ciphertext: string };
    keep('sealed header', sealed.header);
    keep('sealed ciphertext', sealed.ciphertext.slice(-64));
    const sealedPost = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: sealer.token, body });
    expect(sealedPost.status).toBe(201);
    answered.set(sealedPost.headers.get('x-request-id')!, { status: 201 });

    // A tool of the relay's connector calls its route in process: logged as any request is.
    const mcp = await connectConnector(relay.url, { token: owner.token, revision: '2026-07-28' });
    try {
      expect((await callConnector(mcp, 'svc_whoami', {})).isError ?? false).toBe(false);
    } finally {
      await mcp.close();
    }

    // A refusal is logged as any answer is.
    const refused = await call(relay, 'GET', '/v1/me', { token: 'svc_no_such_token_at_all' });
    expect(refused.status).toBe(401);
    answered.set(refused.headers.get('x-request-id')!, { status: 401 });

    // The log is written as requests finish; give the last lines a moment to arrive.
    let lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      lines = spawned
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if ([...answered.keys()].every((id) => lines.some((l) => l.request_id === id))) break;
      await new Promise((r) => setTimeout(r, 20));
    }

    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThan(20);
    for (const l of requests) {
      expect(Object.keys(l).sort()).toEqual(['hostname', 'level', 'method', 'ms', 'msg', 'operation', 'pid', 'request_id', 'route', 'status', 'time']);
    }
    for (const [id, { status }] of answered) {
      const mine = requests.filter((l) => l.request_id === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.status).toBe(status);
    }
    expect(requests.find((l) => l.request_id === sealedPost.headers.get('x-request-id'))).toMatchObject({
      method: 'POST',
      route: '/v1/spaces/:name/posts',
      operation: 'posts.append',
    });
    expect(requests.some((l) => l.route === '/oauth/authorize' && l.status === 302)).toBe(true);
    expect(requests.some((l) => l.route === '/v1/me' && l.operation === 'me' && l.status === 200)).toBe(true);
    expect(requests.some((l) => l.route === '/oauth/token' && l.status === 200)).toBe(true);

    const everything = spawned.stdout() + spawned.stderr();
    for (const [secret, what] of secrets) expect(everything.includes(secret), `${what} in the log`).toBe(false);
    expect(everything).not.toContain(name);
  });

  it('holds a line for every request answered, those answered together and those answered just before the relay stops', async () => {
    // Lines are written a turn of the event loop after their answers, all of a turn in one
    // write (relay/http/logging.ts): a burst of requests, then SIGTERM at once.
    const own = await spawnRelay(tempDataDir(), { env: { SVC_LOG_LEVEL: 'info' } });
    const ids: string[] = [];
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, async () => await fetch(`${own.url}/v1/capabilities`)));
      for (const a of answers) ids.push(a.headers.get('x-request-id')!);
    } finally {
      await own.kill('SIGTERM');
    }
    const logged = new Set(
      own
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { request_id?: string }).request_id),
    );
    expect(ids.filter((id) => !logged.has(id))).toEqual([]);
  });
});
