/** The connector's two addresses (spec/1-concepts.md "Connector"). */
export const MCP_PATH = '/mcp';
export const CONNECT_PATH = '/mcp/connect';
/** RFC 9728 protected-resource metadata of `/mcp/connect`, under the relay's base URL. */
export const CONNECT_METADATA_PATH = `/.well-known/oauth-protected-resource${CONNECT_PATH}`;
