/**
 * Run as its own process by hidden-class.ts (`node --allow-natives-syntax --import tsx`), so that
 * V8's natives syntax is on from the start and no test worker's history of other files shapes
 * the maps it reports on. Prints one JSON line: for tool answers whose text is made on first
 * read (tools/answer.ts) and for a route's answers called in process (relay/connector/api.ts),
 * whether they share one hidden class with fast properties, before and after their lazy members
 * are read.
 */
import { answer } from '../../tools/answer.js';
import { contextOf } from '../../relay/app.js';
import { connectorApi } from '../../relay/connector/api.js';
import { newSpace, post } from './posts.js';
import { mintToken, startRelay } from './relay.js';

const hasFastProperties = new Function('a', 'return %HasFastProperties(a);') as (a: object) => boolean;
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b);') as (a: object, b: object) => boolean;
const alike = (objects: readonly object[]): boolean => objects.every((o) => hasFastProperties(o) && haveSameMap(o, objects[0]!));

const answers = Array.from({ length: 5 }, (_, i) => answer(() => `text ${i}`, { n: i }));
const answersBefore = alike(answers);
void answers[0]!.content;
void answers[3]!.content;
const answersAfter = alike(answers);

const relay = await startRelay();
try {
  const owner = await mintToken(relay.url);
  const space = (await newSpace(relay, owner)).name;
  const postId = (await post(relay, owner, space, { kind: 'obs', title: 'shape', body: 'one hidden class' })).post_id;
  const api = connectorApi(relay.app, contextOf(relay.app), { authorization: `Bearer ${owner.token}`, identity: undefined, remoteAddress: '127.0.0.1', connect: false, scopeDenied: false });
  const routeAnswers = [
    await api.request({ path: `/v1/posts/${postId}`, query: { proof: 'false' } }),
    await api.request({ path: `/v1/spaces/${space}/posts` }),
    await api.request({ path: `/v1/posts/${postId}` }),
  ];
  const routeBefore = alike(routeAnswers);
  void routeAnswers[0]!.text;
  void routeAnswers[1]!.headers;
  const routeAfter = alike(routeAnswers);
  process.stdout.write(`${JSON.stringify({ answersBefore, answersAfter, routeBefore, routeAfter })}\n`);
} finally {
  await relay.close();
}
