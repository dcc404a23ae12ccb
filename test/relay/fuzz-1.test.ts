/**
 * Property-based fuzz of every route of the relay (fast-check), in process through Fastify's
 * `inject`: the real app on a real SQLite file, with the world of the bad-input sweep in it
 * (test/helpers/fuzz/world.ts). Routes are read from /openapi.json, which the relay generates
 * from every route it registered, and checked against the router's own listing so none is
 * missed. Each route gets `SVC_FUZZ_RUNS` generated requests: 500 in `npm test` (about 62,000
 * requests, a quarter of the time), 300 in `npm run test:postgres`, and 2,000 with `npm run fuzz`
 * (about 246,000 requests, 96 s alone on two cores), which CI runs as well and which also prints
 * each route's time and answers as it goes. A request is its address with
 * parameters from the world or not, a query from its declared parameters and others, headers (who signs in, media types, connector headers) and a body near
 * a well-formed sample or built from the route's body schema, or broken (test/helpers/fuzz/).
 *
 * Every answer: never a 5xx (only /healthz's own 503 shape), never another KEY's secret, every
 * refusal in its form (the catalogue envelope at its status with the X-Request-Id; OAuth's shape
 * at register and token; JSON-RPC errors at the connector), never a hang, and no written table
 * changed by a refusal. Rate limits are off, so every answer is about the input. Afterwards the
 * relay still answers /healthz and takes a post. `SVC_FUZZ_SEED` replays a run.
 *
 * The routes are fuzzed in two parts, this file and fuzz-2.test.ts, every other route of the
 * listing each (test/helpers/fuzz/routes-suite.ts), so that a run's two workers share them.
 *
 * @module-tag slow
 */
import { routeFuzz } from '../helpers/fuzz/routes-suite.js';

routeFuzz(1, 2);
