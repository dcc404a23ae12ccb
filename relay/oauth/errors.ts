/**
 * Refusals in OAuth's own shape `{error, error_description}` (spec/3-errors.md "Exceptions":
 * oauth.register per RFC 7591 §3.2.2, oauth.token per RFC 6749 §5.2). Everything else the relay
 * refuses in the service envelope.
 */

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'temporarily_unavailable'
  | 'unsupported_grant_type'
  | 'invalid_grant'
  | 'invalid_target'
  | 'invalid_client';

/** The status each code answers with (RFC 6749 §5.2: 400, or 401 for a client that failed to authenticate). */
const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client_metadata: 400,
  invalid_redirect_uri: 400,
  temporarily_unavailable: 503,
  unsupported_grant_type: 400,
  invalid_grant: 400,
  invalid_target: 400,
  invalid_client: 401,
};

export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
    this.status = STATUS[error];
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
