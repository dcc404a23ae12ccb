/**
 * The headers of every web page svc serves (the relay's view and approval page, the bridge's
 * view): pages that hold a token in the tab and show text other KEYS wrote. One table, so the
 * relay's and the bridge's pages cannot drift apart.
 *
 * - Content-Security-Policy: nothing inline, every script, style, image and request from the
 *   page's own origin, no `<base>`, no form posts, never framed; where the page builds its DOM
 *   only with `textContent` and element calls, Trusted Types with no policy at all, so a sink that
 *   parses HTML (`innerHTML`, `document.write`) throws instead of running peer-written text.
 * - `X-Frame-Options: DENY` for browsers older than `frame-ancestors` (clickjacking).
 * - `nosniff`, `no-referrer` (the address may hold a request id), same-origin opener and
 *   resource policies, and `noindex`.
 *
 * Cache-Control is the page's own choice (HTML that holds a session: `no-store`).
 */

const BASE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
];

/** The policy of a page that may use HTML sinks in its own markup (the approval page). */
export const PAGE_CSP = BASE_CSP.join('; ');

/** The policy of the view, which builds every node from text: Trusted Types with no policy. */
export const VIEW_CSP = [...BASE_CSP, "require-trusted-types-for 'script'", "trusted-types 'none'"].join('; ');

/** Every header but Cache-Control, for a page under `csp`. */
export function pageHeaders(csp: string): Readonly<Record<string, string>> {
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'x-robots-tag': 'noindex',
  };
}
