/**
 * The two discovery documents (spec/2-endpoints.md oauth.resource, oauth.metadata):
 * protected-resource metadata for the connector (RFC 9728 §2) and authorization-server
 * metadata (RFC 8414 §2). The issuer is the relay's public base URL.
 */

export const SCOPES = ['read', 'write'] as const;
export const CONNECT_PATH = '/mcp/connect';
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${CONNECT_PATH}`;

/** The resource an app token is for: the connector's address. */
export function connectorResource(base: string): string {
  return `${base}${CONNECT_PATH}`;
}

export function protectedResourceMetadata(base: string): Record<string, unknown> {
  return {
    resource: connectorResource(base),
    authorization_servers: [base],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'svc connector',
    resource_documentation: `${base}/reference`,
  };
}

export function authorizationServerMetadata(base: string): Record<string, unknown> {
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    // No client authenticates with a signed JWT here, so no signing algorithm is offered.
    token_endpoint_auth_signing_alg_values_supported: [],
    code_challenge_methods_supported: ['S256'],
    response_modes_supported: ['query'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${base}/reference`,
  };
}
