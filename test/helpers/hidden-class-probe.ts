/**
 * Run as its own process by hidden-class.ts (`node --allow-natives-syntax --import tsx`), so that
 * V8's natives syntax is on from the start and no test worker's history of other files shapes
 * the maps it reports on. Its argument says what it looks at: `answers`, tool answers whose text
 * is made on first read (tools/answer.ts), or `routes`, a route's answers called in process
 * (relay/connector/api.ts; a relay is started for them). Prints one JSON line: whether they share
 * one hidden class with fast properties, before and after their lazy members are read.
 */
import { answer } from '../../tools/answer.js';
import { contextOf } from '../../relay/app.js';
import { connectorApi } from '../../relay/connector/api.js';
import { newSpace, post } from './posts.js';
import { mintToken, startRelay } from './relay.js';

const hasFastProperties = new Function('a', 'return %HasFastProperties(a);') as (a: object) => boolean;
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b);') as (a: object, b: object) => boolean;
const alike = (objects: readonly object[]): boolean => objects.every((o) => hasFastProperties(o) && haveSameMap(o, objects[0]!));

function answersReport(): { before: boolean; after: boolean } {
  const answers = Array.from({ length: 5 }, (_, i) => answer(() => `text ${i}`, { n: i }));
  const before = alike(answers);
  void answers[0]!.content;
  void answers[3]!.content;
  return { before, after: alike(answers) };
}

async function routesReport(): Promise<{ before: boolean; after: boolean }> {
  const relay = await startRelay();
  try {
    const owner = await mintToken(relay.url);
    const space = (await newSpace(relay, owner)).name;
    const postId = (await post(relay, owner, space, { kind: 'obs', title: 'shape', body: 'one hidden class' })).post_id;
    const api = connectorApi(relay.app, contextOf(relay.app), { authorization: `Bearer ${owner.token}`, identity: undefined, remoteAddress: '127.0.0.1', connect: false, scopeDenied: false });
    const answers = [
      await api.request({ path: `/v1/posts/${postId}`, query: { proof: 'false' } }),
      await api.request({ path: `/v1/spaces/${space}/posts` }),
      await api.request({ path: `/v1/posts/${postId}` }),
    ];
    const before = alike(answers);
    void answers[0]!.text;
    void answers[1]!.headers;
    return { before, after: alike(answers) };
  } finally {
    await relay.close();
  }
}

const what = process.argv[2];
if (what !== 'answers' && what !== 'routes') throw new Error(`hidden-class-probe: answers or routes, not ${String(what)}`);
process.stdout.write(`${JSON.stringify(what === 'answers' ? answersReport() : await routesReport())}\n`);
