/**
 * What is wrong with the relay's answer to a generated request, by spec/3-errors.md: a 5xx
 * (only `/healthz` answers 503, in its own shape), another KEY's secret in the answer, or a
 * refusal without its form. Every refusal carries the envelope with a catalogue code at that
 * code's status and the request's X-Request-Id, except where the spec names another form:
 * `oauth.register` and `oauth.token` (and their CORS preflights) in OAuth's shape, `oauth.authorize` a plain-text 404, and
 * the connector answering its own JSON-RPC errors (and 401 at `/mcp/connect` with the
 * protected-resource metadata named). A HEAD answer has no body, so only its status is judged.
 */
import { CATALOGUE, type ErrorCode } from '../../../shared/errors.js';

export interface Outcome {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

/** OAuth's error codes register and token answer with (spec/3-errors.md, RFC 7591 §3.2.2, RFC 6749 §5.2). */
const OAUTH_ERRORS = new Set(['invalid_request', 'invalid_client_metadata', 'invalid_redirect_uri', 'unsupported_grant_type', 'invalid_grant', 'invalid_target', 'invalid_client', 'temporarily_unavailable']);

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRpcError(body: any): boolean {
  const one = (m: any) => m?.jsonrpc === '2.0' && typeof m.error?.code === 'number' && typeof m.error?.message === 'string';
  return Array.isArray(body) ? body.length > 0 && body.every(one) : one(body);
}

/** The envelope's problem, or undefined when the answer is a proper catalogue refusal. */
function envelopeProblem(path: string, res: Outcome, body: any): string | undefined {
  const e = body?.error;
  if (e === undefined || typeof e !== 'object') return `no envelope (HTTP ${res.status}): ${res.text.slice(0, 120)}`;
  const code = e.code as ErrorCode;
  if (!(code in CATALOGUE)) return `unknown code ${String(code)}`;
  for (const field of ['message', 'fix', 'doc', 'request_id']) if (typeof e[field] !== 'string') return `the envelope lacks ${field}`;
  const connector = path === '/mcp' || path === '/mcp/connect';
  // An unknown address is INVALID_REQUEST at 404 (and a wrong method at 405); the connector's origin check is INVALID_REQUEST at 403.
  const allowed = CATALOGUE[code].status === res.status || (code === 'INVALID_REQUEST' && (res.status === 404 || res.status === 405 || (connector && res.status === 403)));
  if (!allowed) return `HTTP ${res.status} for ${code}`;
  if (e.request_id !== res.headers['x-request-id']) return 'request_id differs from X-Request-Id';
  return undefined;
}

export function problemWith(method: string, url: string, res: Outcome, secret: string): string | undefined {
  const path = url.split('?')[0]!;
  if (res.text.includes(secret)) return "another KEY's private content in the answer";
  const body = parse(res.text);
  if (res.status >= 500) {
    if (path === '/healthz' && res.status === 503 && body?.ok === false && typeof body.reason === 'string') return undefined;
    return `HTTP ${res.status} ${body?.error?.code ?? res.text.slice(0, 120)}`;
  }
  if (res.status < 400 || method === 'HEAD') return undefined;
  if ((path === '/mcp' || path === '/mcp/connect') && isRpcError(body)) return undefined;
  if (path === '/mcp/connect' && res.status === 401 && !/resource_metadata="/.test(String(res.headers['www-authenticate'] ?? ''))) return '401 without the protected-resource metadata';
  // The two endpoints read their bodies with their own parser, so a body their CORS preflight (OPTIONS) cannot read is refused in their form too.
  if ((path === '/oauth/register' || path === '/oauth/token') && typeof body?.error === 'string') {
    if (!OAUTH_ERRORS.has(body.error)) return `unknown OAuth error ${body.error}`;
    if (typeof body.error_description !== 'string') return 'an OAuth error without error_description';
    if (res.status !== 400 && res.status !== 401) return `HTTP ${res.status} for OAuth error ${body.error}`;
    return undefined;
  }
  if (method === 'GET' && path === '/oauth/authorize' && res.status === 404 && String(res.headers['content-type']).startsWith('text/plain')) return undefined;
  return envelopeProblem(path, res, body);
}
